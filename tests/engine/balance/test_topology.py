"""The cluster topology: which node states change the list, persistence, damage and a full disk."""

from __future__ import annotations

import errno
import json
import logging

import pytest

from engine.balance.topology import TOPOLOGY_FILE, ClusterTopology, TopologyError, TopologyStore
from engine.testing.faults import FaultPlan


def test_a_topology_is_sorted_and_only_listed_peers_are_reachable():
    topology = ClusterTopology("b", ("c", "a", "b", "a"), frozenset({"c", "z"}))
    assert topology.nodes == ("a", "b", "c") and topology.peers == ("a", "c")
    assert topology.reachable == {"c"} and topology.is_reachable("b") and not topology.is_reachable("a")
    assert topology.with_reachable("z", True) == topology


def test_connected_nodes_join_disconnected_ones_stay_offloaded_ones_leave(tmp_path):
    store = TopologyStore(tmp_path, "n1")
    seen = []
    store.add_listener(seen.append)
    assert store.current.nodes == ("n1",)
    store.node_state_changed("n2", "CONNECTED")
    store.node_state_changed("n3", "CONNECTED")
    assert store.current.nodes == ("n1", "n2", "n3") and store.current.reachable == {"n2", "n3"}
    store.node_state_changed("n3", "DISCONNECTED")
    assert store.current.nodes == ("n1", "n2", "n3") and store.current.reachable == {"n2"}
    store.node_state_changed("n3", "DISCONNECTED")  # no change, nobody told
    store.node_state_changed("n2", "OFFLOADING")
    assert store.current.nodes == ("n1", "n3")
    store.node_removed("n3")
    assert store.current.nodes == ("n1",)
    assert [t.nodes for t in seen] == [("n1", "n2"), ("n1", "n2", "n3"), ("n1", "n2", "n3"), ("n1", "n3"), ("n1",)]


def test_the_node_list_survives_a_restart_without_reachability(tmp_path):
    store = TopologyStore(tmp_path, "n2")
    store.connected_nodes(["n1", "n3"])
    assert json.loads((tmp_path / TOPOLOGY_FILE).read_text())["nodes"] == ["n1", "n2", "n3"]
    again = TopologyStore(tmp_path, "n2")
    assert again.current == ClusterTopology("n2", ("n1", "n2", "n3")) and again.damage is None
    again.connected_nodes(["n3"])
    assert again.current.reachable == {"n3"}


@pytest.mark.parametrize("content, offset", [(b'{"version": 1, "nodes": ["a", ', 30), (b"\xff\xfe", 0),
                                             (b'{"version": 9}', None), (b'{"version": 1, "nodes": [1]}', None)])
def test_a_damaged_file_names_itself_and_the_node_starts_alone(tmp_path, caplog, content, offset):
    path = tmp_path / TOPOLOGY_FILE
    path.parent.mkdir()
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, "engine.balance.topology"):
        store = TopologyStore(tmp_path, "n1")
    assert store.current == ClusterTopology.alone("n1")
    assert store.damage is not None and store.damage.offset == offset
    message = str(store.damage)
    assert str(path) in message and "Restore the file from a backup" in message and "delete it" in message
    assert str(path) in caplog.text
    store.node_state_changed("n2", "CONNECTED")  # a new list replaces the damaged file
    assert TopologyStore(tmp_path, "n1").current.nodes == ("n1", "n2")


def test_a_failed_write_keeps_the_old_file_and_the_old_topology(tmp_path):
    store = TopologyStore(tmp_path, "n1")
    store.node_state_changed("n2", "CONNECTED")
    before = (tmp_path / TOPOLOGY_FILE).read_bytes()
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}).installed() as plan:
        with pytest.raises(TopologyError, match=r"could not save the cluster topology to .*cluster-topology\.json.*"
                                                r"previous node list.*Free space"):
            store.node_state_changed("n3", "CONNECTED")
    assert plan.triggered
    assert (tmp_path / TOPOLOGY_FILE).read_bytes() == before
    assert store.current.nodes == ("n1", "n2")
    assert [p.name for p in (tmp_path / "state").iterdir()] == ["cluster-topology.json"]
    store.node_state_changed("n3", "CONNECTED")
    assert TopologyStore(tmp_path, "n1").current.nodes == ("n1", "n2", "n3")


def test_a_file_of_another_node_id_is_taken_over(tmp_path, caplog):
    TopologyStore(tmp_path, "old").connected_nodes(["n2"])
    with caplog.at_level(logging.WARNING):
        store = TopologyStore(tmp_path, "new")
    assert store.current.nodes == ("n2", "new") and "saved by node old" in caplog.text
