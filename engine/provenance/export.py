"""Provenance as Parquet: each shard's events written as one Parquet file, for analytics.

The exporter writes into a directory of its own (the node's part of the shared analytics
directory, see ``docs/analytics.md``), one row per event (``SCHEMA``):

- ``<shard>.parquet`` — a closed shard (one the repository no longer appends to). Written once;
  a later export finds it and does not write it again.
- ``<shard>.current-<max id>.parquet`` — the shard being written, up to event ``max id``, on
  demand (``export(current=True)``, which first rolls the journals over so that the events
  registered until then are in it). A new file is made whenever the shard has grown.

Files are immutable once in place: each is written through ``fileops.AtomicFile`` (a temporary
file, synced, renamed), so a reader sees a whole file or none, and a file a reader listed never
changes under it. Files no export lists any more — a ``current`` file a newer one replaced, a
shard deleted by retention — are deleted once they are ``STALE_SECONDS`` old, which leaves a
query that listed them time to finish.

A damaged block or event is never skipped silently: the export keeps the readable events,
reports each damaged place (``Damage``: the segment file and byte offset, what was found, the
event ids lost) and stores that list in the Parquet file's metadata (``flowsite.damage``), so
every later export of the same file reports it again.
"""

from __future__ import annotations

import io
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from engine import fileops
from engine.damage import Damage
from engine.provenance import codec
from engine.provenance.frames import describe_ids
from engine.provenance.repository import ProvenanceRepository
from engine.provenance.segment import SEGMENT_VERSION, BlockError, read_block
from engine.provenance.shard import Shard

__all__ = ["SCHEMA", "STALE_SECONDS", "ExportReport", "ExportedFile", "ProvenanceExporter", "component_names",
           "node_export_directory"]

log = logging.getLogger(__name__)

_TIME = pa.timestamp("ms", tz="UTC")
_STRINGS = pa.list_(pa.string())
_ATTRIBUTES = pa.map_(pa.string(), pa.string())

#: One row per event. Times are UTC instants; durations are milliseconds. ``lineage_duration_ms``
#: is the FlowFile's age at the event (event time minus lineage start), ``processing_duration_ms``
#: the time the component's session took (null when unknown). ``attributes`` holds every
#: attribute as of the event; ``updated_attributes`` those the event set (null for removed ones).
#: ``component_name`` and ``group_id`` are the flow's as the node ran it at export time.
SCHEMA = pa.schema([
    ("event_id", pa.int64()),
    ("event_type", pa.string()),
    ("event_time", _TIME),
    ("flowfile_uuid", pa.string()),
    ("component_id", pa.string()),
    ("component_type", pa.string()),
    ("component_name", pa.string()),
    ("group_id", pa.string()),
    ("relationship", pa.string()),
    ("details", pa.string()),
    ("transit_uri", pa.string()),
    ("source_system_flowfile_id", pa.string()),
    ("alternate_identifier", pa.string()),
    ("source_queue_id", pa.string()),
    ("entry_date", _TIME),
    ("lineage_start_date", _TIME),
    ("lineage_duration_ms", pa.int64()),
    ("processing_duration_ms", pa.int64()),
    ("file_size", pa.int64()),
    ("previous_file_size", pa.int64()),
    ("parent_uuids", _STRINGS),
    ("child_uuids", _STRINGS),
    ("attributes", _ATTRIBUTES),
    ("updated_attributes", _ATTRIBUTES),
    ("node", pa.string()),
])

#: How long a file no export lists any more is kept, in seconds (a query that listed it may still read it).
STALE_SECONDS = 15 * 60.0
_ROWS_PER_GROUP = 65_536
_DAMAGE_KEY = "flowsite.damage"
_DECODE_ERRORS = (ValueError, TypeError, IndexError, KeyError, AttributeError)


@dataclass(frozen=True)
class ExportedFile:
    """One Parquet file of an export: its name in the export directory, the shard it holds,
    its rows, whether the shard is closed, and the damaged places its export met."""

    name: str
    shard: str
    events: int
    closed: bool
    damage: tuple[Damage, ...] = ()


@dataclass
class ExportReport:
    """What one export left in the directory: the files that together hold the node's stored
    provenance now (``files``), how many of them were written by this export, the stale files
    deleted, and the problems met (``errors``: e.g. a journal rollover that failed)."""

    node: str
    directory: str
    files: list[ExportedFile] = field(default_factory=list)
    written: int = 0
    deleted: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(exported.events for exported in self.files)

    @property
    def damage(self) -> list[Damage]:
        return [damage for exported in self.files for damage in exported.damage]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``files`` as dicts (damage as ``{kind, path, offset, found, effect, remedy, text}``)."""
        return {"node": self.node, "directory": self.directory, "written": self.written, "deleted": self.deleted,
                "seconds": round(self.seconds, 3), "events": self.events, "errors": list(self.errors),
                "files": [{"name": f.name, "shard": f.shard, "events": f.events, "closed": f.closed,
                           "damage": [{**asdict(d), "text": str(d)} for d in f.damage]} for f in self.files]}


def node_export_directory(analytics_dir: Path | str, node: str) -> Path:
    """Where node ``node`` exports its provenance within the shared analytics directory."""
    return Path(analytics_dir) / "provenance" / node


def component_names(flow: Any) -> dict[str, tuple[str, str]]:
    """``{component id: (name, group id)}`` of every group, processor, connection, funnel and port
    of a ``FlowDefinition`` (a group's group is its parent's)."""
    names: dict[str, tuple[str, str]] = {}
    for group in flow.groups():
        names.setdefault(group.identifier, (group.name, group.group_id))
        for member in (*group.processors, *group.connections, *group.funnels, *group.input_ports,
                       *group.output_ports, *group.process_groups):
            names[member.identifier] = (member.name, group.identifier)
    return names


class _Sink(io.RawIOBase):
    """A writable stream over an ``AtomicFile``, for ``pq.ParquetWriter``."""

    def __init__(self, target: fileops.AtomicFile) -> None:
        super().__init__()
        self._target = target
        self._position = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self._target.write(data)
        size = memoryview(data).nbytes
        self._position += size
        return size

    def tell(self) -> int:
        return self._position


class _Rows:
    """Columns gathered for the next row group."""

    def __init__(self, node: str, names: Mapping[str, tuple[str, str]]) -> None:
        self.node = node
        self.names = names
        self.columns: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
        self.count = 0

    def add(self, event_id: int, wire: Sequence[Any]) -> None:
        """Add the event whose stored field array is ``wire`` (layout in ``codec``)."""
        columns = self.columns
        event_time, lineage_start, duration = wire[1], wire[6], wire[19]
        previous, updated = wire[9], wire[10]
        attributes = dict(previous)
        for key, value in updated.items():
            if value is None:
                attributes.pop(key, None)
            else:
                attributes[key] = value
        name, group = self.names.get(wire[3], (None, None))
        values = (
            event_id, wire[0], event_time, wire[2], wire[3], wire[4], name, group, wire[13], wire[14], wire[15],
            wire[16], wire[17], wire[18], wire[5] or None, lineage_start or None,
            event_time - lineage_start if lineage_start else None, duration if duration >= 0 else None,
            codec.claim_length(wire[12]), codec.claim_length(wire[11]), list(wire[7]), list(wire[8]),
            list(attributes.items()), list(updated.items()), self.node,
        )
        for column, value in zip(columns.values(), values):
            column.append(value)
        self.count += 1

    def batch(self) -> pa.RecordBatch:
        """The gathered rows as a record batch; the columns start empty again."""
        arrays = [pa.array(values, type=SCHEMA.field(name).type) for name, values in self.columns.items()]
        for values in self.columns.values():
            values.clear()
        self.count = 0
        return pa.RecordBatch.from_arrays(arrays, schema=SCHEMA)


class _ShardGone(Exception):
    """The shard was deleted (retention) while it was being exported."""


class ProvenanceExporter:
    """Exports ``repository``'s shards into ``directory`` as node ``node``'s Parquet files.

    ``components()`` gives ``{component id: (name, group id)}`` of the flow the node runs (see
    ``component_names``); events of components it does not name get null names. One export at a
    time per directory (the caller serialises them, see ``ExportService``).
    """

    def __init__(self, repository: ProvenanceRepository, directory: Path | str, node: str,
                 components: Callable[[], Mapping[str, tuple[str, str]]] = dict, *,
                 stale_seconds: float = STALE_SECONDS) -> None:
        self.repository = repository
        self.directory = Path(directory)
        self.node = node
        self.components = components
        self.stale_seconds = stale_seconds

    def export(self, *, current: bool = True, progress: Callable[[float], None] | None = None) -> ExportReport:
        """Write what is not exported yet and return the export's report. With ``current`` the
        journals are rolled over first and the shard being written is exported too.
        ``progress(fraction)`` is told how far the export is."""
        started = time.monotonic()
        report = ExportReport(self.node, str(self.directory))
        fileops.make_directory(self.directory)
        if current:
            try:
                self.repository.rollover()
            except Exception as error:  # noqa: BLE001 - the shards stored so far are still exported
                report.errors.append(f"the journals could not be rolled over, so the newest events are missing: "
                                     f"{error}")
        shards = self.repository.shards()
        plan = [(shard, True, None) for shard in shards[:-1]]
        if current and shards and shards[-1].count:
            plan.append((shards[-1], False, shards[-1].max_id))
        found = [self._existing(shard, closed, upto) for shard, closed, upto in plan]
        sizes = [max(1, len(shard.blocks())) if exported is None else 0
                 for (shard, _, _), exported in zip(plan, found)]
        total, done = sum(sizes) or 1, 0
        names = self.components()
        for (shard, closed, upto), exported, size in zip(plan, found, sizes):
            if exported is None:
                def step(blocks: int, before: int = done) -> None:
                    if progress is not None:
                        progress(min(1.0, (before + blocks) / total))
                try:
                    exported = self._write(shard, closed, upto, names, step)
                except _ShardGone:
                    continue
                report.written += 1
                done += size
            report.files.append(exported)
        report.deleted = self._delete_stale({exported.name for exported in report.files})
        report.seconds = time.monotonic() - started
        if progress is not None:
            progress(1.0)
        return report

    # -- files ----------------------------------------------------------------------------------

    @staticmethod
    def _name(shard: Shard, closed: bool, upto: int | None) -> str:
        return f"{shard.name}.parquet" if closed else f"{shard.name}.current-{upto}.parquet"

    def _existing(self, shard: Shard, closed: bool, upto: int | None) -> ExportedFile | None:
        """The file an earlier export made of this shard (up to ``upto``), or None."""
        name = self._name(shard, closed, upto)
        try:
            metadata = pq.read_metadata(self.directory / name)
        except FileNotFoundError:
            return None
        except (OSError, pa.ArrowException) as error:
            log.warning("provenance export: %s cannot be read (%s); it is written again", self.directory / name, error)
            return None
        stored = (metadata.metadata or {}).get(_DAMAGE_KEY.encode())
        damage = tuple(Damage(**entry) for entry in json.loads(stored)) if stored else ()
        return ExportedFile(name, shard.name, metadata.num_rows, closed, damage)

    def _write(self, shard: Shard, closed: bool, upto: int | None, names: Mapping[str, tuple[str, str]],
               step: Callable[[int], None]) -> ExportedFile:
        name = self._name(shard, closed, upto)
        rows = _Rows(self.node, names)
        damage: list[Damage] = []
        blocks = shard.blocks()
        framed = shard.segment_version >= SEGMENT_VERSION
        events = 0
        with fileops.AtomicFile(self.directory / name) as target:
            with pq.ParquetWriter(_Sink(target), SCHEMA, compression="zstd") as writer:
                for position, (first_id, path, offset, length) in enumerate(blocks):
                    if upto is not None and first_id > upto:
                        break
                    following = blocks[position + 1][0] if position + 1 < len(blocks) else shard.max_id + 1
                    events += self._add_block(shard, rows, damage, (first_id, path, offset, length), framed,
                                              following, upto)
                    if rows.count >= _ROWS_PER_GROUP:
                        writer.write_batch(rows.batch())
                    step(position + 1)
                if rows.count:
                    writer.write_batch(rows.batch())
                if damage:
                    writer.add_key_value_metadata({_DAMAGE_KEY: json.dumps([asdict(d) for d in damage])})
        for found in damage:
            log.warning("provenance export: %s", found)
        return ExportedFile(name, shard.name, events, closed, tuple(damage))

    def _add_block(self, shard: Shard, rows: _Rows, damage: list[Damage], block: tuple[int, Path, int, int],
                   framed: bool, following: int, upto: int | None) -> int:
        """Add one block's events (those up to ``upto``); returns how many were added."""
        first_id, path, offset, length = block
        try:
            ids, blobs = read_block(path, offset, length, first_id, framed)
        except BlockError as error:
            if shard.deleted or not path.parent.exists():
                raise _ShardGone() from error
            damage.append(_damage(path, offset, str(error), range(first_id, following)))
            return 0
        added = 0
        lost: list[int] = []
        for event_id, blob in zip(ids, blobs):
            if upto is not None and event_id > upto:
                break
            try:
                rows.add(event_id, codec.decode_wire(blob))
            except _DECODE_ERRORS:
                lost.append(event_id)
                continue
            added += 1
        if lost:
            damage.append(_damage(path, offset, "events that do not decode", lost))
        return added

    def _delete_stale(self, listed: set[str]) -> int:
        """Delete the files no export lists that are older than ``stale_seconds``; returns how many."""
        deleted = 0
        cutoff = time.time() - self.stale_seconds
        for entry in os.scandir(self.directory):
            if entry.name in listed or not (entry.name.endswith(".parquet") or entry.name.endswith(".parquet.tmp")):
                continue
            try:
                if entry.stat().st_mtime < cutoff:
                    fileops.unlink(entry.path, missing_ok=True)
                    deleted += 1
            except FileNotFoundError:
                continue
        return deleted


def _damage(path: Path, offset: int, found: str, ids: Iterable[int]) -> Damage:
    return Damage("provenance block", str(path), offset, found,
                  f"events {describe_ids(ids)} cannot be read and are left out of the analytics export",
                  "Restore the segment from a backup to get the events back; the other events are exported.")
