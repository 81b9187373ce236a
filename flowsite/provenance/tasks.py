"""The Celery tasks of provenance and queue inspection: thin, each runs the job of one request
(by its id). Analytics goes to the ``analytics`` queue, everything else to ``provenance``
(``CELERY_TASK_ROUTES``), so quick requests never wait behind a Spark job."""

from __future__ import annotations

from celery import shared_task

from flowsite.provenance import jobs
from flowsite.provenance.jobs import analytics


@shared_task(name="provenance.run_analytics", ignore_result=True)
def run_analytics(request_id: str) -> None:
    """Run the analytics job of request ``request_id`` (``flowsite.provenance.jobs.analytics.run``)."""
    analytics.run(request_id)


@shared_task(name="provenance.run_request", ignore_result=True)
def run_request(request_id: str, kind: str) -> None:
    """Run the job of request ``request_id`` of ``kind`` (query, lineage, export, listing or drop)."""
    jobs.run(request_id, kind)
