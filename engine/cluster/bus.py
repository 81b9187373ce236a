"""Commands to nodes and their replies, over Redis.

A request goes to each node named as an entry of the node's command stream
(``commands:<node>``): ``{id, kind, args, reply_to, deadline}`` as JSON. A node reads its stream
(``CommandListener``), runs the command and pushes ``{request, node, ok, result, error}`` onto
the request's reply list, which expires soon after. The requester (``CommandBus.request``) waits
for one reply per node until its timeout; a node that does not answer in time is reported as
such. Commands are not kept for nodes that are away: what a returning node must know (the
cluster's flow) lives elsewhere. Replies that arrive after the deadline are dropped with the list.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import redis

from engine.cluster.keys import ClusterKeys

log = logging.getLogger(__name__)

#: How many entries a node's command stream keeps (older ones are trimmed).
STREAM_LENGTH = 1000
#: How long a reply list outlives its request's deadline, in seconds.
REPLY_GRACE = 30


@dataclass(frozen=True)
class Command:
    """A command to a node."""

    id: str
    kind: str
    args: dict[str, Any] = field(default_factory=dict)
    reply_to: str = ""
    deadline: float = 0.0

    def encode(self) -> dict[str, str]:
        return {"command": json.dumps({"id": self.id, "kind": self.kind, "args": self.args,
                                       "reply_to": self.reply_to, "deadline": self.deadline})}

    @classmethod
    def decode(cls, fields: dict[bytes | str, bytes | str]) -> Command:
        raw = fields.get(b"command", fields.get("command"))
        data = json.loads(raw)
        return cls(data["id"], data["kind"], dict(data.get("args") or {}), data.get("reply_to", ""),
                   float(data.get("deadline") or 0))


@dataclass(frozen=True)
class Reply:
    """A node's answer to a command; ``error`` says why it failed (``ok`` False)."""

    node: str
    ok: bool
    result: Any = None
    error: str = ""

    @property
    def timed_out(self) -> bool:
        return not self.ok and self.error == TIMEOUT

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "ok": self.ok, "result": self.result, "error": self.error}


TIMEOUT = "no answer before the timeout"


class CommandBus:
    """The requester's side: send a command to nodes and gather their replies."""

    def __init__(self, client: redis.Redis, keys: ClusterKeys) -> None:
        self.client = client
        self.keys = keys

    def request(self, nodes: Iterable[str], kind: str, args: dict[str, Any] | None = None,
                timeout: float = 5.0) -> dict[str, Reply]:
        """Send ``kind`` to every node of ``nodes`` and wait up to ``timeout`` seconds for their
        replies; a node that did not answer gets a reply with ``timed_out``."""
        nodes = list(dict.fromkeys(nodes))
        request_id = uuid.uuid4().hex
        reply_key = self.keys.reply(request_id)
        deadline = time.time() + timeout
        command = Command(request_id, kind, args or {}, reply_key, deadline)
        pipe = self.client.pipeline()
        for node in nodes:
            pipe.xadd(self.keys.commands(node), command.encode(), maxlen=STREAM_LENGTH, approximate=True)
        pipe.expire(reply_key, int(timeout + REPLY_GRACE))
        pipe.execute()
        replies: dict[str, Reply] = {}
        while len(replies) < len(nodes):
            remaining = deadline - time.time()
            if remaining <= 0:
                break
            popped = self.client.blpop([reply_key], timeout=max(remaining, 0.01))
            if popped is None:
                break
            data = json.loads(popped[1])
            if data.get("request") == request_id and data.get("node") in nodes:
                replies[data["node"]] = Reply(data["node"], bool(data.get("ok")), data.get("result"),
                                              data.get("error") or "")
        self.client.delete(reply_key)
        return {node: replies.get(node, Reply(node, False, None, TIMEOUT)) for node in nodes}

    def send(self, nodes: Iterable[str], kind: str, args: dict[str, Any] | None = None) -> str:
        """Send ``kind`` to ``nodes`` without waiting for replies; returns the request id."""
        request_id = uuid.uuid4().hex
        command = Command(request_id, kind, args or {}, "", 0.0)
        pipe = self.client.pipeline()
        for node in nodes:
            pipe.xadd(self.keys.commands(node), command.encode(), maxlen=STREAM_LENGTH, approximate=True)
        pipe.execute()
        return request_id


Handler = Callable[[Command], Any]


class CommandListener:
    """A node's side: read the node's command stream and answer each command with the handler
    registered for its kind. Runs in a thread of its own; survives Redis going away (it waits
    and reads on from the newest entry when Redis is back)."""

    def __init__(self, client: redis.Redis, keys: ClusterKeys, node_id: str, *, block_ms: int = 1000) -> None:
        self.client = client
        self.keys = keys
        self.node_id = node_id
        self.block_ms = block_ms
        self.handlers: dict[str, Handler] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_id = "$"

    def register(self, kind: str, handler: Handler) -> None:
        """Answer commands of ``kind`` with ``handler(command)`` (its return value, JSON-ready, is
        the result; an exception it raises is the error)."""
        self.handlers[kind] = handler

    def start(self) -> None:
        """Answer every command sent from now on, in a thread of its own."""
        try:
            newest = self.client.xrevrange(self.keys.commands(self.node_id), count=1)
            self._last_id = newest[0][0] if newest else "0-0"
        except redis.RedisError:
            self._last_id = "$"
        self._thread = threading.Thread(target=self._run, name=f"commands-{self.node_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.block_ms / 1000 + 5)

    def _run(self) -> None:
        stream = self.keys.commands(self.node_id)
        while not self._stop.is_set():
            try:
                entries = self.client.xread({stream: self._last_id}, count=100, block=self.block_ms)
            except redis.RedisError as error:
                log.debug("node %s: command stream unreachable: %s", self.node_id, error)
                self._last_id = "$"
                self._stop.wait(1.0)
                continue
            for _, messages in entries or ():
                for entry_id, fields in messages:
                    self._last_id = entry_id
                    self._answer(fields)

    def _answer(self, fields) -> None:
        try:
            command = Command.decode(fields)
        except (ValueError, KeyError, TypeError) as error:
            log.warning("node %s: unreadable command skipped: %s", self.node_id, error)
            return
        if command.deadline and time.time() > command.deadline:
            return
        handler = self.handlers.get(command.kind)
        if handler is None:
            reply = {"ok": False, "result": None, "error": f"unknown command {command.kind!r}"}
        else:
            try:
                reply = {"ok": True, "result": handler(command), "error": ""}
            except Exception as error:  # noqa: BLE001 - the requester gets the reason
                log.warning("node %s: command %s failed: %s", self.node_id, command.kind, error)
                reply = {"ok": False, "result": None, "error": str(error) or type(error).__name__}
        if command.reply_to:
            try:
                self.client.rpush(command.reply_to,
                                  json.dumps({"request": command.id, "node": self.node_id, **reply}))
            except redis.RedisError as error:
                log.debug("node %s: reply to %s lost: %s", self.node_id, command.id, error)
