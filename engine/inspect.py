"""Report on and verify a node's data directory: ``python -m engine.inspect DATA_DIR``.

Prints the FlowFiles per queue (swapped ones included), the write-ahead log's state, content
claims and archive figures, and provenance shard figures; then verifies that every FlowFile's
content exists and that claimant counts match the references. Every damage found is printed
with its file and byte offset. Exits 1 on any damage or inconsistency, 2 when the directory is
not a node's data directory. Nothing in the directory is changed, and no damage makes it stop
early: a part that cannot be read is reported and the others are still checked. The directory's
lock is not taken: the report says when a node holds it (its figures may then move under the
reader).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterator, TextIO

from engine.config import StorageConfig
from engine.content.claims import ResourceClaimManager
from engine.content.reader import ContentChecksumError, ContentNotFoundError
from engine.content.repository import ContentRepository
from engine.flowfile import FlowFile
from engine.lock import lock_holder
from engine.provenance.check import check_directory
from engine.provenance.repository import describe_directory
from engine.repository.flowfile_repository import FlowFileRepository, RecoveredFlowFiles
from engine.units import format_data_size
from engine.verify import verify

__all__ = ["main"]


class _Findings:
    """What the inspection found wrong, printed as it goes."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.count = 0

    def report(self, kind: str, text: str) -> None:
        self.count += 1
        print(f"{kind}: {text}", file=self.out)

    def guarded(self, part: str, check: Callable[[], None]) -> None:
        """Run one part of the inspection; a failure is a finding, never the end of it."""
        try:
            check()
        except Exception as error:  # the inspection must report, not crash
            self.report("UNREADABLE", f"{part}: {type(error).__name__}: {error}")


def main(argv: list[str] | None = None) -> int:
    """Run the inspection; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m engine.inspect", description=__doc__.splitlines()[0])
    parser.add_argument("data_dir", type=Path, help="the node's data directory")
    parser.add_argument("--config", type=Path, help="storage settings (JSON), when not the defaults")
    parser.add_argument("--quick", action="store_true",
                        help="do not read every FlowFile's content to check its checksum")
    args = parser.parse_args(argv)
    data_dir: Path = args.data_dir
    if not (data_dir / "flowfile_repository").is_dir():
        print(f"{data_dir} is not a node data directory (no flowfile_repository/ in it)", file=sys.stderr)
        return 2
    try:
        config = StorageConfig.from_mapping(json.loads(args.config.read_text())) if args.config else StorageConfig()
    except (OSError, ValueError) as error:
        print(f"cannot read the settings {args.config}: {error}", file=sys.stderr)
        return 2
    out = sys.stdout
    findings = _Findings(out)
    holder = lock_holder(data_dir)
    if holder is not None:
        print(f"In use by {holder}: a running node may change what follows while it is read", file=out)

    claims = ResourceClaimManager()
    flowfiles = FlowFileRepository(data_dir / "flowfile_repository", claims)
    recovered: list[RecoveredFlowFiles] = []
    findings.guarded("FlowFile repository", lambda: recovered.append(_report_flowfiles(flowfiles, findings)))
    content = ContentRepository(config.container_paths(data_dir), ResourceClaimManager(), config.content_repository)
    findings.guarded("content repository", lambda: _report_content(content, out))
    findings.guarded("provenance repository", lambda: _report_provenance(data_dir, findings))
    if recovered:
        findings.guarded("verification", lambda: _verify(flowfiles, content, claims, findings))
        if not args.quick:
            findings.guarded("content checksums", lambda: _check_content(flowfiles, content, findings))
    if findings.count:
        print(f"INCONSISTENT: {findings.count} problem(s) found", file=out)
        return 1
    print("OK", file=out)
    return 0


def _report_flowfiles(flowfiles: FlowFileRepository, findings: _Findings) -> RecoveredFlowFiles:
    out = findings.out
    recovered = flowfiles.recover(read_only=True)
    wal = recovered.wal
    print("FlowFile repository", file=out)
    print(f"  snapshot: {wal.snapshot_records} records up to transaction {wal.snapshot_max_txn_id}", file=out)
    for scan in wal.journals:
        state = "closed" if scan.end_marker else "open"
        if scan.problem is not None and scan.problem.torn:
            state += f", torn tail at byte {scan.problem.offset}"
        print(f"  journal {scan.name}: {scan.transactions} transactions ({state})", file=out)
    for note in wal.notes:
        print(f"  note: {note}", file=out)
    for damage in wal.damages + flowfiles.damage.entries():
        findings.report("DAMAGE", str(damage))
    for item in wal.given_up:
        print(f"  a start with --accept-damage would give up: {item}", file=out)
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
    return recovered


def _report_content(content: ContentRepository, out: TextIO) -> None:
    print("Content repository", file=out)
    for name, figures in content.stats().containers.items():
        print(
            f"  container {name}: {figures.live_count} claim files, {format_data_size(figures.live_bytes)}; "
            f"archive: {figures.archived_count} files, {format_data_size(figures.archived_bytes)}",
            file=out,
        )


def _report_provenance(data_dir: Path, findings: _Findings) -> None:
    print("Provenance repository", file=findings.out)
    directory = data_dir / "provenance_repository"
    for line in describe_directory(directory):
        print(f"  {line}", file=findings.out)
    for damage in check_directory(directory):
        findings.report("DAMAGE", str(damage))


def _verify(flowfiles: FlowFileRepository, content: ContentRepository, claims: ResourceClaimManager,
            findings: _Findings) -> None:
    out = findings.out
    result = verify(flowfiles, content, claims.counts())
    if result.unreferenced_claims:
        print(
            f"  {len(result.unreferenced_claims)} claim file(s) no FlowFile references "
            "(written by sessions that never committed, or awaiting release; collected at the next start)",
            file=out,
        )
    print(f"Verified {result.flowfiles} FlowFiles in memory and {result.swapped_flowfiles} swapped", file=out)
    for problem in result.problems:
        findings.report("INCONSISTENT", problem)


def _check_content(flowfiles: FlowFileRepository, content: ContentRepository, findings: _Findings) -> None:
    """Read every FlowFile's content whole: the bytes of a checksummed one must match it."""
    checked = 0
    for where, flowfile in _every_flowfile(flowfiles):
        claim = flowfile.content_claim
        if claim is None or claim.checksum is None:
            continue
        checked += 1
        try:
            with content.open_reader(claim) as reader:
                for _ in reader:
                    pass
        except ContentChecksumError as error:
            findings.report("DAMAGE", f"content claim {error.path} at byte offset {claim.offset}: {error.found}; "
                                      f"FlowFile {flowfile.uuid} ({where}) cannot be read")
        except ContentNotFoundError:
            pass  # missing or cut short: the verification above reported it
    print(f"Checked the content of {checked} FlowFile(s) against its checksum", file=findings.out)


def _every_flowfile(flowfiles: FlowFileRepository) -> Iterator[tuple[str, FlowFile]]:
    for queue_id, flowfile in flowfiles.live_flowfiles():
        yield f"queue {queue_id}", flowfile
    for location in sorted(flowfiles.swap_locations):
        try:
            swapped = flowfiles.swap.read(location).flowfiles
        except OSError:
            continue  # reported by the verification
        for flowfile in swapped:
            yield f"swap file {location}", flowfile


if __name__ == "__main__":
    sys.exit(main())
