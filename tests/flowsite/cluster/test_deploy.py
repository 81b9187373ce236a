"""POST/GET /api/v1/cluster/deployments: a tenant's flow sealed, assembled into the cluster's flow,
published in Redis and announced to the connected nodes."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.core.management import call_command
from django.db import connection as db_connection, transaction

from engine.cluster.bus import Command
from engine.cluster.cluster_flow import DeployReport, read_flow, write_report
from engine.secrets import PREFIX
from flowsite.api.serializers.processors import processor_class
from flowsite.cluster.deploy import hold_deploy_lock
from flowsite.cluster.models import Deployment
from flowsite.flows import access
from flowsite.flows.definition import parameter_context_binding, property_context
from flowsite.flows.models import FlowVersion, ParameterContext, Processor
from flowsite.flows.secrets import current_key
from tests.flowsite.cluster.conftest import small_flow
from tests.flowsite.conftest import token_client

DEPLOYMENTS = "/api/v1/cluster/deployments"


def _with_secrets(world) -> Processor:
    """A sensitive parameter in a context of the root group, and an InvokeHTTP with a password."""
    context = ParameterContext.objects.create(tenant=world.tenant, name="paths")
    context.parameters = [
        {"name": "secret", "sensitive": True,
         "value": current_key().seal("param-in-clear", parameter_context_binding(context, "secret"))},
        {"name": "dir", "sensitive": False, "value": "/data"}]
    context.save()
    world.root.parameter_context = context
    world.root.save()
    relationships = [r.name for r in processor_class("InvokeHTTP").relationships_for({})]
    http = Processor.objects.create(tenant=world.tenant, parent=world.root, name="http", type="InvokeHTTP",
                                    properties={"HTTP URL": "http://127.0.0.1:9/", "Request Username": "ann"},
                                    auto_terminated=relationships)
    http.sensitive_properties = {"Request Password": current_key().seal("pw-in-clear",
                                                                        property_context(http, "Request Password"))}
    http.save()
    return http


def test_a_deployment_publishes_the_cluster_flow_sealed_and_prefixed(cluster, tenant_a, tenant_b, api_a):
    small_flow(tenant_a)
    http = _with_secrets(tenant_a)
    small_flow(tenant_b)
    assert token_client(tenant_b.admin("bob")).post(DEPLOYMENTS, {}, format="json").status_code == 202
    answer = api_a.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    slug_a, slug_b = tenant_a.tenant.slug, tenant_b.tenant.slug
    assert body["tenant"] == slug_a and body["version"] is None and body["nodes"] == []
    published = read_flow(cluster.client, cluster.keys)
    assert published.fingerprint == body["fingerprint"] == published.bundle.fingerprint
    assert published.deploy_id == body["deploy_id"]
    assert published.version == ",".join(sorted([f"{slug_a}:design", f"{slug_b}:design"]))
    flow = published.bundle.flow
    assert flow["flowContents"]["identifier"] == "root" and flow["flowContents"]["name"] == "root"
    groups = {group["identifier"]: group for group in flow["flowContents"]["processGroups"]}
    assert set(groups) == {str(tenant_a.root.pk), str(tenant_b.root.pk)}
    assert groups[str(tenant_a.root.pk)]["parameterContextName"] == f"{slug_a}/paths"
    assert list(flow["parameterContexts"]) == [f"{slug_a}/paths"]
    text = json.dumps(flow)
    assert "pw-in-clear" not in text and "param-in-clear" not in text
    sealed = next(p for p in groups[str(tenant_a.root.pk)]["processors"] if p["identifier"] == str(http.pk))
    assert sealed["properties"]["Request Password"].startswith(PREFIX)
    opened = cluster.published_flow()
    opened_http = next(p for g in opened["flowContents"]["processGroups"] for p in g["processors"]
                       if p["identifier"] == str(http.pk))
    assert opened_http["properties"]["Request Password"] == "pw-in-clear"
    assert opened["parameterContexts"][f"{slug_a}/paths"]["parameters"][1]["value"] == "param-in-clear"
    members = published.bundle.authorizations["tenants"]
    assert set(members) == {slug_a, slug_b} and members[slug_a]["members"] == ["alice"]
    assert "user:alice" in members[slug_a]["policies"]["global"]["modify_flow"]


def test_the_connected_nodes_receive_the_deploy_command(cluster, tenant_a, api_a):
    small_flow(tenant_a)
    node = cluster.node("n1", None)
    node.listener.stop()  # read the stream ourselves
    answer = api_a.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 202
    assert answer.json()["nodes"] == ["n1"]
    entries = cluster.client.xrange(cluster.keys.commands("n1"))
    assert len(entries) == 1
    command = Command.decode(entries[0][1])
    assert command.kind == "deploy"
    assert command.args == {"deploy_id": answer.json()["deploy_id"], "fingerprint": answer.json()["fingerprint"]}


def test_a_deployment_shows_each_nodes_report_and_the_pending_nodes(cluster, tenant_a, api_a):
    small_flow(tenant_a)
    cluster.node("n1", None)
    cluster.node("n2", None)
    deploy_id = api_a.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
    write_report(cluster.client, cluster.keys, deploy_id, DeployReport("n1", "applied", fingerprint="f"))
    answer = api_a.get(f"{DEPLOYMENTS}/{deploy_id}")
    assert answer.status_code == 200
    body = answer.json()
    assert [(r["node"], r["status"], r["ok"]) for r in body["reports"]] == [("n1", "applied", True)]
    assert body["pending"] == ["n2"]
    assert body["document"]["flowContents"]["identifier"] == str(tenant_a.root.pk)
    assert [d["deploy_id"] for d in api_a.get(DEPLOYMENTS).json()] == [deploy_id]


def test_an_invalid_design_is_refused_and_nothing_is_published(cluster, tenant_a, api_a):
    small_flow(tenant_a)
    Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="put", type="PutFile",
                             auto_terminated=["success", "failure"])
    answer = api_a.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 400
    body = answer.json()
    assert body["code"] == "invalid_design"
    assert any(p["message"].startswith("put: ") and "Directory" in p["message"] for p in body["problems"])
    assert read_flow(cluster.client, cluster.keys) is None
    assert not Deployment.objects.exists()


def test_deploying_a_version_reverts_the_design_first(cluster, tenant_a, api_a):
    flow = small_flow(tenant_a)
    root = tenant_a.root
    assert api_a.post(f"/api/v1/process-groups/{root.pk}/versions", {"comment": "v1"}, format="json").status_code == 201
    flow["log"].name = "renamed"
    flow["log"].save()
    answer = api_a.post(DEPLOYMENTS, {"version": 1}, format="json")
    assert answer.status_code == 202, answer.json()
    assert answer.json()["version"] == 1
    assert Processor.objects.get(pk=flow["log"].pk).name == "log"
    published = read_flow(cluster.client, cluster.keys)
    assert published.version == f"{tenant_a.tenant.slug}:v1"
    answer = api_a.post(DEPLOYMENTS, {"version": 7}, format="json")
    assert answer.status_code == 400
    assert answer.json()["problems"] == [{"path": "$.version",
                                          "message": f"the root group of {tenant_a.tenant.slug} has no version 7"}]
    assert FlowVersion.objects.filter(group=root).count() == 1


def test_deploying_needs_the_modify_flow_policy_and_ones_own_tenant(cluster, tenant_a, tenant_b, api_a):
    small_flow(tenant_a)
    viewer = token_client(tenant_a.member(global_policies=(access.VIEW_FLOW,)))
    answer = viewer.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 403 and "modify_flow" in answer.json()["message"]
    answer = api_a.post(DEPLOYMENTS, {"tenant": str(tenant_b.tenant.pk)}, format="json")
    assert answer.status_code == 404
    deploy_id = api_a.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
    other = token_client(tenant_b.admin())
    assert other.get(f"{DEPLOYMENTS}/{deploy_id}").status_code == 404
    assert other.get(DEPLOYMENTS).json() == []


@pytest.mark.django_db(transaction=True)
def test_a_run_state_change_and_a_deployment_never_interleave(cluster, tenant_a, tenant_b, api_a):
    """A deployment reads every tenant's run states and publishes them: a run-status change of
    another tenant that commits meanwhile would be undone on the nodes. Both hold one lock, so a
    deployment waits for the change and publishes the state it made."""
    small_flow(tenant_a)
    flow_b = small_flow(tenant_b)
    assert token_client(tenant_b.admin("bob")).post(DEPLOYMENTS, {}, format="json").status_code == 202
    generator = flow_b["gen"]
    released = threading.Event()

    def change_run_state() -> None:  # B's start, held open while A deploys
        try:
            with transaction.atomic():
                hold_deploy_lock()
                Processor.objects.filter(pk=generator.pk).update(scheduled_state="RUNNING")
                released.wait(5)
        finally:
            db_connection.close()

    changer = threading.Thread(target=change_run_state)
    changer.start()
    time.sleep(0.5)
    deployer = threading.Thread(target=lambda: (api_a.post(DEPLOYMENTS, {}, format="json"), db_connection.close()))
    deployer.start()
    deployer.join(1.0)
    assert deployer.is_alive(), "the deployment waits for the run-state change in progress"
    released.set()
    changer.join(5)
    deployer.join(30)
    states = {p["identifier"]: p.get("scheduledState")
              for g in cluster.published_flow()["flowContents"]["processGroups"] for p in g["processors"]}
    assert states[str(generator.pk)] == "RUNNING"


def test_an_operators_grant_change_reaches_the_cluster_at_once(cluster, tenant_a, api_a, settings,
                                                               django_capture_on_commit_callbacks):
    small_flow(tenant_a)
    assert api_a.post(DEPLOYMENTS, {}, format="json").status_code == 202
    before = Deployment.objects.get(tenant=tenant_a.tenant)
    slug = tenant_a.tenant.slug
    assert "write-filesystem" in cluster.published_flow()["tenants"][slug]["capabilities"]

    with django_capture_on_commit_callbacks(execute=True):
        call_command("grant_tenant", slug, "--revoke-capability", "write-filesystem")
    assert "write-filesystem" not in cluster.published_flow()["tenants"][slug]["capabilities"]
    again = Deployment.objects.filter(tenant=tenant_a.tenant).exclude(pk=before.pk).get()
    assert again.document == before.document and again.created_by is None, "the same flow, by nobody"

    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # the cluster cannot be told: the grant is kept all the same
    with django_capture_on_commit_callbacks(execute=True):
        call_command("grant_tenant", slug, "--capability", "write-filesystem")
    tenant_a.tenant.refresh_from_db()
    assert "write-filesystem" in tenant_a.tenant.capabilities
    assert Deployment.objects.filter(tenant=tenant_a.tenant).count() == 2
