"""The reference documentation of component types, made from their declarations.

``python -m engine docs`` prints it as Markdown; ``docs/components.md`` is that output, and a
test keeps the two equal.
"""

from __future__ import annotations

import inspect

from engine.components import ComponentRegistry, ExpressionScope, InputRequirement, PropertyDescriptor

__all__ = ["render_components"]

_SCOPES = {ExpressionScope.ENVIRONMENT: "environment variables", ExpressionScope.FLOWFILE_ATTRIBUTES: "FlowFile attributes"}
_INPUT = {InputRequirement.REQUIRED: "needs an incoming connection",
          InputRequirement.FORBIDDEN: "takes no incoming connection",
          InputRequirement.ALLOWED: "may have incoming connections"}


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _description(cls: type) -> str:
    return inspect.cleandoc(cls.__doc__ or "").strip()


def _property_rows(descriptors) -> list[str]:
    rows = ["| Property | Default | Allowed values | Description |", "|---|---|---|---|"]
    for descriptor in descriptors:
        rows.append("| " + " | ".join([_property_name(descriptor), _cell(f"`{descriptor.default}`")
                                       if descriptor.default is not None else "",
                                       _cell(", ".join(f"`{v}`" for v in descriptor.allowed())),
                                       _cell(_property_text(descriptor))]) + " |")
    return rows


def _property_name(descriptor: PropertyDescriptor) -> str:
    name = f"**{descriptor.name}**" if descriptor.required else descriptor.name
    if descriptor.display_name != descriptor.name:
        name += f" ({_cell(descriptor.display_name)})"
    return _cell(name)


def _property_text(descriptor: PropertyDescriptor) -> str:
    notes = [descriptor.description]
    if descriptor.expression_language is not ExpressionScope.NONE:
        notes.append(f"Supports Expression Language ({_SCOPES[descriptor.expression_language]}).")
    if descriptor.sensitive:
        notes.append("Sensitive.")
    if descriptor.service is not None:
        notes.append(f"References a controller service providing `{descriptor.service.__name__}`.")
    for dependency in descriptor.depends_on:
        values = f" is {' or '.join(repr(v) for v in dependency.values)}" if dependency.values else " is set"
        notes.append(f"Only used when '{dependency.property}'{values}.")
    return " ".join(note for note in notes if note)


def _processor(cls) -> list[str]:
    lines = [f"## {cls.type_name}", ""]
    header = [f"`{cls.nifi_type}`" if cls.nifi_type else "a Flowsite processor"]
    if cls.tags:
        header.append("tags: " + ", ".join(cls.tags))
    lines += [" · ".join(header), "", _description(cls), ""]
    facts = [_INPUT[cls.input_requirement].capitalize() + "."]
    if cls.trigger_serially:
        facts.append("Runs one task at a time.")
    if cls.primary_node_only:
        facts.append("Runs on the primary node only.")
    if cls.default_scheduling_period != "0 sec":
        facts.append(f"Default run schedule: {cls.default_scheduling_period}.")
    if cls.restricted:
        facts.append(f"Restricted ({', '.join(cls.restricted)}).")
    lines += [" ".join(facts), ""]
    if cls.properties:
        lines += ["**Properties** (required ones in bold)", "", *_property_rows(cls.properties), ""]
    lines += _dynamic_properties(cls)
    if cls.relationships:
        lines += ["**Relationships**" + (" (more follow from the configuration)" if cls.dynamic_relationships else ""),
                  "", "| Relationship | Description |", "|---|---|"]
        lines += [f"| {_cell(r.name)} | {_cell(r.description)} |" for r in cls.relationships]
        lines.append("")
    for title, attributes in (("Reads attributes", cls.reads_attributes), ("Writes attributes", cls.writes_attributes)):
        if attributes:
            lines += [f"**{title}**", "", "| Attribute | Description |", "|---|---|"]
            lines += [f"| `{_cell(a.name)}` | {_cell(a.description)} |" for a in attributes]
            lines.append("")
    if cls.stateful:
        lines += [f"**State**: {_cell(cls.stateful)}", ""]
    if cls.see_also:
        lines += ["**See also**: " + ", ".join(cls.see_also), ""]
    return lines


def _service(cls) -> list[str]:
    lines = [f"## {cls.type_name}", ""]
    header = [f"`{cls.nifi_type}`" if cls.nifi_type else "a Flowsite controller service"]
    if cls.provides:
        header.append("provides " + ", ".join(f"`{api.__name__}`" for api in cls.provides))
    lines += [" · ".join(header), "", _description(cls), ""]
    if cls.properties:
        lines += ["**Properties** (required ones in bold)", "", *_property_rows(cls.properties), ""]
    lines += _dynamic_properties(cls)
    if cls.see_also:
        lines += ["**See also**: " + ", ".join(cls.see_also), ""]
    return lines


def _dynamic_properties(cls) -> list[str]:
    spec = cls.dynamic_properties
    if spec is None:
        return []
    scope = f" Expression Language: {_SCOPES[spec.expression_language]}." \
        if spec.expression_language is not ExpressionScope.NONE else ""
    sensitive = f" Names starting with {spec.sensitive_prefix} are sensitive (no Expression Language)." \
        if spec.sensitive_prefix else ""
    return ["**User-added properties**: name = " + _cell(spec.name) + ", value = " + _cell(spec.value) +
            ". " + _cell(spec.description) + scope + sensitive, ""]


def render_components(registry: ComponentRegistry) -> str:
    """Markdown documenting every processor and controller-service type of ``registry``."""
    lines = ["# Processors and controller services", "",
             "Generated by `python -m engine docs` from the components' own declarations; do not edit.", "",
             "Processors: " + ", ".join(f"[{t.type_name}](#{t.type_name.lower()})" for t in registry.processors()),
             "", "Controller services: " + ", ".join(f"[{t.type_name}](#{t.type_name.lower()})"
                                                      for t in registry.services()), ""]
    lines += ["# Processors", ""]
    for entry in registry.processors():
        lines += _processor(entry.cls)
    lines += ["# Controller services", ""]
    for entry in registry.services():
        lines += _service(entry.cls)
    return "\n".join(lines).rstrip() + "\n"
