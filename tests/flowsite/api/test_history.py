"""The flow configuration history through the API: changes made through the API appear with who
and what, newest first, filtered by component, user, operation and time, paged; another tenant's
changes, and changes of components a user may not view, are not there."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from flowsite.flows import access
from flowsite.flows.models import FlowAction, Processor
from tests.flowsite.api.support import API
from tests.flowsite.conftest import token_client

HISTORY = f"{API}flow/history"
GENERATE = "org.apache.nifi.processors.standard.GenerateFlowFile"


@pytest.fixture
def made(api_a, tenant_a):
    """A processor created, renamed and moved through the API by alice, and a funnel."""
    url = f"{API}process-groups/{tenant_a.root.pk}/processors"
    created = api_a.post(url, {"type": GENERATE, "name": "gen"}, format="json").json()
    pk = created["id"]
    assert api_a.put(f"{API}processors/{pk}", {"revision": {"version": 0}, "name": "generate"},
                     format="json").status_code == 200
    assert api_a.put(f"{API}processors/{pk}", {"revision": {"version": 1}, "position": {"x": 10, "y": 20}},
                     format="json").status_code == 200
    funnel = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/funnels", {}, format="json").json()
    return pk, funnel["id"]


def test_changes_through_the_api_are_listed_newest_first_with_who_and_what(api_a, made):
    pk, funnel = made
    body = api_a.get(HISTORY).json()
    assert body["count"] == 4
    assert [(r["operation"], r["componentId"]) for r in body["results"]] == [
        ("Add", funnel), ("Move", pk), ("Configure", pk), ("Add", pk)]
    configure = body["results"][2]
    assert configure["user"] == "alice" and configure["componentType"] == GENERATE
    assert configure["changes"] == [{"field": "name", "before": "gen", "after": "generate"}]


def test_the_history_is_filtered_by_component_user_operation_and_time(api_a, made, tenant_a):
    pk, funnel = made
    assert [r["operation"] for r in api_a.get(HISTORY, {"componentId": pk}).json()["results"]] == [
        "Move", "Configure", "Add"]
    assert api_a.get(HISTORY, {"user": "alice"}).json()["count"] == 4
    assert api_a.get(HISTORY, {"user": "bob"}).json()["count"] == 0
    assert api_a.get(HISTORY, {"operation": "Move"}).json()["count"] == 1
    FlowAction.objects.filter(component_id=funnel).update(timestamp=timezone.now() - timedelta(days=2))
    since = (timezone.now() - timedelta(days=1)).isoformat()
    assert funnel not in [r["componentId"] for r in api_a.get(HISTORY, {"since": since}).json()["results"]]
    assert [r["componentId"] for r in api_a.get(HISTORY, {"until": since}).json()["results"]] == [funnel]
    page = api_a.get(HISTORY, {"limit": 2, "offset": 2}).json()
    assert page["count"] == 4 and len(page["results"]) == 2 and page["next"] is None


def test_another_tenant_sees_none_of_it(made, tenant_b):
    outsider = token_client(tenant_b.admin("mallory"))
    assert outsider.get(HISTORY).json()["count"] == 0


def test_a_member_sees_only_changes_of_components_it_may_view(api_a, made, tenant_a):
    pk, funnel = made
    processor = Processor.objects.get(pk=pk)
    viewer = tenant_a.member("bob", root_policies=[access.VIEW])
    other = tenant_a.member("carol")
    access.grant(processor, access.VIEW, user=other)
    assert token_client(viewer).get(HISTORY).json()["count"] == 4
    # carol may view the processor only: its rows, not the funnel's
    assert {r["componentId"] for r in token_client(other).get(HISTORY).json()["results"]} == {pk}


def test_a_deleted_components_history_stays_visible_to_who_may_view_its_group(api_a, made):
    pk, funnel = made
    assert api_a.delete(f"{API}funnels/{funnel}?version=0").status_code == 204
    rows = api_a.get(HISTORY, {"componentId": funnel}).json()["results"]
    assert [r["operation"] for r in rows] == ["Remove", "Add"]
