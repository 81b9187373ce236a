"""Parameter contexts through the API: create, update (the whole list; a parameter sent without
a value keeps it), delete; sensitive values write-only and sealed, recorded as changed without
their value; binding a group by id; a bound context not deleted; another tenant's contexts not
found; history rows."""

from __future__ import annotations

import uuid

import pytest

from flowsite.flows.models import FlowAction, ParameterContext
from tests.flowsite.api.support import API
from tests.flowsite.conftest import token_client

CONTEXTS = f"{API}parameter-contexts"


@pytest.fixture
def made(api_a) -> dict:
    """A context with one plain and one sensitive parameter, created by alice."""
    answer = api_a.post(CONTEXTS, {"name": "env", "description": "settings", "parameters": [
        {"name": "dir", "value": "/tmp/in"},
        {"name": "password", "value": "hunter2", "sensitive": True, "description": "db"}]}, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()


def test_a_context_is_created_with_sensitive_values_write_only(api_a, made):
    assert made["name"] == "env" and made["revision"]["version"] == 0
    assert made["parameters"] == [
        {"name": "dir", "value": "/tmp/in", "sensitive": False, "description": "", "valueSet": True},
        {"name": "password", "value": None, "sensitive": True, "description": "db", "valueSet": True}]
    stored = ParameterContext.objects.get(pk=made["id"])
    assert "hunter2" not in str(stored.parameters)
    assert [c["id"] for c in api_a.get(CONTEXTS).json()["results"]] == [made["id"]]
    added = FlowAction.objects.get(component_id=made["id"])
    assert added.operation == "Add" and added.component_kind == "PARAMETER_CONTEXT"
    assert "hunter2" not in str(added.changes)
    assert {"field": "parameters.password", "before": None, "after": "********", "sensitive": True} in added.changes


def test_an_update_replaces_the_list_and_keeps_values_not_sent(api_a, made):
    answer = api_a.put(f"{CONTEXTS}/{made['id']}", {"revision": {"version": 0}, "parameters": [
        {"name": "dir", "value": "/tmp/other"}, {"name": "password"}, {"name": "new", "value": "1"}]}, format="json")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert [(p["name"], p["value"], p["valueSet"]) for p in body["parameters"]] == [
        ("dir", "/tmp/other", True), ("new", "1", True), ("password", None, True)]
    assert body["revision"]["version"] == 1
    changed = FlowAction.objects.filter(component_id=made["id"], operation="Configure").get()
    assert [c["field"] for c in changed.changes] == ["parameters.dir", "parameters.new"]
    removed = api_a.put(f"{CONTEXTS}/{made['id']}", {"revision": {"version": 1}, "parameters": [
        {"name": "password", "value": "new-secret"}]}, format="json").json()
    assert [p["name"] for p in removed["parameters"]] == ["password"]
    last = FlowAction.objects.filter(component_id=made["id"]).first()
    assert "new-secret" not in str(last.changes) and "/tmp/other" in str(last.changes)


def test_sensitivity_cannot_change_and_names_do_not_repeat(api_a, made):
    flipped = api_a.put(f"{CONTEXTS}/{made['id']}", {"revision": {"version": 0}, "parameters": [
        {"name": "password", "sensitive": False}]}, format="json")
    assert flipped.status_code == 400 and "sensitivity" in str(flipped.json())
    repeated = api_a.post(CONTEXTS, {"name": "x", "parameters": [{"name": "a"}, {"name": "a"}]}, format="json")
    assert repeated.status_code == 400
    taken = api_a.post(CONTEXTS, {"name": "env"}, format="json")
    assert taken.status_code == 400 and "already" in str(taken.json())


def test_a_group_is_bound_by_id_and_a_bound_context_is_not_deleted(api_a, tenant_a, made):
    bound = api_a.put(f"{API}process-groups/{tenant_a.root.pk}", {"revision": {"version": 0},
                                                                  "parameterContextId": made["id"]}, format="json")
    assert bound.status_code == 200, bound.json()
    assert bound.json()["parameterContext"] == "env" and bound.json()["parameterContextId"] == made["id"]
    assert api_a.get(f"{CONTEXTS}/{made['id']}").json()["boundProcessGroups"] == [str(tenant_a.root.pk)]
    refused = api_a.delete(f"{CONTEXTS}/{made['id']}?version=0")
    assert refused.status_code == 409 and str(tenant_a.root.pk) in refused.json()["message"]
    api_a.put(f"{API}process-groups/{tenant_a.root.pk}", {"revision": {"version": 1}, "parameterContextId": None},
              format="json")
    assert api_a.delete(f"{CONTEXTS}/{made['id']}?version=0").status_code == 204
    assert [a.operation for a in FlowAction.objects.filter(component_id=made["id"]).order_by("id")] == [
        "Add", "Remove"]


def test_a_stale_revision_is_a_conflict(api_a, made):
    api_a.put(f"{CONTEXTS}/{made['id']}", {"revision": {"version": 0}, "description": "a"}, format="json")
    stale = api_a.put(f"{CONTEXTS}/{made['id']}", {"revision": {"version": 0}, "description": "b"}, format="json")
    assert stale.status_code == 409 and stale.json()["currentRevision"]["version"] == 1


def test_context_changes_are_in_the_history(api_a, made):
    rows = api_a.get(f"{API}flow/history", {"componentId": made["id"]}).json()["results"]
    assert [(r["operation"], r["componentKind"]) for r in rows] == [("Add", "PARAMETER_CONTEXT")]


def test_another_tenants_context_is_not_found(api_a, tenant_b):
    theirs = ParameterContext.objects.create(tenant=tenant_b.tenant, name="theirs")
    missing = api_a.get(f"{CONTEXTS}/{uuid.uuid4()}")
    assert missing.status_code == 404
    for answer in (api_a.get(f"{CONTEXTS}/{theirs.pk}"),
                   api_a.put(f"{CONTEXTS}/{theirs.pk}", {"revision": {"version": 0}, "name": "x"}, format="json"),
                   api_a.delete(f"{CONTEXTS}/{theirs.pk}?version=0"),
                   api_a.post(CONTEXTS, {"name": "y", "tenantId": str(tenant_b.tenant.pk)}, format="json")):
        assert answer.status_code == 404
    assert api_a.get(f"{CONTEXTS}/{theirs.pk}").json()["message"] == missing.json()["message"]
    assert api_a.get(CONTEXTS).json()["count"] == 0


def test_a_member_who_may_not_modify_the_root_cannot_change_contexts(tenant_a, made):
    viewer = token_client(tenant_a.member(root_policies=["view_component"]))
    assert viewer.get(f"{CONTEXTS}/{made['id']}").status_code == 200
    assert viewer.put(f"{CONTEXTS}/{made['id']}", {"revision": {"version": 0}, "name": "x"},
                      format="json").status_code == 403
