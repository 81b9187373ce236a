"""A node over its data directory: sealed values kept sealed on disk, parameters given at start,
and replacing the running flow in place — unchanged components untouched, queues kept."""

from __future__ import annotations

import errno
import gzip
import json
import time

import pytest

from engine.flow import FlowDefinitionError
from engine.flow.sealed import open_flow, seal_flow
from engine.node import StandaloneNode
from engine.runtime.connectable import ComponentStateError
from engine.secrets import PREFIX, MasterKey
from engine.testing.faults import FaultPlan
from engine.testing.flows import connection, flow, processor

MASTER = MasterKey("node tests")


def saved(node: StandaloneNode) -> dict:
    return json.loads(gzip.decompress(node.flow_path.read_bytes()))


def queueing(log_name: str = "log", size: str = "1 B", extra: tuple = (), extra_connections: tuple = (),
             held: bool = True) -> dict:
    """GenerateFlowFile (running) → ``held`` → LogAttribute (not running): FlowFiles pile up;
    beside them ``other`` (running, its own); ``size`` is a parameter of ``other``."""
    return flow(processors=[
        processor("gen", "GenerateFlowFile", {"File Size": "1 B"}, schedulingPeriod="20 millis"),
        processor("log", "LogAttribute", {}, state="ENABLED", auto_terminate=["success"], name=log_name),
        processor("other", "GenerateFlowFile", {"File Size": "#{size}"}, schedulingPeriod="20 millis",
                  auto_terminate=["success"]),
        *extra,
    ], connections=[*([connection("held", "gen", "log")] if held else []), *extra_connections],
        parameter_context="ctx", parameter_contexts={"ctx": {"size": size}})


def wait_queued(node: StandaloneNode, count: int) -> int:
    deadline = time.monotonic() + 30
    while node.queued_flowfiles().get("held", 0) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return node.queued_flowfiles()["held"]


@pytest.fixture
def running():
    started = []

    def start(data_dir, document, **options) -> StandaloneNode:
        node = StandaloneNode(data_dir, **options)
        path = data_dir.parent / f"{data_dir.name}-flow.json"
        path.write_text(json.dumps(document))
        node.load_flow(path, options.pop("parameters", None))
        node.start()
        started.append(node)
        return node

    yield start
    for node in started:
        node.stop()


def test_sealed_values_open_in_memory_only_and_run_states_reach_the_disk(tmp_path, running):
    document = seal_flow(flow(processors=[
        processor("http", "InvokeHTTP", {"HTTP URL": "http://127.0.0.1:9/", "Request Username": "ann",
                                         "Request Password": "pw-in-clear"}, state="ENABLED",
                  auto_terminate=["Original", "Response", "Retry", "No Retry", "Failure"])]), MASTER.platform())
    node = running(tmp_path / "node", document, unseal=lambda d: open_flow(d, MASTER))
    assert node.controller.processor("http").properties["Request Password"] == "pw-in-clear"
    assert b"pw-in-clear" not in node.flow_path.read_bytes() and "pw-in-clear" not in json.dumps(saved(node))
    node.controller.disable_processor("http")
    assert saved(node)["flowContents"]["processors"][0]["scheduledState"] == "DISABLED"
    assert saved(node)["flowContents"]["processors"][0]["properties"]["Request Password"].startswith(PREFIX)


def test_parameters_given_at_start_are_kept_with_the_flow(tmp_path):
    document = flow(processors=[processor("gen", "GenerateFlowFile", {"File Size": "#{size}"}, state="ENABLED",
                                          auto_terminate=["success"])],
                    parameter_context="ctx", parameter_contexts={"ctx": {"size": "1 B"}})
    path = tmp_path / "flow.json"
    path.write_text(json.dumps(document))
    node = StandaloneNode(tmp_path / "node", unseal=lambda d: open_flow(d, MASTER))
    node.load_flow(path, {"size": "9 B"})
    node.save()
    assert saved(node)["parameterContexts"]["ctx"]["parameters"][0]["value"] == "9 B"


def test_replacing_the_flow_touches_only_what_changed_and_keeps_the_queues(tmp_path, running):
    node = running(tmp_path / "node", queueing())
    controller = node.controller
    before = dict(controller.processors)
    held = wait_queued(node, 5)
    assert held >= 5
    node.replace_flow(queueing(log_name="renamed"))
    assert node.controller is controller, "updated in place"
    assert controller.processors["gen"] is before["gen"] and before["gen"].run_status() == "Running"
    assert controller.processors["other"] is before["other"], "an unrelated processor is untouched"
    assert controller.processors["log"] is not before["log"] and controller.processors["log"].name == "renamed"
    assert node.queued_flowfiles()["held"] >= held, "the FlowFiles stayed in their connection"
    assert saved(node)["flowContents"]["processors"][1]["name"] == "renamed"

    node.replace_flow(queueing(log_name="renamed", size="2 B"))
    assert controller.processors["other"] is not before["other"], "a changed parameter restarts its users"
    assert controller.processors["other"].properties["File Size"] == "2 B"
    assert controller.processors["other"].run_status() == "Running"
    assert controller.processors["gen"] is before["gen"]

    put = processor("put", "LogAttribute", {}, auto_terminate=["success"])
    node.replace_flow(queueing(log_name="renamed", size="2 B", extra=(put,),
                               extra_connections=(connection("more", "gen", "put"),)))
    assert controller.processors["gen"] is not before["gen"], "the source of a new connection is restarted"
    assert controller.processors["gen"].run_status() == "Running" and "more" in node.queued_flowfiles()


def test_a_connection_holding_flowfiles_may_not_disappear(tmp_path, running):
    node = running(tmp_path / "node", queueing())
    wait_queued(node, 3)
    flow_before = node.flow
    with pytest.raises(ComponentStateError, match="no place for connection.*held"):
        node.replace_flow(queueing(held=False))
    assert node.flow is flow_before and node.controller.processors["gen"].run_status() == "Running"
    assert node.queued_flowfiles()["held"] >= 3


def test_a_flow_that_cannot_run_is_refused_and_the_node_runs_on(tmp_path, running):
    node = running(tmp_path / "node", queueing())
    controller = node.controller
    broken = flow(processors=[processor("x", "NoSuchProcessor", {})], connections=[connection("c", "x", "nowhere")])
    with pytest.raises(FlowDefinitionError):
        node.replace_flow(broken)
    assert node.controller is controller and node.controller.processor("gen").run_status() == "Running"


def test_a_new_connection_takes_over_the_orphaned_queue_of_its_identifier(tmp_path, running):
    node = running(tmp_path / "node", queueing())
    wait_queued(node, 3)
    node.controller.stop_processor("gen", wait=5)
    held = node.queued_flowfiles()["held"]
    node.stop()
    node = running(tmp_path / "node", queueing(held=False))
    assert len(node.controller.orphans["held"]) == held
    node.replace_flow(queueing())
    assert "held" not in node.controller.orphans
    assert node.queued_flowfiles()["held"] >= held


def test_a_node_stopping_on_a_full_disk_closes_everything_and_loses_nothing(tmp_path, running):
    node = running(tmp_path / "node", queueing())
    wait_queued(node, 5)
    node.controller.stop_processor("gen", wait=5)
    held = node.queued_flowfiles()["held"]
    with FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write", "sync"}, persistent=True).installed():
        failures = node.stop()
    assert failures[0].startswith(f"could not write the checkpoint of {tmp_path / 'node' / 'flowfile_repository'}: "
                                  "No space left on device; every committed FlowFile is in the journals")
    again = running(tmp_path / "node", queueing())
    assert len(again.storage.recovered.queues["held"]) == held
