"""A standalone node: one flow running over one data directory, without a cluster or Django.

The node keeps the flow it runs in ``<data dir>/flow.json.gz`` and rewrites it whenever a
component's run state changes, so a restart without a flow file resumes exactly what was
running. Start-up recovers the repositories first, then builds the flow over what they hold.
"""

from __future__ import annotations

import gzip
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from engine.components import ComponentRegistry
from engine.config import StorageConfig
from engine.flow import FlowDefinition, FlowDefinitionError, FlowProblem, check_flow, load_flow
from engine.fsutil import write_atomically
from engine.runtime import FlowController, RuntimeConfig
from engine.storage import NodeStorage

__all__ = ["FLOW_FILE", "NodeConfig", "StandaloneNode", "apply_parameters", "save_flow"]

log = logging.getLogger(__name__)

FLOW_FILE = "flow.json.gz"


@dataclass(frozen=True)
class NodeConfig:
    """A node's settings: its repositories and its runtime (read from one JSON document whose
    ``runtime`` section holds the runtime settings and whose other sections are the storage's)."""

    storage: StorageConfig = field(default_factory=StorageConfig)
    runtime: RuntimeConfig = field(default_factory=RuntimeConfig)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> NodeConfig:
        """Build from a mapping of sections."""
        storage_sections = {name: section for name, section in values.items() if name != "runtime"}
        return cls(StorageConfig.from_mapping(storage_sections), RuntimeConfig.from_mapping(values.get("runtime", {})))

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


class StandaloneNode:
    """Storage plus a flow controller over one data directory (see the module docstring)."""

    def __init__(self, data_dir: Path, config: NodeConfig | None = None,
                 registry: ComponentRegistry | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.config = config or NodeConfig()
        self.registry = registry
        self.storage = NodeStorage(self.data_dir, self.config.storage)
        self.controller: FlowController | None = None
        self.flow: FlowDefinition | None = None

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
        flow = load_flow(path)
        if parameters:
            apply_parameters(flow, parameters)
        problems = check_flow(flow, self.registry)
        if any(problem.fatal for problem in problems):
            raise FlowDefinitionError(problems)
        self.flow = flow
        return problems

    def start(self) -> list[str]:
        """Recover the repositories, build the flow over them and start it; return the
        components that did not start, and why."""
        if self.flow is None:
            raise RuntimeError("load a flow first")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        recovered = self.storage.open()
        log.info("recovered %d FlowFile(s) (%d in swap files) in %.2f s", recovered.flowfile_count,
                 sum(s.count for files in recovered.swap_files.values() for _, s in files),
                 recovered.wal.seconds if recovered.wal else 0.0)
        controller = FlowController(self.storage, registry=self.registry, config=self.config.runtime)
        controller.load(self.flow, recovered)
        self.controller = controller
        save_flow(self.flow_path, self.flow.raw)
        controller.on_change = lambda: save_flow(self.flow_path, self.flow.raw)
        controller.start()
        return controller.start_components()

    def stop(self) -> None:
        """Stop the flow (waiting up to the graceful period for running tasks), checkpoint the
        repositories and close them."""
        if self.controller is not None:
            self.controller.shutdown()
            self.controller = None
        self.storage.close()
