"""Scheduling semantics (seed 003): run schedules, CRON, yields, penalties, concurrency, terminate.

Most tests step the scheduler by hand against a manual clock; those about threads use real ones.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from engine.runtime import ComponentStateError, InvalidComponentError, ManualClock, NodeRole, RuntimeConfig, SystemClock
from engine.testing.flows import connection, flow, processor
from engine.session import ProcessSession, SessionComponent, TaskTerminatedError


def seed(controller, queue_id: str, count: int = 1, **attributes) -> None:
    """Commit ``count`` FlowFiles into the queue of connection ``queue_id``."""
    queue = controller.queue(queue_id)
    session = ProcessSession(controller.storage, SessionComponent("seed", "Seed", outgoing={"s": [queue]},
                                                                  clock=controller.clock.time))
    for _ in range(count):
        flowfile = session.create()
        if attributes:
            flowfile = session.put_all_attributes(flowfile, attributes)
        session.transfer(flowfile, "s")
    session.commit()


def sink_flow(type_name: str, **fields) -> dict:
    """``source`` (stopped Tick) → ``input`` → the processor under test → ``output`` → stopped sink."""
    return flow(processors=[processor("source", "Tick", {"Emit": "true"}, state="ENABLED"),
                            processor("p", type_name, **fields),
                            processor("sink", "Pass", state="ENABLED", auto_terminate=["success"])],
                connections=[connection("input", "source", "p"), connection("output", "p", "sink")])


def test_timer_driven_processor_runs_on_its_run_schedule(make_controller):
    clock = ManualClock()
    controller = make_controller(flow(processors=[processor("t", "Tick", schedulingPeriod="5 sec",
                                                            auto_terminate=["success"])]), clock=clock)
    controller.start_components()
    tick = controller.processor("t").processor
    controller.scheduler.run_due()
    assert tick.triggers == 1
    clock.advance(4.9)
    controller.scheduler.run_due()
    assert tick.triggers == 1
    clock.advance(0.1)
    controller.scheduler.run_due()
    assert tick.triggers == 2


def test_zero_run_schedule_triggers_again_at_once(make_controller):
    controller = make_controller(flow(processors=[processor("t", "Tick", {"Emit": "true"}, schedulingPeriod="0 sec",
                                                            auto_terminate=["success"])]))
    controller.start_components()
    for _ in range(3):
        controller.scheduler.run_due()
    assert controller.processor("t").processor.triggers == 3


def test_no_work_means_a_bored_yield_and_no_trigger(make_controller):
    clock = ManualClock()
    controller = make_controller(sink_flow("Pass"), clock=clock)
    controller.start_components()
    node = controller.processor("p")
    controller.scheduler.run_due()
    assert node.processor.triggers == 0
    assert controller.scheduler.next_due() == pytest.approx(clock.monotonic() + 0.01)
    seed(controller, "input")
    clock.advance(0.005)
    controller.scheduler.run_due()
    assert node.processor.triggers == 0, "the bored yield is not over yet"
    clock.advance(0.005)
    controller.scheduler.run_due()
    assert node.processor.triggers == 1
    assert len(controller.queue("output")) == 1


def test_processor_yield_keeps_it_idle_for_its_yield_duration(make_controller):
    clock = ManualClock()
    controller = make_controller(flow(processors=[processor("y", "Yielder", yieldDuration="2 sec",
                                                            auto_terminate=["success"])]), clock=clock)
    controller.start_components()
    yielder = controller.processor("y").processor
    controller.scheduler.run_due()
    clock.advance(1.9)
    controller.scheduler.run_due()
    assert yielder.triggers == 1
    clock.advance(0.1)
    controller.scheduler.run_due()
    assert yielder.triggers == 2


def test_uncaught_error_rolls_back_and_yields_administratively(make_controller):
    clock = ManualClock()
    controller = make_controller(sink_flow("Crasher", penaltyDuration="0 sec"), clock=clock,
                                 config=RuntimeConfig(administrative_yield_duration=30))
    controller.start_components()
    seed(controller, "input")
    node = controller.processor("p")
    controller.scheduler.run_due()
    assert node.processor.triggers == 1
    (back,) = controller.queue("input").peek(1)
    assert "touched" not in back.attributes, "the session's changes were rolled back"
    assert controller.queue("input").size().unacknowledged_count == 0
    assert any("a bug" in b.message for b in controller.bulletins.recent("p"))
    assert controller.scheduler.next_due() == pytest.approx(clock.monotonic() + 30)
    clock.advance(29.9)
    controller.scheduler.run_due()
    assert node.processor.triggers == 1
    clock.advance(0.1)
    controller.scheduler.run_due()
    assert node.processor.triggers == 2


def test_process_exception_rolls_back_penalized_without_yielding(make_controller):
    clock = ManualClock()
    controller = make_controller(sink_flow("Crasher", properties={"Kind": "process"}), clock=clock)
    controller.start_components()
    seed(controller, "input")
    controller.scheduler.run_due()
    (back,) = controller.queue("input").peek(1)
    assert back.penalty_expiration == int(clock.time() * 1000) + 30_000, "rolled back with the 30 s penalty"
    assert controller.scheduler.next_due() == pytest.approx(clock.monotonic()), "no administrative yield"
    assert any("remote end refused" in b.message for b in controller.bulletins.recent("p"))


def test_penalized_flowfile_is_skipped_until_its_penalty_ends(make_controller):
    clock = ManualClock()
    controller = make_controller(sink_flow("Penalizer", penaltyDuration="300 millis"), clock=clock)
    controller.start_components()
    seed(controller, "input")
    penalizer = controller.processor("p").processor
    controller.scheduler.run_due()
    assert len(penalizer.seen) == 1
    for _ in range(5):
        clock.advance(0.01)
        controller.scheduler.run_due()
    assert len(penalizer.seen) == 1, "a penalized FlowFile is not work"
    clock.advance(0.3)
    controller.scheduler.run_due()
    assert len(penalizer.seen) == 2 and penalizer.seen[0] == penalizer.seen[1]


def test_cron_driven_processor_fires_at_its_times(make_controller):
    start = datetime(2026, 11, 23, 10, 0, 0, 500_000, tzinfo=timezone.utc).timestamp()
    clock = ManualClock(wall=start)
    controller = make_controller(flow(processors=[processor("t", "Tick", schedulingStrategy="CRON_DRIVEN",
                                                            schedulingPeriod="*/10 * * * * ?",
                                                            auto_terminate=["success"])]), clock=clock)
    controller.start_components()
    tick = controller.processor("t").processor
    controller.scheduler.run_due()
    assert tick.triggers == 0
    assert controller.scheduler.next_due() == pytest.approx(clock.monotonic() + 9.5)
    clock.advance(9.5)
    controller.scheduler.run_due()
    assert tick.triggers == 1
    clock.advance(9.9)
    controller.scheduler.run_due()
    assert tick.triggers == 1
    clock.advance(0.1)
    controller.scheduler.run_due()
    assert tick.triggers == 2


def test_primary_node_only_processors_run_on_the_primary_alone(make_controller):
    clock = ManualClock()
    controller = make_controller(flow(processors=[
        processor("own", "PrimaryTick", auto_terminate=["success"]),
        processor("configured", "Tick", executionNode="PRIMARY", auto_terminate=["success"]),
        processor("everywhere", "Tick", auto_terminate=["success"]),
    ]), clock=clock, role=NodeRole(clustered=True, primary=False))
    controller.start_components()
    controller.scheduler.run_due()
    counts = {name: controller.processor(name).processor.triggers for name in ("own", "configured", "everywhere")}
    assert counts == {"own": 0, "configured": 0, "everywhere": 1}
    controller.set_primary(True)
    assert controller.processor("own").processor.primary_changes == [True]
    clock.advance(0.01)
    controller.scheduler.run_due()
    assert controller.processor("own").processor.triggers == 1
    assert controller.processor("configured").processor.triggers == 1


def test_back_pressure_stops_the_upstream_processor_until_the_queue_drains(make_controller):
    clock = ManualClock()
    controller = make_controller(flow(
        processors=[processor("gen", "Tick", {"Emit": "true"}),
                    processor("sink", "Pass", state="ENABLED", auto_terminate=["success"])],
        connections=[connection("q", "gen", "sink", backPressureObjectThreshold=5)]), clock=clock)
    controller.start_components()
    for _ in range(20):
        clock.advance(0.01)
        controller.scheduler.run_due()
    assert controller.processor("gen").processor.triggers == 5
    assert len(controller.queue("q")) == 5 and controller.queue("q").is_full()
    controller.start_processor("sink")
    for _ in range(20):
        clock.advance(0.01)
        controller.scheduler.run_due()
    assert controller.processor("gen").processor.triggers > 5


def test_run_duration_shares_one_session_between_triggers(make_controller):
    controller = make_controller(sink_flow("Pass", runDurationMillis=25))
    controller.start_components()
    seed(controller, "input", 25)
    controller.scheduler.run_due()
    node = controller.processor("p")
    assert node.processor.triggers == 3
    assert list(node.processor.sessions.values()) == [25], "one session took all 25 FlowFiles"
    assert len(controller.queue("output")) == 25


def test_without_run_duration_each_trigger_commits_its_own_session(make_controller):
    controller = make_controller(sink_flow("Pass"))
    controller.start_components()
    seed(controller, "input", 25)
    for _ in range(3):
        controller.scheduler.run_due()
    assert sorted(controller.processor("p").processor.sessions.values()) == [5, 10, 10]


def test_failed_start_hook_is_retried_after_the_administrative_yield(make_controller):
    clock = ManualClock()
    controller = make_controller(flow(processors=[processor("f", "FailingStart", auto_terminate=["success"])]),
                                 clock=clock, config=RuntimeConfig(administrative_yield_duration=30))
    controller.start_components()
    node = controller.processor("f")
    for _ in range(3):
        controller.scheduler.run_due()
        clock.advance(30)
    controller.scheduler.run_due()
    assert node.processor.attempts == 3
    assert node.processor.triggers >= 1
    assert any("database is not up" in b.message for b in controller.bulletins.recent("f"))


def test_concurrent_tasks_are_bounded_by_the_global_thread_count(make_controller):
    controller = make_controller(
        flow(processors=[processor("b", "Blocker", concurrentlySchedulableTaskCount=5, auto_terminate=["success"])]),
        clock=SystemClock(), config=RuntimeConfig(max_timer_driven_threads=3), start=True)
    controller.start_components()
    blocker = controller.processor("b").processor
    for _ in range(3):
        assert blocker.entered.acquire(timeout=5)
    assert not blocker.entered.acquire(timeout=0.3), "a fourth task ran although only 3 threads exist"
    assert blocker.peak == 3
    blocker.release.set()


def test_concurrent_tasks_of_one_processor(make_controller):
    controller = make_controller(
        flow(processors=[processor("b", "Blocker", concurrentlySchedulableTaskCount=2, auto_terminate=["success"])]),
        clock=SystemClock(), config=RuntimeConfig(max_timer_driven_threads=10), start=True)
    controller.start_components()
    blocker = controller.processor("b").processor
    for _ in range(2):
        assert blocker.entered.acquire(timeout=5)
    assert not blocker.entered.acquire(timeout=0.3)
    assert blocker.peak == 2
    blocker.release.set()


def _blockers(*specs):
    return flow(processors=[processor(name, kind, concurrentlySchedulableTaskCount=tasks, auto_terminate=["success"])
                            for name, kind, tasks in specs])


def _assert_one_task_at_a_time(blocker, why: str) -> None:
    """The blocker's tasks ran one at a time: a second did not start while the first waited, and
    once released five ran, never two at once."""
    assert blocker.entered.acquire(timeout=5)
    assert not blocker.entered.acquire(timeout=0.3), why
    blocker.release.set()
    deadline = time.monotonic() + 5
    while blocker.finished < 5 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert blocker.peak == 1 and blocker.finished >= 5


def test_cpu_bound_tasks_take_turns_on_the_cpu_lanes(make_controller):
    controller = make_controller(_blockers(("c", "CpuBlocker", 3)), clock=SystemClock(),
                                 config=RuntimeConfig(max_timer_driven_threads=10), start=True)
    controller.start_components()
    _assert_one_task_at_a_time(controller.processor("c").processor,
                               "a second CPU-bound task ran beside the first on one lane")


def test_more_cpu_lanes_run_more_cpu_bound_tasks_at_once(make_controller):
    controller = make_controller(_blockers(("c", "CpuBlocker", 3)), clock=SystemClock(),
                                 config=RuntimeConfig(max_timer_driven_threads=10, cpu_bound_tasks=2), start=True)
    controller.start_components()
    blocker = controller.processor("c").processor
    for _ in range(2):
        assert blocker.entered.acquire(timeout=5)
    assert not blocker.entered.acquire(timeout=0.3), "a third CPU-bound task ran on two lanes"
    assert blocker.peak == 2
    blocker.release.set()


def test_tasks_that_wait_on_io_run_beside_a_busy_cpu_lane(make_controller):
    controller = make_controller(_blockers(("c", "CpuBlocker", 1), ("w", "Blocker", 2)), clock=SystemClock(),
                                 config=RuntimeConfig(max_timer_driven_threads=4), start=True)
    controller.start_components()
    cpu, waiting = controller.processor("c").processor, controller.processor("w").processor
    assert cpu.entered.acquire(timeout=5)
    for _ in range(2):
        assert waiting.entered.acquire(timeout=5), "a task waiting on I/O was held back by the CPU lane"
    assert cpu.running == 1 and waiting.running == 2


def test_terminating_a_stuck_cpu_bound_task_frees_its_lane(make_controller):
    controller = make_controller(_blockers(("stuck", "CpuBlocker", 1), ("next", "CpuBlocker", 1)),
                                 clock=SystemClock(), config=RuntimeConfig(max_timer_driven_threads=4), start=True)
    stuck, following = controller.processor("stuck").processor, controller.processor("next").processor
    controller.start_processor("stuck")
    assert stuck.entered.acquire(timeout=5)
    controller.start_processor("next")
    assert not following.entered.acquire(timeout=0.3), "a CPU-bound task ran while the only lane was taken"
    controller.stop_processor("stuck")
    assert controller.terminate_processor("stuck") == 1
    assert following.entered.acquire(timeout=5), "the lane of the terminated task was never freed"


def test_serial_processor_runs_one_task_at_a_time(make_controller):
    controller = make_controller(
        flow(processors=[processor("s", "SerialBlocker", concurrentlySchedulableTaskCount=4,
                                   auto_terminate=["success"])]),
        clock=SystemClock(), config=RuntimeConfig(max_timer_driven_threads=10), start=True)
    controller.start_components()
    _assert_one_task_at_a_time(controller.processor("s").processor, "a second task of a serial processor ran")


def test_terminating_a_stuck_task_rolls_back_its_session(make_controller):
    controller = make_controller(sink_flow("Blocker"), clock=SystemClock(),
                                 config=RuntimeConfig(max_timer_driven_threads=2), start=True)
    controller.start_components()
    seed(controller, "input")
    node = controller.processor("p")
    blocker = node.processor
    assert blocker.entered.acquire(timeout=5), "the task did not start"
    assert controller.queue("input").size().unacknowledged_count == 1
    controller.stop_processor("p")
    assert node.run_status() == "Stopping"
    with pytest.raises(ComponentStateError, match="still stopping"):
        controller.start_processor("p")
    assert controller.terminate_processor("p") == 1
    assert node.run_status() == "Stopped"
    size = controller.queue("input").size()
    assert (size.count, size.unacknowledged_count) == (1, 0), "the FlowFile went back to its queue"
    assert controller.scheduler.active_workers() == 2, "the stuck thread was replaced"
    controller.start_processor("p")
    assert blocker.entered.acquire(timeout=5), "the restarted processor took the FlowFile again"
    blocker.release.set()
    deadline = time.monotonic() + 5
    while len(controller.queue("output")) < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    assert len(controller.queue("output")) == 1, "the terminated task's work was discarded, the new one's kept"
    assert len(controller.queue("input")) == 0


def test_terminate_returns_at_once_while_a_task_is_stuck_in_a_write_callback(make_controller):
    controller = make_controller(sink_flow("WriteBlocker"), clock=SystemClock(),
                                 config=RuntimeConfig(max_timer_driven_threads=2), start=True)
    controller.start_components()
    seed(controller, "input")
    node = controller.processor("p")
    blocker = node.processor
    assert blocker.entered.acquire(timeout=5), "the task did not start"
    controller.stop_processor("p")
    started = time.monotonic()
    assert controller.terminate_processor("p") == 1
    assert time.monotonic() - started < 1, "terminate waited for the stuck call"
    assert node.run_status() == "Stopped" and node.active_thread_count == 0
    assert controller.queue("input").size().unacknowledged_count == 1, "the stuck call still holds the session"
    blocker.release.set()
    assert blocker.done.wait(5)
    assert isinstance(blocker.error, TaskTerminatedError), blocker.error
    size = controller.queue("input").size()
    assert (size.count, size.unacknowledged_count) == (1, 0), "the FlowFile went back to its queue, once"
    assert len(controller.queue("output")) == 0, "nothing the stuck task did reached the flow"
    verification = controller.storage.verify()
    assert verification.ok, verification.problems
    blocker.release.set()
    blocker.done.clear()
    controller.start_processor("p")
    assert blocker.done.wait(5)
    deadline = time.monotonic() + 5
    while len(controller.queue("output")) < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(controller.queue("output")) == 1 and len(controller.queue("input")) == 0


def test_start_stop_enable_disable(make_controller):
    controller = make_controller(sink_flow("Pass", state="DISABLED"))
    saves = []
    controller.on_change = lambda: saves.append(1)
    node = controller.processor("p")
    with pytest.raises(ComponentStateError, match="disabled"):
        controller.start_processor("p")
    controller.enable_processor("p")
    controller.start_processor("p")
    assert node.run_status() == "Running" and node.config.raw["scheduledState"] == "RUNNING"
    with pytest.raises(ComponentStateError, match="running"):
        controller.disable_processor("p")
    assert controller.stop_processor("p", wait=1)
    controller.disable_processor("p")
    assert node.run_status() == "Disabled" and node.config.raw["scheduledState"] == "DISABLED"
    assert len(saves) == 4


def test_an_invalid_processor_cannot_start_and_says_every_problem(make_controller):
    controller = make_controller(flow(processors=[processor("lonely", "Pass", state="ENABLED")]))
    with pytest.raises(InvalidComponentError) as raised:
        controller.start_processor("lonely")
    messages = [str(problem) for problem in raised.value.problems]
    assert "'success' is neither connected nor auto-terminated" in messages
    assert "needs an incoming connection" in messages
    assert controller.processor("lonely").run_status() == "Invalid"
