"""The flow controller: groups, ports, funnels, queues, services, parameters, recovery, status."""

from __future__ import annotations

import errno

import pytest

from engine.components import ControllerService, PropertyDescriptor
from engine.flow import load_flow
from engine.provenance.event import ProvenanceEventType as E
from engine.provenance.query import ProvenanceQuery
from engine.runtime import ComponentStateError, FlowController, ManualClock, RuntimeConfig
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan
from engine.testing.flows import connection, flow, funnel, group, port, processor, service
from tests.engine.runtime.conftest import Tick
from tests.engine.runtime.test_scheduling import seed


def run(controller, rounds: int = 10) -> None:
    clock = controller.clock
    for _ in range(rounds):
        controller.scheduler.run_due()
        clock.advance(0.01)


def events(controller, **criteria):
    controller.storage.provenance.rollover()
    return list(reversed(controller.storage.provenance.query(ProvenanceQuery(limit=10_000, **criteria)).events))


def test_flowfiles_pass_through_funnels_ports_and_nested_groups(make_controller):
    inner = group("inner", input_ports=[port("in")], output_ports=[port("out")],
                  processors=[processor("mid", "Pass")],
                  connections=[connection("to-mid", "in", "mid", source_type="INPUT_PORT"),
                               connection("from-mid", "mid", "out", destination_type="OUTPUT_PORT")])
    document = flow(
        processors=[processor("gen", "Tick", {"Emit": "true"}, schedulingPeriod="1 sec"),
                    processor("a", "Pass", auto_terminate=["success"]),
                    processor("b", "Pass", auto_terminate=["success"])],
        funnels=[funnel("f")],
        groups=[inner],
        connections=[connection("to-funnel", "gen", "f", destination_type="FUNNEL"),
                     connection("to-inner", "f", "in", source_type="FUNNEL", destination_type="INPUT_PORT"),
                     connection("to-a", "out", "a", source_type="OUTPUT_PORT"),
                     connection("to-b", "out", "b", source_type="OUTPUT_PORT")])
    controller = make_controller(document)
    controller.start_components()
    run(controller)
    a, b = controller.processor("a").processor, controller.processor("b").processor
    assert sum(a.sessions.values()) == sum(b.sessions.values()) == 1, "the output port cloned the FlowFile for b"
    created = events(controller, event_type=E.CREATE)
    assert len(created) == 1
    clones = events(controller, event_type=E.CLONE)
    assert [c.component_type for c in clones] == ["Output Port"]
    status = controller.status()
    assert status.root.groups[0].id == "inner"
    assert {p.kind for p in status.ports} == {"FUNNEL", "INPUT_PORT", "OUTPUT_PORT"}


def test_drop_queue_empties_memory_and_swap_files_with_drop_events(make_controller):
    document = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "src", "dst", backPressureObjectThreshold=0)])
    controller = make_controller(document, config=RuntimeConfig(swap_threshold=50, swap_batch_size=20))
    seed(controller, "q", 130)
    size = controller.queue("q").size()
    assert size.count == 130 and size.swap_files >= 4
    assert controller.drop_queue("q", requester="alice") == (130, size.bytes)
    assert controller.queue("q").size().total_count == 0
    drops = events(controller, event_type=E.DROP)
    assert len(drops) == 130 and {d.details for d in drops} == {"FlowFile Queue emptied by alice"}
    assert not controller.storage.flowfiles.swap_locations
    assert controller.storage.verify().ok


def test_drop_events_of_swapped_flowfiles_ride_in_the_swap_files_deletion(make_controller):
    """With the provenance disk full, the DROP events wait in the FlowFile repository's outbox
    with each swap file's deletion: a node stopped then still records every one at its next
    start (registered beside the deletion, the swapped FlowFiles' events were lost)."""
    document = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "src", "dst", backPressureObjectThreshold=0)])
    controller = make_controller(document, config=RuntimeConfig(swap_threshold=50, swap_batch_size=20))
    seed(controller, "q", 130)
    assert controller.queue("q").size().swap_files >= 4
    full = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}, matches="provenance_repository",
                     persistent=True)
    with full.installed():
        assert controller.drop_queue("q", requester="alice").count == 130
        controller.shutdown(timeout=2)
        controller.storage.close()
    storage = NodeStorage(controller.storage.data_dir)
    try:
        recovered = storage.open(background=False)
        assert not recovered.queues.get("q") and not storage.flowfiles.swap_locations
        storage.provenance.rollover()
        drops = storage.provenance.query(ProvenanceQuery(limit=10_000, event_type=E.DROP)).events
        assert len(drops) == 130 and len({d.flowfile_uuid for d in drops}) == 130
    finally:
        storage.close()


def test_expired_flowfiles_are_swept_with_expire_events(make_controller):
    document = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "src", "dst", flowFileExpiration="1 sec")])
    controller = make_controller(document)
    seed(controller, "q", 3)
    assert controller.expire_flowfiles() == 0
    queue = controller.queue("q")
    controller.clock.advance(2)
    assert controller.expire_flowfiles() == 3
    expired = events(controller, event_type=E.EXPIRE)
    assert len(expired) == 3 and expired[0].details == "Expiration Threshold = 1 sec"
    assert queue.size().total_count == 0


def test_list_queue_gives_the_first_flowfiles_in_order(make_controller):
    document = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "src", "dst", prioritizers=[
                        "org.apache.nifi.prioritizer.PriorityAttributePrioritizer"])])
    controller = make_controller(document)
    for priority in ("3", "1", "2"):
        seed(controller, "q", priority=priority)
    assert [f.attributes["priority"] for f in controller.list_queue("q", 2)] == ["1", "2"]


def test_recovered_flowfiles_return_to_their_connections_and_orphans_are_kept(tmp_path, registry):
    storage = NodeStorage(tmp_path / "node")
    recovered = storage.open(background=False)
    first = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                             processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                 connections=[connection("kept", "src", "dst"), connection("gone", "src", "dst")])
    controller = FlowController(storage, registry=registry, clock=ManualClock())
    controller.load(load_flow(first), recovered)
    seed(controller, "kept", 4)
    seed(controller, "gone", 2)
    storage.close()

    storage = NodeStorage(tmp_path / "node")
    recovered = storage.open(background=False)
    second = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                              processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                  connections=[connection("kept", "src", "dst")])
    controller = FlowController(storage, registry=registry, clock=ManualClock())
    controller.load(load_flow(second), recovered)
    assert len(controller.queue("kept")) == 4
    assert len(controller.orphans["gone"]) == 2
    assert controller.status().node.orphaned_queues == {"gone": 2}
    storage.close()
    storage = NodeStorage(tmp_path / "node")
    assert storage.open(background=False).flowfile_count == 6, "orphans survive a checkpoint"
    storage.close()


class Greeter(ControllerService):
    """A service for tests."""

    properties = (PropertyDescriptor("Greeting", required=True),)
    provides = (object,)

    def on_enabled(self, context, init):
        self.greeting = context.property("Greeting").value


def test_services_enable_in_order_and_refuse_to_disable_while_used(make_controller, registry):
    registry.register(Greeter, "tests")
    document = flow(services=[service("s", "Greeter", {"Greeting": "#{word}"})],
                    processors=[processor("t", "Tick", auto_terminate=["success"], state="ENABLED")],
                    parameter_context="ctx", parameter_contexts={"ctx": {"word": "hello"}})
    controller = make_controller(document)
    controller.start_components()
    node = controller.service("s")
    assert node.state == "ENABLED" and node.instance.greeting == "hello"
    controller.disable_service("s")
    assert node.state == "DISABLED"


def test_missing_parameter_makes_the_component_invalid(make_controller):
    document = flow(processors=[processor("t", "Tick", {"Emit": "#{missing}"}, auto_terminate=["success"])],
                    parameter_context="ctx", parameter_contexts={"ctx": {}})
    controller = make_controller(document)
    failures = controller.start_components()
    assert any("references parameter 'missing'" in failure for failure in failures)


def test_unknown_processor_type_is_kept_as_an_invalid_placeholder_with_its_queue(make_controller):
    document = flow(processors=[processor("gen", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("ghost", "com.example.Mystery", {"Secret": "x"})],
                    connections=[connection("q", "gen", "ghost")])
    controller = make_controller(document)
    failures = controller.start_components()
    assert any("com.example.Mystery" in failure and "not available" in failure for failure in failures)
    seed(controller, "q", 2)
    assert len(controller.queue("q")) == 2
    with pytest.raises(ComponentStateError):
        controller.start_processor("ghost")


def test_status_counts_queues_processors_and_groups(make_controller):
    document = flow(processors=[processor("gen", "Tick", {"Emit": "true"}),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "gen", "dst")])
    controller = make_controller(document)
    controller.start_components()
    run(controller, 5)
    status = controller.status()
    (queue,) = status.connections
    assert queue.queued_count == 5 and queue.source_name == "gen"
    gen = next(p for p in status.processors if p.id == "gen")
    assert gen.run_status == "Running" and gen.window["flowfiles_out"] == 5 and gen.window["invocations"] == 5
    assert status.root.queued_count == 5 and status.root.running == 1 and status.root.stopped == 1
    assert status.node.queued_count == 5
    assert "5 FlowFiles queued" in controller.status_line()
    assert status.as_dict()["node"]["queued_count"] == 5
    assert status.as_dict()["connections"][0]["awaiting_transfer_count"] == 0


def test_status_says_apart_what_awaits_transfer_to_other_nodes(make_controller):
    document = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "src", "dst")])
    controller = make_controller(document)
    seed(controller, "q", 4)
    (queue,) = controller.status().connections
    assert (queue.awaiting_transfer_count, queue.awaiting_transfer_bytes) == (0, 0), "not load balanced: none"
    # A load-balanced connection's queue (engine.balance's PartitionedQueue) tells what its remote partitions hold.
    controller.queue("q").awaiting_transfer = lambda: (3, 300)
    status = controller.status()
    (queue,) = status.connections
    assert (queue.queued_count, queue.awaiting_transfer_count, queue.awaiting_transfer_bytes) == (4, 3, 300)
    assert status.as_dict()["connections"][0]["awaiting_transfer_count"] == 3


class NeedsGreeter(Tick):
    """A Tick that references a Greeter service."""

    properties = (PropertyDescriptor("Greeter", required=True, service=object),)


def test_a_processor_referencing_a_disabled_service_is_invalid(make_controller, registry):
    registry.register(Greeter, "tests")
    registry.register(NeedsGreeter, "tests")
    document = flow(services=[service("s", "Greeter", {"Greeting": "hi"}, state="DISABLED")],
                    processors=[processor("n", "NeedsGreeter", {"Greeter": "s"}, auto_terminate=["success"])])
    controller = make_controller(document)
    failures = controller.start_components()
    assert any("references controller service 's', which is not enabled" in f for f in failures)
    controller.enable_service("s")
    controller.start_processor("n")
    with pytest.raises(ComponentStateError, match="is used by NeedsGreeter"):
        controller.disable_service("s")


def test_drop_queue_with_a_damaged_and_a_missing_swap_file_empties_it_and_reports_both(make_controller):
    document = flow(processors=[processor("src", "Tick", {"Emit": "true"}, state="ENABLED"),
                                processor("dst", "Pass", state="ENABLED", auto_terminate=["success"])],
                    connections=[connection("q", "src", "dst", backPressureObjectThreshold=0)])
    controller = make_controller(document, config=RuntimeConfig(swap_threshold=50, swap_batch_size=20))
    queue = controller.queue("q")
    session = ProcessSession(controller.storage, SessionComponent("seed", "Seed", outgoing={"s": [queue]},
                                                                  clock=controller.clock.time))
    for index in range(130):
        session.transfer(session.write_bytes(session.create(), b"%d" % index), "s")
    session.commit()
    cut, gone = (controller.storage.flowfiles.swap.path(s.location) for s in queue.swapped_files()[:2])
    cut.write_bytes(cut.read_bytes()[:-3])
    gone.unlink()
    assert controller.drop_queue("q", requester="alice") == (130, sum(len(b"%d" % n) for n in range(130)))
    size = queue.size()
    assert (size.total_count, size.total_bytes, size.swap_files) == (0, 0, 0)
    assert len(events(controller, event_type=E.DROP)) == 130 - 40, "the unreadable FlowFiles have no event"
    reports = controller.storage.damage.entries()
    assert {r.path for r in reports} == {str(cut), str(gone)}
    assert all("connection q was being emptied: 20 FlowFile(s) dropped" in r.effect for r in reports)
    assert list(controller.storage.data_dir.glob(f"quarantine/*/flowfile_repository/swap/{cut.name}"))
    assert not controller.storage.flowfiles.swap_locations
    verification = controller.storage.verify()
    assert verification.ok, verification.problems
