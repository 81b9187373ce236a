"""Flow definitions through the API: export → import → export gives the same document (nested
groups, funnels, ports, connections through child-group ports, parameter contexts, fields
Flowsite does not model); sensitive values are left out of exports unless they are parameter
references, and never stored in plain text; a document in NiFi's own format loads and keeps
its fields; processors of unknown types are kept as placeholders."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from flowsite.flows.models import Component, ControllerService, ParameterContext, Processor
from tests.flowsite.api.support import API, assert_error

NIFI_DOCUMENT = Path(__file__).with_name("data") / "nifi-ingest.json"


def endpoint(identifier: str, kind: str) -> dict:
    return {"id": identifier, "type": kind}


RICH = {
    "flowEncodingVersion": "1.0",
    "customTopLevel": {"kept": True},
    "parameterContexts": {
        "outer-params": {"name": "outer-params", "description": "outer", "inheritedParameterContexts": ["base-params"],
                         "parameters": [{"name": "greeting", "value": "hello", "sensitive": False, "description": ""},
                                        {"name": "password", "value": "s3cret-parameter", "sensitive": True,
                                         "description": "the service's password", "provided": False}]},
        "base-params": {"name": "base-params", "description": "", "inheritedParameterContexts": [],
                        "parameters": [{"name": "base", "value": "/data", "sensitive": False, "description": ""}]},
    },
    "flowContents": {
        "identifier": "top", "name": "Top", "comments": "the top group", "position": {"x": 1.5, "y": -2.0},
        "parameterContextName": "outer-params", "labels": [{"identifier": "label-1", "label": "a note"}],
        "executionEngine": "INHERITED",
        "processors": [
            {"identifier": "gen", "name": "Generate", "type": "GenerateFlowFile", "schedulingPeriod": "1 min",
             "properties": {"Custom Text": "#{greeting}"}, "style": {"background-color": "#abcdef"},
             "position": {"x": 10.0, "y": 20.0}},
            {"identifier": "http-literal", "name": "Call with a password", "type": "InvokeHTTP",
             "properties": {"HTTP URL": "https://example.com", "Request Username": "me",
                            "Request Password": "hunter2-literal"},
             "autoTerminatedRelationships": ["Failure", "No Retry", "Original", "Response", "Retry"]},
            {"identifier": "http-param", "name": "Call with a parameter", "type": "InvokeHTTP",
             "properties": {"HTTP URL": "https://example.com", "Request Username": "me",
                            "Request Password": "#{password}"},
             "autoTerminatedRelationships": ["Failure", "No Retry", "Original", "Response", "Retry"]},
            {"identifier": "log", "name": "Log", "type": "LogAttribute", "autoTerminatedRelationships": ["success"]},
        ],
        "funnels": [{"identifier": "merge", "name": "merge", "position": {"x": 5.0, "y": 5.0}}],
        "connections": [
            {"identifier": "gen-to-merge", "source": endpoint("gen", "PROCESSOR"),
             "destination": endpoint("merge", "FUNNEL"), "selectedRelationships": ["success"],
             "bends": [{"x": 1.0, "y": 2.0}],
             "prioritizers": ["org.apache.nifi.prioritizer.FirstInFirstOutPrioritizer"]},
            {"identifier": "merge-to-child", "source": endpoint("merge", "FUNNEL"),
             "destination": endpoint("child-in", "INPUT_PORT"), "selectedRelationships": [""],
             "backPressureObjectThreshold": 50, "backPressureDataSizeThreshold": "10 MB"},
            {"identifier": "child-to-log", "source": endpoint("child-out", "OUTPUT_PORT"),
             "destination": endpoint("log", "PROCESSOR"), "selectedRelationships": [""],
             "loadBalanceStrategy": "PARTITION_BY_ATTRIBUTE", "partitioningAttribute": "filename"},
        ],
        "processGroups": [{
            "identifier": "child", "name": "Child", "defaultFlowFileExpiration": "1 hour",
            "inputPorts": [{"identifier": "child-in", "name": "in", "allowRemoteAccess": False}],
            "outputPorts": [{"identifier": "child-out", "name": "out"}],
            "processors": [{"identifier": "tag", "name": "Tag", "type": "UpdateAttribute",
                            "properties": {"team": "data"}}],
            "connections": [
                {"identifier": "in-to-tag", "source": endpoint("child-in", "INPUT_PORT"),
                 "destination": endpoint("tag", "PROCESSOR"), "selectedRelationships": [""]},
                {"identifier": "tag-to-out", "source": endpoint("tag", "PROCESSOR"),
                 "destination": endpoint("child-out", "OUTPUT_PORT"), "selectedRelationships": ["success"]}],
            "processGroups": [{"identifier": "grandchild", "name": "Grandchild",
                               "funnels": [{"identifier": "deep-funnel", "name": "deep"}]}],
        }],
    },
}

PLACEHOLDER = {
    "flowEncodingVersion": "1.0",
    "flowContents": {
        "identifier": "custom-root", "name": "Custom",
        "processors": [
            {"identifier": "custom", "name": "Custom", "type": "com.example.nifi.CustomProcessor",
             "bundle": {"group": "com.example", "artifact": "custom-nar", "version": "1.2.3"},
             "properties": {"Plain": "visible", "Secret Key": "custom-secret-value"},
             "propertyDescriptors": {"Plain": {"name": "Plain", "sensitive": False},
                                     "Secret Key": {"name": "Secret Key", "sensitive": True}},
             "autoTerminatedRelationships": ["done"]},
            {"identifier": "log", "name": "Log", "type": "LogAttribute", "autoTerminatedRelationships": ["success"]},
        ],
        "connections": [{"identifier": "custom-to-log", "source": endpoint("custom", "PROCESSOR"),
                         "destination": endpoint("log", "PROCESSOR"), "selectedRelationships": ["custom-rel"]}],
    },
}

SECRETS = ("hunter2-literal", "s3cret-parameter", "custom-secret-value")


def import_(client, group, document, **query):
    url = f"{API}process-groups/{group.pk}/process-groups/import"
    if query:
        url += "?" + urlencode(query)
    response = client.post(url, document, format="json")
    assert response.status_code == 201, response.content[:2000]
    return response.json()


def export(client, group_id) -> dict:
    response = client.get(f"{API}process-groups/{group_id}/flow-definition")
    assert response.status_code == 200
    return response.json()


def assert_kept(original: Any, exported: Any, path: str = "$", ignore: frozenset = frozenset()) -> None:
    """Every field of ``original`` (but the keys in ``ignore``) is in ``exported`` with the same value;
    components (objects with an ``identifier``) are matched by identifier, not place."""
    if isinstance(original, dict):
        assert isinstance(exported, dict), path
        for key, value in original.items():
            if key in ignore:
                continue
            assert key in exported, f"{path}.{key} was dropped"
            assert_kept(value, exported[key], f"{path}.{key}", ignore)
    elif isinstance(original, list):
        assert isinstance(exported, list) and len(original) == len(exported), path
        if all(isinstance(item, dict) and "identifier" in item for item in original + exported):
            found = {item["identifier"]: item for item in exported}
            exported = [found.get(item["identifier"]) for item in original]
        for index, (before, after) in enumerate(zip(original, exported)):
            assert_kept(before, after, f"{path}[{index}]", ignore)
    else:
        assert original == exported, f"{path}: {original!r} became {exported!r}"


def database_text() -> str:
    """Every row of every table of the project, as text."""
    rows = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            if table.startswith(("flows_", "api_", "tenancy_")):
                cursor.execute(f'select * from "{table}"')
                rows.append(repr(cursor.fetchall()))
    return "\n".join(rows)


def by_identifier(items: list[dict]) -> dict[str, dict]:
    return {item["identifier"]: item for item in items}


def test_export_import_export_gives_the_same_document(api_a, tenant_a):
    first = import_(api_a, tenant_a.root, RICH)
    exported = export(api_a, first["id"])
    second = import_(api_a, tenant_a.root, exported)
    assert second["id"] != first["id"] and second["versionedId"] == first["versionedId"] == "top"
    assert export(api_a, second["id"]) == exported


def test_an_export_keeps_everything_but_sensitive_values(api_a, tenant_a):
    exported = export(api_a, import_(api_a, tenant_a.root, RICH)["id"])
    without_secrets = copy.deepcopy(RICH)
    processors = by_identifier(without_secrets["flowContents"]["processors"])
    del processors["http-literal"]["properties"]["Request Password"]
    without_secrets["parameterContexts"]["outer-params"]["parameters"][1]["value"] = None
    assert_kept(without_secrets, exported)
    properties = by_identifier(exported["flowContents"]["processors"])
    assert "Request Password" not in properties["http-literal"]["properties"]
    assert properties["http-param"]["properties"]["Request Password"] == "#{password}"
    assert not any(secret in json.dumps(exported) for secret in SECRETS)


def test_sensitive_values_are_stored_sealed(api_a, tenant_a):
    import_(api_a, tenant_a.root, RICH)
    import_(api_a, tenant_a.root, PLACEHOLDER)
    stored = database_text()
    assert not any(secret in stored for secret in SECRETS)
    literal = Processor.objects.get(versioned_id="http-literal")
    assert literal.sensitive_properties["Request Password"].startswith("enc:v2:")
    assert "Request Password" not in literal.properties
    password = next(p for p in ParameterContext.objects.get(name="outer-params").parameters
                    if p["name"] == "password")
    assert password["value"].startswith("enc:v2:") and password["provided"] is False


def test_an_import_names_its_group_when_asked(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, RICH, name="Renamed")
    assert group["name"] == "Renamed" and group["contents"] == {
        "processGroups": 1, "processors": 4, "connections": 3, "funnels": 1, "inputPorts": 0, "outputPorts": 0,
        "controllerServices": 0, "labels": 1}


def test_a_download_is_an_attachment(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, RICH)
    response = api_a.get(f"{API}process-groups/{group['id']}/flow-definition?download=1")
    assert response["Content-Disposition"] == 'attachment; filename="Top.json"'


def test_a_flow_in_nifis_format_loads_and_keeps_its_fields(api_a, tenant_a):
    document = json.loads(NIFI_DOCUMENT.read_text())
    group = import_(api_a, tenant_a.root, document)
    exported = export(api_a, group["id"])
    # instance identifiers are NiFi's ids of its own instance; an export writes versioned ones only
    assert_kept(document, exported, ignore=frozenset({"instanceIdentifier"}))
    assert export(api_a, import_(api_a, tenant_a.root, exported)["id"]) == exported
    inner = exported["flowContents"]["processGroups"][0]["identifier"]
    inner_id = Component.objects.get(versioned_id=inner, parent_id=group["id"]).pk
    for group_id in (group["id"], inner_id):
        for processor in api_a.get(f"{API}process-groups/{group_id}/processors").json()["results"]:
            assert processor["validationStatus"] == "VALID", processor["validationErrors"]


def test_a_whole_instance_flow_loads(api_a, tenant_a):
    """NiFi's flow.json.gz form: ``rootGroup`` and parameter contexts as a list."""
    document = {"rootGroup": copy.deepcopy(RICH["flowContents"]),
                "parameterContexts": list(copy.deepcopy(RICH["parameterContexts"]).values())}
    group = import_(api_a, tenant_a.root, document)
    exported = export(api_a, group["id"])
    assert set(exported["parameterContexts"]) == {"outer-params", "base-params"}
    assert_kept(RICH["flowContents"]["processGroups"], exported["flowContents"]["processGroups"])


def test_an_unknown_processor_type_is_kept_as_a_placeholder(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, PLACEHOLDER)
    custom = Processor.objects.get(parent_id=group["id"], versioned_id="custom")
    shown = api_a.get(f"{API}processors/{custom.pk}").json()
    assert shown["type"] == "com.example.nifi.CustomProcessor" and shown["validationStatus"] == "INVALID"
    assert any("unknown processor type" in e["message"] for e in shown["validationErrors"])
    assert shown["properties"] == {"Plain": "visible"} and shown["sensitivePropertiesSet"] == ["Secret Key"]
    assert [r["name"] for r in shown["relationships"]] == ["done"]
    exported = export(api_a, group["id"])
    placeholder = by_identifier(exported["flowContents"]["processors"])["custom"]
    assert placeholder["bundle"] == PLACEHOLDER["flowContents"]["processors"][0]["bundle"]
    assert placeholder["propertyDescriptors"] == PLACEHOLDER["flowContents"]["processors"][0]["propertyDescriptors"]
    assert placeholder["properties"] == {"Plain": "visible"}
    assert exported["flowContents"]["connections"][0]["selectedRelationships"] == ["custom-rel"]
    assert export(api_a, import_(api_a, tenant_a.root, exported)["id"]) == exported


def test_a_placeholder_can_still_be_edited(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, PLACEHOLDER)
    custom = Processor.objects.get(parent_id=group["id"], versioned_id="custom")
    response = api_a.put(f"{API}processors/{custom.pk}",
                         {"revision": {"version": custom.version}, "properties": {"Plain": "changed"}}, format="json")
    assert response.status_code == 200 and response.json()["properties"] == {"Plain": "changed"}
    custom.refresh_from_db()
    assert set(custom.sensitive_properties) == {"Secret Key"}


@pytest.mark.parametrize("name", ["x" * 501, "bad\u0000name"])
def test_an_unstorable_group_name_is_400(api_a, tenant_a, name):
    count = Component.objects.count()
    response = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/process-groups/import?{urlencode({'name': name})}",
                          RICH, format="json")
    assert_error(response, 400, "invalid")
    assert Component.objects.count() == count


def test_the_parent_of_two_imports_of_one_definition_exports_an_importable_document(api_a, tenant_a):
    for _ in range(2):
        import_(api_a, tenant_a.root, PLACEHOLDER)
    exported = export(api_a, tenant_a.root.pk)
    assert export(api_a, tenant_a.root.pk) == exported  # the renaming of repeated identifiers is stable
    identifiers = []

    def collect(group):
        identifiers.append(group["identifier"])
        for key in ("processors", "connections", "funnels", "inputPorts", "outputPorts", "controllerServices"):
            identifiers.extend(item["identifier"] for item in group.get(key, []))
        for child in group.get("processGroups", []):
            collect(child)

    collect(exported["flowContents"])
    assert len(identifiers) == len(set(identifiers))
    import_(api_a, tenant_a.root, exported)


def test_an_export_makes_as_many_queries_for_five_imports_as_for_one(api_a, tenant_a):
    """An export reads each kind of component once for the whole tree, not once per group: five
    copies of a definition with nested groups cost the queries of one."""
    import_(api_a, tenant_a.root, RICH)
    export(api_a, tenant_a.root.pk)  # what the first request of a process reads once
    with CaptureQueriesContext(connection) as one:
        export(api_a, tenant_a.root.pk)
    for _ in range(4):
        import_(api_a, tenant_a.root, RICH)
    with CaptureQueriesContext(connection) as five:
        exported = export(api_a, tenant_a.root.pk)
    assert len(exported["flowContents"]["processGroups"]) == 5
    assert len(five) == len(one), [query["sql"][:200] for query in five.captured_queries]


def _add_readers(tenant, count: int) -> None:
    """``count`` times: a CSV reader in the tenant's root group and a processor naming it."""
    for _ in range(count):
        reader = ControllerService.objects.create(tenant=tenant.tenant, parent=tenant.root, type="CSVReader")
        Processor.objects.create(tenant=tenant.tenant, parent=tenant.root, name="convert", type="ConvertRecord",
                                 properties={"Record Reader": str(reader.pk)})


def test_an_export_makes_as_many_queries_for_five_service_references_as_for_one(api_a, tenant_a):
    """The services the exported components' properties name are read in one query for the whole
    export, not one per property."""
    _add_readers(tenant_a, 1)
    export(api_a, tenant_a.root.pk)  # what the first request of a process reads once
    with CaptureQueriesContext(connection) as one:
        export(api_a, tenant_a.root.pk)
    _add_readers(tenant_a, 4)
    with CaptureQueriesContext(connection) as five:
        exported = export(api_a, tenant_a.root.pk)
    services = {s["identifier"] for s in exported["flowContents"]["controllerServices"]}
    references = {p["properties"]["Record Reader"] for p in exported["flowContents"]["processors"]}
    assert len(references) == 5 and references == services
    assert len(five) == len(one), [query["sql"][:200] for query in five.captured_queries]


def test_an_export_names_only_the_tenants_own_services_by_their_versioned_ids(api_a, tenant_a, tenant_b):
    """A service property holding the id of a service of the tenant is written as that service's
    versioned id; the id of another tenant's service, like a value that is no id, is written as it is."""
    ours = ControllerService.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, type="CSVReader",
                                            versioned_id="our-reader")
    theirs = ControllerService.objects.create(tenant=tenant_b.tenant, parent=tenant_b.root, type="CSVReader",
                                              versioned_id="their-reader")
    values = {"ours": str(ours.pk), "theirs": str(theirs.pk), "no-id": "not-a-service-id"}
    for name, value in values.items():
        Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name=name, type="ConvertRecord",
                                 properties={"Record Reader": value})
    exported = export(api_a, tenant_a.root.pk)
    written = {p["name"]: p["properties"]["Record Reader"] for p in exported["flowContents"]["processors"]}
    assert written == {"ours": "our-reader", "theirs": str(theirs.pk), "no-id": "not-a-service-id"}
