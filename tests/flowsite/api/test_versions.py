"""Flow versions of a process group: commit with a comment, list, show, compare (components
added, removed and modified, properties one by one) and revert (components kept by versioned
identifier, sensitive values kept, the group's revision checked)."""

from __future__ import annotations

import pytest

from flowsite.flows.definition import property_context
from flowsite.flows.models import Component, Funnel, Processor
from flowsite.flows.secrets import current_key
from tests.flowsite.api.support import API, assert_error


@pytest.fixture
def group(api_a, tenant_a):
    """A group with a GenerateFlowFile, an InvokeHTTP holding a password, and a funnel."""
    root = tenant_a.root.pk
    created = api_a.post(f"{API}process-groups/{root}/process-groups", {"name": "versioned"}, format="json").json()
    url = f"{API}process-groups/{created['id']}"
    api_a.post(f"{url}/processors", {"type": "GenerateFlowFile", "name": "gen",
                                     "properties": {"File Size": "1 KB"}}, format="json")
    api_a.post(f"{url}/processors", {"type": "InvokeHTTP", "name": "http", "properties": {
        "HTTP URL": "https://example.com", "Request Username": "me", "Request Password": "pa55word"}}, format="json")
    api_a.post(f"{url}/funnels", {"name": "funnel"}, format="json")
    return created["id"]


def commit(api, group, comment=""):
    response = api.post(f"{API}process-groups/{group}/versions", {"comment": comment}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def processor(group, name) -> Processor:
    return Processor.objects.get(parent_id=group, name=name)


def change(api, component: Processor, **fields):
    component.refresh_from_db()
    response = api.put(f"{API}processors/{component.pk}", {"revision": {"version": component.version}, **fields},
                       format="json")
    assert response.status_code == 200, response.content
    return response.json()


def revert(api, group, number, version=None):
    if version is None:
        version = Component.objects.get(pk=group).version
    return api.post(f"{API}process-groups/{group}/versions/{number}/revert", {"revision": {"version": version}},
                    format="json")


def test_commits_are_numbered_and_listed_newest_first(api_a, group):
    first = commit(api_a, group, "first")
    second = commit(api_a, group, "second")
    assert (first["number"], first["comment"], first["author"]) == (1, "first", "alice")
    assert second["number"] == 2 and first["createdAt"] <= second["createdAt"]
    listed = api_a.get(f"{API}process-groups/{group}/versions").json()
    assert listed["count"] == 2 and [v["number"] for v in listed["results"]] == [2, 1]
    assert "definition" not in listed["results"][0]
    assert api_a.get(f"{API}process-groups/{group}").json()["currentVersion"] == 2


def test_a_version_shows_its_definition_without_sensitive_values(api_a, group):
    commit(api_a, group, "first")
    shown = api_a.get(f"{API}process-groups/{group}/versions/1").json()
    exported = api_a.get(f"{API}process-groups/{group}/flow-definition").json()
    assert shown["definition"] == exported and shown["comment"] == "first"
    assert "pa55word" not in str(shown)
    assert_error(api_a.get(f"{API}process-groups/{group}/versions/7"), 404, "not_found")


def test_a_comment_is_optional_and_bounded(api_a, group):
    assert commit(api_a, group)["comment"] == ""
    refused = assert_error(api_a.post(f"{API}process-groups/{group}/versions", {"comment": "c" * 10_001},
                                      format="json"), 400)
    assert refused["problems"][0]["path"] == "$.comment"


def test_a_diff_lists_added_removed_and_modified_components(api_a, group):
    commit(api_a, group, "first")
    gen = processor(group, "gen")
    change(api_a, gen, name="generate", properties={"File Size": "2 KB", "Batch Size": "5"})
    funnel = Funnel.objects.get(parent_id=group)
    assert api_a.delete(f"{API}funnels/{funnel.pk}?version=0").status_code == 204
    added = api_a.post(f"{API}process-groups/{group}/processors", {"type": "LogAttribute", "name": "log"},
                       format="json").json()
    diff = api_a.get(f"{API}process-groups/{group}/versions/diff?from=1").json()
    assert (diff["fromVersion"], diff["toVersion"]) == ("1", "current")
    changes = {d["identifier"]: d for d in diff["differences"]}
    assert changes[added["versionedId"]] == {"identifier": added["versionedId"], "componentType": "PROCESSOR",
                                             "name": "log", "change": "ADDED", "fields": []}
    assert changes[funnel.versioned_id]["change"] == "REMOVED"
    modified = changes[gen.versioned_id]
    assert modified["change"] == "MODIFIED" and modified["name"] == "generate"
    assert modified["fields"] == [{"field": "name", "from": "gen", "to": "generate"},
                                  {"field": "properties.Batch Size", "from": None, "to": "5"},
                                  {"field": "properties.File Size", "from": "1 KB", "to": "2 KB"}]
    assert len(changes) == 3


def test_a_diff_between_two_versions_and_back(api_a, group):
    commit(api_a, group)
    change(api_a, processor(group, "gen"), comments="annotated")
    commit(api_a, group)
    forward = api_a.get(f"{API}process-groups/{group}/versions/diff?from=1&to=2").json()["differences"]
    backward = api_a.get(f"{API}process-groups/{group}/versions/diff?from=2&to=1").json()["differences"]
    assert [f["field"] for f in forward[0]["fields"]] == ["comments"]
    assert forward[0]["fields"][0]["to"] == backward[0]["fields"][0]["from"] == "annotated"
    assert api_a.get(f"{API}process-groups/{group}/versions/diff?from=2").json()["differences"] == []


@pytest.mark.parametrize("query, path", [("", "$.from"), ("from=9", "$.from"), ("from=1&to=nine", "$.to"),
                                         ("from=-1", "$.from")])
def test_a_diff_of_versions_that_do_not_exist_is_400(api_a, group, query, path):
    commit(api_a, group)
    refused = assert_error(api_a.get(f"{API}process-groups/{group}/versions/diff?{query}"), 400, "invalid")
    assert [p["path"] for p in refused["problems"]] == [path]


def test_a_revert_keeps_components_by_versioned_id(api_a, group):
    gen, http = processor(group, "gen"), processor(group, "http")
    funnel = Funnel.objects.get(parent_id=group)
    commit(api_a, group)
    change(api_a, gen, properties={"File Size": "9 KB"})
    assert api_a.delete(f"{API}funnels/{funnel.pk}?version=0").status_code == 204
    api_a.post(f"{API}process-groups/{group}/processors", {"type": "LogAttribute", "name": "late"}, format="json")
    reverted = revert(api_a, group, 1)
    assert reverted.status_code == 200, reverted.content
    assert processor(group, "gen").pk == gen.pk and processor(group, "http").pk == http.pk
    assert processor(group, "gen").properties == {"File Size": "1 KB"}
    assert not Processor.objects.filter(parent_id=group, name="late").exists()
    restored = Funnel.objects.get(parent_id=group)
    assert restored.versioned_id == funnel.versioned_id and restored.name == "funnel"
    assert api_a.get(f"{API}process-groups/{group}/versions/diff?from=1").json()["differences"] == []


def test_a_revert_keeps_sensitive_values(api_a, group):
    http = processor(group, "http")
    commit(api_a, group)
    change(api_a, http, properties={"Request Password": "changed-later"})
    assert revert(api_a, group, 1).status_code == 200
    http.refresh_from_db()
    sealed = http.sensitive_properties["Request Password"]
    assert current_key().open(sealed, property_context(http, "Request Password")) == "changed-later"
    shown = api_a.get(f"{API}processors/{http.pk}").json()
    assert shown["sensitivePropertiesSet"] == ["Request Password"] and "Request Password" not in shown["properties"]


def test_a_revert_checks_the_groups_revision(api_a, group):
    commit(api_a, group)
    before = Component.objects.get(pk=group).version
    api_a.put(f"{API}process-groups/{group}", {"revision": {"version": before}, "name": "renamed"}, format="json")
    body = assert_error(revert(api_a, group, 1, version=before), 409, "stale_revision")
    assert body["currentRevision"]["version"] == before + 1
    assert Component.objects.get(pk=group).name == "renamed"
    reverted = revert(api_a, group, 1, version=before + 1)
    assert reverted.json()["name"] == "versioned" and reverted.json()["revision"]["version"] == before + 2


def test_a_revert_needs_a_revision_and_a_version_that_exists(api_a, group):
    commit(api_a, group)
    assert_error(api_a.post(f"{API}process-groups/{group}/versions/1/revert", {}, format="json"), 400)
    assert_error(revert(api_a, group, 5), 404)


def test_a_revert_of_a_running_group_is_409(api_a, group):
    commit(api_a, group)
    gen = processor(group, "gen")
    change(api_a, gen, autoTerminatedRelationships=["success"])
    gen.refresh_from_db()
    started = api_a.put(f"{API}processors/{gen.pk}/run-status", {"revision": {"version": gen.version},
                                                                 "state": "RUNNING"}, format="json")
    assert started.status_code == 200, started.content
    assert_error(revert(api_a, group, 1), 409, "conflict")


def test_a_revert_removing_a_port_connected_from_outside_is_409(api_a, tenant_a, group):
    commit(api_a, group)
    port = api_a.post(f"{API}process-groups/{group}/input-ports", {"name": "late"}, format="json").json()
    gen = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/processors", {"type": "GenerateFlowFile"},
                     format="json").json()
    joined = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/connections",
                        {"source": {"id": gen["id"]}, "destination": {"id": port["id"]},
                         "selectedRelationships": ["success"]}, format="json")
    assert joined.status_code == 201, joined.content
    refused = assert_error(revert(api_a, group, 1), 409, "conflict")
    assert joined.json()["id"] in refused["message"]
    assert Component.objects.filter(pk=port["id"]).exists()
