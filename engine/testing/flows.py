"""Small builders of flow-definition documents (NiFi's JSON), for tests and examples."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

__all__ = ["connection", "flow", "funnel", "group", "port", "processor", "service"]


def processor(identifier: str, type_name: str, properties: Mapping[str, str | None] | None = None, *,
              auto_terminate: Iterable[str] = (), state: str = "RUNNING", **fields: Any) -> dict[str, Any]:
    """A processor; extra keyword arguments are NiFi fields (``schedulingPeriod="1 sec"``)."""
    return {"identifier": identifier, "name": fields.pop("name", identifier), "type": type_name,
            "properties": dict(properties or {}), "autoTerminatedRelationships": list(auto_terminate),
            "scheduledState": state, **fields}


def connection(identifier: str, source: str, destination: str, relationships: Iterable[str] = ("success",), *,
               source_type: str = "PROCESSOR", destination_type: str = "PROCESSOR", **fields: Any) -> dict[str, Any]:
    """A connection between two components (funnels and ports select no relationship)."""
    selected = list(relationships) if source_type == "PROCESSOR" else [""]
    return {"identifier": identifier, "source": {"id": source, "type": source_type},
            "destination": {"id": destination, "type": destination_type}, "selectedRelationships": selected,
            **fields}


def funnel(identifier: str) -> dict[str, Any]:
    """A funnel."""
    return {"identifier": identifier, "name": identifier}


def port(identifier: str, *, state: str = "RUNNING") -> dict[str, Any]:
    """An input or output port (which one depends on the list it is put in)."""
    return {"identifier": identifier, "name": identifier, "scheduledState": state}


def service(identifier: str, type_name: str, properties: Mapping[str, str | None] | None = None, *,
            state: str = "ENABLED") -> dict[str, Any]:
    """A controller service."""
    return {"identifier": identifier, "name": identifier, "type": type_name, "properties": dict(properties or {}),
            "scheduledState": state}


def group(identifier: str, *, processors: Iterable[dict] = (), connections: Iterable[dict] = (),
          funnels: Iterable[dict] = (), input_ports: Iterable[dict] = (), output_ports: Iterable[dict] = (),
          groups: Iterable[dict] = (), services: Iterable[dict] = (), parameter_context: str | None = None,
          name: str | None = None) -> dict[str, Any]:
    """A process group."""
    document = {"identifier": identifier, "name": name or identifier, "processors": list(processors),
                "connections": list(connections), "funnels": list(funnels), "inputPorts": list(input_ports),
                "outputPorts": list(output_ports), "processGroups": list(groups),
                "controllerServices": list(services)}
    if parameter_context is not None:
        document["parameterContextName"] = parameter_context
    return document


def flow(root: dict[str, Any] | None = None, *, parameter_contexts: Mapping[str, Mapping[str, str]] | None = None,
         **root_parts: Any) -> dict[str, Any]:
    """A flow definition whose root group is ``root`` (or built from ``root_parts``); parameter
    contexts are given as ``{context name: {parameter: value}}``."""
    contents = root if root is not None else group("root", **root_parts)
    contexts = {name: {"name": name, "parameters": [{"name": key, "value": value, "sensitive": False}
                                                    for key, value in values.items()]}
                for name, values in (parameter_contexts or {}).items()}
    return {"flowEncodingVersion": "1.0", "flowContents": contents, "parameterContexts": contexts}
