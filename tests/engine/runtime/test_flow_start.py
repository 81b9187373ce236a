"""Starting a whole group (``FlowController.start_group``, behind ``engine run --start`` and the
node's ``group.start``) and parameters in a processor's scheduling settings."""

from __future__ import annotations

import pytest

from engine.flow import check_flow, load_flow
from engine.runtime import ComponentStateError
from engine.runtime.connectable import ScheduledState
from engine.runtime.controller import UnknownComponentError
from engine.testing.flows import connection, flow, group, processor, service

PUT = {"Directory": "/nonexistent-never-written"}


def _nifi_stopped_flow() -> dict:
    """As NiFi writes a flow: everything stopped (ENABLED), one processor DISABLED, services ENABLED."""
    inner = group("inner", processors=[
        processor("inner-gen", "GenerateFlowFile", state="ENABLED"),
        processor("inner-put", "PutFile", PUT, auto_terminate=["success", "failure"], state="ENABLED"),
        processor("inner-off", "GenerateFlowFile", state="DISABLED", auto_terminate=["success"])],
        connections=[connection("ic", "inner-gen", "inner-put")],
        services=[service("writer", "JsonRecordSetWriter", state="ENABLED")])
    return flow(processors=[processor("gen", "GenerateFlowFile", state="ENABLED"),
                            processor("put", "PutFile", PUT, auto_terminate=["success", "failure"], state="ENABLED"),
                            processor("broken", "PutFile", {}, auto_terminate=["success", "failure"],
                                      state="ENABLED")],
                connections=[connection("c", "gen", "put")], groups=[inner],
                services=[service("reader", "CSVReader", state="ENABLED"),
                          service("off", "CSVReader", state="DISABLED")])


def _states(controller) -> dict[str, str]:
    return {identifier: node.config.scheduled_state for identifier, node in controller.processors.items()}


def test_start_group_starts_every_valid_component_but_the_disabled_ones(make_controller):
    controller = make_controller(_nifi_stopped_flow(), start=True)
    assert controller.start_components() == []
    assert all(node.state is not ScheduledState.RUNNING for node in controller.processors.values())
    assert controller.service("reader").state == "ENABLED", "a service NiFi wrote ENABLED is enabled at load"

    failures = controller.start_group()

    assert len(failures) == 1 and "'broken'" in failures[0] and "Directory" in failures[0]
    assert _states(controller) == {"gen": "RUNNING", "put": "RUNNING", "broken": "ENABLED",
                                   "inner-gen": "RUNNING", "inner-put": "RUNNING", "inner-off": "DISABLED"}
    assert controller.processor("inner-off").state is ScheduledState.DISABLED
    assert controller.service("off").state == "DISABLED", "a service saved DISABLED stays disabled"
    assert controller.flow.raw["flowContents"]["processors"][0]["scheduledState"] == "RUNNING", "saved"


def test_start_group_keeps_to_the_group_and_those_inside_it(make_controller):
    controller = make_controller(_nifi_stopped_flow(), start=True)
    controller.start_components()
    assert controller.start_group("inner") == []
    assert _states(controller) == {"gen": "ENABLED", "put": "ENABLED", "broken": "ENABLED",
                                   "inner-gen": "RUNNING", "inner-put": "RUNNING", "inner-off": "DISABLED"}
    with pytest.raises(UnknownComponentError, match="no process group has identifier 'ghost'"):
        controller.start_group("ghost")


def test_start_group_enables_the_saved_enabled_services_first(make_controller):
    document = _nifi_stopped_flow()
    controller = make_controller(document, start=True)
    controller.service("writer").disable()
    controller.start_group("inner")
    assert controller.service("writer").state == "ENABLED"


def test_a_disabled_processor_still_refuses_a_start_of_its_own(make_controller):
    controller = make_controller(_nifi_stopped_flow(), start=True)
    controller.start_components()
    with pytest.raises(ComponentStateError):
        controller.start_processor("inner-off")


def _scheduled(period: str, parameters: dict[str, str], **fields) -> dict:
    return flow(processors=[processor("gen", "GenerateFlowFile", schedulingPeriod=period, auto_terminate=["success"],
                                      **fields)],
                parameter_context="ctx", parameter_contexts={"ctx": parameters})


def test_parameters_resolve_in_the_scheduling_period_penalty_and_yield(make_controller):
    document = _scheduled("#{Trigger Schedule}", {"Trigger Schedule": "250 millis", "Penalty": "5 sec",
                                                  "Yield": "2 sec"},
                          penaltyDuration="#{Penalty}", yieldDuration="#{Yield}")
    assert check_flow(load_flow(document)) == []
    node = make_controller(document).processor("gen")
    assert (node.run_schedule, node.penalty_duration, node.yield_duration) == (0.25, 5.0, 2.0)
    assert node.validate() == []


def test_a_cron_schedule_from_a_parameter(make_controller):
    document = _scheduled("#{Cron}", {"Cron": "0 0 * * * ?"}, schedulingStrategy="CRON_DRIVEN")
    assert check_flow(load_flow(document)) == []
    assert make_controller(document).processor("gen").cron is not None


def test_a_missing_parameter_in_the_scheduling_period_is_a_problem_naming_it(make_controller):
    document = _scheduled("#{Trigger Schedule}", {})
    (problem,) = check_flow(load_flow(document))
    assert problem.path == "$.flowContents.processors[0].schedulingPeriod"
    assert "'Trigger Schedule'" in problem.message and "not defined" in problem.message
    node = make_controller(document).processor("gen")
    assert any("Trigger Schedule" in str(p) for p in node.validate())
    with pytest.raises(ComponentStateError, match="Trigger Schedule"):
        make_controller(document, start=True).start_processor("gen")


def test_a_sensitive_parameter_is_refused_in_the_scheduling_period(make_controller):
    document = _scheduled("#{Secret}", {"Secret": "1 sec"})
    document["parameterContexts"]["ctx"]["parameters"][0]["sensitive"] = True
    (problem,) = check_flow(load_flow(document))
    assert problem.path == "$.flowContents.processors[0].schedulingPeriod"
    assert "sensitive parameter 'Secret'" in problem.message


def test_a_changed_parameter_reschedules_a_processor_on_update(make_controller):
    controller = make_controller(_scheduled("#{Trigger Schedule}", {"Trigger Schedule": "1 sec"}), start=True)
    controller.start_components()
    controller.update(load_flow(_scheduled("#{Trigger Schedule}", {"Trigger Schedule": "3 sec"})))
    assert controller.processor("gen").run_schedule == 3.0


def _with_secret(properties: dict[str, str], type_name: str = "InvokeHTTP") -> dict:
    relationships = ["success"] if type_name == "GenerateFlowFile" else ["Original", "Retry", "No Retry", "Response",
                                                                          "Failure"]
    document = flow(processors=[processor("p", type_name, properties, state="ENABLED", auto_terminate=relationships)],
                    parameter_context="ctx", parameter_contexts={"ctx": {"Secret": "s3cret", "User": "ann"}})
    document["parameterContexts"]["ctx"]["parameters"][0]["sensitive"] = True
    return document


def test_a_sensitive_parameter_resolves_in_a_sensitive_property(make_controller):
    document = _with_secret({"HTTP URL": "http://127.0.0.1:9/", "Request Username": "#{User}",
                             "Request Password": "#{Secret}"})
    assert check_flow(load_flow(document)) == []
    node = make_controller(document).processor("p")
    assert node.properties["Request Password"] == "s3cret" and node.properties["Request Username"] == "ann"
    assert node.validate() == []


def test_a_sensitive_parameter_in_a_plain_property_leaves_it_unset_and_the_processor_invalid(make_controller):
    document = _with_secret({"Custom Text": "token=#{Secret}"}, "GenerateFlowFile")
    (problem,) = check_flow(load_flow(document))
    assert problem.path == "$.flowContents.processors[0].properties['Custom Text']"
    assert problem.message == "references sensitive parameter 'Secret' from a non-sensitive property"
    controller = make_controller(document, start=True)
    node = controller.processor("p")
    assert node.properties["Custom Text"] is None, "the secret never reaches a property that shows it"
    with pytest.raises(ComponentStateError, match="sensitive parameter 'Secret'"):
        controller.start_processor("p")


def test_a_plain_parameter_in_a_sensitive_property_is_refused(make_controller):
    document = _with_secret({"HTTP URL": "http://127.0.0.1:9/", "Request Username": "u",
                             "Request Password": "#{User}"})
    (problem,) = check_flow(load_flow(document))
    assert problem.path == "$.flowContents.processors[0].properties['Request Password']"
    assert problem.message == "references non-sensitive parameter 'User' from a sensitive property"
    assert make_controller(document).processor("p").validate() != []


def test_a_parameter_inside_an_expression_is_read_by_the_expression_as_a_value(make_controller):
    """NiFi's expression-aware parameter parsing: ``#{Word}`` inside ``${…}`` is the parameter's value
    (not an attribute named by it), ``#{Word}`` outside is substituted as text."""
    document = flow(processors=[processor("p", "GenerateFlowFile", {
        "Custom Text": "${#{Word}:toUpper()}/${literal('f-'):append(#{Word})}/#{Word}"}, state="ENABLED",
        auto_terminate=["success"])], parameter_context="ctx", parameter_contexts={"ctx": {"Word": "hello"}})
    assert check_flow(load_flow(document)) == []
    controller = make_controller(document, start=True)
    node = controller.processor("p")
    assert node.properties["Custom Text"] == "${#{Word}:toUpper()}/${literal('f-'):append(#{Word})}/hello"
    controller.start_processor("p")
    value = node.context.property("Custom Text").evaluate(attributes={"hello": "not this"})
    assert value.value == "HELLO/f-hello/hello"


def test_a_missing_parameter_inside_an_expression_is_a_problem_naming_it(make_controller):
    document = flow(processors=[processor("p", "GenerateFlowFile", {"Custom Text": "${#{Nope}:toUpper()}"},
                                          auto_terminate=["success"])],
                    parameter_context="ctx", parameter_contexts={"ctx": {}})
    (problem,) = check_flow(load_flow(document))
    assert "references parameter 'Nope'" in problem.message
