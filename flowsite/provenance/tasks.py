"""The Celery task of provenance analytics: thin, it runs the job of one request (by its id)."""

from __future__ import annotations

from celery import shared_task

from flowsite.provenance import jobs


@shared_task(name="provenance.run_analytics", ignore_result=True)
def run_analytics(request_id: str) -> None:
    """Run the analytics job of request ``request_id`` (``flowsite.provenance.jobs.run``)."""
    jobs.run(request_id)
