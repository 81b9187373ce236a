"""Three real nodes: one coordinator and one primary, re-elected within two heartbeat intervals
after a SIGKILL, and a primary-node-only ListFile that lists each file once across the change."""

from __future__ import annotations

import time
from pathlib import Path

from engine.testing.flows import connection, flow, processor
from tests.workers.cluster import INTERVAL, wait_until


def listing_flow(source: Path, out: Path) -> dict:
    """ListFile (primary node only) → PutFile into ``out``; a file listed twice fails to be written
    there again, and the node logs that it "already exists"."""
    return flow(processors=[
        processor("list", "ListFile", {"Input Directory": str(source)}, schedulingPeriod="200 millis"),
        processor("put", "PutFile", {"Directory": str(out), "Conflict Resolution Strategy": "fail"},
                  auto_terminate=["success", "failure"]),
    ], connections=[connection("listed", "list", "put")])


def write_files(directory: Path, names: list[str]) -> None:
    for name in names:
        (directory / name).write_text(name)


def files(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir()} if directory.is_dir() else set()


def takeover(cluster, role: str, dead: str) -> float:
    """Seconds from now until a live node other than ``dead`` holds ``role``."""
    started = time.monotonic()
    wait_until(lambda: cluster.holder(role) not in (None, dead), 30, f"a new {role}")
    return time.monotonic() - started


def test_roles_move_within_two_intervals_and_listfile_lists_each_file_once(tmp_path, cluster_factory):
    source, out = tmp_path / "in", tmp_path / "out"
    for directory in (source, out):
        directory.mkdir()
    cluster = cluster_factory(election_max_candidates=3)
    document = listing_flow(source, out)
    for node_id in ("n1", "n2", "n3"):
        cluster.start(node_id, document)
    cluster.wait_connected("n1", "n2", "n3")
    coordinator = wait_until(lambda: cluster.holder("coordinator"), 30, "a coordinator")
    primary = wait_until(lambda: cluster.holder("primary"), 30, "a primary node")
    views = cluster.view().nodes
    assert sum("coordinator" in v.roles for v in views.values()) == 1
    assert sum("primary" in v.roles for v in views.values()) == 1

    first = [f"a{i}.txt" for i in range(20)]
    write_files(source, first)
    wait_until(lambda: files(out) == set(first), 60, "the first files listed and written")

    cluster.nodes[coordinator].kill()
    seconds = takeover(cluster, "coordinator", coordinator)
    print(f"coordinator taken over in {seconds:.2f} s")
    assert seconds <= 2 * INTERVAL
    primary = wait_until(lambda: cluster.holder("primary") not in (None, coordinator) and cluster.holder("primary"),
                         30, "a live primary")
    cluster.nodes[primary].kill()
    seconds = takeover(cluster, "primary", primary)
    print(f"primary taken over in {seconds:.2f} s")
    assert seconds <= 2 * INTERVAL
    survivor = cluster.holder("primary")
    assert cluster.nodes[survivor].alive

    second = [f"b{i}.txt" for i in range(20)]
    write_files(source, second)
    wait_until(lambda: files(out) == set(first + second), 60, "the second files listed by the new primary")
    time.sleep(3 * INTERVAL)
    assert files(out) == set(first + second)
    assert not [n for n in cluster.nodes.values() if "already exists" in n.output], "no file was listed twice"
    wait_until(lambda: cluster.states()[coordinator] == "DISCONNECTED", 30, "the killed node disconnected")
    assert "no heartbeat" in cluster.view().nodes[coordinator].reason
