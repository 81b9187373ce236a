"""A deployment reaches every connected node; a node that was down takes it when it returns."""

from __future__ import annotations

import uuid

from engine.cluster.bundle import FlowBundle
from engine.cluster.bus import CommandBus
from engine.cluster.cluster_flow import publish_flow, read_reports
from engine.testing.flows import connection, flow, processor
from flowsite.cluster.redis import command_signer
from tests.workers.cluster import wait_until


def generating(out, size: str) -> dict:
    return flow(processors=[
        processor("gen", "GenerateFlowFile", {"File Size": size}, schedulingPeriod="200 millis"),
        processor("put", "PutFile", {"Directory": str(out), "Conflict Resolution Strategy": "replace"},
                  auto_terminate=["success", "failure"]),
    ], connections=[connection("c", "gen", "put")])


def test_deploy_to_three_nodes_and_a_node_that_was_down_inherits_it(tmp_path, cluster_factory):
    out = tmp_path / "out"
    out.mkdir()
    cluster = cluster_factory(election_max_candidates=3)
    for node_id in ("n1", "n2", "n3"):
        cluster.start(node_id, generating(out, "1 B"))
    cluster.wait_connected("n1", "n2", "n3")
    assert cluster.nodes["n3"].stop() == 0
    wait_until(lambda: cluster.states()["n3"] == "DISCONNECTED", 30, "n3 seen gone")

    deployed = FlowBundle(generating(out, "7 B"), {"tenants": [{"slug": "acme", "members": ["ada"]}]})
    deploy_id = uuid.uuid4().hex
    publish_flow(cluster.client, cluster.keys, deployed, "acme:v2", deploy_id, signer=command_signer())
    CommandBus(cluster.client, cluster.keys, command_signer()).send(["n1", "n2"], "deploy", {"deploy_id": deploy_id})
    reports = wait_until(lambda: len(read_reports(cluster.client, cluster.keys, deploy_id)) == 2
                         and read_reports(cluster.client, cluster.keys, deploy_id), 60, "both reports")
    assert {node: report.status for node, report in reports.items()} == {"n1": "applied", "n2": "applied"}
    assert all(report.fingerprint == deployed.fingerprint for report in reports.values())
    for node_id in ("n1", "n2"):
        assert FlowBundle(cluster.nodes[node_id].saved_flow()).fingerprint == FlowBundle(deployed.flow).fingerprint
    wait_until(lambda: any(p.stat().st_size == 7 for p in out.iterdir()), 30, "the deployed flow running")
    assert all(view.heartbeat.flow_version == "acme:v2" for node, view in cluster.view().nodes.items()
               if node != "n3")

    n3 = cluster.start("n3")
    cluster.wait_connected("n3")
    assert FlowBundle(n3.saved_flow()).fingerprint == FlowBundle(deployed.flow).fingerprint
    assert [p.name for p in n3.data_dir.iterdir() if p.name.startswith("flow.json.gz.")], "the old flow backed up"
    assert (n3.data_dir / "authorizations.json.gz").exists()


def test_a_flow_taken_before_its_deploy_command_arrives_is_reported_applied_once(tmp_path, cluster_factory):
    out = tmp_path / "out"
    out.mkdir()
    cluster = cluster_factory(election_max_candidates=1)
    cluster.start("n1", generating(out, "1 B"))
    cluster.wait_connected("n1")
    deployed = FlowBundle(generating(out, "7 B"), {"tenants": []})
    bus = CommandBus(cluster.client, cluster.keys, command_signer())

    def deploy() -> str:
        deploy_id = uuid.uuid4().hex
        bus.send(["n1"], "deploy", {"deploy_id": deploy_id})
        return wait_until(lambda: read_reports(cluster.client, cluster.keys, deploy_id).get("n1"), 60, "the report")

    publish_flow(cluster.client, cluster.keys, deployed, "v2", uuid.uuid4().hex, signer=command_signer())
    wait_until(lambda: FlowBundle(cluster.nodes["n1"].saved_flow()).fingerprint == FlowBundle(deployed.flow).fingerprint,
               60, "the node taking the cluster's new flow on its own")
    first = deploy()
    assert (first.status, first.fingerprint) == ("applied", deployed.fingerprint), first
    assert deploy().status == "unchanged", "a second deployment of the same flow changes nothing"
