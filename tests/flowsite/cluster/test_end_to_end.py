"""The control plane and real node processes together: a tenant's design deployed through the API
runs on three ``manage.py runnode`` processes with its sensitive values opened only in the nodes'
memory; status is gathered from them; run-status reaches them; a node that was down during a
deployment takes it when it returns."""

from __future__ import annotations

import gzip
import re

import pytest

from flowsite.cluster.status import forget_answers
from flowsite.flows.definition import property_context
from flowsite.flows.models import Connection, Processor
from flowsite.flows.secrets import current_key
from tests.flowsite.cluster.conftest import operator
from tests.flowsite.conftest import token_client
from tests.workers.cluster import Cluster, wait_until

# Run-state changes reach the nodes when their transaction commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)

DEPLOYMENTS = "/api/v1/cluster/deployments"


@pytest.fixture
def nodes(tmp_path, redis_server, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    forget_answers()
    cluster = Cluster(tmp_path / "nodes", redis_server.port, "default", election_max_candidates=3)
    for node_id in ("n1", "n2", "n3"):
        cluster.start(node_id)
    cluster.wait_connected("n1", "n2", "n3")
    yield cluster
    cluster.stop_all()
    forget_answers()


def design(world, out) -> dict:
    """gen (GenerateFlowFile, running) → put (PutFile into ``out``), and an InvokeHTTP, stopped,
    whose password is sensitive."""
    tenant, root = world.tenant, world.root
    gen = Processor.objects.create(tenant=tenant, parent=root, name="gen", type="GenerateFlowFile",
                                   properties={"File Size": "3 B"}, scheduling_period="200 millis",
                                   scheduled_state="RUNNING")
    put = Processor.objects.create(tenant=tenant, parent=root, name="put", type="PutFile", scheduled_state="RUNNING",
                                   properties={"Directory": str(out), "Conflict Resolution Strategy": "replace"},
                                   auto_terminated=["success", "failure"])
    Connection.objects.create(tenant=tenant, parent=root, source=gen, destination=put, selected_relationships=["success"])
    http = Processor.objects.create(tenant=tenant, parent=root, name="http", type="InvokeHTTP",
                                    properties={"HTTP URL": "http://127.0.0.1:9/", "Request Username": "ann"},
                                    auto_terminated=["Original", "Response", "Retry", "No Retry", "Failure"])
    http.sensitive_properties = {"Request Password": current_key().seal("pw-in-clear",
                                                                        property_context(http, "Request Password"))}
    http.save()
    return {"gen": gen, "put": put, "http": http}


def tasks_run(node) -> int:
    """Tasks run in the last five minutes, from the node's newest status line."""
    counts = re.findall(r"last 5 min: [\d,]+ in, [\d,]+ out, ([\d,]+) tasks", node.output)
    return int(counts[-1].replace(",", "")) if counts else 0


def reports(api, deploy_id: str) -> dict:
    body = api.get(f"{DEPLOYMENTS}/{deploy_id}").json()
    return {report["node"]: report["status"] for report in body["reports"]}


def test_a_deployment_through_the_api_runs_on_every_node(tmp_path, nodes, tenant_a, api_a):
    out = tmp_path / "out"
    out.mkdir()
    flow = design(tenant_a, out)
    tenant_a.tenant.file_roots = [str(out)]  # the nodes confine the tenant's PutFile to its roots
    tenant_a.tenant.save()
    answer = api_a.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 202, answer.json()
    deploy_id = answer.json()["deploy_id"]
    wait_until(lambda: reports(api_a, deploy_id) == {"n1": "applied", "n2": "applied", "n3": "applied"}, 60,
               "every node applied the deployment")
    wait_until(lambda: len(list(out.iterdir())) >= 3, 60, "the deployed flow writing files")
    for node in nodes.nodes.values():
        stored = gzip.decompress((node.data_dir / "flow.json.gz").read_bytes())
        assert b"pw-in-clear" not in stored and b"enc:v2:" in stored, "sealed at rest on the node"

    forget_answers()
    status = api_a.get("/api/v1/flow/status").json()
    assert [node["node"] for node in status["nodes"]] == ["n1", "n2", "n3"]
    gen = next(p for p in status["processors"] if p["id"] == str(flow["gen"].pk))
    assert {n["node"] for n in gen["nodes"]} == {"n1", "n2", "n3"}

    flow["gen"].refresh_from_db()
    answer = api_a.put(f"/api/v1/processors/{flow['gen'].pk}/run-status",
                       {"state": "STOPPED", "revision": {"version": flow["gen"].version}}, format="json")
    assert answer.status_code == 200, answer.json()
    assert [(n["node"], n["ok"]) for n in answer.json()["cluster"]["nodes"]] == [("n1", True), ("n2", True),
                                                                                  ("n3", True)]

    assert nodes.nodes["n3"].stop() == 0
    wait_until(lambda: nodes.states()["n3"] == "DISCONNECTED", 30, "n3 seen gone")
    flow["gen"].refresh_from_db()
    answer = api_a.patch(f"/api/v1/processors/{flow['gen'].pk}",
                         {"properties": {"File Size": "5 B"}, "revision": {"version": flow["gen"].version}},
                         format="json")
    assert answer.status_code == 200, answer.json()
    deploy_id = api_a.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
    wait_until(lambda: reports(api_a, deploy_id) == {"n1": "applied", "n2": "applied"}, 60, "n1 and n2 applied")
    n3 = nodes.start("n3")
    nodes.wait_connected("n3")
    wait_until(lambda: b'"5 B"' in gzip.decompress((n3.data_dir / "flow.json.gz").read_bytes()), 30,
               "n3 runs the deployment it missed")


def test_an_operator_disconnects_and_reconnects_a_running_node(tmp_path, nodes, tenant_a, api_a):
    out = tmp_path / "out"
    out.mkdir()
    design(tenant_a, out)
    deploy_id = api_a.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
    wait_until(lambda: len(reports(api_a, deploy_id)) == 3, 60, "the deployment applied")

    answer = api_a.post("/api/v1/cluster/nodes/n2/disconnect")
    assert answer.status_code == 403 and "only platform operators" in answer.json()["message"]
    ops = token_client(operator("olga"))
    answer = ops.post("/api/v1/cluster/nodes/n2/disconnect")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["state"] == "DISCONNECTING" and answer.json()["reason"] == "disconnected by olga"
    wait_until(lambda: api_a.get("/api/v1/cluster/nodes/n2").json()["state"] == "DISCONNECTED", 30,
               "n2 acknowledged its disconnection")
    assert "olga" not in api_a.get("/api/v1/cluster/nodes").content.decode(), "the tenant sees a neutral state"
    assert "n2: disconnecting by an operator" in nodes.nodes["n2"].output
    wait_until(lambda: "primary" not in api_a.get("/api/v1/cluster/nodes/n2").json()["roles"]
               and nodes.holder("primary") not in (None, "n2"), 30, "the primary role held by a connected node")
    tasks = tasks_run(nodes.nodes["n2"])
    wait_until(lambda: tasks_run(nodes.nodes["n2"]) >= tasks + 10, 60, "the disconnected node still processing")
    assert api_a.delete("/api/v1/cluster/nodes/n1").status_code == 403
    assert ops.delete("/api/v1/cluster/nodes/n1").status_code == 409, "only a disconnected node is removed"

    assert api_a.post("/api/v1/cluster/nodes/n2/reconnect").status_code == 403
    assert ops.post("/api/v1/cluster/nodes/n2/reconnect").status_code == 200
    nodes.wait_connected("n2")
