"""Submitting a request resource: keep it, queue its job, and give it half a second.

The web tier never runs a job: it keeps the request in the store and queues a Celery task on
the ``provenance`` queue (analytics has its own). Like NiFi, which waits up to 500 ms before it
answers a query, the submission then waits up to ``WAIT_SECONDS`` for the job, so a quick
request comes back finished in one round trip.
"""

from __future__ import annotations

import time
from typing import Any

from kombu.exceptions import OperationalError

from flowsite.cluster.redis import ClusterUnreachable
from flowsite.provenance import store

__all__ = ["WAIT_SECONDS", "submit"]

WAIT_SECONDS = 0.5
_POLL_SECONDS = 0.01


def submit(record: dict[str, Any]) -> dict[str, Any]:
    """Keep ``record`` (409 when its owner keeps too many), queue its job and return the request
    as it is once finished or after ``WAIT_SECONDS``; 503 when the jobs' queue cannot be reached
    (the request is forgotten again)."""
    from flowsite.provenance.tasks import run_request

    store.keep(record)
    try:
        run_request.delay(record["id"], record["kind"])
    except OperationalError as error:
        store.delete(record)
        raise ClusterUnreachable(f"the jobs' queue cannot be reached ({error}): nothing was asked") from None
    deadline = time.monotonic() + WAIT_SECONDS
    current = record
    while True:
        current = store.load(record["id"]) or current
        if current["state"] in ("done", "failed") or time.monotonic() >= deadline:
            return current
        time.sleep(_POLL_SECONDS)
