"""Malformed imports: a body that is not JSON, not an object, outside the schema, a connection
with a relationship its source lacks or to nothing, identifiers used twice, values the database
cannot hold. Each is a 400 listing every problem with its JSON path, and nothing is created."""

from __future__ import annotations

import copy
import json

import pytest

from engine.testing.flows import connection, flow, processor
from flowsite.flows.models import Component, FlowVersion, ParameterContext
from tests.flowsite.api.support import API, assert_error, problems_by_path
from tests.flowsite.conftest import token_client

GOOD = flow(processors=[processor("gen", "GenerateFlowFile"),
                        processor("log", "LogAttribute", auto_terminate=["success"])],
            connections=[connection("c1", "gen", "log")],
            parameter_context="ctx", parameter_contexts={"ctx": {"dir": "/data"}})


@pytest.fixture
def post_import(api_a, tenant_a):
    """Post a body to the import of tenant A's root; checks that nothing was created."""
    url = f"{API}process-groups/{tenant_a.root.pk}/process-groups/import"

    def post(body, *, raw: bool = False, content_type: str = "application/json", client=api_a):
        counts = (Component.objects.count(), ParameterContext.objects.count(), FlowVersion.objects.count())
        if raw:
            response = client.generic("POST", url, body, content_type=content_type)
        else:
            response = client.post(url, body, format="json")
        if response.status_code >= 400:
            assert (Component.objects.count(), ParameterContext.objects.count(),
                    FlowVersion.objects.count()) == counts, "a refused import created something"
        return response

    return post


def mutated(change) -> dict:
    document = copy.deepcopy(GOOD)
    change(document)
    return document


def test_the_good_document_imports(post_import):
    assert post_import(GOOD).status_code == 201


@pytest.mark.parametrize("body, message", [
    ('{"flowContents": ', "JSON parse error"),
    ("{'single': 'quotes'}", "JSON parse error"),
    ('{"n": NaN}', "JSON parse error"),
    ("[" * 100_000 + "]" * 100_000, "JSON parse error - the document is nested too deeply"),
])
def test_a_body_that_is_not_json_is_400(post_import, body, message):
    refused = assert_error(post_import(body, raw=True), 400, "parse_error")
    assert refused["message"].startswith(message)
    assert [p["path"] for p in refused["problems"]] == ["$"]


@pytest.mark.parametrize("body", ["[1, 2]", '"flow"', "42", "null", "true"])
def test_a_body_that_is_not_an_object_is_400(post_import, body):
    refused = assert_error(post_import(body, raw=True), 400, "invalid")
    assert refused["problems"] == [{"path": "$", "message": "the body must be a flow definition (a JSON object)"}]


def test_a_body_of_another_media_type_is_415(post_import):
    assert_error(post_import("flowContents: {}", raw=True, content_type="application/yaml"), 415,
                 "unsupported_media_type")


def test_an_object_without_flow_contents_is_400(post_import):
    refused = assert_error(post_import({"hello": "world"}), 400, "invalid_flow_definition")
    assert refused["problems"] == [{"path": "$", "message": "a flow definition needs 'flowContents' (or 'rootGroup')"}]


def test_every_schema_violation_is_listed_with_its_path(post_import):
    def change(document):
        contents = document["flowContents"]
        contents["processors"][0]["concurrentlySchedulableTaskCount"] = "many"
        contents["processors"][1]["scheduledState"] = "GO"
        del contents["processors"][1]["type"]
        del contents["connections"][0]["destination"]
        contents["funnels"] = [{"name": "no identifier"}]
        contents["inputPorts"] = "not a list"

    found = problems_by_path(assert_error(post_import(mutated(change)), 400, "invalid_flow_definition"))
    assert found == {
        "$.flowContents.processors[0].concurrentlySchedulableTaskCount": "'many' is not of type 'integer'",
        "$.flowContents.processors[1].scheduledState": "'GO' is not one of RUNNING, ENABLED, DISABLED",
        "$.flowContents.processors[1]": "'type' is required",
        "$.flowContents.connections[0]": "'destination' is required",
        "$.flowContents.funnels[0]": "'identifier' is required",
        "$.flowContents.inputPorts": "'not a list' is not of type 'array'",
    }


def test_every_flow_problem_is_listed_with_its_path(post_import):
    def change(document):
        contents = document["flowContents"]
        contents["connections"] = [
            connection("c1", "gen", "log", ["success", "bogus"]),
            connection("c2", "gen", "nowhere"),
            connection("c3", "ghost", "log"),
            connection("c1", "gen", "log", prioritizers=["com.example.Mine"], backPressureDataSizeThreshold="huge"),
        ]
        contents["processors"].append(processor("gen", "GenerateFlowFile"))
        contents["parameterContextName"] = "absent"

    found = problems_by_path(assert_error(post_import(mutated(change)), 400, "invalid_flow_definition"))
    assert found["$.flowContents.connections[0].selectedRelationships[1]"] == \
        "'gen' (GenerateFlowFile) has no relationship 'bogus' (it has: success)"
    assert found["$.flowContents.connections[1].destination.id"] == \
        "connects to nothing: no component has identifier 'nowhere'"
    assert found["$.flowContents.connections[2].source.id"] == \
        "connects from nothing: no component has identifier 'ghost'"
    assert found["$.flowContents.connections[3].identifier"] == \
        "identifier 'c1' is already used at $.flowContents.connections[0]"
    assert found["$.flowContents.processors[2].identifier"] == \
        "identifier 'gen' is already used at $.flowContents.processors[0]"
    assert "unknown prioritizer 'com.example.Mine'" in found["$.flowContents.connections[3].prioritizers[0]"]
    assert "not a data size" in found["$.flowContents.connections[3].backPressureDataSizeThreshold"]
    assert found["$.flowContents.parameterContextName"] == "parameter context 'absent' does not exist"
    assert len(found) == 8


def test_a_connection_from_a_processor_must_select_a_relationship(post_import):
    document = mutated(lambda d: d["flowContents"]["connections"][0].update(selectedRelationships=[]))
    found = problems_by_path(assert_error(post_import(document), 400))
    assert found == {"$.flowContents.connections[0].selectedRelationships":
                     "a connection from a processor must select at least one relationship"}


def test_component_problems_do_not_stop_an_import(post_import):
    """An invalid property or an unknown type makes one component invalid, not the flow."""
    document = mutated(lambda d: d["flowContents"]["processors"][0]["properties"].update({"File Size": "lots"}))
    assert post_import(document).status_code == 201


@pytest.mark.parametrize("change, path, message", [
    (lambda d: d["flowContents"].update(name="x" * 501), "$.flowContents.name", "is longer than 500 characters"),
    (lambda d: d["flowContents"].update(identifier="g" * 201),
     "$.flowContents.identifier", "is longer than 200 characters"),
    (lambda d: d["flowContents"]["processors"][0].update(schedulingPeriod="1 sec" + " " * 100),
     "$.flowContents.processors[0].schedulingPeriod", "is longer than 100 characters"),
    (lambda d: d["flowContents"]["processors"][0].update(concurrentlySchedulableTaskCount=2**40),
     "$.flowContents.processors[0].concurrentlySchedulableTaskCount", "1099511627776 is larger than 2147483647"),
    (lambda d: d["flowContents"]["connections"][0].update(backPressureObjectThreshold=2**64),
     "$.flowContents.connections[0].backPressureObjectThreshold",
     "18446744073709551616 is larger than 9223372036854775807"),
    (lambda d: d["flowContents"]["connections"][0].update(partitioningAttribute="a" * 201),
     "$.flowContents.connections[0].partitioningAttribute", "is longer than 200 characters"),
    (lambda d: d["flowContents"]["processors"][0].update(name="a\u0000b"),
     "$.flowContents.processors[0].name", "text cannot hold NUL characters"),
    (lambda d: d["flowContents"]["processors"][0]["properties"].update({"File Size": "1 KB\u0000"}),
     "$.flowContents.processors[0].properties['File Size']", "text cannot hold NUL characters"),
    (lambda d: d["flowContents"]["processors"][0].update(style={"\u0000": 1}),
     "$.flowContents.processors[0].style", "names cannot hold NUL characters"),
    (lambda d: d.update(parameterContexts={"c" * 201: {"name": "c" * 201, "parameters": []}}),
     "$.parameterContexts." + "c" * 201, "the name of a parameter context is longer than 200 characters"),
])
def test_values_the_database_cannot_hold_are_400(post_import, change, path, message):
    document = mutated(change)
    if path.startswith("$.parameterContexts"):
        document["flowContents"].pop("parameterContextName")
    found = problems_by_path(assert_error(post_import(document), 400, "invalid_flow_definition"))
    assert found == {path: message}


def test_a_number_json_reads_as_infinite_is_400(post_import):
    text = json.dumps(GOOD).replace('"identifier": "gen"', '"identifier": "gen", "position": {"x": 1e400, "y": 0}', 1)
    found = problems_by_path(assert_error(post_import(text, raw=True), 400, "invalid_flow_definition"))
    assert found == {"$.flowContents.processors[0].position.x": "inf is not a finite number"}


def test_a_negative_back_pressure_threshold_means_no_limit(post_import, api_a):
    document = mutated(lambda d: d["flowContents"]["connections"][0].update(backPressureObjectThreshold=-1))
    group = post_import(document).json()
    listed = api_a.get(f"{API}process-groups/{group['id']}/connections").json()["results"]
    assert listed[0]["backPressureObjectThreshold"] == 0


def test_a_restricted_processor_needs_use_restricted(post_import, tenant_a):
    client = token_client(tenant_a.member(root_policies=("view_component", "modify_component")))
    document = mutated(lambda d: d["flowContents"]["processors"].append(
        processor("put", "PutFile", {"Directory": "/tmp/x"}, auto_terminate=["success", "failure"])))
    refused = assert_error(post_import(document, client=client), 403, "permission_denied")
    assert "PutFile" in refused["message"] and "use_restricted" in refused["message"]


def test_a_refused_import_leaves_existing_parameter_contexts_alone(post_import, api_a, tenant_a):
    assert post_import(GOOD).status_code == 201
    context = ParameterContext.objects.get(tenant=tenant_a.tenant, name="ctx")
    document = mutated(lambda d: d["parameterContexts"]["ctx"]["parameters"].append(
        {"name": "added", "value": "x", "sensitive": False}))
    document["flowContents"]["connections"][0]["selectedRelationships"] = ["bogus"]
    assert_error(post_import(document), 400)
    context.refresh_from_db()
    assert [p["name"] for p in context.parameters] == ["dir"]
