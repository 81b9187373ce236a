"""Labels through the API (create, configure, move, delete, history, another tenant's not found)
and in flow definitions (NiFi's ``labels`` array: exported, imported, and the same after a round
trip)."""

from __future__ import annotations

import importlib
import uuid

from django.apps import apps

from flowsite.flows.definition import Identity, export_group, import_group
from flowsite.flows.models import FlowAction, Label, ProcessGroup
from tests.flowsite.api.support import API


def _create(api, group, **fields):
    answer = api.post(f"{API}process-groups/{group.pk}/labels", {"label": "a note", **fields}, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()


def test_a_label_is_created_configured_moved_and_deleted(api_a, tenant_a):
    made = _create(api_a, tenant_a.root, width=300, style={"font-size": "18px"})
    assert made["uri"] == f"/api/v1/labels/{made['id']}"
    assert (made["label"], made["width"], made["height"], made["style"]) == ("a note", 300, 150, {"font-size": "18px"})
    listed = api_a.get(f"{API}process-groups/{tenant_a.root.pk}/labels").json()["results"]
    assert [row["id"] for row in listed] == [made["id"]]
    changed = api_a.put(f"{API}labels/{made['id']}", {"revision": {"version": 0}, "label": "another note",
                                                       "style": {"background-color": "#fff7d7"}}, format="json")
    assert changed.status_code == 200 and changed.json()["label"] == "another note"
    moved = api_a.put(f"{API}labels/{made['id']}", {"revision": {"version": 1}, "position": {"x": 40, "y": 50}},
                      format="json")
    assert moved.json()["position"] == {"x": 40, "y": 50}
    assert api_a.get(f"{API}process-groups/{tenant_a.root.pk}").json()["contents"]["labels"] == 1
    assert api_a.delete(f"{API}labels/{made['id']}?version=2").status_code == 204
    rows = FlowAction.objects.filter(component_id=made["id"]).order_by("id")
    assert [(r.operation, r.component_kind) for r in rows] == [
        ("Add", "LABEL"), ("Configure", "LABEL"), ("Move", "LABEL"), ("Remove", "LABEL")]
    assert {"field": "text", "before": "a note", "after": "another note"} in rows[1].changes


def test_a_label_refuses_unknown_style_keys_and_sizes_out_of_range(api_a, tenant_a):
    answer = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/labels", {"style": {"color": "red"}, "width": 0},
                        format="json")
    assert answer.status_code == 400
    assert {p["path"] for p in answer.json()["problems"]} == {"$.style", "$.width"}


def test_another_tenants_label_is_not_found(api_a, tenant_b):
    theirs = Label.objects.create(tenant=tenant_b.tenant, parent=tenant_b.root, text="secret")
    missing = api_a.get(f"{API}labels/{uuid.uuid4()}")
    for answer in (api_a.get(f"{API}labels/{theirs.pk}"),
                   api_a.put(f"{API}labels/{theirs.pk}", {"revision": {"version": 0}, "label": "x"}, format="json"),
                   api_a.delete(f"{API}labels/{theirs.pk}?version=0"),
                   api_a.post(f"{API}process-groups/{tenant_b.root.pk}/labels", {}, format="json")):
        assert answer.status_code == 404
    assert api_a.get(f"{API}labels/{theirs.pk}").json()["message"] == missing.json()["message"]


def test_labels_go_through_flow_definitions_unchanged(tenant_a):
    document = {"flowEncodingVersion": "1.0", "flowContents": {
        "identifier": "top", "name": "Top",
        "labels": [{"identifier": "note", "name": "", "label": "Read me", "width": 320.0, "height": 80.0,
                    "style": {"font-size": "14px"}, "zIndex": 3, "position": {"x": 10.0, "y": 20.0},
                    "componentType": "LABEL", "comments": ""}],
        "processGroups": [{"identifier": "inner", "name": "Inner",
                           "labels": [{"identifier": "deep", "label": "inside"}]}]}}
    group = import_group(tenant_a.root, document)
    note = Label.objects.get(parent=group)
    assert (note.text, note.width, note.height, note.style, note.z_index, note.position_x) == (
        "Read me", 320, 80, {"font-size": "14px"}, 3, 10)
    exported = export_group(group, Identity.VERSIONED)
    assert exported["flowContents"]["labels"] == [{**document["flowContents"]["labels"][0], "groupIdentifier": "top"}]
    assert exported["flowContents"]["processGroups"][0]["labels"][0]["label"] == "inside"
    again = import_group(tenant_a.root, exported)
    assert export_group(again, Identity.VERSIONED)["flowContents"] == exported["flowContents"]


def test_the_migration_makes_rows_of_the_labels_a_group_kept_unmodelled(tenant_a):
    group = ProcessGroup.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="old", extra={
        "labels": [{"identifier": "kept", "label": "from before", "width": 90.0, "style": {"font-size": "9px"},
                    "position": {"x": 3.0, "y": 4.0}}, {"no": "identifier"}],
        "executionEngine": "INHERITED"})
    importlib.import_module("flowsite.flows.migrations.0007_labels").labels_from_extra(apps, None)
    group.refresh_from_db()
    assert group.extra == {"executionEngine": "INHERITED"}
    label = Label.objects.get(parent=group)
    assert (label.versioned_id, label.text, label.width, label.height, label.style, label.position_x) == (
        "kept", "from before", 90, 150, {"font-size": "9px"}, 3)
    assert export_group(group)["flowContents"]["labels"][0]["identifier"] == "kept"
