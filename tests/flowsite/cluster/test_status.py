"""GET /api/v1/flow/status and /process-groups/{id}/status: every connected node asked, the answers
aggregated per component and per node, and only what the caller may view shown."""

from __future__ import annotations

import pytest

import time

from flowsite.cluster import status as federated
from flowsite.flows import access
from tests.processes import wait_until
from tests.flowsite.conftest import token_client

# Run-state changes reach the nodes when their transaction commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)

STATUS = "/api/v1/flow/status"


def _queue_on(node, connection) -> int:
    return len(node.node.controller.queue(str(connection.pk)))


def _start_gen_and_wait(cluster, api, flow) -> None:
    answer = api.put(f"/api/v1/processors/{flow['gen'].pk}/run-status",
                     {"state": "RUNNING", "revision": {"version": flow["gen"].version}}, format="json")
    assert answer.status_code == 200, answer.json()
    for node in cluster.nodes:
        wait_until(lambda node=node: _queue_on(node, flow["conn"]) >= 2, what=f"FlowFiles queued on {node.node_id}")


def test_status_is_aggregated_over_the_nodes_with_each_nodes_figures(cluster, deployed):
    flow_a, _, api_a, _ = deployed
    _start_gen_and_wait(cluster, api_a, flow_a)
    federated.forget_answers()
    answer = api_a.get(STATUS)
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["note"] == ""
    assert [node["node"] for node in body["nodes"]] == ["n1", "n2"]
    assert all(node["ok"] and not node["timed_out"] for node in body["nodes"])
    connection = next(c for c in body["connections"] if c["id"] == str(flow_a["conn"].pk))
    per_node = {n["node"]: n["queued_count"] for n in connection["nodes"]}
    assert set(per_node) == {"n1", "n2"} and all(count >= 2 for count in per_node.values())
    assert connection["queued_count"] == sum(per_node.values())
    threshold = connection["back_pressure_object_threshold"]
    assert threshold > 0 and connection["percent_use_count"] == max(count * 100 // threshold
                                                                    for count in per_node.values())
    gen = next(p for p in body["processors"] if p["id"] == str(flow_a["gen"].pk))
    assert gen["run_status"] == "Running" and {n["run_status"] for n in gen["nodes"]} == {"Running"}
    assert gen["flowfiles_out"] == sum(n["flowfiles_out"] for n in gen["nodes"]) > 0
    assert gen["bytes_written"] == sum(n["bytes_written"] for n in gen["nodes"]) > 0
    log = next(p for p in body["processors"] if p["id"] == str(flow_a["log"].pk))
    assert log["run_status"] == "Stopped"
    for node in body["nodes"]:
        assert node["queued_count"] == per_node[node["node"]]
        assert node["uptime_seconds"] > 0
    root = next(g for g in body["groups"] if g["id"] == str(flow_a["gen"].parent_id))
    assert root["queued_count"] == connection["queued_count"] and root["running"] == 2


def test_another_tenants_components_never_appear(cluster, deployed):
    flow_a, flow_b, api_a, api_b = deployed
    a_ids = {str(c.pk) for c in flow_a.values()} | {str(flow_a["gen"].parent_id)}
    b_ids = {str(c.pk) for c in flow_b.values()} | {str(flow_b["gen"].parent_id)}
    for api, mine, theirs in ((api_a, a_ids, b_ids), (api_b, b_ids, a_ids)):
        body = api.get(STATUS).json()
        shown = {item["id"] for kind in ("processors", "connections", "ports", "groups") for item in body[kind]}
        assert shown == mine
        assert not shown & theirs
    assert api_a.get(STATUS, {"tenant": str(flow_b["gen"].tenant_id)}).status_code == 404
    assert api_a.get(STATUS, {"tenant": str(flow_a["gen"].tenant_id)}).status_code == 200


def test_a_member_sees_only_what_they_may_view(cluster, deployed, tenant_a):
    flow_a, *_ = deployed
    member = tenant_a.member()
    api = token_client(member)
    body = api.get(STATUS).json()
    assert body["processors"] == [] and body["connections"] == [] and body["groups"] == []
    assert [node["node"] for node in body["nodes"]] == ["n1", "n2"]
    assert all(node["queued_count"] == 0 for node in body["nodes"])
    access.grant(flow_a["gen"], access.VIEW, user=member)
    body = api.get(STATUS).json()
    assert [p["id"] for p in body["processors"]] == [str(flow_a["gen"].pk)]
    assert body["connections"] == [] and body["groups"] == []


def test_group_status_covers_the_group_and_what_it_holds(cluster, deployed):
    flow_a, flow_b, api_a, _ = deployed
    root_id = flow_a["gen"].parent_id
    answer = api_a.get(f"/api/v1/process-groups/{root_id}/status")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert body["group"]["id"] == str(root_id)
    assert [n["node"] for n in body["group"]["nodes"]] == ["n1", "n2"]
    assert {p["id"] for p in body["processors"]} == {str(flow_a["gen"].pk), str(flow_a["log"].pk)}
    assert api_a.get(f"/api/v1/process-groups/{flow_b['gen'].parent_id}/status").status_code == 404


def test_a_node_that_does_not_answer_is_listed_as_timed_out(cluster, deployed, monkeypatch):
    _, _, api_a, _ = deployed
    cluster.node("silent", None).listener.stop()
    monkeypatch.setattr(federated, "STATUS_TIMEOUT", 1.0)
    federated.forget_answers()
    body = api_a.get(STATUS).json()
    nodes = {node["node"]: node for node in body["nodes"]}
    assert set(nodes) == {"n1", "n2", "silent"}
    assert nodes["silent"]["timed_out"] and not nodes["silent"]["ok"]
    assert nodes["silent"]["error"] == "no answer before the timeout"
    assert nodes["n1"]["ok"] and nodes["n2"]["ok"]


def test_no_connected_node_is_an_empty_answer_with_a_note(cluster, api_a):
    answer = api_a.get(STATUS)
    assert answer.status_code == 200
    assert answer.json()["nodes"] == [] and answer.json()["note"] == federated.NO_NODE


def test_the_nodes_answers_are_reused_for_about_a_second(cluster, deployed):
    _, _, api_a, api_b = deployed
    federated.forget_answers()
    stream = cluster.keys.commands("n1")
    api_a.get(STATUS)
    sent = cluster.client.xlen(stream)
    api_b.get(STATUS)
    assert cluster.client.xlen(stream) == sent, "a second request within the second asks no node"
    time.sleep(federated.CACHE_SECONDS + 0.1)
    api_a.get(STATUS)
    assert cluster.client.xlen(stream) == sent + 1


def _awaiting(node, connection, count: int, size: int) -> None:
    """Make ``node``'s queue of ``connection`` hold ``count`` FlowFiles (``size`` bytes) for other
    nodes, as a load-balanced connection's queue (engine.balance's PartitionedQueue) reports it."""
    node.node.controller.queue(str(connection.pk)).awaiting_transfer = lambda: (count, size)


def test_figures_awaiting_transfer_are_summed_over_the_nodes_and_kept_apart(cluster, deployed):
    flow_a, flow_b, api_a, api_b = deployed
    n1, n2 = cluster.nodes
    _awaiting(n1, flow_a["conn"], 12, 4096)
    _awaiting(n2, flow_a["conn"], 3, 1000)
    federated.forget_answers()
    body = api_a.get(STATUS).json()
    connection = next(c for c in body["connections"] if c["id"] == str(flow_a["conn"].pk))
    assert (connection["flowFilesAwaitingTransfer"], connection["bytesAwaitingTransfer"]) == (15, 5096)
    assert {n["node"]: (n["flowFilesAwaitingTransfer"], n["bytesAwaitingTransfer"]) for n in connection["nodes"]} == {
        "n1": (12, 4096), "n2": (3, 1000)}
    assert {n["node"]: n["flowFilesAwaitingTransfer"] for n in body["nodes"]} == {"n1": 12, "n2": 3}
    theirs = api_b.get(STATUS).json()
    assert all(n["flowFilesAwaitingTransfer"] == 0 and n["bytesAwaitingTransfer"] == 0 for n in theirs["nodes"]), \
        "another tenant's figures are not summed into a node's"
    assert all(c["flowFilesAwaitingTransfer"] == 0 for c in theirs["connections"])


def test_a_member_who_may_not_view_the_connection_sees_nothing_awaiting(cluster, deployed, tenant_a):
    flow_a, *_ = deployed
    _awaiting(cluster.nodes[0], flow_a["conn"], 7, 70)
    federated.forget_answers()
    body = token_client(tenant_a.member()).get(STATUS).json()
    assert body["connections"] == []
    assert all(n["flowFilesAwaitingTransfer"] == 0 for n in body["nodes"])
