"""The jobs of the request resources, run by the jobs process (``celery -A flowsite worker``):
one module per kind, ``common`` for what they share; ``analytics`` is Spark's."""

from __future__ import annotations

from flowsite.provenance.jobs import common, export, lineage, query, queues

__all__ = ["run"]

_JOBS = {"query": query.run, "lineage": lineage.run, "export": export.run, "listing": queues.listing,
         "drop": queues.drop}


def run(request_id: str, kind: str) -> None:
    """Run the job of request ``request_id`` of ``kind``."""
    common.run(request_id, kind, _JOBS[kind])
