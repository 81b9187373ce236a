"""The provenance repository: every event in every FlowFile's life, kept, indexed and queryable."""

from __future__ import annotations

from engine.provenance.config import ProvenanceConfig
from engine.provenance.event import CREATION_TYPES, ProvenanceEvent, ProvenanceEventType
from engine.provenance.lineage import LineageEdge, LineageGraph, LineageNode
from engine.provenance.query import ProvenanceQuery, QueryResult
from engine.provenance.repository import ContentNotAvailableError, ProvenanceRepository, ProvenanceStats

__all__ = [
    "CREATION_TYPES",
    "ContentNotAvailableError",
    "LineageEdge",
    "LineageGraph",
    "LineageNode",
    "ProvenanceConfig",
    "ProvenanceEvent",
    "ProvenanceEventType",
    "ProvenanceQuery",
    "ProvenanceRepository",
    "ProvenanceStats",
    "QueryResult",
]
