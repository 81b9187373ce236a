"""NiFi's Tracking Timestamps listing strategy, shared by ListFile and ListSFTP: which of the
files seen now are new, and the cluster-wide state that remembers it.

The state keys are NiFi's: ``listing.timestamp`` (the newest last-modified time seen),
``processed.timestamp`` (the newest time listed) and ``id.0``, ``id.1``... (the files listed
having that time), plus Flowsite's ``listing.configuration`` (a digest of the settings deciding
what a listing holds; a change starts a new listing).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from engine.components import AllowableValue, PropertyDescriptor, Scope, StateMap

LISTING_TIMESTAMP = "listing.timestamp"
PROCESSED_TIMESTAMP = "processed.timestamp"
IDENTIFIER_PREFIX = "id."
CONFIGURATION = "listing.configuration"
PRECISIONS = {"millis": 1, "seconds": 1000, "minutes": 60_000}
#: How long the newest files are held back, by timestamp precision (ms).
LISTING_LAG = {1: 100, 1000: 1000, 60_000: 60_000}

TIMESTAMP_PRECISION = PropertyDescriptor(
    "Target System Timestamp Precision", description="How precise the listed system's last-modified times are. The newest files are held back until no "
    "other file can still get the same time; the precision sets how long that is (100 millis, 1 second or 1 "
    "minute). Auto Detect infers it from the times it sees.", required=True, default="auto-detect", allowed_values=[
        AllowableValue("auto-detect", "Auto Detect", "Millis if any time has milliseconds, else seconds if any "
                       "has seconds, else minutes."),
        AllowableValue("millis", "Milliseconds"), AllowableValue("seconds", "Seconds"),
        AllowableValue("minutes", "Minutes")])


class Listed(Protocol):
    identifier: str
    modified: int


E = TypeVar("E", bound=Listed)


@dataclass(frozen=True)
class Tracking:
    """What the strategy remembers: the newest time seen, the newest time listed and the files
    listed having it."""

    listed: int | None = None
    processed: int = 0
    identifiers: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_state(cls, state: StateMap) -> Tracking:
        values = state.values
        listed = values.get(LISTING_TIMESTAMP)
        return cls(int(listed) if listed else None, int(values.get(PROCESSED_TIMESTAMP) or 0),
                   frozenset(value for key, value in values.items() if key.startswith(IDENTIFIER_PREFIX) and value))

    def to_state(self, configuration: str) -> dict[str, str]:
        values = {LISTING_TIMESTAMP: str(self.listed), PROCESSED_TIMESTAMP: str(self.processed),
                  CONFIGURATION: configuration}
        values.update((f"{IDENTIFIER_PREFIX}{index}", identifier)
                      for index, identifier in enumerate(sorted(self.identifiers)))
        return values


class TimestampListing:
    """One lister's Tracking Timestamps state: call ``start`` when scheduled, ``reload`` when
    elected primary, and ``select`` with each listing to learn which entries to emit."""

    def __init__(self) -> None:
        self._committed: Tracking | None = None
        self._pending: Tracking | None = None
        self._reload = False
        self._last_run_ns = 0

    def start(self, context, configuration: str, precision: str) -> None:
        """Forget what was read before (the state may have changed while stopped); start a new
        listing when ``configuration`` differs from the one the state was made with."""
        self._configuration = configuration
        self._precision = precision
        self._committed = self._pending = None
        state = context.state.get_state(Scope.CLUSTER)
        if state.get(CONFIGURATION, configuration) != configuration:
            context.logger.info("the listing configuration changed: listing every file again")
            context.state.clear(Scope.CLUSTER)

    def reload(self) -> None:
        """Read the state again at the next listing (another node may have listed meanwhile)."""
        self._reload = True

    def base(self, context) -> Tracking:
        """Where the next listing starts from."""
        base = self._pending or self._committed
        if base is None or self._reload:
            base = self._committed = Tracking.from_state(context.state.get_state(Scope.CLUSTER))
            self._pending = None
            self._reload = False
        return base

    def select(self, context, session, entries: Iterable[E]) -> list[E]:
        """The entries to emit now, oldest first; the new position is saved once the session
        commits (so a crash may list a file twice but never skips one)."""
        base = self.base(context)
        entries = list(entries)
        now_ns, now_ms = time.monotonic_ns(), int(time.time() * 1000)
        by_time: dict[int, list[E]] = {}
        for entry in entries:
            if base.listed is None or (entry.modified >= base.listed and entry.modified >= base.processed):
                by_time.setdefault(entry.modified, []).append(entry)
        if not by_time:
            return []
        latest = max(by_time)
        unit = self._unit(entries)
        lag = LISTING_LAG[unit]
        if latest == base.listed:
            if now_ns - self._last_run_ns < lag * 1_000_000:
                return []
            if latest == base.processed and all(e.identifier in base.identifiers for e in by_time[latest]):
                return []
        elif (now_ms - lag) // unit * unit < latest:
            # A file written right now could still get this time: wait one more run for it.
            del by_time[latest]
        chosen = [entry for moment in sorted(by_time) for entry in sorted(by_time[moment], key=lambda e: e.identifier)
                  if not (moment == base.processed and entry.identifier in base.identifiers)]
        processed, identifiers = base.processed, base.identifiers
        if chosen:
            newest = max(by_time)
            identifiers = (frozenset(e.identifier for e in by_time[newest])
                           | (identifiers if newest == processed else frozenset()))
            processed = newest
        self._last_run_ns = now_ns
        if latest != base.listed or chosen:
            pending = self._pending = Tracking(latest, processed, identifiers)
            session.on_commit(lambda: self._save(context, pending))
            session.on_rollback(self._forget_pending)
        return chosen

    def _unit(self, entries: list[Listed]) -> int:
        if self._precision in PRECISIONS:
            return PRECISIONS[self._precision]
        if any(entry.modified % 1000 for entry in entries):
            return 1
        return 1000 if any(entry.modified % 60_000 for entry in entries) else 60_000

    def _save(self, context, tracking: Tracking) -> None:
        self._committed = tracking
        if self._pending is tracking:
            self._pending = None
        try:
            context.state.set_state(tracking.to_state(self._configuration), Scope.CLUSTER)
        except Exception as error:  # noqa: BLE001 - the files are listed; warn that they may be listed again
            context.logger.warning("could not save the listing state (%s); if this node restarts or another node "
                                   "becomes primary, files may be listed again", error)

    def _forget_pending(self) -> None:
        self._pending = None

