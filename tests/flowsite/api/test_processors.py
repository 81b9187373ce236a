"""Processors through the API: types the engine has, relationships it knows, validation by the
engine's own validators, starting only valid processors, restricted types, and sensitive
properties (write-only, stored sealed)."""

from __future__ import annotations

import pytest
from django.db import connection

from flowsite.flows import access
from flowsite.flows.models import Processor
from tests.flowsite.api.support import API, assert_error, problems_by_path
from tests.flowsite.conftest import token_client


@pytest.fixture
def processors_url(tenant_a):
    return f"{API}process-groups/{tenant_a.root.pk}/processors"


def create(api, url, **body):
    response = api.post(url, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def update(api, created, **fields):
    version = Processor.objects.get(pk=created["id"]).version
    return api.put(f"{API}processors/{created['id']}", {"revision": {"version": version}, **fields}, format="json")


def run_status(api, created, state):
    version = Processor.objects.get(pk=created["id"]).version
    return api.put(f"{API}processors/{created['id']}/run-status", {"revision": {"version": version}, "state": state},
                   format="json")


def test_a_new_processor_takes_the_types_defaults(api_a, processors_url):
    created = create(api_a, processors_url, type="org.apache.nifi.processors.standard.GenerateFlowFile")
    assert created["name"] == "GenerateFlowFile" and created["schedulingPeriod"] == "1 min"
    assert created["state"] == "STOPPED" and created["bundle"] is None
    assert created["relationships"] == [{"name": "success", "description": created["relationships"][0]["description"],
                                         "autoTerminate": False}]
    assert created["validationStatus"] == "INVALID"  # success is neither connected nor auto-terminated


@pytest.mark.parametrize("body, path, message", [
    ({"type": "NoSuchProcessor"}, "$.type",
     "unknown processor type 'NoSuchProcessor'; GET /api/v1/processor-types lists the types there are"),
    ({}, "$.type", "This field is required."),
    ({"type": "GenerateFlowFile", "autoTerminatedRelationships": ["success", "bogus"]},
     "$.autoTerminatedRelationships", "GenerateFlowFile has no relationship 'bogus' (it has: success)"),
    ({"type": "GenerateFlowFile", "schedulingStrategy": "CRON_DRIVEN", "schedulingPeriod": "every day"},
     "$.schedulingPeriod", None),
    ({"type": "GenerateFlowFile", "schedulingPeriod": "soon"}, "$.schedulingPeriod", None),
    ({"type": "GenerateFlowFile", "penaltyDuration": "long"}, "$.penaltyDuration", None),
    ({"type": "GenerateFlowFile", "concurrentlySchedulableTaskCount": 0}, "$.concurrentlySchedulableTaskCount", None),
    ({"type": "GenerateFlowFile", "properties": {"a\u0000b": "x"}}, "$.properties",
     "property names cannot hold NUL characters"),
    ({"type": "GenerateFlowFile", "properties": {"File Size": "1\u0000KB"}}, "$.properties['File Size']", None),
])
def test_an_invalid_processor_is_400(api_a, processors_url, body, path, message):
    refused = assert_error(api_a.post(processors_url, body, format="json"), 400, "invalid")
    found = problems_by_path(refused)
    assert list(found) == [path]
    if message is not None:
        assert found[path] == message
    assert not Processor.objects.exists()


def test_dynamic_relationships_come_from_properties(api_a, processors_url):
    created = create(api_a, processors_url, type="RouteOnAttribute", properties={"big": "${fileSize:gt(10)}"},
                     autoTerminatedRelationships=["big", "unmatched"])
    assert [(r["name"], r["autoTerminate"]) for r in created["relationships"]] == [("unmatched", True), ("big", True)]
    refused = assert_error(update(api_a, created, autoTerminatedRelationships=["small"]), 400)
    assert problems_by_path(refused) == {
        "$.autoTerminatedRelationships": "RouteOnAttribute has no relationship 'small' (it has: big, unmatched)"}


def test_the_type_cannot_change(api_a, processors_url):
    created = create(api_a, processors_url, type="GenerateFlowFile")
    refused = assert_error(update(api_a, created, type="LogAttribute"), 400)
    assert problems_by_path(refused) == {"$.type": "the type of a processor cannot change (it is GenerateFlowFile)"}


def test_the_engine_reports_invalid_properties(api_a, processors_url):
    created = create(api_a, processors_url, type="CompressContent", autoTerminatedRelationships=["success", "failure"],
                     properties={"Compression Level": "eleven", "Made Up": "x"})
    assert created["validationStatus"] == "INVALID"
    errors = {e["property"]: e["message"] for e in created["validationErrors"] if e["property"]}
    assert set(errors) == {"Compression Level", "Made Up"}
    assert errors["Made Up"] == "'Made Up' is not a property of CompressContent"
    fixed = update(api_a, created, properties={"Compression Level": None, "Made Up": None}).json()
    assert fixed["properties"] == {}
    assert [e for e in fixed["validationErrors"] if e["property"]] == []


def test_a_processor_without_its_required_input_is_invalid(api_a, processors_url):
    created = create(api_a, processors_url, type="LogAttribute", autoTerminatedRelationships=["success"])
    assert created["validationErrors"] == [{"property": None, "message": "LogAttribute needs an incoming connection"}]


def test_starting_an_invalid_processor_is_409_listing_its_problems(api_a, processors_url):
    created = create(api_a, processors_url, type="GenerateFlowFile", properties={"File Size": "lots"})
    refused = assert_error(run_status(api_a, created, "RUNNING"), 409, "conflict")
    assert problems_by_path(refused) == {
        "$.properties['File Size']": "'File Size' 'lots' is not a data size (expected e.g. '1 GB', '50 KB')",
        "$": "relationship 'success' is neither connected nor auto-terminated"}
    assert Processor.objects.get(pk=created["id"]).scheduled_state == "STOPPED"


def test_a_valid_processor_starts_and_cannot_change_or_go_while_running(api_a, processors_url):
    created = create(api_a, processors_url, type="GenerateFlowFile", autoTerminatedRelationships=["success"])
    started = run_status(api_a, created, "RUNNING")
    assert started.status_code == 200 and started.json()["state"] == "RUNNING"
    assert_error(update(api_a, created, name="renamed"), 409, "conflict")
    version = Processor.objects.get(pk=created["id"]).version
    assert_error(api_a.delete(f"{API}processors/{created['id']}?version={version}"), 409, "conflict")
    assert run_status(api_a, created, "STOPPED").json()["state"] == "STOPPED"
    assert update(api_a, created, name="renamed").status_code == 200


def test_a_disabled_processor_must_be_enabled_before_it_starts(api_a, processors_url):
    created = create(api_a, processors_url, type="GenerateFlowFile", autoTerminatedRelationships=["success"])
    assert run_status(api_a, created, "DISABLED").status_code == 200
    refused = assert_error(run_status(api_a, created, "RUNNING"), 409, "conflict")
    assert "disabled" in refused["message"]


@pytest.mark.parametrize("state", ["GO", "", None])
def test_an_unknown_run_state_is_400(api_a, processors_url, state):
    created = create(api_a, processors_url, type="GenerateFlowFile")
    refused = assert_error(api_a.put(f"{API}processors/{created['id']}/run-status",
                                     {"revision": {"version": 0}, "state": state}, format="json"), 400)
    assert [p["path"] for p in refused["problems"]] == ["$.state"]


def test_a_connected_processor_cannot_be_deleted(api_a, flow_a):
    refused = assert_error(api_a.delete(f"{API}processors/{flow_a.gen.pk}?version=0"), 409, "conflict")
    assert str(flow_a.conn.pk) in refused["message"]


@pytest.mark.parametrize("type_name, properties", [
    ("PutFile", {"Directory": "/tmp/out"}),
    ("GetFile", {"Input Directory": "/tmp/in"}),
    ("FetchFile", {}),
])
def test_restricted_processors_need_use_restricted(tenant_a, processors_url, type_name, properties):
    designer = token_client(tenant_a.member(root_policies=(access.VIEW, access.MODIFY)))
    refused = assert_error(designer.post(processors_url, {"type": type_name, "properties": properties},
                                         format="json"), 403, "permission_denied")
    assert type_name in refused["message"] and "use_restricted" in refused["message"]
    assert not Processor.objects.exists()
    trusted = token_client(tenant_a.member(root_policies=(access.VIEW, access.MODIFY),
                                           global_policies=(access.USE_RESTRICTED,)))
    assert trusted.post(processors_url, {"type": type_name, "properties": properties},
                        format="json").status_code == 201


def _stored_text() -> str:
    with connection.cursor() as cursor:
        cursor.execute("select properties::text, sensitive_properties::text, c.extra::text from flows_processor p "
                       "join flows_component c on c.id = p.component_ptr_id")
        return repr(cursor.fetchall())


def test_sensitive_properties_are_write_only_and_sealed(api_a, processors_url):
    created = create(api_a, processors_url, type="InvokeHTTP", properties={
        "HTTP URL": "https://example.com", "Request Username": "me", "Request Password": "pa55word-plain"})
    assert created["sensitivePropertiesSet"] == ["Request Password"]
    assert "Request Password" not in created["properties"]
    for response in (api_a.get(f"{API}processors/{created['id']}"), api_a.get(processors_url),
                     api_a.get(f"{processors_url.rsplit('/', 1)[0]}/flow-definition")):
        assert "pa55word-plain" not in response.content.decode()
    assert "pa55word-plain" not in _stored_text()
    sealed = Processor.objects.get(pk=created["id"]).sensitive_properties["Request Password"]
    assert sealed.startswith("enc:v2:")


def test_a_sensitive_property_is_kept_by_other_changes_and_unset_by_null(api_a, processors_url):
    created = create(api_a, processors_url, type="InvokeHTTP", properties={
        "HTTP URL": "https://example.com", "Request Username": "me", "Request Password": "pa55word-plain"})
    sealed = Processor.objects.get(pk=created["id"]).sensitive_properties["Request Password"]
    assert update(api_a, created, properties={"HTTP URL": "https://example.org"}).status_code == 200
    assert Processor.objects.get(pk=created["id"]).sensitive_properties["Request Password"] == sealed
    cleared = update(api_a, created, properties={"Request Password": None}).json()
    assert cleared["sensitivePropertiesSet"] == []
    assert Processor.objects.get(pk=created["id"]).sensitive_properties == {}


def test_a_parameter_reference_in_a_sensitive_property_is_exported(api_a, processors_url, tenant_a):
    create(api_a, processors_url, type="InvokeHTTP", properties={
        "HTTP URL": "https://example.com", "Request Username": "me", "Request Password": "#{password}"})
    exported = api_a.get(f"{API}process-groups/{tenant_a.root.pk}/flow-definition").json()
    assert exported["flowContents"]["processors"][0]["properties"]["Request Password"] == "#{password}"


def test_a_processor_created_with_a_blank_name_is_named_after_its_type(api_a, tenant_a):
    created = api_a.post(f"/api/v1/process-groups/{tenant_a.root.pk}/processors",
                         {"type": "GenerateFlowFile", "name": ""}, format="json")
    assert created.status_code == 201
    assert created.json()["name"] == "GenerateFlowFile"
