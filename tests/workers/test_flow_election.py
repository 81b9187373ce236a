"""The flow election between real node processes (seed 000): popular vote, empty flows, backups
of what a node replaces, and a node that refuses because it would lose queued FlowFiles."""

from __future__ import annotations

import gzip
import json
import re
import time

from engine.cluster.bundle import FlowBundle
from engine.cluster.cluster_flow import read_flow
from engine.testing.flows import connection, flow, processor
from tests.workers.cluster import wait_until

BACKUP = re.compile(r"^flow\.json\.gz\.\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}$")


def flow_a() -> dict:
    return flow(processors=[processor("gen-a", "GenerateFlowFile", {"File Size": "1 B"}, state="ENABLED",
                                      name="Generate A")])


def flow_b(queue_filling: bool = False) -> dict:
    """Flow B; with ``queue_filling`` its generator fills connection ``held`` towards a stopped processor."""
    return flow(processors=[
        processor("gen-b", "GenerateFlowFile", {"File Size": "1 B"}, state="RUNNING" if queue_filling else "ENABLED",
                  schedulingPeriod="50 millis", name="Generate B"),
        processor("log-b", "LogAttribute", {}, state="ENABLED", auto_terminate=["success"], name="Log B"),
    ], connections=[connection("held", "gen-b", "log-b", name="held")])


def fingerprint(document: dict) -> str:
    return FlowBundle(document).fingerprint


def backups(node) -> list:
    return sorted(p for p in node.data_dir.iterdir() if p.name.startswith("flow.json.gz."))


def test_the_flow_most_nodes_offer_wins_and_the_other_is_backed_up(cluster_factory):
    cluster = cluster_factory(election_max_candidates=3)
    cluster.start("n1", flow_a())
    cluster.start("n2", flow_a())
    n3 = cluster.start("n3", flow_b())
    cluster.wait_connected("n1", "n2", "n3")
    elected = read_flow(cluster.client, cluster.keys)
    assert elected.fingerprint == fingerprint(flow_a())
    assert fingerprint(n3.saved_flow()) == fingerprint(flow_a())
    [backup] = backups(n3)
    assert BACKUP.match(backup.name)
    assert json.loads(gzip.decompress(backup.read_bytes()))["flowContents"]["processors"][0]["identifier"] == "gen-b"
    assert backups(cluster.nodes["n1"]) == [] and backups(cluster.nodes["n2"]) == []


def test_an_empty_flow_wins_only_when_every_flow_is_empty(cluster_factory):
    cluster = cluster_factory(election_max_candidates=3)
    cluster.start("n1")
    cluster.start("n2")
    cluster.start("n3", flow_b())
    cluster.wait_connected("n1", "n2", "n3")
    assert read_flow(cluster.client, cluster.keys).fingerprint == fingerprint(flow_b())
    for node in cluster.nodes.values():
        assert fingerprint(node.saved_flow()) == fingerprint(flow_b())


def test_two_different_flows_end_with_both_nodes_agreeing(cluster_factory):
    cluster = cluster_factory(election_max_candidates=2)
    cluster.start("n1", flow_a())
    cluster.start("n2", flow_b())
    cluster.wait_connected("n1", "n2")
    elected = read_flow(cluster.client, cluster.keys).fingerprint
    assert elected in (fingerprint(flow_a()), fingerprint(flow_b()))
    assert {fingerprint(node.saved_flow()) for node in cluster.nodes.values()} == {elected}


def test_the_election_ends_after_the_maximum_wait(cluster_factory):
    cluster = cluster_factory(election_max_wait="3 sec")
    cluster.start("n1", flow_a())
    started = time.monotonic()
    cluster.wait_connected("n1")
    assert time.monotonic() - started >= 2.5, "the lone voter waited for others until the maximum wait"


def test_a_node_holding_flowfiles_the_elected_flow_has_no_place_for_refuses_and_keeps_them(cluster_factory):
    lone = cluster_factory("lone", election_max_candidates=1)
    n3 = lone.start("n3", flow_b(queue_filling=True))
    wait_until(lambda: lone.view().nodes.get("n3") and lone.view().nodes["n3"].heartbeat
               and lone.view().nodes["n3"].heartbeat.queued_count >= 5, 60, "FlowFiles queued in 'held'")
    assert n3.stop() == 0
    kept = n3.saved_flow()

    cluster = cluster_factory(election_max_candidates=3)
    cluster.start("n1", flow_a())
    cluster.start("n2", flow_a())
    n3 = cluster.start("n3", data_dir=n3.data_dir)
    wait_until(lambda: cluster.states().get("n3") == "DISCONNECTED", 60, "n3 refused and kept out")
    cluster.wait_connected("n1", "n2")
    view = cluster.view().nodes["n3"]
    assert "missing" in view.reason and "held (held)" in view.reason
    assert "refused the cluster's flow" in n3.output and "FlowFile(s)" in n3.output
    assert view.heartbeat.queued_count >= 5, "the refusing node keeps its FlowFiles"
    assert n3.stop() == 0
    assert fingerprint(n3.saved_flow()) == fingerprint(kept), "its flow is untouched"
    assert backups(n3) == []
