"""Nodes keep processing while Redis is away, and rejoin — election rebuilt — when it is back."""

from __future__ import annotations

from engine.cluster.cluster_flow import read_flow
from engine.testing.flows import connection, flow, processor
from tests.workers.cluster import wait_until


def test_nodes_keep_processing_without_redis_and_rejoin_when_it_returns(tmp_path, cluster_factory, redis_server):
    out = tmp_path / "out"
    out.mkdir()
    document = flow(processors=[
        processor("gen", "GenerateFlowFile", {"File Size": "4 B"}, schedulingPeriod="100 millis"),
        processor("put", "PutFile", {"Directory": str(out)}, auto_terminate=["success", "failure"]),
    ], connections=[connection("c", "gen", "put")])
    cluster = cluster_factory(election_max_candidates=3)
    for node_id in ("n1", "n2", "n3"):
        cluster.start(node_id, document)
    cluster.wait_connected("n1", "n2", "n3")
    elected = read_flow(cluster.client, cluster.keys).fingerprint
    primary = wait_until(lambda: cluster.holder("primary"), 30, "a primary node")

    redis_server.stop()
    written = len(list(out.iterdir()))
    wait_until(lambda: len(list(out.iterdir())) >= written + 60, 60, "files written while Redis is down")
    assert all(node.alive for node in cluster.nodes.values())
    assert "giving up the cluster roles" in cluster.nodes[primary].output
    assert "no longer the primary node" in cluster.nodes[primary].output, "primary-only processors paused"

    redis_server.start()
    cluster.wait_connected("n1", "n2", "n3")
    assert read_flow(cluster.client, cluster.keys).fingerprint == elected, "the election was held again"
    assert wait_until(lambda: cluster.holder("coordinator"), 30, "a coordinator")
    assert wait_until(lambda: cluster.holder("primary"), 30, "a primary node")
