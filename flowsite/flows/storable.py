"""What of a flow definition the database cannot store, with the JSON path of each: text holding
NUL characters (PostgreSQL refuses them), numbers that are not finite (JSON read ``1e400`` as
infinity), and values longer or larger than the columns they go to."""

from __future__ import annotations

import math
from functools import cache
from typing import Any, Iterator

from django.db import connection, models

from engine.flow.loader import FlowProblem, json_path
from engine.flow.model import ComponentConfig, FlowDefinition, ProcessGroupConfig
from flowsite.flows.models import (
    Component,
    Connection,
    ControllerService,
    Kind,
    ParameterContext,
    Port,
    ProcessGroup,
    Processor,
)


@cache
def _columns() -> dict[str, dict[str, models.Field]]:
    """By kind of component: the flow-definition keys stored in a bounded column, and the column."""
    def columns(model, **names: str) -> dict[str, models.Field]:
        return {key: model._meta.get_field(name) for key, name in names.items()}

    common = columns(Component, identifier="versioned_id", name="name")
    return {
        Kind.PROCESS_GROUP: {**common, **columns(ParameterContext, parameterContextName="name"), **columns(
            ProcessGroup, defaultBackPressureObjectThreshold="default_back_pressure_object_threshold",
            defaultBackPressureDataSizeThreshold="default_back_pressure_data_size_threshold",
            defaultFlowFileExpiration="default_flowfile_expiration")},
        Kind.PROCESSOR: {**common, **columns(
            Processor, type="type", schedulingPeriod="scheduling_period", penaltyDuration="penalty_duration",
            yieldDuration="yield_duration", concurrentlySchedulableTaskCount="concurrent_tasks",
            runDurationMillis="run_duration_millis")},
        Kind.CONTROLLER_SERVICE: {**common, **columns(ControllerService, type="type")},
        Kind.FUNNEL: common,
        Kind.INPUT_PORT: {**common, **columns(Port, concurrentlySchedulableTaskCount="concurrent_tasks")},
        Kind.OUTPUT_PORT: {**common, **columns(Port, concurrentlySchedulableTaskCount="concurrent_tasks")},
        Kind.CONNECTION: {**common, **columns(
            Connection, backPressureObjectThreshold="back_pressure_object_threshold",
            backPressureDataSizeThreshold="back_pressure_data_size_threshold",
            flowFileExpiration="flowfile_expiration", partitioningAttribute="partitioning_attribute")},
    }


def _components(group: ProcessGroupConfig) -> Iterator[tuple[str, ComponentConfig]]:
    yield Kind.PROCESS_GROUP, group
    for kind, items in ((Kind.PROCESSOR, group.processors), (Kind.CONTROLLER_SERVICE, group.controller_services),
                        (Kind.FUNNEL, group.funnels), (Kind.INPUT_PORT, group.input_ports),
                        (Kind.OUTPUT_PORT, group.output_ports), (Kind.CONNECTION, group.connections)):
        for item in items:
            yield kind, item


def _column_problem(column: models.Field, value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(column, models.CharField):
        if len(str(value)) > column.max_length:
            return f"is longer than {column.max_length} characters"
    elif isinstance(value, (int, float)):
        highest = connection.ops.integer_field_range(column.get_internal_type())[1]
        if highest is not None and value > highest:
            return f"{value} is larger than {highest}"
    return None


def _unstorable_values(value: Any, path: str) -> Iterator[FlowProblem]:
    if isinstance(value, str) and "\x00" in value:
        yield FlowProblem(path, "text cannot hold NUL characters")
    elif isinstance(value, float) and not math.isfinite(value):
        yield FlowProblem(path, f"{value} is not a finite number")
    elif isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                yield FlowProblem(path, "names cannot hold NUL characters")
            else:
                yield from _unstorable_values(item, json_path(path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _unstorable_values(item, json_path(path, index))


def storage_problems(flow: FlowDefinition) -> list[FlowProblem]:
    """Every value of ``flow`` the database cannot store (see the module docstring)."""
    problems = list(_unstorable_values(flow.raw, "$"))
    for group in flow.groups():
        for kind, config in _components(group):
            for key, column in _columns()[kind].items():
                problem = _column_problem(column, config.raw.get(key))
                if problem:
                    problems.append(FlowProblem(json_path(config.path, key), problem))
        labels = group.raw.get("labels")
        for index, label in enumerate(labels if isinstance(labels, list) else ()):
            for key, column in _columns()[Kind.FUNNEL].items():  # a label's bounded columns are a funnel's
                problem = _column_problem(column, label.get(key) if isinstance(label, dict) else None)
                if problem:
                    problems.append(FlowProblem(json_path(group.path, "labels", index, key), problem))
    limit = ParameterContext._meta.get_field("name").max_length
    for name, context in flow.parameter_contexts.items():
        if len(name) > limit:
            problems.append(FlowProblem(context.path, f"the name of a parameter context is longer than {limit} "
                                                      "characters"))
    return problems
