"""Opening a provenance repository left by the last run: its shards, journals and id floor.

Nothing here refuses to open. A shard is checked and its index rebuilt when needed (see
``shard``); a shard directory without any segment (a rollover that never wrote one) is
deleted; a shard that cannot be opened at all is moved to the quarantine. Journals are read
frame by frame, damage is recorded and the files copied to the quarantine, and every valid
frame is kept for the rollover.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from engine.damage import Damage, DamageLog, Quarantine
from engine.provenance import codec
from engine.provenance.config import ProvenanceConfig
from engine.provenance.frames import describe_ids
from engine.provenance.journal import (
    Held, JournalDamage, JournalFrame, JournalSet, list_journal_sets, read_journal,
)
from engine.provenance.shard import Shard, remove_directory

__all__ = ["WaitingSet", "load_shards", "read_journal_sets", "read_id_floor"]

log = logging.getLogger(__name__)


@dataclass
class WaitingSet:
    """A journal set waiting to be stored: its batches, its files, and the batches only in memory."""

    frames: list[JournalFrame]
    paths: list[Path]
    events: int
    bytes: int
    held: list[Held]

    @classmethod
    def of(cls, generation: JournalSet) -> WaitingSet:
        """The set a rollover takes from the writers (closed first)."""
        return cls(list(generation.frames), generation.paths, generation.events, generation.bytes,
                   list(generation.backlog))


def load_shards(shard_dir: Path, config: ProvenanceConfig, damage: DamageLog, quarantine: Quarantine) -> list[Shard]:
    """Open every shard under ``shard_dir``, in id order."""
    found: list[tuple[int, Path]] = []
    for entry in os.scandir(shard_dir):
        if not entry.is_dir():
            continue
        if entry.name.endswith(".deleting"):
            shutil.rmtree(entry.path)
            continue
        first_time, _, first_id = entry.name.partition("-")
        if not (first_time.isdigit() and first_id.isdigit()):
            log.warning("provenance: ignoring %s, which is not a shard", entry.path)
            continue
        found.append((int(first_id), Path(entry.path)))
    found.sort()
    shards = []
    for position, (_, path) in enumerate(found):
        below = found[position + 1][0] if position + 1 < len(found) else None
        try:
            shard = Shard.open(
                path, below=below, compression=config.compression, indexed_attributes=config.indexed_attributes,
                damage=damage, quarantine=quarantine,
            )
        except Exception as error:  # whatever it is, the node starts without this shard
            log.exception("provenance: cannot open shard %s", path)
            _shard_unusable(path, error, damage, quarantine)
            continue
        if shard is None:
            # Made by a rollover that never wrote a segment: it holds nothing.
            try:
                remove_directory(path)
            except OSError:
                log.exception("provenance: could not delete shard %s, which holds no segment", path)
            continue
        shards.append(shard)
    return shards


def _shard_unusable(path: Path, error: Exception, damage: DamageLog, quarantine: Quarantine) -> None:
    effect = "its events are left out"
    try:
        effect += f"; the shard was moved to {quarantine.move(path)}"
    except OSError:
        log.exception("provenance: could not move shard %s to the quarantine", path)
    damage.record(Damage("provenance index", str(path), None, f"the shard cannot be opened: {error}", effect,
                         "Free space or fix the disk, then move the shard back to restore it."))


def read_journal_sets(
    journal_dir: Path, config: ProvenanceConfig, stored_max_id: int, damage: DamageLog, quarantine: Quarantine,
) -> tuple[list[WaitingSet], int]:
    """The journal sets left in ``journal_dir``, oldest first, and the highest id they name."""
    sets = []
    highest = stored_max_id
    for _, paths in list_journal_sets(journal_dir):
        frames: list[JournalFrame] = []
        for path in list(paths):
            try:
                contents = read_journal(path)
            except OSError as error:
                # Left in place (not deleted by the rollover) for the operator.
                paths.remove(path)
                damage.record(Damage("provenance journal", str(path), None, f"the file cannot be read: {error}",
                                     "its events are left out; the file is left in place"))
                continue
            if contents.damage:
                _journal_damaged(path, contents.damage, stored_max_id, damage, quarantine)
                # Ids a damaged frame held are not handed out again.
                highest = max([highest, *(place.lost[-1] for place in contents.damage if place.lost)])
            frames += contents.frames
        for i, frame in enumerate(frames):
            highest = max(highest, frame.first_id + len(frame.events) - 1)
            if frame.fragments is None:
                events = [codec.event_from_wire(codec.decode_wire(blob), -1) for blob in frame.events]
                frames[i] = frame._replace(fragments=codec.index_fragments(events, config.indexed_attributes))
        events = sum(len(frame.events) for frame in frames)
        sets.append(WaitingSet(frames, paths, events, sum(path.stat().st_size for path in paths), []))
    return sets, highest


def _journal_damaged(
    path: Path, places: list[JournalDamage], stored_max_id: int, damage: DamageLog, quarantine: Quarantine
) -> None:
    try:
        kept = f"the file is kept in {quarantine.copy(path)}"
    except OSError as error:
        kept = f"the file could not be copied to the quarantine ({error})"
    for place in places:
        if place.lost is None:
            effect = "an unknown number of events are lost"
        elif place.lost[-1] <= stored_max_id:
            effect = f"events {describe_ids(place.lost)} were already stored in a shard: nothing is lost"
        else:
            effect = f"events {describe_ids(place.lost)} are lost"
        damage.record(Damage("provenance journal", str(path), place.offset, place.found,
                             f"{effect}; every valid frame after it was kept; {kept}"))


def read_id_floor(path: Path, damage: DamageLog) -> int:
    """The id floor kept at ``path`` (0 when absent or unreadable, the latter recorded)."""
    try:
        return int(path.read_text())
    except FileNotFoundError:
        return 0
    except (OSError, ValueError) as error:
        damage.record(Damage(
            "provenance id floor", str(path), None, f"unreadable: {error}",
            "event ids go on from the highest id in the shards and journals; if every shard had aged off, "
            "new ids may repeat old ones",
        ))
        return 0
