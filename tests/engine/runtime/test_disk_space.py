"""A full disk is a pause, not a failure: the disk-space settings, the state machine driven by
made-up readings, the monitor's bulletins, the flow pausing and resuming, sessions failing with
ENOSPC, and one check against a real (tmpfs) file system."""

from __future__ import annotations

import errno
import os
import threading
import time
from pathlib import Path

import pytest

from engine.node import NodeConfig
from engine.runtime import ManualClock
from engine.runtime.bulletins import BulletinBoard
from engine.runtime.connectable import Outcome
from engine.runtime.disk_space import (
    DiskSpaceConfig,
    DiskSpaceMonitor,
    DiskSpaceState,
    FreeSpace,
    Reading,
    is_disk_full,
)
from engine.testing.faults import FaultPlan
from engine.testing.flows import connection, flow, processor
from tests.engine.tmpfs import mounted_tmpfs

from .test_scheduling import seed

MB = 1 << 20
GB = 1 << 30


# -- settings -----------------------------------------------------------------------------


def test_settings_take_sizes_percentages_and_durations():
    config = DiskSpaceConfig.from_mapping({"min-free": "500 MB", "check-interval": "250 millis",
                                           "resume_margin": "20%"})
    assert config.min_free == FreeSpace(500 * MB) and config.check_interval == 0.25 and config.resume_margin == 20
    assert config.levels(10 * GB) == (500 * MB, 600 * MB)
    percent = DiskSpaceConfig.from_mapping({"min_free": "5%"})
    assert percent.levels(1000) == (50, 55), "the default margin is 10%"
    assert str(percent.min_free) == "5%" and str(DiskSpaceConfig().min_free) == "100 MB"
    assert DiskSpaceConfig().check_interval == 1.0
    assert DiskSpaceConfig.from_mapping({"min_free": 0}).levels(GB) == (0, 0)


@pytest.mark.parametrize(("values", "message"), [
    ({"min_free": "lots"}, "disk_space setting 'min_free'"),
    ({"min_free": "100%"}, "disk_space setting 'min_free'"),
    ({"check_interval": "0 sec"}, "check_interval must be positive"),
    ({"max_free": "1 GB"}, "unknown disk_space setting 'max_free'"),
])
def test_bad_settings_are_refused_naming_them(values, message):
    with pytest.raises(ValueError, match=message):
        DiskSpaceConfig.from_mapping(values)


def test_a_node_config_reads_the_disk_space_section():
    config = NodeConfig.from_mapping({"disk_space": {"min_free": "1 GB"}, "runtime": {"swap-threshold": 10}})
    assert config.disk_space.min_free == FreeSpace(GB) and config.runtime.swap_threshold == 10
    assert NodeConfig().disk_space == DiskSpaceConfig()


# -- the state machine --------------------------------------------------------------------


def reading(free: int, repository: str = "content repository", total: int = 10 * GB) -> Reading:
    return Reading(repository, Path("/data") / repository.split()[0], free, total)


def test_low_space_pauses_and_only_space_above_the_margin_resumes():
    state = DiskSpaceState(DiskSpaceConfig(min_free=FreeSpace(100 * MB)))
    assert state.observe(reading(200 * MB)) is None and not state.paused
    change = state.observe(reading(99 * MB))
    assert change.low and (change.threshold, change.resume_at) == (100 * MB, 110 * MB) and state.paused
    assert state.observe(reading(50 * MB)) is None, "already paused"
    assert state.observe(reading(105 * MB)) is None and state.paused, "above the minimum but within the margin"
    change = state.observe(reading(110 * MB))
    assert not change.low and not state.paused
    assert state.observe(reading(105 * MB)) is None, "within the margin does not pause again"


def test_the_node_stays_paused_while_any_repository_is_short():
    state = DiskSpaceState(DiskSpaceConfig(min_free=FreeSpace(percent=5)))
    state.observe(reading(100 * MB, "FlowFile repository"))
    state.observe(reading(100 * MB, "provenance repository"))
    assert [r.repository for r in state.short()] == ["FlowFile repository", "provenance repository"]
    state.observe(reading(GB, "FlowFile repository"))
    assert state.paused and [r.repository for r in state.short()] == ["provenance repository"]
    state.observe(reading(GB, "provenance repository"))
    assert not state.paused
    figures = state.as_dict()
    assert figures["paused"] is False and figures["min_free"] == "5%"
    assert {r["repository"]: r["min_free_bytes"] for r in figures["repositories"]} == {
        "FlowFile repository": 512 * MB, "provenance repository": 512 * MB}


def test_disk_full_errors_are_recognised_through_their_causes():
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    assert is_disk_full(full) and is_disk_full(OSError(errno.EDQUOT, "quota"))
    try:
        try:
            raise full
        except OSError as error:
            raise RuntimeError("commit failed") from error
    except RuntimeError as wrapped:
        assert is_disk_full(wrapped)
    assert not is_disk_full(OSError(errno.EIO, "I/O error")) and not is_disk_full(ValueError("x"))


# -- the monitor --------------------------------------------------------------------------


class FakeDisk:
    """Free space per directory, as the monitor's probe reports it."""

    def __init__(self, free: int, total: int = GB) -> None:
        self.free: dict[Path, int] = {}
        self.default = free
        self.total = total
        self.calls = 0

    def __call__(self, directory: Path) -> tuple[int, int]:
        self.calls += 1
        if not directory.exists():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(directory))
        return self.free.get(directory, self.default), self.total


def test_the_monitor_posts_a_warning_naming_the_repository_and_an_info_on_recovery(tmp_path, caplog):
    flowfiles, content = tmp_path / "ff", tmp_path / "content"
    flowfiles.mkdir(), content.mkdir()
    board, cleanups = BulletinBoard(), []
    disk = FakeDisk(free=500 * MB)
    monitor = DiskSpaceMonitor({"FlowFile repository": flowfiles, "content repository (container default)": content},
                               DiskSpaceConfig(min_free=FreeSpace(100 * MB)), board, probe=disk,
                               on_low=lambda: cleanups.append(True))
    assert monitor.check() == [] and not monitor.paused and monitor.describe() is None

    disk.free[content] = 40 * MB
    (change,) = monitor.check()
    assert change.low and monitor.paused and cleanups == [True], "the archive cleanup is asked to run at once"
    (warning,) = board.recent()
    assert warning.level == "WARN" and warning.source_name == "content repository (container default)"
    assert str(content) in warning.message and "40 MB (41943040 bytes) free" in warning.message
    assert "below the minimum of 100 MB" in warning.message and "paused until 110 MB are free" in warning.message
    assert "PAUSED" in monitor.describe() and "content repository (container default) 40 MB free" in monitor.describe()
    assert monitor.status()["paused"] is True

    disk.free[flowfiles] = 10 * MB
    monitor.check()
    disk.free[content] = 300 * MB
    monitor.check()
    info = board.recent()[-1]
    assert info.level == "INFO" and "processing stays paused: FlowFile repository still short" in info.message
    disk.free[flowfiles] = 300 * MB
    monitor.check()
    assert not monitor.paused and board.recent()[-1].message.endswith("processing resumes")
    assert cleanups == [True, True]
    assert "is short of disk space" in caplog.text and "processing resumes" in caplog.text


def test_an_unreadable_directory_is_reported_once_and_skipped(tmp_path, caplog):
    monitor = DiskSpaceMonitor({"provenance repository": tmp_path / "gone"}, DiskSpaceConfig(), BulletinBoard(),
                               probe=FakeDisk(free=0))
    monitor.check()
    monitor.check()
    assert caplog.text.count("cannot read the free space of provenance repository") == 1 and not monitor.paused


def test_a_writer_meeting_enospc_makes_the_monitor_look_at_once(tmp_path):
    disk = FakeDisk(free=GB)
    monitor = DiskSpaceMonitor({"FlowFile repository": tmp_path}, DiskSpaceConfig(check_interval=60),
                               BulletinBoard(), probe=disk)
    monitor.start()
    try:
        assert disk.calls == 1, "a first check at start"
        from engine import fileops
        with FaultPlan(fail_at=1, errno=errno.ENOSPC).installed(), pytest.raises(OSError):
            fileops.write_atomically(tmp_path / "x", b"data")
        deadline = time.monotonic() + 5
        while disk.calls < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert disk.calls == 2, "checked long before the 60 s interval"
    finally:
        monitor.stop()
    assert not any(t.name == "disk-space-monitor" for t in threading.enumerate())


# -- the flow pausing ---------------------------------------------------------------------


def paused_controller(make_controller, document, free: int):
    controller = make_controller(document, clock=ManualClock(),
                                 disk_space=DiskSpaceConfig(min_free=FreeSpace(100 * MB)))
    disk = FakeDisk(free=free)
    controller.disk_space.probe = disk
    return controller, disk


def test_a_paused_node_triggers_nothing_and_says_so_until_space_is_back(make_controller):
    document = flow(processors=[processor("t", "Tick", {"Emit": "true"}, schedulingPeriod="0 sec"),
                                processor("p", "Pass", auto_terminate=["success"], state="ENABLED")],
                    connections=[connection("c", "t", "p")])
    controller, disk = paused_controller(make_controller, document, free=50 * MB)
    controller.start_components()
    scans = controller.storage.content.archive_scans("default")
    controller.disk_space.check()
    assert controller.storage.content.archive_scans("default") == scans + 1, "the archive cleanup ran at once"
    tick = controller.processor("t")
    assert tick.run_task() is Outcome.DISK_FULL and tick.processor.triggers == 0
    status = controller.status()
    assert status.node.disk_space["paused"] is True
    assert {r["repository"] for r in status.node.disk_space["repositories"]} == {
        "FlowFile repository", "content repository (container default)", "provenance repository"}
    assert any(b["level"] == "WARN" and "short of disk space" in b["message"] for b in status.bulletins)
    assert "PAUSED, disk space low" in controller.status_line()
    assert tick.run_status() == "Running", "the processor keeps its run state: the node is paused, not it"

    disk.default = 500 * MB
    controller.disk_space.check()
    assert tick.run_task() is Outcome.DID_WORK and len(controller.queue("c")) == 1
    assert "PAUSED" not in controller.status_line() and controller.status().node.disk_space["paused"] is False


def test_a_session_failing_for_a_full_disk_rolls_back_unpenalized_and_yields_briefly(make_controller):
    document = flow(processors=[processor("t", "Tick", state="ENABLED"),
                                processor("p", "Pass", yieldDuration="2 sec"),
                                processor("sink", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("in", "t", "p"), connection("out", "p", "sink")])
    clock = ManualClock()
    controller = make_controller(document, clock=clock, disk_space=DiskSpaceConfig(min_free=FreeSpace(0)))
    controller.disk_space.probe = FakeDisk(free=GB)
    controller.start_components()
    seed(controller, "in", 3)
    node = controller.processor("p")
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}, persistent=True).installed():
        assert node.run_task() is Outcome.DISK_FULL
    assert len(controller.queue("in")) == 3 and len(controller.queue("out")) == 0, "nothing lost, nothing moved"
    assert all(f.penalty_expiration == 0 for f in controller.queue("in").peek(3)), "not the FlowFiles' fault"
    (bulletin,) = [b for b in controller.bulletins.recent() if b.source_id == "p"]
    assert bulletin.level == "WARN" and "the disk is full" in bulletin.message and "nothing is lost" in bulletin.message
    assert node.run_task() is Outcome.YIELDED
    clock.advance(2.0)
    assert node.run_task() is Outcome.DID_WORK, "the processor's own yield, not the 30 s administrative one"
    assert len(controller.queue("out")) == 3


# -- a real file system -------------------------------------------------------------------


@pytest.fixture
def tmpfs(tmp_path):
    """A 16 MB tmpfs mounted for the test (root only)."""
    with mounted_tmpfs(tmp_path / "tmpfs", "16m") as mount_point:
        yield mount_point


def test_a_real_file_system_filling_up_pauses_and_emptying_resumes(tmpfs):
    board = BulletinBoard()
    directory = tmpfs / "content"
    directory.mkdir()
    monitor = DiskSpaceMonitor({"content repository (container default)": directory},
                               DiskSpaceConfig(min_free=FreeSpace(4 * MB)), board)
    assert monitor.check() == [] and not monitor.paused
    ballast = tmpfs / "ballast"
    with open(ballast, "wb") as handle:
        handle.write(b"\0" * (13 * MB))
    (change,) = monitor.check()
    assert change.low and monitor.paused and change.reading.free < 4 * MB and change.reading.total == 16 * MB
    assert str(directory) in board.recent()[-1].message
    ballast.unlink()
    (change,) = monitor.check()
    assert not change.low and not monitor.paused
