"""Restricted components as NiFi 2 has them: each declares the capabilities it needs; in a
tenant's group it is invalid (and does not start) unless the tenant holds each one. The
``tenants`` section is checked with clear errors."""

from __future__ import annotations

import copy

import pytest

from engine.flow import FlowDefinitionError, load_flow
from engine.flow.validation import check_flow
from engine.processors.fetch_file import FetchFile
from engine.processors.get_file import GetFile
from engine.processors.list_file import ListFile
from engine.processors.put_file import PutFile
from engine.runtime.clock import SystemClock
from engine.runtime.processor_node import InvalidComponentError
from engine.testing import ProcessorTestRunner
from engine.testing.flows import flow, group, processor


def test_file_processors_need_nifis_capabilities():
    assert GetFile.restricted == FetchFile.restricted == ("read-filesystem", "write-filesystem")
    assert PutFile.restricted == ("write-filesystem",)
    assert ListFile.restricted == ()  # NiFi 2's ListFile is not restricted: it reads no content


def document(tenant: dict, where: str = "tenant") -> dict:
    fetch = processor("fetch", "FetchFile", name="Fetch it", auto_terminate=[
        "success", "failure", "not.found", "permission.denied"])
    child = group("tenant-group", processors=[fetch] if where == "tenant" else [])
    root = group("root", groups=[child], processors=[fetch] if where == "root" else [])
    return {**flow(root), "tenants": {"acme": {"group": "tenant-group", **tenant}}}


def test_a_missing_capability_makes_the_component_invalid():
    problems = [str(problem) for problem in check_flow(load_flow(document({"capabilities": ["read-filesystem"]})))]
    assert any("'Fetch it': FetchFile needs the restricted capability 'write-filesystem', which tenant 'acme' has "
               "not been granted" in problem for problem in problems), problems
    assert not any("'read-filesystem'" in problem for problem in problems)


def test_granted_capabilities_and_the_operators_components_pass():
    granted = check_flow(load_flow(document({"capabilities": ["read-filesystem", "write-filesystem"]})))
    operators = check_flow(load_flow(document({"capabilities": []}, where="root")))
    assert not [p for p in granted + operators if "restricted capability" in p.message]


def test_a_processor_lacking_a_capability_does_not_start(tmp_path):
    runner = ProcessorTestRunner("PutFile", tmp_path, {"Directory": str(tmp_path / "out")}, tenant={})
    try:
        assert "PutFile needs the restricted capability 'write-filesystem', which tenant 'acme' has not been " \
               "granted" in [problem.message for problem in runner.node.validate()]
        with pytest.raises(InvalidComponentError, match="write-filesystem"):
            runner.controller.start_processor("processor-under-test")
        assert not (tmp_path / "out").exists()
    finally:
        runner.close()


@pytest.mark.parametrize("entry, message", [
    ({"group": 7}, "'group' must name the tenant's process group"),
    ({"group": "g", "capabilities": ["read filesystem"]}, "'capabilities' holds 'read filesystem'"),
    ({"group": "g", "files": {"roots": ["relative/dir"]}}, "'files.roots' must hold absolute directories"),
    ({"group": "g", "network": {"allow": ["10.0.0.0/33"]}}, "'network.allow' entry '10.0.0.0/33' is no CIDR"),
    ({"group": "g", "listenPorts": [9000]}, "'listenPorts' must be [low, high]"),
])
def test_a_malformed_tenants_section_is_refused(entry, message):
    with pytest.raises(FlowDefinitionError) as refused:
        load_flow({**flow(group("root", groups=[group("g")])), "tenants": {"acme": entry}})
    assert "$.tenants.acme" in str(refused.value) and message in str(refused.value)


def test_a_tenant_group_must_be_a_child_of_the_root_group():
    nested = group("root", groups=[group("top", groups=[group("deep")])])
    problems = check_flow(load_flow({**flow(nested), "tenants": {"acme": {"group": "deep"}, "beta": {"group": "nope"}}}))
    messages = [str(problem) for problem in problems if problem.fatal]
    assert any("the group 'deep' of tenant 'acme' is not a process group directly under the root group" in m
               for m in messages), messages
    assert any("the group 'nope' of tenant 'beta'" in m for m in messages)


def test_revoking_a_capability_stops_the_tenants_processor(tmp_path):
    runner = ProcessorTestRunner("PutFile", tmp_path, {"Directory": str(tmp_path / "out")},
                                 tenant={"capabilities": ["write-filesystem"]},
                                 scheduling={"scheduledState": "RUNNING"}, clock=SystemClock())
    try:
        runner.controller.start_components()
        assert runner.node.state.name == "RUNNING"
        document = copy.deepcopy(runner.controller.flow.raw)
        document["tenants"]["acme"]["capabilities"] = []
        _, failures = runner.controller.update(load_flow(document))
        assert runner.controller.processor("processor-under-test").state.name != "RUNNING"
        assert any("write-filesystem" in failure for failure in failures), failures
    finally:
        runner.close()
