"""The processor plugin API: what a processor declares, and the hooks the runtime calls.

A processor is a class. Its class attributes declare what it is (properties, relationships,
how it may be scheduled); one instance serves one processor of a flow, and several tasks may
call ``on_trigger`` at once unless ``trigger_serially`` is set, so instances must be
thread-safe. Example::

    class Reverse(Processor):
        \"\"\"Reverses the content of each FlowFile.\"\"\"

        tags = ("content", "example")
        relationships = (Relationship("success", "Reversed FlowFiles"),)
        input_requirement = InputRequirement.REQUIRED

        def on_trigger(self, context, session):
            flowfile = session.get()
            if flowfile is None:
                return
            data = session.read_bytes(flowfile)
            session.transfer(session.write_bytes(flowfile, data[::-1]), "success")

Hooks, in the order the runtime calls them: ``validate`` (before start: return every
problem), ``on_scheduled`` (when started; a failure is retried after the administrative
yield), ``on_trigger`` (each task), ``on_unscheduled`` (when stop is asked), ``on_stopped``
(once the last task has finished). ``on_primary_node_change`` tells a running processor that
this node became, or stopped being, the primary node.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, ClassVar, Mapping, Sequence

from engine.components.component import ConfigurableComponent, DynamicProperties
from engine.components.relationships import Relationship

if TYPE_CHECKING:
    from engine.components.context import ProcessContext
    from engine.session import ProcessSession

__all__ = ["DynamicProperties", "InputRequirement", "Processor", "WrittenAttribute"]


class InputRequirement(str, Enum):
    """Whether a processor needs, accepts or refuses incoming connections."""

    REQUIRED = "INPUT_REQUIRED"
    ALLOWED = "INPUT_ALLOWED"
    FORBIDDEN = "INPUT_FORBIDDEN"


@dataclass(frozen=True)
class WrittenAttribute:
    """An attribute a processor reads or writes (documentation)."""

    name: str
    description: str


class Processor(ConfigurableComponent):
    """Base class of every processor. Subclasses set the class attributes below (and those of
    ``ConfigurableComponent``) and implement ``on_trigger``; the other hooks are optional."""

    abstract: ClassVar[bool] = True
    relationships: ClassVar[Sequence[Relationship]] = ()
    #: True when the relationships depend on the configuration (see ``relationships_for``).
    dynamic_relationships: ClassVar[bool] = False
    input_requirement: ClassVar[InputRequirement] = InputRequirement.ALLOWED
    trigger_serially: ClassVar[bool] = False
    primary_node_only: ClassVar[bool] = False
    trigger_when_empty: ClassVar[bool] = False
    trigger_when_any_destination_available: ClassVar[bool] = False
    #: True when the processor's tasks mostly wait on other systems (network services, a broker,
    #: a Spark cluster): they run on the node's spare threads instead of taking a CPU lane
    #: (``RuntimeConfig.cpu_bound_tasks``), so waiting never holds back CPU-bound work.
    waits_on_io: ClassVar[bool] = False
    default_scheduling_period: ClassVar[str] = "0 sec"
    reads_attributes: ClassVar[Sequence[WrittenAttribute]] = ()
    writes_attributes: ClassVar[Sequence[WrittenAttribute]] = ()
    #: How the processor uses component state (documentation); empty when it keeps none.
    stateful: ClassVar[str] = ""

    @classmethod
    def relationships_for(cls, properties: Mapping[str, str | None]) -> list[Relationship]:
        """The relationships a processor configured with ``properties`` has."""
        return list(cls.relationships)

    def on_scheduled(self, context: ProcessContext) -> None:
        """Prepare to run (open clients, compile patterns); called when the processor is started."""

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Do one unit of work with ``session``; the runtime commits it when this returns."""
        raise NotImplementedError(f"{type(self).__name__} does not implement on_trigger")

    def on_unscheduled(self, context: ProcessContext) -> None:
        """Stop accepting work (close a listening socket); tasks may still be running."""

    def on_stopped(self, context: ProcessContext) -> None:
        """Release what ``on_scheduled`` acquired; no task of this processor runs any more."""

    def on_primary_node_change(self, context: ProcessContext, is_primary: bool) -> None:
        """This node became (or stopped being) the primary node."""
