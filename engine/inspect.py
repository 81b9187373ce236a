"""Report on and verify a node's data directory: ``python -m engine.inspect DATA_DIR``.

Prints the FlowFiles per queue (swapped ones included), the write-ahead log's state, content
claims and archive figures, and provenance shard figures; then verifies that every FlowFile's
content exists and that claimant counts match the references. Exits 1 on any inconsistency,
2 when the directory cannot be read at all. Nothing in the directory is changed, and its lock is
not taken: the report says when a node holds it (its figures may then move under the reader).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from engine.config import StorageConfig
from engine.content.claims import ResourceClaimManager
from engine.content.repository import ContentRepository
from engine.lock import lock_holder
from engine.provenance.repository import describe_directory
from engine.repository.flowfile_repository import FlowFileRepository
from engine.units import format_data_size
from engine.verify import verify
from engine.wal.journal import JournalCorruptionError
from engine.wal.snapshot import SnapshotCorruptionError

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the inspection; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m engine.inspect", description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="the node's data directory")
    parser.add_argument("--config", type=Path, help="storage settings (JSON), when not the defaults")
    args = parser.parse_args(argv)
    data_dir: Path = args.data_dir
    if not (data_dir / "flowfile_repository").is_dir():
        print(f"{data_dir} is not a node data directory (no flowfile_repository/ in it)", file=sys.stderr)
        return 2
    config = StorageConfig.from_mapping(json.loads(args.config.read_text())) if args.config else StorageConfig()
    holder = lock_holder(data_dir)
    if holder is not None:
        print(f"In use by {holder}: a running node may change what follows while it is read", file=sys.stdout)

    claims = ResourceClaimManager()
    flowfiles = FlowFileRepository(data_dir / "flowfile_repository", claims)
    try:
        recovered = flowfiles.recover(read_only=True)
    except (JournalCorruptionError, SnapshotCorruptionError) as error:
        print(f"INCONSISTENT: {error}", file=sys.stderr)
        return 1
    content = ContentRepository(config.container_paths(data_dir), ResourceClaimManager(), config.content_repository)
    out = sys.stdout

    wal = recovered.wal
    print("FlowFile repository", file=out)
    print(f"  snapshot: {wal.snapshot_records} records up to transaction {wal.snapshot_max_txn_id}", file=out)
    for journal in wal.journals:
        state = "closed" if journal.clean_end else "open"
        torn = f", torn tail at byte {journal.torn_at}" if journal.torn_at is not None else ""
        print(f"  journal {journal.path.name}: {journal.transactions} transactions ({state}{torn})", file=out)
    swapped = defaultdict(lambda: [0, 0, 0])
    for queue_id, files in recovered.swap_files.items():
        for _, summary in files:
            figures = swapped[queue_id]
            figures[0] += 1
            figures[1] += summary.count
            figures[2] += summary.bytes
    print("Queues", file=out)
    for queue_id in sorted(set(recovered.queues) | set(swapped)):
        queued = recovered.queues.get(queue_id, [])
        files, count, size = swapped.get(queue_id, (0, 0, 0))
        line = f"  {queue_id}: {len(queued)} FlowFiles, {format_data_size(sum(f.size for f in queued))}"
        if files:
            line += f"; swapped: {count} FlowFiles, {format_data_size(size)} in {files} file(s)"
        print(line, file=out)

    print("Content repository", file=out)
    for name, figures in content.stats().containers.items():
        print(
            f"  container {name}: {figures.live_count} claim files, {format_data_size(figures.live_bytes)}; "
            f"archive: {figures.archived_count} files, {format_data_size(figures.archived_bytes)}",
            file=out,
        )

    print("Provenance repository", file=out)
    for line in describe_directory(data_dir / "provenance_repository"):
        print(f"  {line}", file=out)

    result = verify(flowfiles, content, claims.counts())
    if result.unreferenced_claims:
        print(
            f"  {len(result.unreferenced_claims)} claim file(s) no FlowFile references "
            "(written by sessions that never committed, or awaiting release; collected at the next start)",
            file=out,
        )
    print(f"Verified {result.flowfiles} FlowFiles in memory and {result.swapped_flowfiles} swapped", file=out)
    if not result.ok:
        for problem in result.problems:
            print(f"INCONSISTENT: {problem}", file=out)
        return 1
    print("OK", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
