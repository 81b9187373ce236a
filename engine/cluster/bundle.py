"""A flow bundle: what a node offers in the flow election and what the cluster runs.

A bundle is the flow definition plus a snapshot of users, groups and policies (the
``authorizations``), as seed 000's election compares them. Its fingerprint is the SHA-256 of
the canonical JSON of both, with every ``scheduledState`` left out: run states are operational
(commands change them on every node at once) and must not split an election. A bundle travels
as zlib-compressed canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EMPTY_FLOW", "FlowBundle", "flow_is_empty"]

#: The flow of a node that was never given one: a root group with nothing in it.
EMPTY_FLOW: dict[str, Any] = {"flowEncodingVersion": "1.0", "flowContents": {"identifier": "root", "name": "root"},
                              "parameterContexts": {}}

_COMPONENT_LISTS = ("processors", "connections", "funnels", "inputPorts", "outputPorts", "processGroups",
                    "controllerServices", "labels")


def flow_is_empty(flow: dict[str, Any] | None) -> bool:
    """True when ``flow`` has no component and no parameter context."""
    if not flow:
        return True
    root = flow.get("flowContents") or {}
    return not any(root.get(name) for name in _COMPONENT_LISTS) and not flow.get("parameterContexts")


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _without_run_states(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _without_run_states(item) for key, item in value.items() if key != "scheduledState"}
    if isinstance(value, list):
        return [_without_run_states(item) for item in value]
    return value


@dataclass(frozen=True)
class FlowBundle:
    """A flow definition and the authorizations snapshot that goes with it."""

    flow: dict[str, Any]
    authorizations: dict[str, Any] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        """An empty flow and no authorizations: such a bundle wins an election only when all are empty."""
        return flow_is_empty(self.flow) and not self.authorizations

    @property
    def fingerprint(self) -> str:
        """SHA-256 (hex) of the canonical bundle without run states."""
        return hashlib.sha256(_canonical(_without_run_states(
            {"flow": self.flow, "authorizations": self.authorizations}))).hexdigest()

    def encode(self) -> bytes:
        """The bundle as zlib-compressed canonical JSON."""
        return zlib.compress(_canonical({"flow": self.flow, "authorizations": self.authorizations}), 6)

    @classmethod
    def decode(cls, data: bytes) -> FlowBundle:
        """Read what ``encode`` wrote; raises ValueError when it is not a bundle."""
        try:
            document = json.loads(zlib.decompress(data))
        except (zlib.error, ValueError) as error:
            raise ValueError(f"not a flow bundle: {error}") from None
        if not isinstance(document, dict) or not isinstance(document.get("flow"), dict):
            raise ValueError("not a flow bundle: no 'flow' object")
        return cls(document["flow"], dict(document.get("authorizations") or {}))
