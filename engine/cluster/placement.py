"""Tenant placement: which tenants' groups a clustered node runs, by the labels it was given.

The cluster's flow names each tenant's group and ``pool`` in its ``tenants`` section. A tenant
whose pool is ``P`` runs only on the nodes labelled ``P``; a tenant whose pool is ``""`` runs in
the shared pool: the nodes without labels and the nodes labelled ``shared``. So a node labelled
``acme`` only runs tenant(s) pinned to ``acme`` (no one else's code shares its process), and a
node labelled ``acme,shared`` runs those and the shared pool. Components outside every tenant's
group (an operator's own flow) run on every node.

Every node keeps and votes with the whole cluster flow (its fingerprint is the same on every
node); only the document it builds and runs is filtered (``Placement.filter``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

__all__ = ["SHARED", "Placement", "parse_labels"]

#: The label of the nodes of the shared pool (besides the nodes without labels).
SHARED = "shared"
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def parse_labels(text: str) -> tuple[str, ...]:
    """``a,b`` as sorted, distinct labels; raises ValueError naming a label that is not 1-64
    letters, digits, '.', '_' or '-' starting with a letter or digit (labels match pools exactly)."""
    labels = {label.strip() for label in text.split(",") if label.strip()}
    for label in labels:
        if not _LABEL.fullmatch(label):
            raise ValueError(f"{label!r} is not a node label (1-64 letters, digits, '.', '_' or '-', "
                             "starting with a letter or digit)")
    return tuple(sorted(labels))


def _identifiers(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("identifier"), str):
            yield value["identifier"]
        for item in value.values():
            yield from _identifiers(item)
    elif isinstance(value, list):
        for item in value:
            yield from _identifiers(item)


@dataclass(frozen=True)
class Placement:
    """The pools a node serves, from its ``labels`` (see the module docstring)."""

    labels: tuple[str, ...] = ()

    @property
    def shared(self) -> bool:
        """Whether the node is in the shared pool."""
        return not self.labels or SHARED in self.labels

    def runs(self, pool: str) -> bool:
        """Whether a tenant of ``pool`` runs on this node."""
        return self.shared if not pool else pool in self.labels

    def describe(self) -> str:
        """The pools for logs: ``shared pool``, ``pools acme, shared``."""
        return f"pools {', '.join(self.labels)}" if self.labels else "the shared pool"

    def elsewhere(self, document: dict[str, Any]) -> dict[str, str]:
        """The tenants of ``document`` placed on other nodes: group identifier → tenant slug."""
        groups = {}
        for slug, entry in (document.get("tenants") or {}).items():
            if isinstance(entry, dict) and isinstance(entry.get("group"), str) \
                    and not self.runs(str(entry.get("pool") or "")):
                groups[entry["group"]] = slug
        return groups

    def filter(self, document: dict[str, Any]) -> dict[str, Any]:
        """``document`` without the groups of tenants placed elsewhere, their entries of the
        ``tenants`` section, nor the parameter contexts only they use (a new document;
        ``document`` itself is not changed)."""
        away = self.elsewhere(document)
        if not away:
            return document
        contents = document.get("flowContents") or {}
        kept = [group for group in contents.get("processGroups") or () if group.get("identifier") not in away]
        tenants = {slug: entry for slug, entry in (document.get("tenants") or {}).items() if slug not in away.values()}
        filtered = {**document, "flowContents": {**contents, "processGroups": kept}, "tenants": tenants}
        contexts = document.get("parameterContexts") or {}
        if isinstance(contexts, list):  # the list form names each context inside it
            contexts = {context.get("name", ""): context for context in contexts}
        used = _contexts_used(filtered["flowContents"], contexts)
        filtered["parameterContexts"] = {name: context for name, context in contexts.items() if name in used}
        return filtered

    def components_elsewhere(self, document: dict[str, Any]) -> dict[str, str]:
        """Every component identifier inside the groups of tenants placed elsewhere → the tenant."""
        away = self.elsewhere(document)
        found = {}
        for group in (document.get("flowContents") or {}).get("processGroups") or ():
            slug = away.get(group.get("identifier"))
            if slug is not None:
                found.update((identifier, slug) for identifier in _identifiers(group))
        return found


def _contexts_used(contents: dict[str, Any], contexts: dict[str, Any]) -> set[str]:
    """Names of the parameter contexts the groups of ``contents`` reference, with those they inherit."""
    def referenced(group: dict[str, Any]) -> Iterable[str]:
        if group.get("parameterContextName"):
            yield group["parameterContextName"]
        for child in group.get("processGroups") or ():
            yield from referenced(child)

    used, pending = set(), list(referenced(contents))
    while pending:
        name = pending.pop()
        if name in used:
            continue
        used.add(name)
        context = contexts.get(name) or {}
        pending.extend(context.get("inheritedParameterContexts") or ())
    return used
