"""Flow definitions: NiFi's flow-definition JSON read into a model, checked, and written back.

See ``docs/flow-format.md`` and ``engine/flow/flow-definition.schema.json``.
"""

from engine.flow.loader import SCHEMA_PATH, FlowDefinitionError, FlowProblem, load_flow, parse_flow_document
from engine.flow.model import (
    ConnectionConfig,
    Endpoint,
    FlowDefinition,
    FunnelConfig,
    Parameter,
    ParameterContextConfig,
    PortConfig,
    ProcessGroupConfig,
    ProcessorConfig,
    ServiceConfig,
)
from engine.flow.validation import FlowIndex, check_flow, load_and_check

__all__ = [
    "SCHEMA_PATH", "ConnectionConfig", "Endpoint", "FlowDefinition", "FlowDefinitionError", "FlowIndex", "FlowProblem",
    "FunnelConfig", "Parameter", "ParameterContextConfig", "PortConfig", "ProcessGroupConfig", "ProcessorConfig",
    "ServiceConfig", "check_flow", "load_and_check", "load_flow", "parse_flow_document",
]
