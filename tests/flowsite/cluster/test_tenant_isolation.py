"""Issue 11's findings on the shared cluster, as regressions: a tenant user learns nothing of
another tenant through the nodes (list, detail, portal page), the deployments (list, detail,
create) or the nodes' reports; node actions are for platform operators; a deployed document is
read only with the view policy on everything in it. Real Redis and real engine nodes
(``tests.cluster_nodes``) running both tenants' flows."""

from __future__ import annotations

import pytest

import time

from engine.cluster.cluster_flow import DeployReport, write_report
from engine.cluster.records import Heartbeat
from flowsite.cluster import status as federated
from flowsite.cluster.models import Deployment
from flowsite.flows import access
from flowsite.flows.models import ProcessGroup, Processor
from tests.flowsite.cluster.conftest import operator
from tests.flowsite.cluster.test_portal import _text
from tests.flowsite.cluster.test_status import _queue_on, _start_gen_and_wait
from tests.flowsite.conftest import token_client
from tests.flowsite.portal.conftest import logged_in

# Run-state changes reach the nodes when their transaction commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)

NODES = "/api/v1/cluster/nodes"
DEPLOYMENTS = "/api/v1/cluster/deployments"


def _beat(cluster, latest: Deployment) -> None:
    """Each node's heartbeat as its agent writes it: node-wide figures, the cluster flow it runs."""
    for node in cluster.nodes:
        figures = node.node.controller.status().node
        beat = Heartbeat(node.node_id, address=f"{node.node_id}:0", started_at=time.time(), sent_at=time.time(),
                         flow_fingerprint=latest.fingerprint, flow_version=latest.cluster_version,
                         deploy_id=latest.deploy_id, active_threads=figures.active_threads,
                         queued_count=figures.queued_count, queued_bytes=figures.queued_bytes)
        cluster.client.set(cluster.keys.heartbeat(node.node_id), beat.encode(), ex=60)


def _b_queues_on_both_nodes(cluster, deployed):
    flow_a, flow_b, api_a, api_b = deployed
    _start_gen_and_wait(cluster, api_b, flow_b)
    latest = Deployment.objects.first()
    assert latest.tenant == flow_b["gen"].tenant, "B deployed last: the cluster's label names both tenants"
    _beat(cluster, latest)
    federated.forget_answers()
    return latest


def test_nodes_show_a_tenant_only_its_own_figures_version_and_deployment(cluster, deployed, tenant_a, tenant_b):
    flow_a, flow_b, api_a, api_b = deployed
    latest_b = _b_queues_on_both_nodes(cluster, deployed)
    deployment_a = Deployment.objects.get(tenant=tenant_a.tenant)
    slug_a, slug_b = tenant_a.tenant.slug, tenant_b.tenant.slug
    assert latest_b.cluster_version == f"{slug_a}:design,{slug_b}:design"
    for answer in (api_a.get(NODES), api_a.get(f"{NODES}/n1")):
        assert answer.status_code == 200, answer.json()
        assert slug_b not in answer.content.decode() and latest_b.deploy_id not in answer.content.decode()
    for node in api_a.get(NODES).json():
        beat = node["heartbeat"]
        assert beat["queued_count"] == 0 and beat["queued_bytes"] == 0, "B's FlowFiles are not A's figures"
        assert beat["flow_version"] == f"{slug_a}:design"
        assert beat["deploy_id"] == deployment_a.deploy_id and beat["flow_fingerprint"] == deployment_a.fingerprint
    for node in api_b.get(NODES).json():
        assert node["heartbeat"]["queued_count"] >= 2 and node["heartbeat"]["flow_version"] == f"{slug_b}:design"
    ops = token_client(operator())
    for node in ops.get(NODES).json():
        assert node["heartbeat"]["flow_version"] == latest_b.cluster_version
        assert node["heartbeat"]["deploy_id"] == latest_b.deploy_id and node["heartbeat"]["queued_count"] >= 2


def test_a_tenant_sees_a_neutral_state_of_a_node_an_operator_disconnected(cluster, deployed):
    _, _, api_a, _ = deployed
    ops = token_client(operator("olga"))
    assert ops.post(f"{NODES}/n1/disconnect").json()["reason"] == "disconnected by olga"
    node = api_a.get(f"{NODES}/n1").json()
    assert node["state"] == "DISCONNECTING" and node["reason"] == ""
    assert "olga" not in api_a.get(NODES).content.decode()


def test_the_portal_cluster_page_shows_only_the_tenants_queued_flowfiles(cluster, deployed, tenant_a, tenant_b,
                                                                           admin_a):
    _, flow_b, _, _ = deployed
    _b_queues_on_both_nodes(cluster, deployed)
    text = _text(logged_in(admin_a).get("/cluster/"))
    assert text.count("0 FlowFiles") == 2 and tenant_b.tenant.slug not in text
    assert "every other tenant" not in text and "Disconnect" not in text
    bob = tenant_b.tenant.members.get()
    text_b = _text(logged_in(bob).get("/cluster/"))
    assert "0 FlowFiles" not in text_b and tenant_a.tenant.slug not in text_b
    assert all(_queue_on(node, flow_b["conn"]) >= 2 for node in cluster.nodes)


def test_deployments_list_detail_and_create_show_only_the_callers_tenant(cluster, deployed, tenant_a, tenant_b):
    _, flow_b, api_a, api_b = deployed
    slug_a, slug_b = tenant_a.tenant.slug, tenant_b.tenant.slug
    listed = api_a.get(DEPLOYMENTS).json()
    assert [d["tenant"] for d in listed] == [slug_a] and listed[0]["cluster_version"] == f"{slug_a}:design"
    answer = api_a.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 202 and answer.json()["cluster_version"] == f"{slug_a}:design"
    deployment_b = Deployment.objects.get(tenant=tenant_b.tenant)
    assert api_a.get(f"{DEPLOYMENTS}/{deployment_b.deploy_id}").status_code == 404
    assert api_a.get(f"{DEPLOYMENTS}?tenant={tenant_b.tenant.pk}").status_code == 404
    mine = answer.json()["deploy_id"]
    refusal = (f"refused the cluster's flow: 1 connection(s) holding FlowFiles are missing from it — "
               f"b-secret-queue ({flow_b['conn'].pk}): 7 FlowFile(s)")
    write_report(cluster.client, cluster.keys, mine, DeployReport("n1", "refused", refusal, problems=[refusal]))
    body = api_a.get(f"{DEPLOYMENTS}/{mine}")
    assert body.status_code == 200, body.json()
    text = body.content.decode()
    assert "b-secret-queue" not in text and str(flow_b["conn"].pk) not in text and slug_b not in text
    report = body.json()["reports"][0]
    assert report["status"] == "refused" and "a platform operator can see why" in report["message"]
    ops = token_client(operator())
    assert "b-secret-queue" in ops.get(f"{DEPLOYMENTS}/{mine}").json()["reports"][0]["message"]
    assert {d["tenant"] for d in ops.get(DEPLOYMENTS).json()} == {slug_a, slug_b}


def test_a_member_with_no_policy_reads_no_deployment(cluster, deployed, tenant_a):
    deployment = Deployment.objects.get(tenant=tenant_a.tenant)
    nobody = token_client(tenant_a.member())
    answer = nobody.get(f"{DEPLOYMENTS}/{deployment.deploy_id}")
    assert answer.status_code == 403 and "view policy" in answer.json()["message"]
    assert "document" not in answer.json() and "gen" not in answer.content.decode()
    assert nobody.get(DEPLOYMENTS).json() == []
    text = _text(logged_in(tenant_a.member()).get("/cluster/"))
    assert deployment.deploy_id[:8] not in text and "needs the view policy" in text


def test_a_viewer_of_the_root_but_not_the_child_gets_no_child_configuration(cluster, deployed, tenant_a, admin_a):
    _, _, api_a, _ = deployed
    child = ProcessGroup.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="vault")
    Processor.objects.create(tenant=tenant_a.tenant, parent=child, name="secret-gen", type="GenerateFlowFile",
                             properties={"File Size": "10 B", "Custom Text": "s3cr3t-value"},
                             auto_terminated=["success"])
    access.grant(child, access.VIEW, user=admin_a)  # the child has a view policy of its own, not the viewer's
    viewer = tenant_a.member(global_policies=(access.VIEW_CLUSTER,), root_policies=(access.VIEW,))
    deploy_id = api_a.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
    answer = token_client(viewer).get(f"{DEPLOYMENTS}/{deploy_id}")
    assert answer.status_code == 403, answer.json()
    assert str(child.pk) in answer.json()["message"]
    assert "s3cr3t-value" not in answer.content.decode() and "secret-gen" not in answer.content.decode()
    whole = api_a.get(f"{DEPLOYMENTS}/{deploy_id}")
    assert whole.status_code == 200 and "s3cr3t-value" in whole.content.decode()
