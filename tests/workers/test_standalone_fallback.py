"""A node that finds no Redis runs standalone as the primary node, and joins once Redis answers,
its primary-node-only ListFile continuing from the listing it kept while standalone."""

from __future__ import annotations

import time

from engine.testing.flows import connection, flow, processor
from tests.servers import RedisServer, free_port
from tests.workers.cluster import Cluster, wait_until


def test_without_redis_a_node_is_its_own_primary_and_joins_later(tmp_path):
    source, out = tmp_path / "in", tmp_path / "out"
    for directory in (source, out):
        directory.mkdir()
    (source / "one.txt").write_text("1")
    server = RedisServer(tmp_path / "redis", free_port())
    cluster = Cluster(tmp_path / "cluster", server.port, election_max_candidates=1)
    try:
        node = cluster.start("n1", flow(processors=[
            processor("list", "ListFile", {"Input Directory": str(source)}, schedulingPeriod="200 millis"),
            processor("put", "PutFile", {"Directory": str(out), "Conflict Resolution Strategy": "fail"},
                      auto_terminate=["success", "failure"]),
        ], connections=[connection("c", "list", "put")]))
        wait_until(lambda: (out / "one.txt").exists(), 60, "the primary-node-only ListFile running standalone")
        assert "running standalone as the primary node" in node.output
        server.start()
        cluster.wait_connected("n1")
        wait_until(lambda: cluster.holder("primary") == "n1", 30, "n1 elected primary")
        (source / "two.txt").write_text("2")
        wait_until(lambda: (out / "two.txt").exists(), 60, "ListFile running on the elected primary")
        time.sleep(2)
        assert "already exists" not in node.output, "the file listed while standalone was listed again"
    finally:
        cluster.stop_all()
        server.stop()
