"""``python -m engine.inspect``: figures of a data directory and its consistency check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine.storage import NodeStorage
from tests.engine.session.conftest import Node

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_inspect(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine.inspect", *args],
        cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True, text=True, timeout=60,
    )


def populate(data_dir: Path) -> tuple[NodeStorage, list]:
    """Fill a data directory; the storage is returned open, as a killed node leaves it."""
    storage = NodeStorage(data_dir)
    storage.open(background=False)
    node = Node(storage)
    queued = node.seed("greetings", b"hello", b"world!")
    node.seed("other", b"x" * 1000)
    flowfiles = node.storage.flowfiles
    swapped = node.seed("bulk", *[b"%d" % i for i in range(20)])
    flowfiles.swap.swap_out("bulk", swapped[10:])
    node.storage.provenance.rollover()
    return storage, queued


def test_reports_queues_claims_and_provenance_and_passes(tmp_path):
    storage, _ = populate(tmp_path)
    result = run_inspect(str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "greetings: 2 FlowFiles, 11 B" in out
    assert "bulk: 10 FlowFiles" in out and "swapped: 10 FlowFiles" in out and "in 1 file(s)" in out
    assert "container default:" in out
    assert "shard(s)" in out and "event(s)" in out
    assert out.rstrip().endswith("OK")


def test_a_missing_claim_makes_it_fail(tmp_path):
    _, queued = populate(tmp_path)
    claim = queued[0].content_claim.resource_claim
    path = tmp_path / "content_repository" / str(claim.section) / claim.identifier
    path.unlink()
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1
    assert f"references content {claim}, which is missing" in result.stdout


def test_a_truncated_claim_makes_it_fail(tmp_path):
    _, queued = populate(tmp_path)
    claim = queued[1].content_claim
    path = tmp_path / "content_repository" / str(claim.resource_claim.section) / claim.resource_claim.identifier
    os.truncate(path, claim.offset + 1)
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1 and "which holds only" in result.stdout


def test_a_damaged_swap_file_makes_it_fail(tmp_path):
    storage, _ = populate(tmp_path)
    (swap_file,) = (tmp_path / "flowfile_repository" / "swap").glob("*.swap")
    data = bytearray(swap_file.read_bytes())
    data[-5] ^= 0xFF
    swap_file.write_bytes(bytes(data))
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1 and "checksum" in result.stdout


def test_journal_corruption_makes_it_fail_naming_the_offset(tmp_path):
    storage, _ = populate(tmp_path)
    (journal,) = sorted((tmp_path / "flowfile_repository" / "journals").glob("*.journal"))[-1:]
    data = bytearray(journal.read_bytes())
    data[len(data) // 2] ^= 0xFF
    journal.write_bytes(bytes(data))
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1
    assert f"DAMAGE: journal {journal} at byte offset" in result.stdout


def test_it_changes_nothing(tmp_path):
    storage, _ = populate(tmp_path)
    storage.close()
    before = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    assert run_inspect(str(tmp_path)).returncode == 0
    after = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    assert before == after


def test_not_a_data_directory(tmp_path):
    result = run_inspect(str(tmp_path / "nothing"))
    assert result.returncode == 2 and "not a node data directory" in result.stderr


def test_a_claim_in_an_unknown_container_makes_it_fail(tmp_path):
    storage, queued = populate(tmp_path)
    flowfiles = storage.flowfiles
    from engine.repository.records import RepositoryRecord

    stray = queued[0]
    moved = stray._replace(content_claim=stray.content_claim._replace(
        resource_claim=stray.content_claim.resource_claim._replace(container="elsewhere")))
    flowfiles.update([RepositoryRecord.update(moved, "greetings", None)])
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1
    assert "unknown container 'elsewhere'" in result.stdout


def test_a_flipped_byte_of_content_is_reported_with_its_file_and_offset(tmp_path):
    _, queued = populate(tmp_path)
    claim = queued[1].content_claim
    path = tmp_path / "content_repository" / str(claim.resource_claim.section) / claim.resource_claim.identifier
    data = bytearray(path.read_bytes())
    data[claim.offset + 2] ^= 0x01
    path.write_bytes(bytes(data))
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1
    assert f"DAMAGE: content claim {path} at byte offset {claim.offset}: checksum mismatch" in result.stdout
    assert run_inspect(str(tmp_path), "--quick").returncode == 0  # the quick check reads no content


def test_every_kind_of_damage_is_reported_and_it_never_crashes(tmp_path):
    storage, queued = populate(tmp_path)
    storage.close()
    for journal in (tmp_path / "flowfile_repository" / "journals").glob("*.journal"):
        journal.write_bytes(b"\x13" * 64)
    (tmp_path / "flowfile_repository" / "snapshot").write_bytes(b"")
    for swap in (tmp_path / "flowfile_repository" / "swap").glob("*.swap"):
        swap.write_bytes(swap.read_bytes()[:30])
    for shard in (tmp_path / "provenance_repository" / "shards").iterdir():
        for file in shard.iterdir():
            file.write_bytes(b"garbage")
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "DAMAGE: snapshot" in result.stdout and "DAMAGE: journal" in result.stdout
    assert "DAMAGE: provenance block" in result.stdout and "DAMAGE: provenance index" in result.stdout
    assert "INCONSISTENT" in result.stdout


def test_a_damaged_provenance_block_is_reported_with_its_offset(tmp_path):
    storage, _ = populate(tmp_path)
    storage.close()
    (segment,) = (tmp_path / "provenance_repository" / "shards").glob("*/*.seg")
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    result = run_inspect(str(tmp_path))
    assert result.returncode == 1
    assert f"DAMAGE: provenance block {segment} at byte offset" in result.stdout


def test_a_repository_killed_while_it_was_created_passes(tmp_path):
    """A node killed at its very start may leave directories half made: nothing was
    acknowledged, so nothing is missing (found by the SIGKILL campaign)."""
    storage, _ = populate(tmp_path)
    storage.close()
    for journal in (tmp_path / "provenance_repository" / "journals").iterdir():
        journal.unlink()
    (tmp_path / "provenance_repository" / "journals").rmdir()
    result = run_inspect(str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 journal set(s) awaiting rollover" in result.stdout
