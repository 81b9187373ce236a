"""Component state kept on the node's disk: one small JSON file per component, replaced
atomically on every change, holding both scopes (a node outside a cluster keeps cluster-scoped
state locally too)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Mapping

from engine.components.state import Scope, StateManager, StateMap
from engine.fileops import write_atomically

__all__ = ["ComponentStateManager", "LocalStateProvider"]


class LocalStateProvider:
    """State of every component of a node, in ``directory/<component id>.json``."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        self._lock = threading.Lock()

    def _path(self, component_id: str) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in component_id)
        return self.directory / f"{safe}.json"

    def _read(self, component_id: str) -> dict[str, dict]:
        try:
            return json.loads(self._path(component_id).read_text())
        except FileNotFoundError:
            return {}

    def _write(self, component_id: str, document: dict[str, dict]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        write_atomically(self._path(component_id), json.dumps(document).encode())

    def get(self, component_id: str, scope: Scope) -> StateMap:
        """The state of a component in ``scope``."""
        with self._lock:
            entry = self._read(component_id).get(scope.value)
        return StateMap(dict(entry["values"]), entry["version"]) if entry else StateMap()

    def set(self, component_id: str, values: Mapping[str, str], scope: Scope, expected_version: int | None = None) -> bool:
        """Store ``values``; with ``expected_version``, only if the state is still at that version."""
        with self._lock:
            document = self._read(component_id)
            current = document.get(scope.value, {"version": -1})["version"]
            if expected_version is not None and current != expected_version:
                return False
            document[scope.value] = {"version": current + 1, "values": {str(k): str(v) for k, v in values.items()}}
            self._write(component_id, document)
            return True

    def clear(self, component_id: str, scope: Scope) -> None:
        """Forget a component's state in ``scope``."""
        with self._lock:
            document = self._read(component_id)
            if document.pop(scope.value, None) is not None:
                self._write(component_id, document)


class ComponentStateManager(StateManager):
    """One component's state. Cluster-scoped state goes to ``cluster`` when the node has a
    cluster state provider, else to the local provider."""

    def __init__(self, component_id: str, local: LocalStateProvider, cluster: LocalStateProvider | None = None) -> None:
        self.component_id = component_id
        self._local = local
        self._cluster = cluster

    def _provider(self, scope: Scope):
        return self._cluster if scope is Scope.CLUSTER and self._cluster is not None else self._local

    def get_state(self, scope: Scope) -> StateMap:
        return self._provider(scope).get(self.component_id, scope)

    def set_state(self, values: Mapping[str, str], scope: Scope) -> None:
        self._provider(scope).set(self.component_id, values, scope)

    def replace(self, expected: StateMap, values: Mapping[str, str], scope: Scope) -> bool:
        return self._provider(scope).set(self.component_id, values, scope, expected.version)

    def clear(self, scope: Scope) -> None:
        self._provider(scope).clear(self.component_id, scope)
