"""Request resources as NiFi's DTOs: ``ProvenanceDTO``, ``LineageDTO``, ``ListingRequestDTO``,
``DropRequestDTO``, and the export Flowsite adds — each built from its stored request, with the
fields every request resource carries (``common``)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from engine.units import format_data_size
from flowsite.provenance import formats
from flowsite.provenance.events import Presenter
from flowsite.provenance.scope import shown_nodes

__all__ = ["common", "drop", "export", "flowfile", "lineage", "listing", "query"]

_FINISHED = ("done", "failed")


def _ms(iso: str | None) -> int | None:
    return formats.millis(iso) if iso else None


def common(record: dict[str, Any], uri: str, user) -> dict[str, Any]:
    """NiFi's ``id``, ``uri``, ``submissionTime``, ``expiration``, ``percentCompleted``,
    ``finished`` and Flowsite's ``state``, ``failureReason``, ``partial`` and ``nodes``."""
    return {"id": record["id"], "uri": uri, "submissionTime": formats.timestamp(_ms(record["submitted_at"])),
            "expiration": formats.timestamp(_ms(record["expires_at"])), "percentCompleted": record["percent"],
            "finished": record["state"] in _FINISHED, "state": record["state"],
            "failureReason": record.get("failure_reason") or None, "partial": bool(record.get("partial")),
            "nodes": shown_nodes(record.get("nodes") or {"asked": [], "answered": [], "missing": []}, user)}


def _errors(record: dict[str, Any]) -> list[str]:
    """NiFi's ``errors``: each missing node as ``"<node> -- <reason>"``, then the job's warnings."""
    missing = (record.get("nodes") or {}).get("missing") or ()
    return [f"{entry['node']} -- {entry['reason']}" for entry in missing] + list(
        (record.get("result") or {}).get("warnings") or ())


def _request(request: dict[str, Any]) -> dict[str, Any]:
    """A search as NiFi echoes it (``ProvenanceRequestDTO``)."""
    shown = {"searchTerms": request.get("searchTerms") or {}, "startDate": formats.date_time(request.get("startDate")),
             "endDate": formats.date_time(request.get("endDate")), "clusterNodeId": request.get("clusterNodeId")}
    for name in ("minimumFileSize", "maximumFileSize"):
        shown[name] = format_data_size(request[name]) if request.get(name) is not None else None
    for name in ("maxResults", "summarize", "incrementalResults"):
        if name in request:
            shown[name] = request[name]
    return shown


def query(record: dict[str, Any], uri: str, user, presenter: Presenter, incremental: bool = True) -> dict[str, Any]:
    """``ProvenanceDTO``: the search, and the events found (newest first across nodes; while the
    query runs, those found so far unless ``incremental`` is False)."""
    result = record.get("result") or {}
    found = [(node, event) for node, event in result.get("events") or ()]
    if record["state"] not in _FINISHED and not incremental:
        found = []
    presenter.load(event.get("component_id") for _, event in found)
    count = int(result.get("total_count") or 0)
    total = f"{formats.count(count)}+" if result.get("capped") else formats.count(count)
    generated = _ms(record.get("updated_at"))
    return {**common(record, uri, user), "request": _request(record["request"]), "results": {
        "provenanceEvents": [presenter.summary(node, event) for node, event in found], "total": total,
        "totalCount": count, "generated": formats.time_of_day(generated),
        "oldestEvent": formats.date_time(result.get("oldest_event_time")), "timeOffset": 0, "errors": _errors(record)}}


def lineage(record: dict[str, Any], uri: str, user) -> dict[str, Any]:
    """``LineageDTO``: the request and NiFi's ``nodes`` and ``links`` (built by the job)."""
    result = record.get("result") or {}
    return {**common(record, uri, user), "request": record["request"], "results": {
        "nodes": result.get("nodes") or [], "links": result.get("links") or [],
        "truncated": bool(result.get("truncated")), "errors": _errors(record)}}


def _text(count: int, size: int) -> str:
    return f"{formats.count(count)} / {format_data_size(size)}"


def _flowfile_summary(connection: str, node: str, flowfile: dict[str, Any]) -> dict[str, Any]:
    """NiFi's ``FlowFileSummaryDTO`` of a FlowFile queued on ``node``."""
    path = reverse("api:queued-flowfile", args=[connection, flowfile["uuid"]])
    return {"uri": f"{path}?clusterNodeId={node}", "uuid": flowfile["uuid"], "filename": flowfile.get("filename"),
            "mimeType": flowfile.get("mime_type"), "position": flowfile.get("position"), "size": flowfile.get("size"),
            "queuedDuration": flowfile.get("queued_duration"), "lineageDuration": flowfile.get("lineage_duration"),
            "penaltyExpiresIn": flowfile.get("penalty_expires_in"), "penalized": bool(flowfile.get("penalized")),
            "clusterNodeId": node, "clusterNodeAddress": node}


def flowfile(connection: str, node: str, found: dict[str, Any]) -> dict[str, Any]:
    """NiFi's ``FlowFileDTO``: the summary, every attribute and the content claim."""
    claim = found.get("claim") or {}
    size = claim.get("length")
    return {**_flowfile_summary(connection, node, found), "attributes": dict(found.get("attributes") or {}),
            "contentClaimContainer": claim.get("container"),
            "contentClaimSection": str(claim["section"]) if claim.get("section") is not None else None,
            "contentClaimIdentifier": claim.get("identifier"), "contentClaimOffset": claim.get("offset"),
            "contentClaimFileSize": format_data_size(size) if size is not None else None,
            "contentClaimFileSizeBytes": size, "contentAvailable": bool(found.get("content_available"))}


def listing(record: dict[str, Any], uri: str, user) -> dict[str, Any]:
    """``ListingRequestDTO``: the queue's size over every node and its first FlowFiles."""
    result = record.get("result") or {}
    summaries = [_flowfile_summary(record["connection"], node, found) for node, found in result.get("flowfiles") or ()]
    return {**common(record, uri, user), "lastUpdated": formats.time_of_day(_ms(record.get("updated_at"))),
            "maxResults": record["max_results"], "sourceRunning": bool(result.get("source_running")),
            "destinationRunning": bool(result.get("destination_running")),
            "queueSize": {"objectCount": int(result.get("count") or 0), "byteCount": int(result.get("bytes") or 0)},
            "swappedCount": int(result.get("swapped_count") or 0), "flowFileSummaries": summaries}


def drop(record: dict[str, Any], uri: str, user) -> dict[str, Any]:
    """``DropRequestDTO``: what was queued, what was dropped and what is queued now, in total and
    node by node."""
    result = record.get("result") or {}
    shown = {**common(record, uri, user), "lastUpdated": formats.time_of_day(_ms(record.get("updated_at")))}
    for stage in ("original", "dropped", "current"):
        count, size = result.get(f"{stage}_count"), result.get(f"{stage}_size")
        known = count is not None
        shown.update({f"{stage}Count": count, f"{stage}Size": size,
                      stage: _text(count, size) if known else None})
    shown["nodeResults"] = [{"clusterNodeId": node, **{f"{stage}{unit}": figures.get(f"{stage}_{unit.lower()}")
                                                        for stage in ("original", "dropped", "current")
                                                        for unit in ("Count", "Size")}}
                            for node, figures in sorted((result.get("nodes") or {}).items())]
    return shown


def export(record: dict[str, Any], uri: str, user) -> dict[str, Any]:
    """A provenance export: the search, how many events it holds and where its file is."""
    result = record.get("result") or {}
    done = record["state"] == "done"
    return {**common(record, uri, user), "format": record["format"], "maxEvents": record["max_events"],
            "request": _request(record["request"]), "eventCount": int(result.get("events") or 0),
            "truncated": bool(result.get("truncated")), "size": int(result.get("bytes") or 0) if done else None,
            "contentUri": f"{uri}/content" if done else None, "errors": _errors(record)}
