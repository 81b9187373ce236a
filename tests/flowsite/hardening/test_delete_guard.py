"""Nothing lost by an edit: deleting a connection that holds FlowFiles on the cluster's nodes, or
whose source is running, is refused (409, saying why), as NiFi refuses it, in the API and the
portal; so is deleting a group around such a connection. Emptying the queue first is the way.
When the nodes cannot be asked whether a deployed connection is empty, the answer is 503."""

from __future__ import annotations

import pytest

from flowsite.cluster.models import Deployment
from flowsite.flows.models import Connection, ProcessGroup, Processor
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.cluster.conftest import cluster, deployed  # noqa: F401  (fixtures: real in-process nodes)
from tests.flowsite.conftest import token_client
from tests.processes import wait_until

# Run-state changes reach the nodes when their transaction commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)


def _run_status(api, processor, state):
    processor.refresh_from_db()
    answer = api.put(f"{API}processors/{processor.pk}/run-status",
                     {"state": state, "revision": {"version": processor.version}}, format="json")
    assert answer.status_code == 200, answer.content


def _delete(api, component, kind="connections"):
    component.refresh_from_db()
    return api.delete(f"{API}{kind}/{component.pk}?version={component.version}")


def _portal(user):
    from django.test import Client
    client = Client()
    client.force_login(user)
    return client


def _fill_queue(cluster, flow, api):
    """Run ``gen`` until every node queues FlowFiles in ``conn``, then stop it: the source is
    stopped, the queue is not empty."""
    _run_status(api, flow["gen"], "RUNNING")
    for node in cluster.nodes:
        queue = node.node.controller.queue(str(flow["conn"].pk))
        wait_until(lambda queue=queue: len(queue) >= 2, what="FlowFiles queued")
    _run_status(api, flow["gen"], "STOPPED")
    for node in cluster.nodes:
        wait_until(lambda node=node: node.node.controller.processor(str(flow["gen"].pk)).run_status() == "Stopped",
                   what="gen stopped")


def test_a_connection_whose_source_runs_is_not_deleted(tenant_a, admin_a):
    root = tenant_a.root
    gen = Processor.objects.create(tenant=tenant_a.tenant, parent=root, name="gen", type="GenerateFlowFile",
                                   scheduled_state="RUNNING")
    log = Processor.objects.create(tenant=tenant_a.tenant, parent=root, name="log", type="LogAttribute",
                                   auto_terminated=["success"])
    conn = Connection.objects.create(tenant=tenant_a.tenant, parent=root, source=gen, destination=log,
                                     selected_relationships=["success"])
    body = assert_error(_delete(token_client(admin_a), conn), 409, "conflict")
    assert "source of the connection" in body["message"] and "is running" in body["message"]
    page = _portal(admin_a).post(f"/connections/{conn.pk}/delete", {"version": conn.version}, follow=True)
    assert b"is running: stop it before deleting the connection" in page.content
    assert Connection.objects.filter(pk=conn.pk).exists()


def test_a_connection_holding_flowfiles_on_real_nodes_is_not_deleted_until_emptied(cluster, deployed, admin_a):
    flow_a, _, api_a, _ = deployed
    _fill_queue(cluster, flow_a, api_a)
    held = sum(len(node.node.controller.queue(str(flow_a["conn"].pk))) for node in cluster.nodes)
    body = assert_error(_delete(api_a, flow_a["conn"]), 409, "conflict")
    assert f"holds {held} FlowFile(s)" in body["message"] and "empty the queue first" in body["message"]
    page = _portal(admin_a).post(f"/connections/{flow_a['conn'].pk}/delete", {"version": flow_a["conn"].version},
                                 follow=True)
    assert b"is not empty" in page.content
    assert Connection.objects.filter(pk=flow_a["conn"].pk).exists()
    assert api_a.post(f"{API}connections/{flow_a['conn'].pk}/empty").status_code == 200
    assert _delete(api_a, flow_a["conn"]).status_code == 204


def test_a_group_around_a_connection_holding_flowfiles_is_not_deleted(cluster, tenant_a, admin_a):
    api = token_client(admin_a)
    child = ProcessGroup.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="inner")
    gen = Processor.objects.create(tenant=tenant_a.tenant, parent=child, name="gen", type="GenerateFlowFile",
                                   properties={"File Size": "10 B"}, scheduling_period="50 millis")
    log = Processor.objects.create(tenant=tenant_a.tenant, parent=child, name="log", type="LogAttribute",
                                   auto_terminated=["success"])
    conn = Connection.objects.create(tenant=tenant_a.tenant, parent=child, source=gen, destination=log,
                                     selected_relationships=["success"])
    assert api.post(f"{API}cluster/deployments", {}, format="json").status_code == 202
    cluster.node("n1", cluster.published_flow())
    _fill_queue(cluster, {"gen": gen, "conn": conn}, api)
    body = assert_error(_delete(api, child, "process-groups"), 409, "conflict")
    assert f"connection {conn.pk} holds" in body["message"]
    assert ProcessGroup.objects.filter(pk=child.pk).exists()


def test_a_deployed_connection_the_cluster_cannot_vouch_for_is_503(tenant_a, admin_a):
    """The cluster's Redis is away (``no_cluster``): whether the queue is empty cannot be known."""
    gen = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="gen", type="GenerateFlowFile")
    log = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="log", type="LogAttribute",
                                   auto_terminated=["success"])
    conn = Connection.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, source=gen, destination=log,
                                     selected_relationships=["success"])
    Deployment.objects.create(deploy_id="d1", tenant=tenant_a.tenant, group=tenant_a.root, fingerprint="f",
                              document={"flowContents": {"connections": [{"identifier": str(conn.pk)}]}})
    body = assert_error(_delete(token_client(admin_a), conn), 503, "cluster_unavailable")
    assert "cannot confirm" in body["message"] and "cluster cannot be reached" in body["message"]
    assert Connection.objects.filter(pk=conn.pk).exists()
