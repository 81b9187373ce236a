"""Federated status: every connected node is asked for its flow's status, and the answers are
aggregated per component and per node, showing a user only what the user may view.

The nodes' answers are cached for ``CACHE_SECONDS`` (whoever asks), so that a page refreshing
often or many users looking at once do not each send a request to every node; what a user sees
is filtered from the cached answers on every request. Component identifiers in the cluster's flow
are the control plane's instance ids (``Component`` primary keys), so a node's figures are
matched to components by id: a component of another tenant, or one the user may not view, never
appears. Per node, the queued and active-thread figures are summed over those same components.
A load-balanced connection's figures say apart how much of what it queues awaits transfer to
another node (``flowFilesAwaitingTransfer``, ``bytesAwaitingTransfer``), per node and summed.
A node whose answer lists every one of the user's tenants' root groups in ``elsewhere`` (they are
placed on other nodes, ``engine.cluster.placement``) runs none of them and is left out.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Iterable

import redis
from django.db.models import Q

from engine.cluster.bus import Reply
from engine.cluster.records import ClusterView
from flowsite.cluster import redis as cluster_redis
from flowsite.flows.access import VIEW, TenantAccess
from flowsite.flows.definition import subtree_ids
from flowsite.flows.models import Component, ProcessGroup
from flowsite.flows.tenants import root_group

__all__ = ["CACHE_SECONDS", "STATUS_TIMEOUT", "NodeAnswers", "ask_nodes", "awaiting_transfer", "cluster_status",
           "forget_answers", "group_figures", "group_live", "tenant_node_figures", "visible_components"]

#: How long the nodes may take to answer a status request, in seconds.
STATUS_TIMEOUT = 3.0
#: How long the nodes' answers are reused, in seconds.
CACHE_SECONDS = 1.0
NO_NODE = "no node is connected to the cluster: nothing runs, so there is no status to show"

_RUN_STATUS_ORDER = ("Running", "Stopping", "Invalid", "Stopped", "Disabled")
_GROUP_FIGURES = ("queued_count", "queued_bytes", "active_threads", "running", "stopped", "invalid", "disabled",
                  "flowfiles_in", "bytes_in", "flowfiles_out", "bytes_out")
_WINDOW_FIGURES = ("flowfiles_in", "bytes_in", "bytes_read", "bytes_written", "flowfiles_out", "bytes_out")
#: The figures ``group_figures`` gives of each kind of component.
_LIVE_FIGURES = {
    "processors": ("run_status", "active_threads", *_WINDOW_FIGURES, "validation_errors"),
    "connections": ("queued_count", "queued_bytes", "back_pressure_object_threshold",
                    "back_pressure_data_size_threshold", "percent_use_count", "percent_use_bytes",
                    "flowFilesAwaitingTransfer", "bytesAwaitingTransfer"),
    "ports": ("kind", "run_status", "active_threads"),
    "groups": _GROUP_FIGURES,
}
#: The part of a connection's queued figures held for other nodes: the engine's name → the API's.
_AWAITING = {"awaiting_transfer_count": "flowFilesAwaitingTransfer", "awaiting_transfer_bytes": "bytesAwaitingTransfer"}


@dataclass(frozen=True)
class NodeAnswers:
    """The connected nodes' replies to one status request."""

    asked_at: float
    replies: dict[str, Reply]


_cache: dict[str, NodeAnswers] = {}
_lock = threading.Lock()


def forget_answers() -> None:
    """Drop the cached answers (the next request asks the nodes again)."""
    with _lock:
        _cache.clear()


def ask_nodes() -> NodeAnswers:
    """Every connected node's status, at most ``CACHE_SECONDS`` old (raises redis.RedisError)."""
    with _lock:
        cached = _cache.get("status")
        if cached is not None and time.time() - cached.asked_at < CACHE_SECONDS:
            return cached
    nodes = ClusterView(cluster_redis.client(), cluster_redis.keys()).connected()
    replies = cluster_redis.bus().request(nodes, "status", {}, timeout=STATUS_TIMEOUT) if nodes else {}
    answers = NodeAnswers(time.time(), replies)
    with _lock:
        _cache["status"] = answers
    return answers


def visible_components(user, tenants: Iterable, within: ProcessGroup | None = None) -> set[str]:
    """The ids (as text) of the components of ``tenants`` that ``user`` may view; with ``within``,
    only that group, its descendants and what they hold."""
    visible: set[str] = set()
    for tenant in tenants:
        access = TenantAccess(user, tenant)
        if not access.is_member:
            continue
        components = Component.objects.restrict(access, VIEW)
        if within is not None:
            groups = subtree_ids(within.pk)
            components = components.filter(Q(pk__in=groups) | Q(parent__in=groups))
        visible.update(str(pk) for pk in components.values_list("pk", flat=True))
    return visible


def _thresholds(item: dict[str, Any]) -> dict[str, int]:
    """A connection's back-pressure thresholds (0: none) from a node's answer."""
    return {"back_pressure_object_threshold": int(item.get("back_pressure_object_threshold") or 0),
            "back_pressure_data_size_threshold": int(item.get("back_pressure_data_size_threshold") or 0)}


def _fill(item: dict[str, Any]) -> dict[str, int]:
    """How full a connection is on one node, in percent of each back-pressure threshold (0 without
    one); over the cluster the fullest node counts, as back pressure applies per node."""
    limits = _thresholds(item)
    count, size = limits["back_pressure_object_threshold"], limits["back_pressure_data_size_threshold"]
    return {"percent_use_count": item["queued_count"] * 100 // count if count else 0,
            "percent_use_bytes": item["queued_bytes"] * 100 // size if size else 0}


def _merged_run_status(statuses: Iterable[str]) -> str:
    present = set(statuses)
    return next((status for status in _RUN_STATUS_ORDER if status in present), "Stopped")


def _flatten_groups(group: dict[str, Any]) -> Iterable[dict[str, Any]]:
    yield group
    for child in group.get("groups") or ():
        yield from _flatten_groups(child)


class _Aggregate:
    """Per-component totals over the nodes' answers, restricted to ``visible``."""

    def __init__(self, visible: set[str]) -> None:
        self.visible = visible
        self.processors: dict[str, dict[str, Any]] = {}
        self.connections: dict[str, dict[str, Any]] = {}
        self.ports: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.bulletins: list[dict[str, Any]] = []

    def add(self, node: str, status: dict[str, Any]) -> dict[str, int]:
        """Add one node's answer; returns the node's figures over the visible components."""
        figures = {"active_threads": 0, "queued_count": 0, "queued_bytes": 0,
                   **{name: 0 for name in _AWAITING.values()}}
        for item in status.get("processors") or ():
            if item["id"] not in self.visible:
                continue
            window = item.get("window") or {}
            entry = self.processors.setdefault(item["id"], {
                "id": item["id"], "name": item["name"], "type": item["type"], "group_id": item["group_id"],
                "run_status": "", "active_threads": 0, "validation_errors": [], "nodes": [],
                **{name: 0 for name in _WINDOW_FIGURES}})
            entry["active_threads"] += item["active_threads"]
            for name in _WINDOW_FIGURES:
                entry[name] += window.get(name, 0)
            entry["validation_errors"] = sorted(set(entry["validation_errors"]) | set(item["validation_errors"]))
            entry["nodes"].append({"node": node, "run_status": item["run_status"],
                                   "active_threads": item["active_threads"],
                                   **{name: window.get(name, 0) for name in _WINDOW_FIGURES}})
            entry["run_status"] = _merged_run_status(n["run_status"] for n in entry["nodes"])
            figures["active_threads"] += item["active_threads"]
        for item in status.get("connections") or ():
            if item["id"] not in self.visible:
                continue
            entry = self.connections.setdefault(item["id"], {
                "id": item["id"], "name": item["name"], "group_id": item["group_id"], "source_id": item["source_id"],
                "destination_id": item["destination_id"], "queued_count": 0, "queued_bytes": 0,
                **{name: 0 for name in _AWAITING.values()}, **_thresholds(item), "percent_use_count": 0,
                "percent_use_bytes": 0, "nodes": []})
            awaiting = {name: int(item.get(engine_name) or 0) for engine_name, name in _AWAITING.items()}
            fill = _fill(item)
            entry["queued_count"] += item["queued_count"]
            entry["queued_bytes"] += item["queued_bytes"]
            for name, value in fill.items():
                entry[name] = max(entry[name], value)
            entry["nodes"].append({"node": node, "queued_count": item["queued_count"],
                                   "queued_bytes": item["queued_bytes"], **awaiting, **fill, "full": item["full"]})
            figures["queued_count"] += item["queued_count"]
            figures["queued_bytes"] += item["queued_bytes"]
            for name, value in awaiting.items():
                entry[name] += value
                figures[name] += value
        for item in status.get("ports") or ():
            if item["id"] not in self.visible:
                continue
            entry = self.ports.setdefault(item["id"], {
                "id": item["id"], "name": item["name"], "kind": item["kind"], "group_id": item["group_id"],
                "run_status": "", "active_threads": 0, "nodes": []})
            entry["active_threads"] += item["active_threads"]
            entry["nodes"].append({"node": node, "run_status": item["run_status"],
                                   "active_threads": item["active_threads"]})
            entry["run_status"] = _merged_run_status(n["run_status"] for n in entry["nodes"])
            figures["active_threads"] += item["active_threads"]
        for item in _flatten_groups(status.get("root") or {}):
            if item.get("id") not in self.visible:
                continue
            entry = self.groups.setdefault(item["id"], {"id": item["id"], "name": item["name"], "nodes": [],
                                                        **{name: 0 for name in _GROUP_FIGURES}})
            for name in _GROUP_FIGURES:
                entry[name] += item.get(name, 0)
            entry["nodes"].append({"node": node, **{name: item.get(name, 0) for name in _GROUP_FIGURES}})
        self.bulletins += [{**bulletin, "node": node} for bulletin in status.get("bulletins") or ()
                           if bulletin.get("source_id") in self.visible]
        return figures


def cluster_status(user, tenants: Iterable, within: ProcessGroup | None = None) -> dict[str, Any]:
    """The status of what ``user`` may view of ``tenants`` (of the group ``within`` only, if
    given) over every connected node (raises redis.RedisError)."""
    answers = ask_nodes()
    tenants = list(tenants)
    aggregate = _Aggregate(visible_components(user, tenants, within))
    roots = {str(root_group(tenant).pk) for tenant in tenants}
    nodes = []
    for node, reply in sorted(answers.replies.items()):
        if reply.ok and isinstance(reply.result, dict) and roots and roots <= set(reply.result.get("elsewhere") or ()):
            continue
        entry: dict[str, Any] = {"node": node, "ok": reply.ok, "timed_out": reply.timed_out, "error": reply.error,
                                 "uptime_seconds": None, "is_primary": None, "active_threads": 0,
                                 "queued_count": 0, "queued_bytes": 0, **{name: 0 for name in _AWAITING.values()}}
        if reply.ok and isinstance(reply.result, dict):
            entry.update(aggregate.add(node, reply.result))
            figures = reply.result.get("node") or {}
            entry.update(uptime_seconds=figures.get("uptime_seconds"), is_primary=figures.get("is_primary"))
        nodes.append(entry)
    by_id = lambda item: item["id"]  # noqa: E731
    answer: dict[str, Any] = {
        "asked_at": answers.asked_at,
        "note": "" if answers.replies else NO_NODE,
        "nodes": nodes,
        "processors": sorted(aggregate.processors.values(), key=by_id),
        "connections": sorted(aggregate.connections.values(), key=by_id),
        "ports": sorted(aggregate.ports.values(), key=by_id),
        "groups": sorted(aggregate.groups.values(), key=by_id),
        "bulletins": sorted(aggregate.bulletins, key=lambda b: (b.get("timestamp", 0), b.get("node", ""))),
    }
    if within is not None:
        answer["group"] = aggregate.groups.get(str(within.pk))
    return answer


def group_figures(group_id, answers: NodeAnswers | None = None) -> dict[str, dict[str, Any]]:
    """The figures over every connected node (in ``answers``, or asked now) of the process group
    ``group_id`` and of each component directly in it, by component id; for no user in
    particular (the caller shows each user only what the user may view). Processors, funnels and
    ports, connections and child groups each give the figures their canvas shows
    (``_LIVE_FIGURES``), without the per-node break-down (raises redis.RedisError)."""
    return group_live(group_id, answers)[0]


def group_live(group_id, answers: NodeAnswers | None = None) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """``group_figures`` and the nodes' recent bulletins of the group and the components directly
    in it (each with its ``node``), for no user in particular (raises redis.RedisError)."""
    answers = answers if answers is not None else ask_nodes()
    ids = {str(pk) for pk in Component.objects.filter(Q(pk=group_id) | Q(parent=group_id)).values_list("pk", flat=True)}
    aggregate = _Aggregate(ids)
    for node, reply in sorted(answers.replies.items()):
        if reply.ok and isinstance(reply.result, dict):
            aggregate.add(node, reply.result)
    figures: dict[str, dict[str, Any]] = {}
    for kind, names in _LIVE_FIGURES.items():
        for item in getattr(aggregate, kind).values():
            figures[item["id"]] = {name: item[name] for name in names}
    return figures, aggregate.bulletins


def tenant_node_figures(tenants: Iterable) -> dict[str, dict[str, int]]:
    """For each connected node that answered, its active threads and queued FlowFiles summed over
    the components of ``tenants`` (raises redis.RedisError)."""
    answers = ask_nodes()
    ids = {str(pk) for pk in Component.objects.filter(tenant__in=list(tenants)).values_list("pk", flat=True)}
    return {node: _Aggregate(ids).add(node, reply.result) for node, reply in answers.replies.items()
            if reply.ok and isinstance(reply.result, dict)}


def awaiting_transfer(user, group: ProcessGroup) -> dict[str, tuple[int, int]]:
    """FlowFiles and bytes awaiting transfer to another node, over every connected node, for each
    connection directly in ``group`` that ``user`` may view and that holds any; empty when the
    cluster cannot be asked (the portal then shows no indicator rather than failing)."""
    try:
        answer = cluster_status(user, [group.tenant], within=group)
    except redis.RedisError:
        return {}
    return {item["id"]: (item["flowFilesAwaitingTransfer"], item["bytesAwaitingTransfer"])
            for item in answer["connections"]
            if item["group_id"] == str(group.pk) and item["flowFilesAwaitingTransfer"]}
