"""ProcessorTestRunner: run one processor for real, in a throw-away node, and look at what it did.

The runner builds a small flow around the processor under test: an input connection it can
fill with ``enqueue``, one output connection per relationship (so every relationship is
connected and nothing is dropped), and any controller services the test adds. Everything is
real: the node's repositories live in a temporary directory, sessions commit through the
write-ahead log, provenance is recorded. ``run`` triggers the processor in the calling
thread::

    runner = ProcessorTestRunner("ReplaceText", tmp_path, {"Replacement Value": "x"})
    runner.enqueue(b"hello", filename="a.txt")
    runner.run()
    (out,) = runner.output("success")
    assert runner.content(out) == b"x"
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Mapping

from engine.components import Processor, Scope, StateMap
from engine.confinement import ConfinementSettings
from engine.flow import load_flow
from engine.flowfile import FlowFile
from engine.provenance.event import ProvenanceEvent
from engine.provenance.query import ProvenanceQuery
from engine.runtime import FlowController, ManualClock, Outcome, RuntimeConfig, ScheduledState
from engine.runtime.clock import Clock
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage

__all__ = ["ProcessorTestRunner"]

PROCESSOR_ID = "processor-under-test"
INPUT_ID = "input"
TENANT_GROUP_ID = "tenant-group"
_names = itertools.count(1)


class ProcessorTestRunner:
    """A processor in a node of its own (see the module docstring).

    ``services`` maps service identifiers to ``(type, properties)``; they are enabled before
    the processor starts. ``scheduling`` holds extra processor fields of the flow definition
    (``{"penaltyDuration": "1 sec"}``). With ``input=False`` the processor gets no incoming
    connection (for sources). With ``tenant`` (an entry of a flow's ``tenants`` section, without
    its ``group``) everything sits in the group of tenant ``acme``, confined by that entry and by
    ``confinement`` (the node-wide settings).
    """

    def __init__(
        self,
        processor_type: str | type[Processor],
        directory: Path,
        properties: Mapping[str, str | None] | None = None,
        *,
        services: Mapping[str, tuple[str, Mapping[str, str | None]]] | None = None,
        scheduling: Mapping[str, Any] | None = None,
        input: bool = True,
        auto_terminate: tuple[str, ...] = (),
        clock: Clock | None = None,
        config: RuntimeConfig | None = None,
        tenant: Mapping[str, Any] | None = None,
        confinement: ConfinementSettings | None = None,
    ) -> None:
        self.directory = Path(directory) / f"runner-{next(_names)}"
        type_name = processor_type if isinstance(processor_type, str) else processor_type.type_name
        self.storage = NodeStorage(self.directory / "node")
        recovered = self.storage.open(background=False)
        self.controller = FlowController(self.storage, clock=clock or ManualClock(),
                                         config=config or RuntimeConfig(), confinement=confinement)
        if not isinstance(processor_type, str):
            self.controller.registry.register(processor_type, "test")
        relationships = self._relationships(type_name, properties or {})
        document = self._flow(type_name, properties or {}, services or {}, scheduling or {}, input,
                              relationships, auto_terminate)
        if tenant is not None:
            document = {"flowContents": {"identifier": "root", "name": "node", "processGroups": [
                            dict(document["flowContents"], identifier=TENANT_GROUP_ID)]},
                        "tenants": {"acme": {**tenant, "group": TENANT_GROUP_ID}}}
        self.problems = self.controller.load(load_flow(document), recovered)
        self.node = self.controller.processor(PROCESSOR_ID)
        self._input = self.controller.queue(INPUT_ID) if input else None
        try:
            for identifier in services or {}:
                self.controller.enable_service(identifier)
        except BaseException:
            self.close()
            raise

    def _relationships(self, type_name: str, properties: Mapping[str, str | None]) -> list[str]:
        cls = self.controller.registry.processor(type_name)
        return [relationship.name for relationship in cls.relationships_for(cls.migrate_properties(properties))]

    @staticmethod
    def _flow(type_name, properties, services, scheduling, has_input, relationships, auto_terminate) -> dict:
        processor = {"identifier": PROCESSOR_ID, "name": type_name, "type": type_name, "properties": dict(properties),
                     "autoTerminatedRelationships": list(auto_terminate), **scheduling}
        funnels = [{"identifier": "source"}, {"identifier": "sink"}]
        connections = [
            {"identifier": f"out-{name}", "source": {"id": PROCESSOR_ID, "type": "PROCESSOR"},
             "destination": {"id": "sink", "type": "FUNNEL"}, "selectedRelationships": [name],
             "backPressureObjectThreshold": 0, "backPressureDataSizeThreshold": "0 B"}
            for name in relationships if name not in auto_terminate
        ]
        if has_input:
            connections.append({"identifier": INPUT_ID, "source": {"id": "source", "type": "FUNNEL"},
                                "destination": {"id": PROCESSOR_ID, "type": "PROCESSOR"}})
        controller_services = [{"identifier": identifier, "name": identifier, "type": service_type,
                                "properties": dict(service_properties), "scheduledState": "DISABLED"}
                               for identifier, (service_type, service_properties) in services.items()]
        return {"flowContents": {"identifier": "root", "name": "test", "processors": [processor],
                                 "connections": connections, "funnels": funnels,
                                 "controllerServices": controller_services}}

    # -- input ----------------------------------------------------------------------------

    def enqueue(self, content: bytes = b"", **attributes: str) -> FlowFile:
        """Commit a FlowFile with ``content`` and ``attributes`` into the processor's input queue."""
        if self._input is None:
            raise RuntimeError("this runner was built without an input connection")
        session = ProcessSession(self.storage, SessionComponent("test-source", "TestSource",
                                                                outgoing={"success": [self._input]}))
        flowfile = session.create()
        if attributes:
            flowfile = session.put_all_attributes(flowfile, {k: str(v) for k, v in attributes.items()})
        if content:
            flowfile = session.write_bytes(flowfile, content)
        session.transfer(flowfile, "success")
        session.commit()
        return flowfile

    # -- running --------------------------------------------------------------------------

    def run(self, iterations: int = 1, *, stop: bool = True) -> list[Outcome]:
        """Start the processor if needed, run ``iterations`` tasks (ignoring yields and the run
        schedule), and stop it afterwards unless ``stop`` is False. Returns each task's outcome.

        Raises InvalidComponentError when the processor is invalid.
        """
        if self.node.state is not ScheduledState.RUNNING:
            self.controller.start_component(self.node)
        outcomes = []
        for _ in range(iterations):
            self.node.yield_expiration = 0.0
            outcomes.append(self.node.run_task())
        if stop:
            self.stop()
        return outcomes

    @property
    def clock(self) -> Clock:
        """The node's clock (a ``ManualClock`` unless the test gave another): ``advance`` it to
        age bins, end yields and penalties without waiting."""
        return self.controller.clock

    def stop(self) -> None:
        """Stop the processor (its on_unscheduled and on_stopped hooks run)."""
        if self.node.state is ScheduledState.RUNNING:
            self.controller.stop_component(self.node)

    def validate(self) -> list[str]:
        """The processor's problems, as text."""
        return [str(problem) for problem in self.node.validate()]

    # -- output ---------------------------------------------------------------------------

    def output(self, relationship: str) -> list[FlowFile]:
        """FlowFiles routed to ``relationship`` so far, in order."""
        queue = self.controller.queue(f"out-{relationship}")
        return queue.peek(len(queue))

    def input_flowfiles(self) -> list[FlowFile]:
        """FlowFiles still waiting in the input queue (penalized ones included)."""
        return self._input.peek(len(self._input)) if self._input is not None else []

    def content(self, flowfile: FlowFile) -> bytes:
        """A FlowFile's content."""
        if flowfile.content_claim is None:
            return b""
        return self.storage.content.read_bytes(flowfile.content_claim)

    def events(self, **criteria: Any) -> list[ProvenanceEvent]:
        """Provenance events recorded so far, oldest first (``event_type=``, ``flowfile_uuid=``, ...)."""
        self.storage.provenance.rollover()
        result = self.storage.provenance.query(ProvenanceQuery(limit=100_000, **criteria))
        return list(reversed(result.events))

    def state(self, scope: Scope = Scope.LOCAL) -> StateMap:
        """The processor's stored state."""
        return self.node.state_manager.get_state(scope)

    @property
    def bulletins(self) -> list[str]:
        """Messages of the bulletins the processor posted."""
        return [bulletin.message for bulletin in self.controller.bulletins.recent(PROCESSOR_ID)]

    def close(self) -> None:
        """Stop everything and close the node's repositories."""
        self.controller.shutdown(timeout=2)
        self.storage.close()

    def __enter__(self) -> ProcessorTestRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
