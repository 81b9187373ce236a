"""The Parquet export of provenance: known events give known rows; closed shards are written once,
the shard being written on demand under a new name as it grows; stale files go after their grace;
a damaged block is reported with its file and byte offset (and again by every later export)
while the rest is exported; the export service runs exports for polling requesters."""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from engine.flow import load_flow
from engine.provenance import ProvenanceConfig, ProvenanceEvent, ProvenanceEventType as E, ProvenanceRepository
from engine.provenance import frames, segment
from engine.provenance.export import SCHEMA, ExportReport, ProvenanceExporter, component_names, node_export_directory
from engine.provenance.export_service import ExportService
from tests.engine.provenance.conftest import T0, claim, make_event

CONFIG = ProvenanceConfig(journal_count=2, max_storage_time=10 * 365 * 86400.0, shard_duration=1.0)


def at(millis: int) -> datetime:
    return datetime.fromtimestamp(millis / 1000, timezone.utc)


@pytest.fixture
def repo(tmp_path: Path):
    with ProvenanceRepository(tmp_path / "prov", CONFIG) as repository:
        yield repository


def rows(directory: Path, report: ExportReport) -> list[dict]:
    found = []
    for exported in report.files:
        found += pq.read_table(directory / exported.name).to_pylist()
    return found


def test_known_events_become_known_rows(repo, tmp_path):
    route = ProvenanceEvent(
        E.ROUTE, T0 + 250, "ff-1", "proc-1", "RouteOnAttribute", entry_date=T0 + 100, lineage_start_date=T0,
        parent_uuids=("p-1", "p-2"), child_uuids=("c-1",),
        previous_attributes={"uuid": "ff-1", "filename": "a.txt", "gone": "x"},
        updated_attributes={"route": "matched", "gone": None}, previous_content_claim=claim(length=7),
        content_claim=claim("2-1", length=42), relationship="matched", details="because", transit_uri="file:///a",
        source_system_flowfile_id="sys-1", alternate_identifier="alt-1", source_queue_id="q-1", duration=12)
    drop = ProvenanceEvent(E.DROP, T0 + 300, "ff-2", "conn-1", "Connection", details="emptied")
    repo.register_events([route, drop])
    out = tmp_path / "out"
    report = ProvenanceExporter(repo, out, "node-a", lambda: {"proc-1": ("Route it", "group-1")}).export()

    assert report.written == 1 and report.events == 2 and report.errors == []
    assert pq.read_schema(out / report.files[0].name).remove_metadata() == SCHEMA
    first, second = rows(out, report)
    assert first == {
        "event_id": 1, "event_type": "ROUTE", "event_time": at(T0 + 250), "flowfile_uuid": "ff-1",
        "component_id": "proc-1", "component_type": "RouteOnAttribute", "component_name": "Route it",
        "group_id": "group-1", "relationship": "matched", "details": "because", "transit_uri": "file:///a",
        "source_system_flowfile_id": "sys-1", "alternate_identifier": "alt-1", "source_queue_id": "q-1",
        "entry_date": at(T0 + 100), "lineage_start_date": at(T0), "lineage_duration_ms": 250,
        "processing_duration_ms": 12, "file_size": 42, "previous_file_size": 7, "parent_uuids": ["p-1", "p-2"],
        "child_uuids": ["c-1"], "attributes": [("uuid", "ff-1"), ("filename", "a.txt"), ("route", "matched")],
        "updated_attributes": [("route", "matched"), ("gone", None)], "node": "node-a",
    }
    assert second["event_id"] == 2 and second["event_type"] == "DROP" and second["component_name"] is None
    assert (second["entry_date"], second["lineage_start_date"], second["lineage_duration_ms"],
            second["processing_duration_ms"], second["file_size"]) == (None, None, None, None, 0)


def test_closed_shards_are_written_once_and_the_current_one_as_it_grows(repo, tmp_path):
    out = tmp_path / "out"
    exporter = ProvenanceExporter(repo, out, "n1", stale_seconds=3600)
    repo.register_events([make_event(time=T0 + i) for i in range(3)])
    repo.rollover()
    repo.register_events([make_event(time=T0 + 5000 + i) for i in range(2)])  # past shard_duration: a new shard

    first = exporter.export()
    closed, current = first.files
    assert (closed.closed, closed.events, current.closed, current.events) == (True, 3, False, 2)
    assert closed.name == f"{closed.shard}.parquet"
    assert current.name == f"{current.shard}.current-5.parquet"
    assert first.written == 2
    closed_inode = (out / closed.name).stat().st_ino

    again = exporter.export()
    assert again.written == 0 and [f.name for f in again.files] == [closed.name, current.name]
    assert (out / closed.name).stat().st_ino == closed_inode

    repo.register_events([make_event(time=T0 + 5100)])
    grown = exporter.export()
    assert grown.written == 1
    assert [f.name for f in grown.files] == [closed.name, f"{current.shard}.current-6.parquet"]
    assert (out / current.name).exists(), "a replaced current file is kept for its grace period"
    assert [row["event_id"] for row in rows(out, grown)] == [1, 2, 3, 4, 5, 6]

    only_closed = exporter.export(current=False)
    assert [f.name for f in only_closed.files] == [closed.name]


def test_files_no_export_lists_go_once_their_grace_is_over(repo, tmp_path):
    out = tmp_path / "out"
    repo.register_events([make_event(time=T0)])
    first = ProvenanceExporter(repo, out, "n1").export()
    repo.register_events([make_event(time=T0 + 10)])
    old = out / first.files[0].name
    (out / "crashed.parquet.tmp").write_bytes(b"half a file")
    second = ProvenanceExporter(repo, out, "n1", stale_seconds=0).export()
    assert not old.exists() and not (out / "crashed.parquet.tmp").exists()
    assert second.deleted == 2
    assert sorted(os.listdir(out)) == [second.files[0].name]


def test_an_aged_off_shard_s_file_goes_too(repo, tmp_path):
    out = tmp_path / "out"
    repo.register_events([make_event(time=T0)])
    repo.rollover()
    repo.register_events([make_event(time=T0 + 5000)])
    exporter = ProvenanceExporter(repo, out, "n1", stale_seconds=0)
    closed = exporter.export().files[0]
    repo.config = ProvenanceConfig(journal_count=2, max_storage_time=1.0, shard_duration=1.0)
    assert repo.run_maintenance(now=T0 + 4000) == 1
    report = exporter.export()
    assert closed.name not in os.listdir(out)
    assert [f.events for f in report.files] == [1]


def segment_of(shard_dir: Path) -> Path:
    (found,) = shard_dir.glob("*.seg")
    return found


def test_a_damaged_block_is_reported_with_its_file_and_offset_and_the_rest_exported(repo, tmp_path):
    out = tmp_path / "out"
    repo.register_events([make_event(time=T0 + i) for i in range(3 * segment.BLOCK_EVENTS)])
    repo.rollover()
    repo.register_events([make_event(time=T0 + 9000)])
    closed_shard = repo.shards()[0]
    path = segment_of(closed_shard.path)
    (_, _, offset, _), = [block for block in closed_shard.blocks() if block[0] == segment.BLOCK_EVENTS + 1]
    data = bytearray(path.read_bytes())
    data[offset + frames.OVERHEAD + 5] ^= 0x5A  # inside the second block's payload
    path.write_bytes(bytes(data))

    report = ProvenanceExporter(repo, out, "n1").export()
    closed = report.files[0]
    (damage,) = closed.damage
    assert (damage.kind, damage.path, damage.offset) == ("provenance block", str(path), offset)
    assert "checksum" in damage.found
    assert f"events {segment.BLOCK_EVENTS + 1}–{2 * segment.BLOCK_EVENTS}" in damage.effect
    assert str(damage) in report.as_dict()["files"][0]["damage"][0]["text"]
    exported = [row["event_id"] for row in pq.read_table(out / closed.name).to_pylist()]
    assert exported == [*range(1, segment.BLOCK_EVENTS + 1), *range(2 * segment.BLOCK_EVENTS + 1, 3 * segment.BLOCK_EVENTS + 1)]
    assert closed.events == 2 * segment.BLOCK_EVENTS

    again = ProvenanceExporter(repo, out, "n1").export()
    assert again.written == 0
    assert again.files[0].damage == (damage,), "the damage is reported by every export of the file"
    assert report.damage == [damage]


def test_a_rollover_that_fails_is_reported_and_the_stored_shards_still_exported(repo, tmp_path, monkeypatch):
    repo.register_events([make_event(time=T0)])
    repo.rollover()

    def refuse():
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(repo, "rollover", refuse)
    report = ProvenanceExporter(repo, tmp_path / "out", "n1").export()
    assert report.events == 1
    assert report.errors and "No space left on device" in report.errors[0]


def test_component_names_come_from_the_flow():
    flow = load_flow({"flowContents": {
        "identifier": "root", "name": "Root",
        "processors": [{"identifier": "gen", "name": "Generate", "type": "GenerateFlowFile"}],
        "processGroups": [{"identifier": "child", "name": "Child", "processors": [
            {"identifier": "log", "name": "Log", "type": "LogAttribute"}],
            "funnels": [{"identifier": "fun"}]}]}})
    names = component_names(flow)
    assert names["gen"] == ("Generate", "root")
    assert names["child"] == ("Child", "root")
    assert names["log"] == ("Log", "child")
    assert names["fun"][1] == "child"
    assert node_export_directory("/shared", "n1") == Path("/shared/provenance/n1")


# -- the export service -------------------------------------------------------------------------


def wait_for(service: ExportService, token: str, timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = service.request(token)
        if state["state"] in ("done", "failed"):
            return state
        time.sleep(0.01)
    raise AssertionError(f"the export for {token} did not finish")


def test_the_service_answers_at_once_and_serves_waiting_tokens_with_a_later_export():
    release = threading.Event()
    runs = []

    def export(progress):
        runs.append(len(runs))
        progress(0.5)
        release.wait(10)
        return ExportReport("n1", "/x")

    service = ExportService(export)
    assert service.request("a")["state"] in ("waiting", "running")
    deadline = time.monotonic() + 5
    while service.request("a") != {"state": "running", "percent": 50} and time.monotonic() < deadline:
        time.sleep(0.01)
    assert service.request("a") == {"state": "running", "percent": 50}
    assert service.request("b")["state"] == "waiting", "an export already under way does not serve a newer token"
    assert service.request("c")["state"] == "waiting"
    release.set()
    assert wait_for(service, "a")["report"]["node"] == "n1"
    assert wait_for(service, "b")["state"] == "done" and wait_for(service, "c")["state"] == "done"
    assert runs == [0, 1], "the waiting tokens shared one export"


def test_a_failed_export_is_reported_to_its_tokens_and_tokens_are_checked():
    def export(progress):
        raise OSError("disk gone")

    service = ExportService(export)
    assert wait_for(service, "t") == {"state": "failed", "percent": 100, "error": "disk gone"}
    with pytest.raises(ValueError):
        service.request("")
    with pytest.raises(ValueError):
        service.request(None)
