"""Control commands carried to every connected node: run status, terminate, empty a queue."""

from __future__ import annotations

import pytest

from flowsite.flows import access
from flowsite.flows.models import Processor
from tests.processes import wait_until
from tests.flowsite.conftest import token_client

# Run-state changes reach the nodes when their transaction commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)


def _run_status(api, processor, state):
    processor.refresh_from_db()
    return api.put(f"/api/v1/processors/{processor.pk}/run-status",
                   {"state": state, "revision": {"version": processor.version}}, format="json")


def test_starting_a_processor_starts_it_on_every_node(cluster, deployed):
    flow_a, _, api_a, _ = deployed
    answer = _run_status(api_a, flow_a["gen"], "RUNNING")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["state"] == "RUNNING"
    assert body["cluster"]["reached"] is True
    assert [(n["node"], n["ok"], n["result"]) for n in body["cluster"]["nodes"]] == [
        ("n1", True, {"id": str(flow_a["gen"].pk), "run_status": "Running"}),
        ("n2", True, {"id": str(flow_a["gen"].pk), "run_status": "Running"})]
    for node in cluster.nodes:
        assert node.node.controller.processor(str(flow_a["gen"].pk)).run_status() == "Running"
    answer = _run_status(api_a, flow_a["gen"], "STOPPED")
    assert {n["result"]["run_status"] for n in answer.json()["cluster"]["nodes"]} <= {"Stopped", "Stopping"}
    answer = _run_status(api_a, flow_a["log"], "DISABLED")
    assert [n["result"]["run_status"] for n in answer.json()["cluster"]["nodes"]] == ["Disabled", "Disabled"]
    answer = _run_status(api_a, flow_a["log"], "STOPPED")
    assert [n["result"]["run_status"] for n in answer.json()["cluster"]["nodes"]] == ["Stopped", "Stopped"]


def test_a_node_that_refuses_is_reported_and_the_design_still_changes(cluster, deployed, tenant_a):
    flow_a, _, api_a, _ = deployed
    extra = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="late",
                                     type="GenerateFlowFile", auto_terminated=["success"])
    answer = _run_status(api_a, extra, "RUNNING")
    assert answer.status_code == 200
    assert answer.json()["state"] == "RUNNING"
    nodes = answer.json()["cluster"]["nodes"]
    assert [n["ok"] for n in nodes] == [False, False]
    assert all(f"no processor has identifier '{extra.pk}'" in n["error"] for n in nodes)


def test_with_the_cluster_away_the_design_changes_and_the_answer_says_so(tenant_a, api_a, settings):
    gen = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="gen", type="GenerateFlowFile",
                                   auto_terminated=["success"])
    answer = _run_status(api_a, gen, "RUNNING")
    assert answer.status_code == 200
    gen.refresh_from_db()
    assert gen.scheduled_state == "RUNNING"
    cluster = answer.json()["cluster"]
    assert cluster["reached"] is False and cluster["nodes"] == []
    assert cluster["message"].startswith("the cluster cannot be reached: Redis at 127.0.0.1:")


def test_emptying_a_queue_drops_on_every_node(cluster, deployed):
    flow_a, _, api_a, _ = deployed
    _run_status(api_a, flow_a["gen"], "RUNNING")
    queues = [node.node.controller.queue(str(flow_a["conn"].pk)) for node in cluster.nodes]
    for queue in queues:
        wait_until(lambda queue=queue: len(queue) >= 2, what="FlowFiles queued")
    _run_status(api_a, flow_a["gen"], "STOPPED")
    for node in cluster.nodes:
        wait_until(lambda node=node: node.node.controller.processor(str(flow_a["gen"].pk)).run_status() == "Stopped",
                   what="gen stopped")
    waiting = [len(queue) for queue in queues]
    answer = api_a.post(f"/api/v1/connections/{flow_a['conn'].pk}/empty")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert [n["result"]["dropped"] for n in body["nodes"]] == waiting
    assert body["dropped"] == sum(waiting)
    assert [len(queue) for queue in queues] == [0, 0]


def test_commands_need_the_policy_and_another_tenants_ids_are_not_found(cluster, deployed, tenant_a):
    flow_a, flow_b, api_a, _ = deployed
    viewer = token_client(tenant_a.member(root_policies=(access.VIEW,)))
    assert viewer.post(f"/api/v1/connections/{flow_a['conn'].pk}/empty").status_code == 403
    assert viewer.post(f"/api/v1/processors/{flow_a['gen'].pk}/terminate").status_code == 403
    operator = token_client(tenant_a.member(root_policies=(access.VIEW, access.OPERATE)))
    refused = operator.post(f"/api/v1/connections/{flow_a['conn'].pk}/empty")
    assert refused.status_code == 403 and "modify the data" in refused.json()["message"], "dropping is no operating"
    data_editor = token_client(tenant_a.member(root_policies=(access.VIEW, access.MODIFY_DATA)))
    assert data_editor.post(f"/api/v1/connections/{flow_a['conn'].pk}/empty").status_code == 200
    assert api_a.post(f"/api/v1/connections/{flow_b['conn'].pk}/empty").status_code == 404
    assert api_a.post(f"/api/v1/processors/{flow_b['gen'].pk}/terminate").status_code == 404
    for node in cluster.nodes:
        assert node.node.controller.processor(str(flow_b["gen"].pk)).run_status() == "Stopped"


def test_terminate_is_answered_by_each_node(cluster, deployed):
    flow_a, _, api_a, _ = deployed
    answer = api_a.post(f"/api/v1/processors/{flow_a['log'].pk}/terminate")
    assert answer.status_code == 200
    nodes = answer.json()["nodes"]
    assert [n["node"] for n in nodes] == ["n1", "n2"]
    assert all(not n["ok"] and "must be stopped before its tasks are terminated" in n["error"] for n in nodes)


def test_with_no_node_connected_the_answer_says_so(cluster, tenant_a, api_a):
    gen = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="gen", type="GenerateFlowFile",
                                   auto_terminated=["success"])
    answer = api_a.post(f"/api/v1/processors/{gen.pk}/terminate")
    assert answer.status_code == 200
    assert answer.json() == {"reached": False, "message": "no node is connected to the cluster", "nodes": []}
    assert _run_status(api_a, gen, "RUNNING").json()["cluster"]["message"] == "no node is connected to the cluster"
