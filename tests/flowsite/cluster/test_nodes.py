"""GET/POST/DELETE /api/v1/cluster/nodes…: the nodes, and a platform operator's actions on them
(tenant users, administrators included, may not change the shared nodes)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

import threading

from engine.cluster.records import NodeRecord, NodeState
from flowsite.flows import access
from tests.flowsite.cluster.conftest import operator
from tests.flowsite.conftest import token_client

NODES = "/api/v1/cluster/nodes"


def test_the_list_shows_each_node_with_state_roles_and_heartbeat(cluster, api_a):
    cluster.node("n1")
    cluster.node("n2")
    cluster.client.set(cluster.keys.lock("coordinator"), "n2 7")
    answer = api_a.get(NODES)
    assert answer.status_code == 200
    nodes = {node["node"]: node for node in answer.json()}
    assert set(nodes) == {"n1", "n2"}
    assert nodes["n1"]["state"] == "CONNECTED" and nodes["n1"]["roles"] == []
    assert nodes["n2"]["roles"] == ["coordinator"]
    assert nodes["n1"]["heartbeat"]["address"] == "n1:0"
    assert 0 <= nodes["n1"]["heartbeat_age"] < 30


def test_one_node_and_an_unknown_one(cluster, api_a):
    cluster.node("n1")
    assert api_a.get(f"{NODES}/n1").json()["state"] == "CONNECTED"
    answer = api_a.get(f"{NODES}/ghost")
    assert answer.status_code == 404 and answer.json()["message"] == "no node 'ghost' in the cluster"
    ops = token_client(operator())
    assert ops.post(f"{NODES}/ghost/disconnect").status_code == 404
    assert ops.delete(f"{NODES}/ghost").status_code == 404


def test_disconnect_reconnect_and_remove(cluster, db):
    api_a = token_client(operator("alice"))
    cluster.node("n1")
    answer = api_a.post(f"{NODES}/n1/disconnect")
    assert answer.status_code == 200, answer.json()
    assert answer.json()["state"] == "DISCONNECTING" and answer.json()["reason"] == "disconnected by alice"
    answer = api_a.delete(f"{NODES}/n1")
    assert answer.status_code == 409 and "disconnect it before removing it" in answer.json()["message"]
    # the node acknowledges (its agent's part): DISCONNECTED
    cluster.client.hset(cluster.keys.nodes, "n1", NodeRecord("n1", NodeState.DISCONNECTED, "operator").encode())
    answer = api_a.post(f"{NODES}/n1/disconnect")
    assert answer.status_code == 409 and answer.json()["message"] == "node 'n1' is already disconnected"
    answer = api_a.post(f"{NODES}/n1/reconnect")
    assert answer.status_code == 200 and answer.json()["state"] == "CONNECTING"
    answer = api_a.post(f"{NODES}/n1/reconnect")
    assert answer.status_code == 409 and "not disconnected" in answer.json()["message"]
    cluster.client.hset(cluster.keys.nodes, "n1", NodeRecord("n1", NodeState.DISCONNECTED, "operator").encode())
    cluster.client.delete(cluster.keys.heartbeat("n1"))
    assert api_a.delete(f"{NODES}/n1").status_code == 204
    assert api_a.get(f"{NODES}/n1").status_code == 404


def test_reading_needs_the_view_cluster_policy_and_actions_a_platform_operator(cluster, tenant_a, tenant_b):
    cluster.node("n1")
    outsider = token_client(tenant_a.member(global_policies=(access.VIEW_FLOW,)))
    answer = outsider.get(NODES)
    assert answer.status_code == 403 and "view_cluster" in answer.json()["message"]
    assert outsider.get(f"{NODES}/n1").status_code == 403
    viewer = token_client(tenant_a.member(global_policies=(access.VIEW_FLOW, access.VIEW_CLUSTER)))
    assert viewer.get(NODES).status_code == 200
    for client in (viewer, token_client(tenant_a.admin()), token_client(tenant_b.admin())):
        for action in ("disconnect", "offload", "reconnect"):
            answer = client.post(f"{NODES}/n1/{action}")
            assert answer.status_code == 403 and "only platform operators" in answer.json()["message"]
        assert client.delete(f"{NODES}/n1").status_code == 403
    assert NodeRecord.decode(cluster.client.hget(cluster.keys.nodes, "n1")).state is NodeState.CONNECTED
    anonymous = APIClient()
    assert anonymous.get(NODES).status_code == 401
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Bearer not-a-token")
    answer = bad.get(NODES)
    assert answer.status_code == 401 and answer.json()["message"] == "unknown API token"
    ops = token_client(operator())
    assert ops.get(NODES).status_code == 200, "an operator needs no tenant to see the nodes"
    assert ops.post(f"{NODES}/n1/disconnect").status_code == 200


def test_a_superuser_is_an_operator(cluster, db):
    cluster.node("n1")
    root = get_user_model().objects.create_superuser("root", password="correct horse battery staple")
    assert token_client(root).post(f"{NODES}/n1/disconnect").status_code == 200


def test_the_action_paths_answer_only_post(cluster, db):
    api_a = token_client(operator())
    cluster.node("n1")
    for action in ("disconnect", "offload", "reconnect"):
        assert api_a.get(f"{NODES}/n1/{action}").status_code == 405
        assert api_a.delete(f"{NODES}/n1/{action}").status_code == 405
    assert api_a.get(f"{NODES}/n1").json()["state"] == "CONNECTED"


def _record(cluster, node: str, state: NodeState) -> None:
    """What the node's own agent writes (acknowledging a disconnection, finishing an offload)."""
    cluster.client.hset(cluster.keys.nodes, node, NodeRecord(node, state, "the node's word", by_operator=True).encode())


def test_offload_a_disconnected_node_then_remove_it(cluster, db):
    api = token_client(operator("alice"))
    node = cluster.node("n1")
    offloads, arrived = [], threading.Event()
    node.listener.register("offload", lambda command: (offloads.append(command.args), arrived.set()) and None)
    answer = api.post(f"{NODES}/n1/offload")
    assert answer.status_code == 409 and answer.json()["message"] == (
        "node 'n1' is connected; disconnect it before offloading it")
    assert api.post(f"{NODES}/n1/disconnect").status_code == 200
    _record(cluster, "n1", NodeState.DISCONNECTED)
    answer = api.post(f"{NODES}/n1/offload")
    assert answer.status_code == 200, answer.json()
    assert (answer.json()["state"], answer.json()["reason"]) == ("OFFLOADING", "offloaded by alice")
    assert arrived.wait(5) and offloads == [{"reason": "offloaded by alice"}], "the node is sent a signed offload"
    answer = api.post(f"{NODES}/n1/offload")
    assert answer.status_code == 409 and answer.json()["message"] == "node 'n1' is already offloading"
    answer = api.delete(f"{NODES}/n1")
    assert answer.status_code == 409 and "wait until it is offloaded" in answer.json()["message"]
    _record(cluster, "n1", NodeState.OFFLOADED)
    assert api.get(f"{NODES}/n1").json()["state"] == "OFFLOADED"
    assert api.delete(f"{NODES}/n1").status_code == 204
    assert cluster.client.hget(cluster.keys.nodes, "n1") is None


def test_an_offloaded_node_may_be_reconnected(cluster, db):
    api = token_client(operator())
    cluster.node("n1")
    _record(cluster, "n1", NodeState.OFFLOADED)
    answer = api.post(f"{NODES}/n1/disconnect")
    assert answer.status_code == 409 and "reconnect or remove it" in answer.json()["message"]
    answer = api.post(f"{NODES}/n1/reconnect")
    assert answer.status_code == 200 and answer.json()["state"] == "CONNECTING"


def test_the_spark_ui_address_is_shown_to_operators_only(cluster, tenant_a):
    import time

    from engine.cluster.records import Heartbeat

    for node, url in (("n1", "http://10.0.0.5:4040"), ("n2", "")):
        beat = Heartbeat(node, address=f"{node}:0", sent_at=time.time(), spark_ui_url=url)
        cluster.client.set(cluster.keys.heartbeat(node), beat.encode(), ex=60)
        cluster.client.hset(cluster.keys.nodes, node, NodeRecord(node, NodeState.CONNECTED).encode())
    nodes = {node["node"]: node for node in token_client(operator()).get(NODES).json()}
    assert nodes["n1"]["sparkUiUrl"] == "http://10.0.0.5:4040"
    assert nodes["n1"]["heartbeat"]["spark_ui_url"] == "http://10.0.0.5:4040"
    assert nodes["n2"]["sparkUiUrl"] is None, "no Spark started on n2 yet"
    viewer = token_client(tenant_a.member(global_policies=(access.VIEW_FLOW, access.VIEW_CLUSTER)))
    seen = viewer.get(f"{NODES}/n1").json()
    assert seen["heartbeat"]["address"] == "n1:0"
    assert seen["sparkUiUrl"] is None and seen["heartbeat"]["spark_ui_url"] == "", "it shows every tenant's jobs"
