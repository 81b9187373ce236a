"""The portal's cluster page and the indicator of a cluster that is not up to date or unreachable."""

from __future__ import annotations

import html
import re
import time

from engine.cluster.records import Heartbeat, NodeRecord, NodeState
from flowsite.cluster.models import Deployment
from flowsite.cluster.status import forget_answers
from flowsite.flows import access
from flowsite.flows.models import Processor
from tests.flowsite.cluster.conftest import operator, small_flow
from tests.flowsite.portal.conftest import logged_in

CLUSTER = "/cluster/"


def _text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def _heartbeat(cluster, node: str, fingerprint: str) -> None:
    beat = Heartbeat(node, address=f"{node}:0", sent_at=time.time(), flow_fingerprint=fingerprint)
    cluster.client.set(cluster.keys.heartbeat(node), beat.encode(), ex=60)
    cluster.client.hset(cluster.keys.nodes, node, NodeRecord(node, NodeState.CONNECTED).encode())


def test_the_page_lists_nodes_deploys_and_shows_the_reports(cluster, tenant_a, admin_a):
    small_flow(tenant_a)
    _heartbeat(cluster, "n1", "")
    portal = logged_in(admin_a)
    page = portal.get(CLUSTER)
    assert page.status_code == 200
    text = _text(page)
    assert "n1" in text and "CONNECTED" in text and "Disconnect" not in text
    assert "has not been deployed" in text
    answer = portal.post("/cluster/deploy", {"version": ""}, follow=True)
    deployment = Deployment.objects.get(tenant=tenant_a.tenant)
    text = _text(answer)
    assert f"Deployed design ({deployment.deploy_id[:8]}); sent to: n1." in text
    assert "pending" in text  # n1 has not reported
    assert "Cluster not up to date" not in text and "node n1 does not run the latest deployment yet" in text.lower()
    _heartbeat(cluster, "n1", deployment.fingerprint)
    text = _text(portal.get(CLUSTER))
    assert "The cluster runs the latest deployment (design)" in text


def test_disconnect_from_the_page_and_a_user_without_the_policy(cluster, tenant_a, admin_a):
    _heartbeat(cluster, "n1", "")
    assert "Disconnect" not in _text(logged_in(admin_a).get(CLUSTER)), "node actions are for operators"
    answer = logged_in(admin_a).post("/cluster/nodes/n1/disconnect", follow=True)
    assert "only platform operators may" in _text(answer)
    assert NodeRecord.decode(cluster.client.hget(cluster.keys.nodes, "n1")).state is NodeState.CONNECTED
    ops = operator()
    tenant_a.tenant.members.add(ops)  # the portal shows the session's tenant
    assert "Disconnect" in _text(logged_in(ops).get(CLUSTER))
    answer = logged_in(ops).post("/cluster/nodes/n1/disconnect", follow=True)
    assert "Node n1: disconnection requested." in _text(answer)
    assert NodeRecord.decode(cluster.client.hget(cluster.keys.nodes, "n1")).state is NodeState.DISCONNECTING
    viewer = logged_in(tenant_a.member(global_policies=(access.VIEW_FLOW,)))
    page = viewer.get(CLUSTER)
    assert "Reconnect" not in _text(page) and "Deploy" not in _text(page).replace("Deployments", "")
    assert "n1" not in _text(page) and "needs the “view the cluster” policy" in _text(page)
    cluster_viewer = logged_in(tenant_a.member(global_policies=(access.VIEW_FLOW, access.VIEW_CLUSTER)))
    assert "n1" in _text(cluster_viewer.get(CLUSTER))
    answer = viewer.post("/cluster/nodes/n1/reconnect", follow=True)
    assert "You may not change the cluster's nodes: only platform operators may." in _text(answer)
    assert NodeRecord.decode(cluster.client.hget(cluster.keys.nodes, "n1")).state is NodeState.DISCONNECTING


def test_the_group_page_shows_a_cluster_that_runs_something_else(cluster, tenant_a, admin_a):
    small_flow(tenant_a)
    portal = logged_in(admin_a)
    portal.post("/cluster/deploy", {"version": ""})
    group_page = f"/groups/{tenant_a.root.pk}/"
    assert "Cluster not up to date" not in _text(portal.get(group_page))
    cluster.client.hset(cluster.keys.flow, "fingerprint", "0" * 64)  # e.g. an election's flow
    text = _text(portal.get(group_page))
    assert "Cluster not up to date" in text and "the cluster runs another flow than the latest deployment" in text


def test_an_invalid_design_is_refused_on_the_page(cluster, tenant_a, admin_a):
    Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="put", type="PutFile",
                             auto_terminated=["success", "failure"])
    text = _text(logged_in(admin_a).post("/cluster/deploy", {"version": ""}, follow=True))
    assert "fix them before deploying" in text and "put:" in text
    assert not Deployment.objects.exists()


def test_an_unreachable_cluster_is_shown_on_the_cluster_and_group_pages(tenant_a, admin_a):
    portal = logged_in(admin_a)
    text = _text(portal.get(CLUSTER))
    assert "Cluster unreachable." in text and "does not answer" in text
    assert "The nodes cannot be listed while the cluster is unreachable." in text
    assert "Cluster unreachable" in _text(portal.get(f"/groups/{tenant_a.root.pk}/"))


def test_a_connection_row_shows_what_awaits_transfer_only_when_something_does(cluster, deployed, tenant_a, admin_a):
    flow_a, *_ = deployed
    n1, n2 = cluster.nodes
    portal = logged_in(admin_a)
    group_page = f"/groups/{tenant_a.root.pk}/"
    assert "awaiting transfer" not in _text(portal.get(group_page))
    n1.node.controller.queue(str(flow_a["conn"].pk)).awaiting_transfer = lambda: (10, 3072)
    n2.node.controller.queue(str(flow_a["conn"].pk)).awaiting_transfer = lambda: (2, 1024)
    forget_answers()
    assert "↔ 12 (4 KB) awaiting transfer" in _text(portal.get(group_page))


def test_an_operator_offloads_a_disconnected_node_and_removes_it_from_the_page(cluster, tenant_a, admin_a):
    _heartbeat(cluster, "n1", "")
    disconnected = NodeRecord("n1", NodeState.DISCONNECTED, "", by_operator=True)
    cluster.client.hset(cluster.keys.nodes, "n1", disconnected.encode())
    assert "Offload" not in _text(logged_in(admin_a).get(CLUSTER)), "node actions are for operators"
    answer = logged_in(admin_a).post("/cluster/nodes/n1/offload", follow=True)
    assert "only platform operators may" in _text(answer)
    ops = operator()
    tenant_a.tenant.members.add(ops)
    portal = logged_in(ops)
    text = _text(portal.get(CLUSTER))
    assert "Offload" in text and "Remove" in text and "Reconnect" in text
    text = _text(portal.post("/cluster/nodes/n1/offload", follow=True))
    assert "Node n1: offload requested; remove it once it is offloaded." in text and "OFFLOADING" in text
    assert "Offload" not in text.replace("offload requested", "") and "Remove" not in text
    assert "already offloading" in _text(portal.post("/cluster/nodes/n1/offload", follow=True))
    cluster.client.hset(cluster.keys.nodes, "n1", NodeRecord("n1", NodeState.OFFLOADED, "", by_operator=True).encode())
    cluster.client.delete(cluster.keys.heartbeat("n1"))
    text = _text(portal.post("/cluster/nodes/n1/remove", follow=True))
    assert "Node n1: removed from the cluster." in text
    assert cluster.client.hget(cluster.keys.nodes, "n1") is None


def test_a_connected_node_cannot_be_offloaded_from_the_page(cluster, tenant_a):
    _heartbeat(cluster, "n1", "")
    ops = operator()
    tenant_a.tenant.members.add(ops)
    text = _text(logged_in(ops).get(CLUSTER))
    assert "Offload" not in text and "Remove" not in text
    text = _text(logged_in(ops).post("/cluster/nodes/n1/offload", follow=True))
    assert "node 'n1' is connected; disconnect it before offloading it" in text


def test_the_node_list_links_the_spark_ui_for_operators(cluster, tenant_a, admin_a):
    beat = Heartbeat("n1", address="n1:0", sent_at=time.time(), spark_ui_url="http://10.0.0.5:4040")
    cluster.client.set(cluster.keys.heartbeat("n1"), beat.encode(), ex=60)
    cluster.client.hset(cluster.keys.nodes, "n1", NodeRecord("n1", NodeState.CONNECTED).encode())
    ops = operator()
    tenant_a.tenant.members.add(ops)
    page = logged_in(ops).get(CLUSTER).content.decode()
    assert re.search(r'<a href="http://10\.0\.0\.5:4040"[^>]*>Spark UI</a>', page)
    assert "Spark UI" not in logged_in(admin_a).get(CLUSTER).content.decode(), "it shows every tenant's jobs"
