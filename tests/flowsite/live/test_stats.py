"""The nodes' figures over the live endpoint: real nodes run a deployed flow, daphne's relay asks
them and pushes what changed; each socket receives only what its user may view, never another
tenant's figures, and the cluster's state when the nodes that answer change; any web replica
serves any socket."""

from __future__ import annotations

import time

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from flowsite.cluster.status import NO_NODE
from flowsite.flows import access
from flowsite.flows.publish import group_name
from tests.flowsite.cluster.conftest import small_flow
from tests.flowsite.conftest import token_client
from tests.flowsite.live.conftest import collect, receive
from tests.processes import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def _figures(messages: list[dict]) -> dict[str, dict]:
    """The latest figures of each component over the ``stats`` messages."""
    latest: dict[str, dict] = {}
    for message in messages:
        if message["type"] == "stats":
            for pk, figures in message["components"].items():
                latest[pk] = {**latest.get(pk, {}), **figures}
    return latest


def _start(api, processor) -> None:
    answer = api.put(f"/api/v1/processors/{processor.pk}/run-status",
                     {"state": "RUNNING", "revision": {"version": processor.version}}, format="json")
    assert answer.status_code == 200, answer.json()


def _flowing(flow):
    """True once the figures show ``gen`` running and FlowFiles queued in ``conn``."""
    def check(messages):
        latest = _figures(messages)
        gen, conn = latest.get(str(flow["gen"].pk), {}), latest.get(str(flow["conn"].pk), {})
        return (gen.get("run_status") == "Running" and gen.get("flowfiles_out", 0) > 0
                and conn.get("queued_count", 0) > 0)
    return check


def test_figures_reach_subscribers_filtered_by_what_each_may_view(web, deployed, tenant_a, admin_a):
    flow_a, flow_b, api_a, _ = deployed
    root = tenant_a.root
    member = tenant_a.member()
    access.grant(root, access.VIEW, user=member)
    access.grant(flow_a["log"], access.VIEW, user=admin_a)  # ``log`` has a policy of its own the member lacks
    with web.socket(root.pk, user=admin_a) as admin_socket, web.socket(root.pk, user=member) as member_socket:
        for socket in (admin_socket, member_socket):
            assert receive(socket)["type"] == "hello"
        _start(api_a, flow_a["gen"])
        admin_messages = collect(admin_socket, 20, until=_flowing(flow_a))
        member_messages = collect(member_socket, 20, until=_flowing(flow_a))
    admin_figures, member_figures = _figures(admin_messages), _figures(member_messages)
    assert _flowing(flow_a)(admin_messages) and _flowing(flow_a)(member_messages)
    mine = {str(flow_a[name].pk) for name in ("gen", "log", "conn")} | {str(root.pk)}
    assert set(admin_figures) == mine
    assert set(member_figures) == mine - {str(flow_a["log"].pk)}
    conn = admin_figures[str(flow_a["conn"].pk)]
    assert conn["back_pressure_object_threshold"] > 0 and conn["percent_use_count"] >= 0
    assert {"bytes_read", "bytes_written", "validation_errors"} <= set(admin_figures[str(flow_a["gen"].pk)])
    assert admin_figures[str(flow_a["log"].pk)]["run_status"] == "Stopped"
    cluster_states = [m for m in admin_messages if m["type"] == "cluster"]
    assert cluster_states == [{"type": "cluster", "reachable": True, "nodes": ["n1", "n2"],
                               "message": "2 of 2 connected nodes answer"}]


def test_another_tenants_user_never_receives_the_first_tenants_figures(web, deployed, tenant_a, tenant_b):
    flow_a, flow_b, api_a, api_b = deployed
    a_ids = {str(c.pk) for c in flow_a.values()} | {str(tenant_a.root.pk)}
    with web.socket(tenant_b.root.pk, user=tenant_b.admin()) as b_socket, \
            web.socket(tenant_a.root.pk, user=tenant_a.admin()) as a_socket:
        for socket in (a_socket, b_socket):
            assert receive(socket)["type"] == "hello"
        _start(api_a, flow_a["gen"])
        collect(a_socket, 20, until=_flowing(flow_a))
        b_messages = collect(b_socket, 3)
    b_figures = _figures(b_messages)
    assert set(b_figures) == {str(c.pk) for c in flow_b.values()} | {str(tenant_b.root.pk)}
    assert not set(b_figures) & a_ids
    assert not any(pk in str(message) for message in b_messages for pk in a_ids)


def test_the_cluster_state_is_sent_once_and_again_when_a_node_comes(web, cluster, tenant_a, admin_a):
    small_flow(tenant_a)
    assert token_client(admin_a).post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    with web.socket(tenant_a.root.pk, user=admin_a) as socket:
        assert receive(socket)["type"] == "hello"
        alone = collect(socket, 4)
        assert [m for m in alone if m["type"] == "cluster"] == [
            {"type": "cluster", "reachable": False, "nodes": [], "message": NO_NODE}]
        cluster.node("n1", cluster.published_flow())
        joined = collect(socket, 15, until=lambda got: any(m["type"] == "cluster" for m in got))
        assert [m for m in joined if m["type"] == "cluster"] == [
            {"type": "cluster", "reachable": True, "nodes": ["n1"], "message": "1 of 1 connected nodes answer"}]


def test_sockets_on_two_web_replicas_both_receive_the_figures_and_the_design(web, another_web, deployed, tenant_a,
                                                                          admin_a):
    flow_a, _, api_a, _ = deployed
    root = tenant_a.root
    with web.socket(root.pk, user=admin_a) as first, another_web.socket(root.pk, user=tenant_a.admin()) as second:
        for socket in (first, second):
            assert receive(socket)["type"] == "hello"
        _start(api_a, flow_a["gen"])
        for socket in (first, second):
            assert _flowing(flow_a)(collect(socket, 20, until=_flowing(flow_a)))
        for socket in (first, second):  # each replica relays to its own sockets: no change twice
            seen: dict[str, list] = {}
            for message in collect(socket, 4):
                for pk, figures in message.get("components", {}).items():
                    seen.setdefault(pk, []).append(figures)
            assert all(a != b for values in seen.values() for a, b in zip(values, values[1:])), seen
        async_to_sync(get_channel_layer().group_send)(group_name(root.pk), {
            "type": "design.changed", "component": str(flow_a["gen"].pk), "kind": "PROCESSOR",
            "operation": "Configure", "parent": str(root.pk)})
        for socket in (first, second):
            got = collect(socket, 10, until=lambda got: any(m["type"] == "design" for m in got))
            assert [m["component"] for m in got if m["type"] == "design"] == [str(flow_a["gen"].pk)]


def test_the_relay_asks_the_nodes_only_while_a_socket_is_open(web, cluster, deployed, tenant_a, admin_a):
    stream = cluster.keys.commands("n1")
    before = cluster.client.xlen(stream)
    with web.socket(tenant_a.root.pk, user=admin_a) as socket:
        assert receive(socket)["type"] == "hello"
        wait_until(lambda: cluster.client.xlen(stream) >= before + 2, timeout=20, what="the relay asking n1")
    time.sleep(2)  # a request under way when the socket closed
    after = cluster.client.xlen(stream)
    time.sleep(3)
    assert cluster.client.xlen(stream) == after, "no socket, no status request"


def test_a_nodes_bulletins_reach_those_who_may_view_their_component_once(web, cluster, deployed, tenant_a,
                                                                          tenant_b, admin_a):
    flow_a, flow_b, _, _ = deployed
    root = tenant_a.root
    member = tenant_a.member()
    access.grant(root, access.VIEW, user=member)
    access.grant(flow_a["log"], access.VIEW, user=admin_a)  # ``log`` has a policy of its own the member lacks
    with web.socket(root.pk, user=admin_a) as admin_socket, web.socket(root.pk, user=member) as member_socket, \
            web.socket(tenant_b.root.pk, user=tenant_b.admin()) as other_socket:
        for socket in (admin_socket, member_socket, other_socket):
            assert receive(socket)["type"] == "hello"
        board = cluster.nodes[0].node.controller.bulletins  # the real node's own bulletin board
        for name in ("gen", "log"):
            board.post("ERROR", str(flow_a[name].pk), name, "Processor", str(root.pk), f"{name} failed on purpose")

        def posted(messages):
            return [b["message"] for m in messages if m["type"] == "bulletins" for b in m["bulletins"]]
        admin_messages = collect(admin_socket, 15, until=lambda got: len(posted(got)) >= 2)
        member_messages = collect(member_socket, 4)
        other_messages = collect(other_socket, 2)
        later = collect(admin_socket, 3)
    assert sorted(posted(admin_messages)) == ["gen failed on purpose", "log failed on purpose"]
    assert posted(member_messages) == ["gen failed on purpose"]
    assert posted(other_messages) == [] and posted(later) == []  # the other tenant never; nothing twice
