"""Where every request resource lives: provenance queries, lineage, queue listings and drops,
provenance exports and analytics requests, each a JSON record in the cluster's Redis.

A request is kept under ``flowsite:<cluster>:request:<id>`` for its kind's lifetime
(``FLOWSITE_REQUEST_RESULT_SECONDS``, NiFi's 30 minutes; analytics
``FLOWSITE_ANALYTICS_RESULT_SECONDS``) from when it is made, and again from when it finishes.
It is its submitter's alone: to anyone else — another user, another tenant, a guessed id, the id
of a request of another kind — it is a 404 exactly like an id that never existed. Once queued,
its job is its only writer, and writes only while the key exists (``SET … XX``): a deleted
request stays deleted, and its job finds it gone at its next write and stops. An export's file
is kept beside it as a list of chunks (``…:request:<id>:content``) expiring with it.

A user keeps at most ``FLOWSITE_REQUESTS_PER_USER`` requests (analytics, throttled on its own,
aside): like NiFi, which refuses a query while too many results are left undeleted, a further
submission is a 409 until some are deleted or expire.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

from django.conf import settings
from rest_framework import exceptions

from flowsite.api.errors import Conflict
from flowsite.cluster import redis as cluster_redis

__all__ = ["NOUNS", "append_content", "content", "delete", "exists", "iso", "keep", "lifetime",
           "load", "new", "owned", "update"]

#: Every kind of request, with the noun its 404 names.
NOUNS = {"query": "provenance query", "lineage": "lineage request", "listing": "listing request",
         "drop": "drop request", "export": "provenance export", "analytics": "analytics request"}
#: Kinds not counted against FLOWSITE_REQUESTS_PER_USER.
_UNCOUNTED = ("analytics",)
#: Chunks read from Redis at once when an export's file is streamed.
_CHUNKS_AT_ONCE = 8

# Keep a request only while its owner holds fewer than ``limit`` unexpired ones, atomically (two
# submissions at once must not both pass the count). KEYS: the request, the owner's set of
# request ids (scored by expiry); ARGV: record, lifetime, now, limit, id.
_KEEP = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[3])
if tonumber(ARGV[4]) > 0 and redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then
  return redis.call('ZCARD', KEYS[2])
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]) + tonumber(ARGV[2]), ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return -1
"""
# Append a chunk to an export's file only while its request exists, expiring with it.
# KEYS: the request, its content list; ARGV: the chunk.
_APPEND = """
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ttl)
return 1
"""


def _prefix() -> str:
    return f"flowsite:{settings.FLOWSITE_CLUSTER}"


def _key(request_id: str) -> str:
    return f"{_prefix()}:request:{request_id}"


def _content_key(request_id: str) -> str:
    return f"{_key(request_id)}:content"


def _owner_key(user_pk) -> str:
    return f"{_prefix()}:requests-of:{user_pk}"


def iso(moment: datetime | None = None) -> str:
    """``moment`` (default: now) in ISO 8601, UTC, as requests record times."""
    return (moment or datetime.now(timezone.utc)).isoformat().replace("+00:00", "Z")


def lifetime(kind: str) -> int:
    """How long a request of ``kind`` is kept, in seconds."""
    return int(settings.FLOWSITE_ANALYTICS_RESULT_SECONDS if kind == "analytics"
               else settings.FLOWSITE_REQUEST_RESULT_SECONDS)


def new(kind: str, user, **fields: Any) -> dict[str, Any]:
    """A new request of ``kind`` by ``user`` with ``fields``, queued, not yet kept: no node asked
    yet, no result."""
    now = datetime.now(timezone.utc)
    return {"id": str(uuid.uuid4()), "kind": kind, "user": user.pk, "state": "queued", "percent": 0,
            "submitted_at": iso(now), "updated_at": iso(now), "started_at": None, "finished_at": None,
            "expires_at": iso(now + timedelta(seconds=lifetime(kind))), "failure_reason": "",
            "nodes": {"asked": [], "answered": [], "missing": []}, "partial": False, "result": None, **fields}


def keep(record: dict[str, Any]) -> None:
    """Store a new request for its lifetime; 409 when its owner already keeps as many as
    allowed (raises redis.RedisError when the cluster's Redis does not answer)."""
    limit = 0 if record["kind"] in _UNCOUNTED else int(settings.FLOWSITE_REQUESTS_PER_USER)
    kept = cluster_redis.client().eval(_KEEP, 2, _key(record["id"]), _owner_key(record["user"]), json.dumps(record),
                                       lifetime(record["kind"]), int(time.time()), limit, record["id"])
    if int(kept) >= 0:
        raise Conflict(f"you keep {kept} requests already (at most {limit}): delete those you no longer need "
                       f"(DELETE their uri) or wait until they expire")


def load(request_id: str) -> dict[str, Any] | None:
    """The stored request, or None (unknown, expired or deleted)."""
    raw = cluster_redis.client().get(_key(request_id))
    return json.loads(raw) if raw is not None else None


def _canonical(request_id) -> str | None:
    try:
        return str(uuid.UUID(str(request_id)))
    except ValueError:
        return None


def owned(request_id, user, kind: str) -> dict[str, Any]:
    """The request ``request_id`` of ``kind`` made by ``user``; 404 for any other (or none)."""
    canonical = _canonical(request_id)
    record = load(canonical) if canonical is not None else None
    if record is None or record.get("user") != user.pk or record.get("kind") != kind:
        raise exceptions.NotFound(f"no such {NOUNS[kind]}")
    return record


def exists(request_id: str) -> bool:
    """Whether the request is still kept (it was not deleted and has not expired)."""
    return bool(cluster_redis.client().exists(_key(request_id)))


def update(record: dict[str, Any], *, final: bool = False, **changes: Any) -> bool:
    """Store ``changes`` into ``record`` (modified in place) if the request still exists; a
    ``final`` update keeps it a whole lifetime from now. False when it is gone (deleted)."""
    now = datetime.now(timezone.utc)
    record.update(changes, updated_at=iso(now))
    client = cluster_redis.client()
    if not final:
        return bool(client.set(_key(record["id"]), json.dumps(record), xx=True, keepttl=True))
    seconds = lifetime(record["kind"])
    record["expires_at"] = iso(now + timedelta(seconds=seconds))
    pipe = client.pipeline()
    pipe.set(_key(record["id"]), json.dumps(record), xx=True, ex=seconds)
    pipe.expire(_content_key(record["id"]), seconds)
    pipe.zadd(_owner_key(record["user"]), {record["id"]: int(now.timestamp()) + seconds}, xx=True)
    pipe.expire(_owner_key(record["user"]), seconds, gt=True)
    return bool(pipe.execute()[0])


def delete(record: dict[str, Any]) -> None:
    """Forget a request and its file; its job stops at its next step."""
    pipe = cluster_redis.client().pipeline()
    pipe.delete(_key(record["id"]), _content_key(record["id"]))
    pipe.zrem(_owner_key(record["user"]), record["id"])
    pipe.execute()


def append_content(request_id: str, chunk: bytes) -> bool:
    """Add ``chunk`` to the end of the request's file while the request exists; False once it is gone."""
    return bool(cluster_redis.client().eval(_APPEND, 2, _key(request_id), _content_key(request_id), chunk))


def content(request_id: str) -> Iterator[bytes]:
    """The request's file, chunk by chunk (a few chunks read at a time)."""
    client, key, start = cluster_redis.client(), _content_key(request_id), 0
    while True:
        chunks = client.lrange(key, start, start + _CHUNKS_AT_ONCE - 1)
        yield from chunks
        if len(chunks) < _CHUNKS_AT_ONCE:
            return
        start += len(chunks)
