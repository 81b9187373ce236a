"""A node: one flow running over one data directory, without Django.

The node keeps the flow it runs in ``<data dir>/flow.json.gz`` and rewrites it whenever a
component's run state changes, so a restart without a flow file resumes exactly what was
running. Start-up recovers the repositories first, then builds the flow over what they hold.
A flow whose sensitive values are sealed is kept sealed on disk; ``unseal`` opens them in
memory only. ``replace_flow`` swaps the running flow for another (the cluster's) in place. A
clustered node with a ``placement`` keeps the whole flow it is given (it votes and compares
fingerprints with it) but builds and runs only the groups of the tenants placed on it.
"""

from __future__ import annotations

import copy
import gzip
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from engine.cluster.config import ClusterConfig
from engine.cluster.placement import Placement
from engine.components import ComponentRegistry
from engine.config import StorageConfig
from engine.confinement import ConfinementSettings
from engine.flow import FlowDefinition, FlowDefinitionError, FlowProblem, check_flow, load_flow
from engine.flow.loader import parse_flow_document
from engine.fileops import write_atomically
from engine.runtime import FlowController, RuntimeConfig
from engine.runtime.connectable import NodeRole
from engine.runtime.disk_space import DiskSpaceConfig
from engine.spark.settings import SparkSettings
from engine.storage import NodeStorage

__all__ = ["FLOW_FILE", "NodeConfig", "StandaloneNode", "apply_parameters", "save_flow"]

log = logging.getLogger(__name__)

FLOW_FILE = "flow.json.gz"


@dataclass(frozen=True)
class NodeConfig:
    """A node's settings: its repositories, its runtime, its clustering, the free disk space it
    needs, the confinement of its components and its Spark (read from one JSON document whose
    ``runtime``, ``cluster``, ``disk_space``, ``confinement`` and ``spark`` sections hold those
    settings and whose other sections are the storage's)."""

    storage: StorageConfig = field(default_factory=StorageConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    disk_space: DiskSpaceConfig = field(default_factory=DiskSpaceConfig)
    confinement: ConfinementSettings = field(default_factory=ConfinementSettings)
    spark: SparkSettings = field(default_factory=SparkSettings)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> NodeConfig:
        """Build from a mapping of sections."""
        own = ("runtime", "cluster", "disk_space", "confinement", "spark")
        storage_sections = {name: section for name, section in values.items() if name not in own}
        return cls(StorageConfig.from_mapping(storage_sections), RuntimeConfig.from_mapping(values.get("runtime", {})),
                   ClusterConfig.from_mapping(values.get("cluster", {})),
                   DiskSpaceConfig.from_mapping(values.get("disk_space", {})),
                   ConfinementSettings.from_mapping(values.get("confinement", {})),
                   SparkSettings.from_mapping(values.get("spark", {})))

    @classmethod
    def from_file(cls, path: Path) -> NodeConfig:
        """Read a JSON settings file."""
        try:
            values = json.loads(Path(path).read_text())
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not valid JSON: {error}") from None
        return cls.from_mapping(values)


def save_flow(path: Path, document: Mapping[str, Any]) -> None:
    """Write a flow definition as gzip-compressed JSON, atomically."""
    data = gzip.compress(json.dumps(document, indent=1).encode(), mtime=0)
    write_atomically(path, data)


def apply_parameters(flow: FlowDefinition, overrides: Mapping[str, str]) -> None:
    """Set parameter values in every parameter context that defines them.

    Raises ValueError naming a parameter no context defines.
    """
    for name, value in overrides.items():
        contexts = [context for context in flow.parameter_contexts.values() if name in context.parameters]
        if not contexts:
            known = sorted({p for c in flow.parameter_contexts.values() for p in c.parameters})
            raise ValueError(f"no parameter context defines parameter {name!r} (defined: {', '.join(known) or 'none'})")
        for context in contexts:
            context.parameters[name].value = value
            for entry in context.raw.get("parameters") or ():
                if entry.get("name") == name:
                    entry["value"] = value


def _set_parameter_values(document: dict[str, Any], values: Mapping[str, str]) -> None:
    """Set parameter values in a flow document's parameter contexts, wherever they are defined."""
    for context in (document.get("parameterContexts") or {}).values():
        for entry in context.get("parameters") or ():
            if entry.get("name") in values:
                entry["value"] = values[entry["name"]]


def _run_states(document: Any) -> Iterator[tuple[dict[str, Any], str]]:
    """Every component object of a flow document that has an identifier, with it."""
    if isinstance(document, dict):
        if isinstance(document.get("identifier"), str):
            yield document, document["identifier"]
        for value in document.values():
            yield from _run_states(value)
    elif isinstance(document, list):
        for value in document:
            yield from _run_states(value)


class StandaloneNode:
    """Storage plus a flow controller over one data directory (see the module docstring).

    ``role`` and ``cluster_state`` are handed to the flow controller: a cluster agent changes
    the role as elections go and keeps cluster-scoped state in Redis. Making a node locks its
    data directory (``name`` is recorded as the holder) until ``stop``; raises
    ``engine.lock.DataDirectoryInUseError`` while another node holds it. With ``placement``, only
    the groups of the tenants placed on this node run (``engine.cluster.placement``).
    """

    def __init__(self, data_dir: Path, config: NodeConfig | None = None,
                 registry: ComponentRegistry | None = None, *, unseal: Callable[[dict], dict] | None = None,
                 role: NodeRole | None = None, cluster_state: object | None = None, name: str | None = None,
                 placement: Placement | None = None, queue_factory: Callable[..., Any] | None = None) -> None:
        self.data_dir = Path(data_dir)
        #: Makes the connections' queues (``engine.balance`` installs partitioned ones); None: plain queues.
        self.queue_factory = queue_factory
        self.placement = placement
        self.config = config or NodeConfig()
        self.registry = registry
        self.unseal = unseal
        self.role = role
        self.cluster_state = cluster_state
        self.storage = NodeStorage(self.data_dir, self.config.storage, node=name)
        self.controller: FlowController | None = None
        self.flow: FlowDefinition | None = None
        #: The flow as kept on disk (sealed values stay sealed).
        self.document: dict[str, Any] | None = None

    @property
    def flow_path(self) -> Path:
        """Where the node keeps the flow it runs."""
        return self.data_dir / FLOW_FILE

    def load_flow(self, source: Path | None, parameters: Mapping[str, str] | None = None) -> list[FlowProblem]:
        """Read the flow (``source``, or the one saved in the data directory) and check it.

        Returns the problems that leave components invalid; raises FlowDefinitionError when the
        flow cannot run at all, FileNotFoundError when there is no flow to run.
        """
        path = source or self.flow_path
        if not path.exists():
            raise FileNotFoundError(f"no flow to run: {path} does not exist (give one with --flow)")
        document = parse_flow_document(path)
        self.flow, problems = self.prepare(document, parameters)
        self.document = document
        return problems

    def prepare(self, document: dict[str, Any], parameters: Mapping[str, str] | None = None
                ) -> tuple[FlowDefinition, list[FlowProblem]]:
        """Open, read and check a flow document without running it: the flow and the problems
        that leave components invalid. Raises FlowDefinitionError when it cannot run at all,
        ValueError when a sealed value does not open."""
        here = self.placement.filter(document) if self.placement is not None else document
        opened = self.unseal(copy.deepcopy(here)) if self.unseal else here
        flow = load_flow(opened)
        if parameters:
            apply_parameters(flow, parameters)
            if opened is not document:
                _set_parameter_values(document, parameters)
        problems = check_flow(flow, self.registry)
        if any(problem.fatal for problem in problems):
            raise FlowDefinitionError(problems)
        return flow, problems

    def placed_elsewhere(self, identifier: str) -> str | None:
        """The tenant whose component ``identifier`` is, when the flow holds it but the tenant runs
        on other nodes; else None."""
        if self.placement is None or self.document is None:
            return None
        return self.placement.components_elsewhere(self.document).get(identifier)

    def groups_elsewhere(self) -> list[str]:
        """The identifiers of the tenants' groups the flow holds but other nodes run."""
        if self.placement is None or self.document is None:
            return []
        return sorted(self.placement.elsewhere(self.document))

    def stored_document(self) -> dict[str, Any]:
        """The flow to keep on disk: the document as given, with the run states of now."""
        if self.document is self.flow.raw:
            return self.document
        states = {identifier: component["scheduledState"] for component, identifier in _run_states(self.flow.raw)
                  if "scheduledState" in component}
        for component, identifier in _run_states(self.document):
            if identifier in states:
                component["scheduledState"] = states[identifier]
        return self.document

    def save(self) -> None:
        """Keep the running flow in the data directory."""
        save_flow(self.flow_path, self.stored_document())

    def queued_flowfiles(self) -> dict[str, int]:
        """FlowFiles waiting in each connection of the running flow (swapped and in-session ones included)."""
        if self.controller is None:
            return {}
        counts = {}
        for identifier, connection in self.controller.connections.items():
            size = connection.queue.size()
            counts[identifier] = size.count + size.unacknowledged_count
        return counts

    def replace_flow(self, document: dict[str, Any]) -> tuple[list[FlowProblem], list[str]]:
        """Run ``document`` instead of the current flow, in place (``FlowController.update``):
        unchanged components keep running, queues keep their FlowFiles. Raises as ``prepare``
        does, or ComponentStateError when a connection holding FlowFiles would disappear — with
        the node untouched. Returns the problems that leave components invalid and the components
        that did not start, with why."""
        flow, problems = self.prepare(document)
        failures: list[str] = []
        if self.controller is not None:
            problems, failures = self.controller.update(flow)
        self.flow, self.document = flow, document
        if self.controller is not None:
            self.save()
        return problems, failures

    def start(self) -> list[str]:
        """Recover the repositories, build the flow over them and start it; return the
        components that did not start, and why."""
        if self.flow is None:
            raise RuntimeError("load a flow first")
        recovered = self.storage.open()
        log.info("recovered %d FlowFile(s) (%d in swap files) in %.2f s", recovered.flowfile_count,
                 sum(s.count for files in recovered.swap_files.values() for _, s in files),
                 recovered.wal.seconds if recovered.wal else 0.0)
        controller = FlowController(self.storage, registry=self.registry, config=self.config.runtime, role=self.role,
                                    cluster_state=self.cluster_state, disk_space=self.config.disk_space,
                                    confinement=self.config.confinement, queue_factory=self.queue_factory)
        controller.load(self.flow, recovered)
        self.controller = controller
        self.save()
        controller.on_change = self.save
        controller.start()
        return controller.start_components()

    def stop(self) -> list[str]:
        """Stop the flow (waiting up to the graceful period for running tasks), checkpoint the
        repositories, close them and unlock the data directory; return what could not be done
        cleanly (``NodeStorage.close``)."""
        if self.controller is not None:
            self.controller.shutdown()
            self.controller = None
        return self.storage.close()
