"""Loading flow definitions: structure, every kind of problem with its JSON path, NiFi's own format."""

from __future__ import annotations

import gzip
import json

import pytest

from engine.flow import SCHEMA_PATH, FlowDefinitionError, check_flow, load_and_check, load_flow
from engine.flow.model import LOAD_BALANCE_COMPRESSIONS, LOAD_BALANCE_STRATEGIES
from engine.flow.parameters import ParameterResolver, substitute
from engine.node import save_flow
from engine.testing.flows import connection, flow, group, processor, service


def problems_of(document) -> dict[str, str]:
    """Problems by JSON path (several at one path joined with ' | ')."""
    try:
        problems = check_flow(load_flow(document))
    except FlowDefinitionError as error:
        problems = error.problems
    found: dict[str, str] = {}
    for problem in problems:
        found[problem.path] = f"{found[problem.path]} | {problem.message}" if problem.path in found else problem.message
    return found


GOOD = flow(processors=[processor("gen", "GenerateFlowFile"),
                        processor("put", "PutFile", {"Directory": "out"}, auto_terminate=["success", "failure"])],
            connections=[connection("c1", "gen", "put")])


def test_a_good_flow_loads_without_problems():
    flow_definition, problems = load_and_check(GOOD)
    assert problems == []
    assert [p.identifier for p in flow_definition.processors()] == ["gen", "put"]
    (conn,) = flow_definition.connections()
    assert conn.back_pressure_object_threshold == 10_000 and conn.back_pressure_data_size_threshold == "1 GB"


def test_malformed_json_says_where():
    with pytest.raises(FlowDefinitionError, match=r"\$: not valid JSON: Expecting ',' delimiter at line 1, column 9"):
        load_flow('{"a": 1 "b": 2}')


def test_not_a_flow_definition():
    with pytest.raises(FlowDefinitionError, match="needs 'flowContents'"):
        load_flow({"hello": "world"})
    with pytest.raises(FlowDefinitionError, match="a JSON object, not list"):
        load_flow("[1, 2]")


def test_schema_problems_have_json_paths():
    document = json.loads(json.dumps(GOOD))
    document["flowContents"]["processors"][0]["concurrentlySchedulableTaskCount"] = "many"
    document["flowContents"]["processors"][1]["scheduledState"] = "GO"
    del document["flowContents"]["connections"][0]["destination"]
    found = problems_of(document)
    assert found["$.flowContents.processors[0].concurrentlySchedulableTaskCount"] == "'many' is not of type 'integer'"
    assert found["$.flowContents.processors[1].scheduledState"] == "'GO' is not one of RUNNING, ENABLED, DISABLED"
    assert found["$.flowContents.connections[0]"] == "'destination' is required"


def test_every_semantic_problem_is_reported_with_its_path():
    document = flow(
        processors=[processor("gen", "GenerateFlowFile", {"File Size": "lots"}),
                    processor("put", "PutFile", {}, auto_terminate=["success", "nonsense"]),
                    processor("odd", "com.example.Unknown"),
                    processor("route", "RouteOnAttribute", {"big": "${size:gt(1)}"})],
        connections=[connection("c1", "gen", "put", ["success", "bogus"]),
                     connection("c2", "gen", "nowhere"),
                     connection("c3", "gen", "route", prioritizers=["com.example.Mine"],
                                backPressureDataSizeThreshold="huge"),
                     connection("c1", "route", "put", ["big"])])
    found = problems_of(document)
    assert found["$.flowContents.processors[0].properties['File Size']"] == \
        "'File Size' 'lots' is not a data size (expected e.g. '1 GB', '50 KB')"
    assert found["$.flowContents.processors[1].properties.Directory"] == "'Directory' is required"
    assert found["$.flowContents.processors[1].autoTerminatedRelationships[1]"] == "PutFile has no relationship 'nonsense'"
    assert found["$.flowContents.processors[1]"] == "relationship 'failure' is neither connected nor auto-terminated"
    assert "unknown processor type 'com.example.Unknown'" in found["$.flowContents.processors[2].type"]
    assert found["$.flowContents.processors[3]"] == "relationship 'unmatched' is neither connected nor auto-terminated"
    assert found["$.flowContents.connections[0].selectedRelationships[1]"].startswith(
        "'gen' (GenerateFlowFile) has no relationship 'bogus'")
    assert found["$.flowContents.connections[1].destination.id"] == \
        "connects to nothing: no component has identifier 'nowhere'"
    assert "unknown prioritizer 'com.example.Mine'" in found["$.flowContents.connections[2].prioritizers[0]"]
    assert "not a data size" in found["$.flowContents.connections[2].backPressureDataSizeThreshold"]
    assert found["$.flowContents.connections[3].identifier"] == \
        "identifier 'c1' is already used at $.flowContents.connections[0]"


def test_fatal_problems_stop_the_load_and_component_problems_do_not():
    with pytest.raises(FlowDefinitionError) as raised:
        load_and_check(flow(processors=[processor("gen", "GenerateFlowFile")],
                            connections=[connection("c", "gen", "missing")]))
    assert all(p.fatal for p in raised.value.problems if "nothing" in p.message)
    _, problems = load_and_check(flow(processors=[processor("put", "PutFile")]))
    assert problems and not any(p.fatal for p in problems)


def test_nested_groups_and_service_scope():
    inner = group("inner", processors=[processor("p", "GenerateFlowFile", auto_terminate=["success"])],
                  services=[service("inner-svc", "com.example.Svc")])
    found = problems_of(flow(groups=[inner]))
    assert "unknown controller service type 'com.example.Svc'" in \
        found["$.flowContents.processGroups[0].controllerServices[0].type"]


def test_parameters_are_substituted_and_escaped():
    document = flow(processors=[processor("gen", "GenerateFlowFile", {"Custom Text": "#{dir}/x ##{literal}"},
                                          auto_terminate=["success"])],
                    parameter_context="ctx", parameter_contexts={"ctx": {"dir": "/data"}})
    definition, problems = load_and_check(document)
    assert problems == []
    resolver = ParameterResolver(definition.parameter_contexts)
    assert substitute("#{dir}/x ##{literal} #{'dir'}", "ctx", resolver) == "/data/x #{literal} /data"


def test_missing_parameter_and_missing_context_are_reported():
    document = flow(processors=[processor("put", "PutFile", {"Directory": "#{nope}"},
                                          auto_terminate=["success", "failure"])],
                    parameter_context="absent")
    found = problems_of(document)
    assert found["$.flowContents.parameterContextName"] == "parameter context 'absent' does not exist"
    assert "references parameter 'nope'" in found["$.flowContents.processors[0].properties.Directory"]


def test_nifi_1x_property_names_are_migrated():
    document = flow(processors=[processor("gen", "GenerateFlowFile", {"generate-ff-custom-text": "hello"},
                                          auto_terminate=["success"])])
    assert problems_of(document) == {}


def test_unset_properties_nifi_lists_are_accepted_but_unknown_set_ones_are_not():
    document = json.loads(json.dumps(GOOD))
    document["flowContents"]["processors"][1]["properties"].update({"Made Up": None, "Also Made Up": "x"})
    found = problems_of(document)
    assert found == {"$.flowContents.processors[1].properties['Also Made Up']":
                     "'Also Made Up' is not a property of PutFile"}


def test_unknown_fields_are_kept_through_a_save(tmp_path):
    document = json.loads(json.dumps(GOOD))
    document["flowContents"]["processors"][0]["position"] = {"x": 12.5, "y": 3.0}
    document["flowContents"]["processors"][0]["style"] = {"background-color": "#fff"}
    document["latest"] = False
    definition = load_flow(document)
    save_flow(tmp_path / "flow.json.gz", definition.raw)
    again = json.loads(gzip.decompress((tmp_path / "flow.json.gz").read_bytes()))
    assert again == document
    assert load_flow(tmp_path / "flow.json.gz").raw == document


def test_a_flow_in_nifi_2_format_loads_unchanged():
    """A document shaped exactly as NiFi 2 writes 'Download flow definition' (every field NiFi
    writes for these components, most of which Flowsite ignores)."""
    bundle = {"group": "org.apache.nifi", "artifact": "nifi-standard-nar", "version": "2.6.0"}
    root = "b0f4c2d4-7a3e-3f6e-9f3b-1e2d3c4b5a69"

    def nifi_processor(identifier, name, type_name, properties, auto_terminated, **extra):
        return {"identifier": identifier, "instanceIdentifier": identifier[::-1], "name": name, "comments": "",
                "position": {"x": 10.0, "y": 20.0}, "type": type_name, "bundle": bundle, "properties": properties,
                "propertyDescriptors": {k: {"name": k, "displayName": k, "identifiesControllerService": False,
                                            "sensitive": False, "dynamic": False} for k in properties},
                "style": {}, "schedulingPeriod": "1 min", "schedulingStrategy": "TIMER_DRIVEN",
                "executionNode": "ALL", "penaltyDuration": "30 sec", "yieldDuration": "1 sec",
                "bulletinLevel": "WARN", "runDurationMillis": 0, "concurrentlySchedulableTaskCount": 1,
                "autoTerminatedRelationships": auto_terminated, "scheduledState": "ENABLED", "retryCount": 10,
                "retriedRelationships": [], "backoffMechanism": "PENALIZE_FLOWFILE", "maxBackoffPeriod": "10 mins",
                "componentType": "PROCESSOR", "groupIdentifier": root, **extra}

    document = {
        "flowContents": {
            "identifier": root, "instanceIdentifier": "9b1f0c1e-0195-1000-0000-00001a2b3c4d", "name": "Ingest",
            "comments": "", "position": {"x": 0.0, "y": 0.0}, "processGroups": [], "remoteProcessGroups": [],
            "processors": [
                nifi_processor("7d1e4b0a-1111-3aaa-9bbb-000000000001", "Generate",
                               "org.apache.nifi.processors.standard.GenerateFlowFile",
                               {"File Size": "1 KB", "Batch Size": "1", "Data Format": "Text", "Unique FlowFiles":
                                "false", "Custom Text": None, "Character Set": "UTF-8", "Mime Type": None}, []),
                nifi_processor("7d1e4b0a-1111-3aaa-9bbb-000000000002", "Tag",
                               "org.apache.nifi.processors.attributes.UpdateAttribute",
                               {"Delete Attributes Expression": None, "Store State": "Do not store state",
                                "Stateful Variables Initial Value": None,
                                "canonical-value-lookup-cache-size": "100", "source": "nifi"}, []),
                nifi_processor("7d1e4b0a-1111-3aaa-9bbb-000000000003", "Write",
                               "org.apache.nifi.processors.standard.PutFile",
                               {"Directory": "/tmp/out", "Conflict Resolution Strategy": "replace",
                                "Create Missing Directories": "true", "Maximum File Count": None,
                                "Last Modified Time": None, "Permissions": None, "Owner": None, "Group": None},
                               ["success", "failure"]),
            ],
            "inputPorts": [], "outputPorts": [],
            "connections": [
                {"identifier": f"c0ffee00-2222-3bbb-8ccc-00000000000{i}", "instanceIdentifier": f"x{i}", "name": "",
                 "source": {"id": f"7d1e4b0a-1111-3aaa-9bbb-00000000000{i}", "type": "PROCESSOR", "groupId": root,
                            "name": "", "comments": "", "instanceIdentifier": "s"},
                 "destination": {"id": f"7d1e4b0a-1111-3aaa-9bbb-00000000000{i + 1}", "type": "PROCESSOR",
                                 "groupId": root, "name": "", "comments": "", "instanceIdentifier": "d"},
                 "labelIndex": 1, "zIndex": 0, "selectedRelationships": ["success"],
                 "backPressureObjectThreshold": 10000, "backPressureDataSizeThreshold": "1 GB",
                 "flowFileExpiration": "0 sec", "prioritizers": [], "bends": [],
                 "loadBalanceStrategy": "DO_NOT_LOAD_BALANCE", "partitioningAttribute": "",
                 "loadBalanceCompression": "DO_NOT_COMPRESS", "componentType": "CONNECTION", "groupIdentifier": root}
                for i in (1, 2)],
            "labels": [], "funnels": [], "controllerServices": [],
            "defaultFlowFileExpiration": "0 sec", "defaultBackPressureObjectThreshold": 10000,
            "defaultBackPressureDataSizeThreshold": "1 GB", "scheduledState": "ENABLED",
            "executionEngine": "INHERITED", "maxConcurrentTasks": 1, "statelessFlowTimeout": "1 min",
            "flowFileConcurrency": "UNBOUNDED", "flowFileOutboundPolicy": "STREAM_WHEN_AVAILABLE",
            "componentType": "PROCESS_GROUP"},
        "externalControllerServices": {}, "parameterContexts": {}, "flowEncodingVersion": "1.0",
        "parameterProviders": {}, "latest": False}
    definition, problems = load_and_check(document)
    assert problems == []
    generate = next(definition.processors())
    assert generate.scheduling_period == "1 min" and generate.name == "Generate"


def test_checks_of_the_nodes_own_files_are_skipped_away_from_the_node(tmp_path):
    missing = str(tmp_path / "not-there")
    document = flow(processors=[processor("list", "ListFile", {"Input Directory": missing},
                                          auto_terminate=["success"])])
    on_node = [p.message for p in check_flow(load_flow(document))]
    assert on_node == [f"'Input Directory' directory {missing!r} does not exist"]
    assert check_flow(load_flow(document), node_local=False) == []


def _balanced(**fields) -> dict:
    return flow(processors=[processor("gen", "GenerateFlowFile"),
                            processor("put", "PutFile", {"Directory": "out"}, auto_terminate=["success", "failure"])],
                connections=[connection("c1", "gen", "put", **fields)])


@pytest.mark.parametrize("strategy", ["DO_NOT_LOAD_BALANCE", "ROUND_ROBIN", "SINGLE_NODE", "PARTITION_BY_ATTRIBUTE"])
@pytest.mark.parametrize("compression", ["DO_NOT_COMPRESS", "COMPRESS_ATTRIBUTES_ONLY",
                                         "COMPRESS_ATTRIBUTES_AND_CONTENT"])
def test_every_load_balance_strategy_and_compression_loads(strategy, compression):
    definition = load_flow(_balanced(loadBalanceStrategy=strategy, partitioningAttribute="customer",
                                     loadBalanceCompression=compression))
    (conn,) = definition.connections()
    assert (conn.load_balance_strategy, conn.partitioning_attribute, conn.load_balance_compression) == (
        strategy, "customer", compression)


def test_load_balancing_defaults_to_none():
    (conn,) = load_flow(_balanced()).connections()
    assert (conn.load_balance_strategy, conn.load_balance_compression) == ("DO_NOT_LOAD_BALANCE", "DO_NOT_COMPRESS")


@pytest.mark.parametrize("attribute", [None, "", "   "])
def test_partition_by_attribute_needs_the_attribute(attribute):
    fields = {"loadBalanceStrategy": "PARTITION_BY_ATTRIBUTE"}
    if attribute is not None:
        fields["partitioningAttribute"] = attribute
    assert problems_of(_balanced(**fields)) == {"$.flowContents.connections[0].partitioningAttribute": (
        "the PARTITION_BY_ATTRIBUTE load-balance strategy needs the name of the attribute to partition by")}


def test_unknown_load_balance_values_name_the_allowed_ones():
    found = problems_of(_balanced(loadBalanceStrategy="SOMETIMES", loadBalanceCompression="ZIP"))
    assert found == {
        "$.flowContents.connections[0].loadBalanceStrategy":
            "'SOMETIMES' is not one of DO_NOT_LOAD_BALANCE, ROUND_ROBIN, SINGLE_NODE, PARTITION_BY_ATTRIBUTE",
        "$.flowContents.connections[0].loadBalanceCompression":
            "'ZIP' is not one of DO_NOT_COMPRESS, COMPRESS_ATTRIBUTES_ONLY, COMPRESS_ATTRIBUTES_AND_CONTENT"}


def test_the_schema_allows_the_models_values_and_no_other():
    properties = json.loads(SCHEMA_PATH.read_text())["$defs"]["connection"]["properties"]
    assert tuple(properties["loadBalanceStrategy"]["enum"]) == LOAD_BALANCE_STRATEGIES
    assert tuple(properties["loadBalanceCompression"]["enum"]) == LOAD_BALANCE_COMPRESSIONS
