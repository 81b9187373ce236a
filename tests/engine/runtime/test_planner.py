"""The update planner alone: what an update stops, disables, keeps and builds, from a description
of the running flow and the new definition (nothing is built or run here)."""

from __future__ import annotations

import copy

import pytest

from engine.flow import load_flow
from engine.flow.parameters import ParameterResolver, ParameterValues
from engine.flow.validation import resolved_properties
from engine.runtime.planner import RunningComponent, RunningConnection, RunningFlow, UpdateRefused, plan_update
from engine.testing.flows import connection, flow, funnel, group, port, processor, service


def running(document: dict, *, references: dict[str, set[str]] | None = None,
            queued: dict[str, int] | None = None) -> RunningFlow:
    """``document`` as if it ran: ``references`` are the services each component uses,
    ``queued`` the FlowFiles each connection holds."""
    definition = load_flow(copy.deepcopy(document))
    resolver = ParameterResolver(definition.parameter_contexts)
    references, queued = references or {}, queued or {}
    components, connections = {}, {}
    for grp in definition.groups():
        for kind, configs in (("service", grp.controller_services), ("processor", grp.processors)):
            for config in configs:
                properties = resolved_properties(config, grp, resolver)[0]
                components[config.identifier] = RunningComponent(
                    config.identifier, kind, config.raw, config.group_id, properties, None,
                    frozenset(references.get(config.identifier, ())),
                    parameters=ParameterValues(resolver, grp.parameter_context_name))
        for kind, configs in (("funnel", grp.funnels), ("port", grp.input_ports + grp.output_ports)):
            for config in configs:
                components[config.identifier] = RunningComponent(config.identifier, kind, config.raw, config.group_id)
        for config in grp.connections:
            connections[config.identifier] = RunningConnection(
                config.identifier, config.raw, config.group_id, config.source.id, config.destination.id,
                queued.get(config.identifier, 0))
    return RunningFlow(definition, components, connections)


def chain(**changes) -> dict:
    """gen → a → f (funnel) → b, with a service ``svc`` used by ``b`` and ``svc2`` using ``svc``."""
    parts = dict(
        processors=[processor("gen", "Tick", {"Emit": "true"}), processor("a", "Pass"),
                    processor("b", "Pass", {"Service": "svc"}, auto_terminate=["success"])],
        funnels=[funnel("f")],
        connections=[connection("gen-a", "gen", "a"), connection("a-f", "a", "f", destination_type="FUNNEL"),
                     connection("f-b", "f", "b", source_type="FUNNEL")],
        services=[service("svc", "Pool"), service("svc2", "Client", {"Pool": "svc"})],
    )
    parts.update(changes)
    return flow(**parts)


REFERENCES = {"b": {"svc"}, "svc2": {"svc"}}


def plan(old: dict, new: dict, **kwargs):
    return plan_update(running(old, references=REFERENCES, **kwargs), load_flow(copy.deepcopy(new)))


def test_the_same_flow_keeps_everything():
    result = plan(chain(), chain())
    assert result.stop == result.disable == result.build == frozenset()
    assert result.keep == {"gen", "a", "b", "f", "svc", "svc2"}


def test_run_states_and_positions_are_not_changes():
    new = chain(processors=[processor("gen", "Tick", {"Emit": "true"}, state="ENABLED", position={"x": 5, "y": 1}),
                            processor("a", "Pass"),
                            processor("b", "Pass", {"Service": "svc"}, auto_terminate=["success"])])
    assert plan(chain(), new).keep == {"gen", "a", "b", "f", "svc", "svc2"}


def test_a_changed_processor_is_stopped_and_built_anew_and_its_neighbours_run_on():
    new = chain(processors=[processor("gen", "Tick", {"Emit": "false"}), processor("a", "Pass"),
                            processor("b", "Pass", {"Service": "svc"}, auto_terminate=["success"])])
    result = plan(chain(), new)
    assert result.stop == {"gen"} and result.build == {"gen"}
    assert {"a", "b", "f"} <= result.keep and not result.disable


def test_a_removed_component_is_stopped_and_not_built():
    old = chain(funnels=[funnel("f"), funnel("spare")])
    result = plan(old, chain())
    assert result.stop == {"spare"} and not result.build and "spare" not in result.keep


def test_both_ends_of_an_added_removed_or_changed_connection_are_rebuilt():
    added = chain(connections=[*chain()["flowContents"]["connections"],
                               connection("gen-b", "gen", "b")])
    assert plan(chain(), added).stop == {"gen", "b"}
    assert plan(added, chain()).stop == {"gen", "b"}
    changed = chain(connections=[connection("gen-a", "gen", "a", backPressureObjectThreshold=5),
                                 *chain()["flowContents"]["connections"][1:]])
    result = plan(chain(), changed)
    assert result.stop == result.build == {"gen", "a"}
    assert {"b", "f"} <= result.keep


def test_a_connection_moved_to_other_ends_rebuilds_the_old_and_the_new_ends():
    moved = chain(connections=[connection("gen-a", "gen", "b"), *chain()["flowContents"]["connections"][1:]])
    assert plan(chain(), moved).stop == {"gen", "a", "b"}


def test_a_changed_service_takes_the_services_and_processors_using_it_along():
    new = chain(services=[service("svc", "Pool", {"Size": "9"}), service("svc2", "Client", {"Pool": "svc"})])
    result = plan(chain(), new)
    assert result.disable == {"svc", "svc2"}
    assert result.stop == {"b"}
    assert result.build == {"svc", "svc2", "b"}
    assert result.keep == {"gen", "a", "f"}


def test_a_parameter_changing_value_rebuilds_only_what_uses_it():
    def document(value):
        return flow(group("root", parameter_context="ctx",
                          processors=[processor("uses", "Tick", {"Emit": "#{emit}"}), processor("other", "Tick")]),
                    parameter_contexts={"ctx": {"emit": value}})
    result = plan_update(running(document("true")), load_flow(document("false")))
    assert result.stop == {"uses"} and result.keep == {"other"}


def test_a_parameter_read_inside_an_expression_changing_value_rebuilds_what_uses_it():
    def document(value):
        return flow(group("root", parameter_context="ctx",
                          processors=[processor("uses", "Tick", {"Emit": "${#{emit}:toLower()}"}),
                                      processor("other", "Tick")]),
                    parameter_contexts={"ctx": {"emit": value}})
    result = plan_update(running(document("TRUE")), load_flow(document("false")))
    assert result.stop == {"uses"} and result.keep == {"other"}
    assert plan_update(running(document("TRUE")), load_flow(document("TRUE"))).stop == frozenset()


def test_a_changed_tenant_entry_rebuilds_the_processors_and_services_of_its_group_only():
    def document(capabilities):
        tenant_group = group("tg", processors=[processor("inside", "Tick")], services=[service("tsvc", "Pool")],
                             funnels=[funnel("tf")])
        return {**flow(processors=[processor("outside", "Tick")], groups=[tenant_group]),
                "tenants": {"acme": {"group": "tg", "capabilities": capabilities}}}
    result = plan_update(running(document([])), load_flow(document(["read-filesystem"])))
    assert result.stop == {"inside"} and result.disable == {"tsvc"}
    assert result.keep == {"outside", "tf"}


def test_a_component_changing_kind_is_rebuilt():
    new = chain(processors=[processor("gen", "Tick", {"Emit": "true"}), processor("b", "Pass", {"Service": "svc"},
                                                                                  auto_terminate=["success"])],
                funnels=[funnel("f"), funnel("a")],
                connections=[connection("gen-a", "gen", "a", destination_type="FUNNEL"),
                             connection("a-f", "a", "f", source_type="FUNNEL", destination_type="FUNNEL"),
                             connection("f-b", "f", "b", source_type="FUNNEL")])
    result = plan(chain(), new)
    assert "a" in result.stop and "a" in result.build and "a" not in result.keep


def test_a_connection_holding_flowfiles_may_not_disappear():
    fewer = chain(processors=[processor("gen", "Tick", {"Emit": "true"}, auto_terminate=["success"]),
                              processor("a", "Pass", auto_terminate=["success"]),
                              processor("b", "Pass", {"Service": "svc"}, auto_terminate=["success"])],
                  connections=chain()["flowContents"]["connections"][2:])
    with pytest.raises(UpdateRefused, match=r"connection\(s\) holding FlowFiles: a-f \(2 FlowFile\(s\)\), "
                                            r"gen-a \(3 FlowFile\(s\)\)"):
        plan(chain(), fewer, queued={"gen-a": 3, "a-f": 2, "f-b": 7})
    assert plan(chain(), fewer, queued={"f-b": 7}).stop == {"gen", "a", "f"}


def test_a_new_port_is_built():
    new = chain(output_ports=[port("out")])
    result = plan(chain(), new)
    assert result.build == {"out"} and not result.stop
