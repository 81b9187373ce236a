"""Writes to the nodes' data that provenance allows: replaying an event.

A replay is carried out by the node that holds the event (``provenance.replay``); the node
records it as a REPLAY event naming the requester, which is its audit, as in NiFi. Dropping a
queue's FlowFiles is a request resource (``flowsite.provenance.jobs.queues``).
"""

from __future__ import annotations

import logging
from typing import Any

from flowsite.api.errors import Conflict
from flowsite.provenance.direct import ask

__all__ = ["do_replay"]

log = logging.getLogger(__name__)


def do_replay(node: str, number: int, scope: list[str], acting_user) -> dict[str, Any]:
    """Replay event ``number`` of ``node`` (within ``scope``) for ``acting_user``: the REPLAY event
    the node recorded. 409 with the node's reason when it refuses (a JOIN, no source connection,
    a connection the flow no longer has, content no longer available)."""
    answer = ask(node, "provenance.replay", {"id": number, "scope": scope, "requester": acting_user.get_username()},
                 "no such provenance event")
    if not answer.get("replayed"):
        raise Conflict(f"the event cannot be replayed: {answer.get('reason') or 'the node refused'}")
    log.info("%s replayed event %s:%s as FlowFile %s", acting_user.get_username(), node, number,
             answer.get("flowfile_uuid"))
    return answer["event"]
