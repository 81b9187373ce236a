"""Load-balanced connections on three real node processes over a real Redis: each strategy's rule."""

from __future__ import annotations

from tests.workers.balance import balanced_flow, digests, fill_inbox, wait_topology, written_by
from tests.workers.cluster import wait_until

NODES = ("n1", "n2", "n3")


def run_cluster(cluster_factory, dirs, strategy: str, attribute: str = "", nodes=NODES, **flow_options):
    cluster = cluster_factory(election_max_candidates=len(nodes))
    document = balanced_flow(dirs["inbox"], dirs["outbox"], dirs["duplicates"], strategy, attribute, **flow_options)
    for node_id in nodes:
        cluster.start(node_id, document)
    cluster.wait_connected(*nodes)
    wait_topology(cluster, nodes, nodes)  # before it knows its peers, a node keeps what it makes
    return cluster


def delivered(cluster, dirs, expected: dict[str, str], timeout: float = 120) -> dict[str, dict[str, str]]:
    """Wait for every file in the outbox, stop the nodes, check nothing arrived twice; returns
    node -> the names it wrote."""
    wait_until(lambda: len(digests(dirs["outbox"])) >= len(expected), timeout,
               f"{len(expected)} files delivered (have {len(digests(dirs['outbox']))})")
    for node in cluster.nodes.values():
        assert node.stop() == 0, node.output
    assert digests(dirs["outbox"]) == expected
    assert digests(dirs["duplicates"]) == {}, "a FlowFile was delivered twice"
    return {node_id: written_by(node.data_dir) for node_id, node in cluster.nodes.items()}


def test_round_robin_spreads_evenly_over_three_nodes(cluster_factory, dirs):
    cluster = run_cluster(cluster_factory, dirs, "ROUND_ROBIN")
    expected = fill_inbox(dirs["inbox"], 900)
    by_node = delivered(cluster, dirs, expected)
    counts = {node: len(names) for node, names in by_node.items()}
    assert sum(counts.values()) == 900
    assert all(270 <= count <= 330 for count in counts.values()), counts
