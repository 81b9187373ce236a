"""The difference between two flow definitions of a group, component by component (matched by
identifier): what was added, removed, or changed and in which fields."""

from __future__ import annotations

from typing import Any, Iterator

_CHILD_LISTS = {"processors": "PROCESSOR", "connections": "CONNECTION", "funnels": "FUNNEL",
                "inputPorts": "INPUT_PORT", "outputPorts": "OUTPUT_PORT", "controllerServices": "CONTROLLER_SERVICE",
                "labels": "LABEL", "processGroups": "PROCESS_GROUP"}


def _components(group: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(identifier, kind, fields without child lists) of a group and everything in it."""
    yield group["identifier"], "PROCESS_GROUP", {k: v for k, v in group.items() if k not in _CHILD_LISTS}
    for key, kind in _CHILD_LISTS.items():
        for child in group.get(key) or ():
            if kind == "PROCESS_GROUP":
                yield from _components(child)
            else:
                yield child["identifier"], kind, child


def _field_changes(before: dict[str, Any], after: dict[str, Any], prefix: str = "") -> list[dict[str, Any]]:
    changes = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if key == "properties" and isinstance(old, dict) and isinstance(new, dict) and not prefix:
            changes += _field_changes(old, new, "properties.")
        else:
            changes.append({"field": prefix + key, "from": old, "to": new})
    return changes


def flow_difference(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed from the flow definition ``before`` to ``after``: a list of
    ``{identifier, componentType, name, change: ADDED|REMOVED|MODIFIED, fields}``, where
    ``fields`` lists ``{field, from, to}`` for modifications (properties one by one)."""
    old = {ident: (kind, fields) for ident, kind, fields in _components(before["flowContents"])}
    new = {ident: (kind, fields) for ident, kind, fields in _components(after["flowContents"])}
    differences = []
    for ident in sorted(set(old) | set(new)):
        if ident not in new:
            kind, fields = old[ident]
            differences.append({"identifier": ident, "componentType": kind, "name": fields.get("name", ""),
                                "change": "REMOVED", "fields": []})
        elif ident not in old:
            kind, fields = new[ident]
            differences.append({"identifier": ident, "componentType": kind, "name": fields.get("name", ""),
                                "change": "ADDED", "fields": []})
        else:
            changes = _field_changes(old[ident][1], new[ident][1])
            if changes:
                differences.append({"identifier": ident, "componentType": new[ident][0],
                                    "name": new[ident][1].get("name", ""), "change": "MODIFIED", "fields": changes})
    before_contexts, after_contexts = before.get("parameterContexts") or {}, after.get("parameterContexts") or {}
    for name in sorted(set(before_contexts) | set(after_contexts)):
        if before_contexts.get(name) != after_contexts.get(name):
            change = ("ADDED" if name not in before_contexts else "REMOVED" if name not in after_contexts
                      else "MODIFIED")
            differences.append({"identifier": name, "componentType": "PARAMETER_CONTEXT", "name": name,
                                "change": change, "fields": []})
    return differences
