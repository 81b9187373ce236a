"""Processors that make scheduling observable, and a factory of controllers over real storage."""

from __future__ import annotations

import threading
import time

import pytest

from engine.components import (
    ComponentRegistry,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
)
from engine.flow import load_flow
from engine.runtime import FlowController, ManualClock, NodeRole, RuntimeConfig
from engine.storage import NodeStorage

SUCCESS = Relationship("success")


class Tick(Processor):
    """Counts its triggers; with 'Emit' true, makes one FlowFile each time."""

    properties = (PropertyDescriptor("Emit", default="false", allowed_values=["true", "false"]),)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN

    def __init__(self) -> None:
        self.triggers = 0
        self.primary_changes: list[bool] = []

    def on_trigger(self, context, session):
        self.triggers += 1
        if context.property("Emit").as_bool():
            session.transfer(session.create(), SUCCESS)

    def on_primary_node_change(self, context, is_primary):
        self.primary_changes.append(is_primary)


class PrimaryTick(Tick):
    """A Tick that runs on the primary node only."""

    primary_node_only = True


class Pass(Processor):
    """Passes FlowFiles on; counts triggers and FlowFiles per session."""

    relationships = (SUCCESS,)
    input_requirement = InputRequirement.REQUIRED

    def __init__(self) -> None:
        self.triggers = 0
        self.sessions: dict[int, int] = {}

    def on_trigger(self, context, session):
        self.triggers += 1
        for flowfile in session.get_batch(10):
            self.sessions[id(session)] = self.sessions.get(id(session), 0) + 1
            session.transfer(flowfile, SUCCESS)


class Yielder(Processor):
    """Counts triggers and yields every time."""

    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN

    def __init__(self) -> None:
        self.triggers = 0

    def on_trigger(self, context, session):
        self.triggers += 1
        context.yield_processor()


class Crasher(Processor):
    """Takes a FlowFile, changes it, then fails: a RuntimeError, or a ProcessException."""

    properties = (PropertyDescriptor("Kind", default="bug", allowed_values=["bug", "process"]),)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.REQUIRED

    def __init__(self) -> None:
        self.triggers = 0

    def on_trigger(self, context, session):
        self.triggers += 1
        flowfile = session.get()
        if flowfile is None:
            return
        session.put_attribute(flowfile, "touched", "yes")
        if context.property("Kind").value == "process":
            raise ProcessException("the remote end refused it")
        raise RuntimeError("a bug")


class Penalizer(Processor):
    """Penalizes each FlowFile and puts it back where it came from; counts what it saw."""

    relationships = (SUCCESS,)
    input_requirement = InputRequirement.REQUIRED

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is not None:
            self.seen.append(flowfile.uuid)
            session.transfer(session.penalize(flowfile))


class Blocker(Processor):
    """Takes a FlowFile (if any) and waits until released; records how many tasks run at once."""

    relationships = (SUCCESS,)
    waits_on_io = True

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.running = 0
        self.peak = 0
        self.entered = threading.Semaphore(0)
        self.finished = 0

    def on_trigger(self, context, session):
        flowfile = session.get()
        with self.lock:
            self.running += 1
            self.peak = max(self.peak, self.running)
        self.entered.release()
        try:
            self.release.wait(30)
            time.sleep(0.002)
        finally:
            with self.lock:
                self.running -= 1
                self.finished += 1
        if flowfile is not None:
            session.transfer(flowfile, SUCCESS)


class WriteBlocker(Processor):
    """Takes a FlowFile and writes its content in a callback that waits until released."""

    relationships = (SUCCESS,)

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.done = threading.Event()
        self.error: BaseException | None = None

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return

        def write(out):
            out.write(b"before the wait ")
            self.entered.release()
            self.release.wait(30)
            out.write(b"after the wait")

        try:
            flowfile = session.write(flowfile, write)
            session.transfer(flowfile, SUCCESS)
        except BaseException as error:
            self.error = error
            raise
        finally:
            self.done.set()


class SerialBlocker(Blocker):
    """A Blocker that must never run two tasks at once."""

    trigger_serially = True


class CpuBlocker(Blocker):
    """A Blocker the scheduler takes for CPU-bound (it needs a CPU lane)."""

    waits_on_io = False


class FailingStart(Processor):
    """Fails its start hook the first two times."""

    relationships = (SUCCESS,)
    input_requirement = InputRequirement.FORBIDDEN

    def __init__(self) -> None:
        self.attempts = 0
        self.triggers = 0

    def on_scheduled(self, context):
        self.attempts += 1
        if self.attempts <= 2:
            raise ConnectionError("the database is not up yet")

    def on_trigger(self, context, session):
        self.triggers += 1


TEST_PROCESSORS = (Tick, PrimaryTick, Pass, Yielder, Crasher, Penalizer, Blocker, SerialBlocker, CpuBlocker,
                   FailingStart, WriteBlocker)


@pytest.fixture(scope="session")
def registry() -> ComponentRegistry:
    registry = ComponentRegistry()
    for cls in TEST_PROCESSORS:
        registry.register(cls, "tests")
    return registry


@pytest.fixture
def make_controller(tmp_path, registry):
    """Build a controller over fresh storage from a flow document; shut down afterwards."""
    made = []

    def make(document, *, clock=None, config=None, role=None, start=False, disk_space=None):
        storage = NodeStorage(tmp_path / f"node-{len(made)}")
        recovered = storage.open(background=False)
        controller = FlowController(storage, registry=registry, clock=clock or ManualClock(),
                                    config=config or RuntimeConfig(), role=role or NodeRole(), disk_space=disk_space)
        controller.load(load_flow(document), recovered)
        made.append(controller)
        if start:
            controller.start()
        return controller

    yield make
    for controller in made:
        for node in controller.processors.values():
            release = getattr(node.processor, "release", None)
            if release is not None:
                release.set()
        controller.shutdown(timeout=2)
        controller.storage.close()


@pytest.fixture
def node(tmp_path):
    """A node running ``inspected.text_flow`` for two seconds (see ``tests.engine.runtime.inspected``)."""
    from tests.engine.runtime.inspected import Node, text_flow

    running = Node(tmp_path / "text-node", text_flow())
    running.run(2)
    yield running
    running.close()


@pytest.fixture
def drained_node(tmp_path):
    """A node whose FlowFiles all left (``inspected.drained``): their content can be archived."""
    from tests.engine.runtime.inspected import drained

    running = drained(tmp_path / "drained-node")
    yield running
    running.close()
