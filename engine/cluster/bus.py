"""Commands to nodes and their replies, over Redis.

A request goes to each node named as an entry of the node's command stream
(``commands:<node>``): ``{id, kind, args, reply_to, deadline, issued_at}`` as JSON and its MAC
for that node (``engine.cluster.signing``). A node reads its stream (``CommandListener``),
refuses a command that does not verify or is expired or replayed (logged, answered as refused,
and reported to ``on_refused``), runs the others and pushes ``{request, node, ok, result, error,
mac}`` onto the request's reply list, which expires soon after; the requester drops a reply
whose MAC does not verify. The requester (``CommandBus.request``) waits
for one reply per node until its timeout; a node that does not answer in time is reported as
such. Commands are not kept for nodes that are away: what a returning node must know (the
cluster's flow) lives elsewhere. Replies that arrive after the deadline are dropped with the list.

A node answers most commands one by one on the listener's thread, in the order they come.
Handlers registered as *concurrent* (slow ones: provenance searches, lineage, content, queue
listings) run on a small pool of threads instead, answered in any order, so that ``status`` and
control commands never wait behind them; past ``max_pending`` such commands waiting or running,
the node answers new ones that it is busy.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import redis

from engine.cluster.keys import ClusterKeys
from engine.cluster.signing import CommandRefused, CommandSigner, ReplayGuard

log = logging.getLogger(__name__)

#: How many entries a node's command stream keeps (older ones are trimmed).
STREAM_LENGTH = 1000
#: How long a reply list outlives its request's deadline, in seconds.
REPLY_GRACE = 30


@dataclass(frozen=True)
class Command:
    """A command to a node; ``mac`` authenticates it (see ``engine.cluster.signing``)."""

    id: str
    kind: str
    args: dict[str, Any] = field(default_factory=dict)
    reply_to: str = ""
    deadline: float = 0.0
    issued_at: float = 0.0
    mac: str = ""

    def content(self) -> dict[str, Any]:
        """What the MAC covers, but for the cluster and the node it goes to."""
        return json.loads(json.dumps({"id": self.id, "kind": self.kind, "args": self.args, "reply_to": self.reply_to,
                                      "deadline": self.deadline, "issued_at": self.issued_at}))

    def encode(self, signer: CommandSigner, keys: ClusterKeys, node: str) -> dict[str, str]:
        """The stream entry of this command to ``node``, signed for that node only."""
        content = self.content()
        mac = signer.mac("command", {**content, "cluster": keys.cluster, "node": node})
        return {"command": json.dumps(content), "mac": mac}

    @classmethod
    def decode(cls, fields: dict[bytes | str, bytes | str]) -> Command:
        raw = fields.get(b"command", fields.get("command"))
        mac = fields.get(b"mac", fields.get("mac")) or b""
        data = json.loads(raw)
        return cls(data["id"], data["kind"], dict(data.get("args") or {}), data.get("reply_to", ""),
                   float(data.get("deadline") or 0), float(data.get("issued_at") or 0),
                   mac.decode() if isinstance(mac, bytes) else str(mac))

    def verify(self, signer: CommandSigner, keys: ClusterKeys, node: str) -> None:
        """Raise CommandRefused unless the MAC is this command's, to ``node`` of ``keys``'s cluster."""
        if not self.mac:
            raise CommandRefused("unsigned: the command carries no MAC")
        if not signer.valid("command", {**self.content(), "cluster": keys.cluster, "node": node}, self.mac):
            raise CommandRefused("forged or altered: the MAC does not match the command")


@dataclass(frozen=True)
class Reply:
    """A node's answer to a command; ``error`` says why it failed (``ok`` False), and ``code``,
    when the handler's exception carried one (its ``code`` attribute), what kind of failure it
    was, for the requester to act on without reading the words."""

    node: str
    ok: bool
    result: Any = None
    error: str = ""
    code: str = ""

    @property
    def timed_out(self) -> bool:
        return not self.ok and self.error == TIMEOUT

    def as_dict(self) -> dict[str, Any]:
        return {"node": self.node, "ok": self.ok, "result": self.result, "error": self.error}


TIMEOUT = "no answer before the timeout"


def _reply_content(data: dict[str, Any]) -> dict[str, Any]:
    # ``code`` is covered only when a reply has one, so replies of nodes older than it still verify.
    names = ("request", "node", "ok", "result", "error", *(("code",) if data.get("code") else ()))
    return json.loads(json.dumps({name: data.get(name) for name in names}))


def error_code(error: BaseException) -> str:
    """The kind of failure ``error`` says it is (its ``code`` attribute), or ""."""
    code = getattr(error, "code", "")
    return code if isinstance(code, str) else ""


class CommandBus:
    """The requester's side: send signed commands to nodes and gather their (signed) replies."""

    def __init__(self, client: redis.Redis, keys: ClusterKeys, signer: CommandSigner) -> None:
        self.client = client
        self.keys = keys
        self.signer = signer

    def request(self, nodes: Iterable[str], kind: str, args: dict[str, Any] | None = None,
                timeout: float = 5.0) -> dict[str, Reply]:
        """Send ``kind`` to every node of ``nodes`` and wait up to ``timeout`` seconds for their
        replies; a node that did not answer gets a reply with ``timed_out``."""
        nodes = list(dict.fromkeys(nodes))
        request_id = uuid.uuid4().hex
        reply_key = self.keys.reply(request_id)
        deadline = time.time() + timeout
        command = Command(request_id, kind, args or {}, reply_key, deadline, time.time())
        pipe = self.client.pipeline()
        for node in nodes:
            pipe.xadd(self.keys.commands(node), command.encode(self.signer, self.keys, node), maxlen=STREAM_LENGTH,
                      approximate=True)
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
            if not self.signer.valid("reply", _reply_content(data), data.get("mac")):
                log.warning("a reply to request %s that does not verify was dropped (node %r)", request_id,
                            data.get("node"))
                continue
            if data.get("request") == request_id and data.get("node") in nodes:
                replies[data["node"]] = Reply(data["node"], bool(data.get("ok")), data.get("result"),
                                              data.get("error") or "", data.get("code") or "")
        self.client.delete(reply_key)
        return {node: replies.get(node, Reply(node, False, None, TIMEOUT)) for node in nodes}

    def send(self, nodes: Iterable[str], kind: str, args: dict[str, Any] | None = None) -> str:
        """Send ``kind`` to ``nodes`` without waiting for replies; returns the request id."""
        request_id = uuid.uuid4().hex
        command = Command(request_id, kind, args or {}, "", 0.0, time.time())
        pipe = self.client.pipeline()
        for node in nodes:
            pipe.xadd(self.keys.commands(node), command.encode(self.signer, self.keys, node), maxlen=STREAM_LENGTH,
                      approximate=True)
        pipe.execute()
        return request_id


Handler = Callable[[Command], Any]


class CommandListener:
    """A node's side: read the node's command stream, refuse what does not verify and answer
    each other command with the handler registered for its kind. Runs in a thread of its own;
    survives Redis going away (it waits and reads on from the newest entry when Redis is back).
    ``on_refused(reason)`` is told of every refused command (the node makes it a bulletin)."""

    def __init__(self, client: redis.Redis, keys: ClusterKeys, node_id: str, signer: CommandSigner, *,
                 block_ms: int = 1000, on_refused: Callable[[str], None] | None = None, pool_size: int = 4,
                 max_pending: int = 64) -> None:
        self.client = client
        self.keys = keys
        self.node_id = node_id
        self.signer = signer
        self.guard = ReplayGuard()
        self.on_refused = on_refused
        self.block_ms = block_ms
        self.handlers: dict[str, Handler] = {}
        self.concurrent: set[str] = set()
        self.pool_size = pool_size
        self.max_pending = max_pending
        self._pool: ThreadPoolExecutor | None = None
        self._pending = 0
        self._pending_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_id = "$"

    def register(self, kind: str, handler: Handler, *, concurrent: bool = False) -> None:
        """Answer commands of ``kind`` with ``handler(command)`` (its return value, JSON-ready, is
        the result; an exception it raises is the error); ``concurrent`` handlers run on the
        listener's pool (see the module docstring)."""
        self.handlers[kind] = handler
        if concurrent:
            self.concurrent.add(kind)
        else:
            self.concurrent.discard(kind)

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
        pool, self._pool = self._pool, None
        if pool is not None:
            # Commands still waiting are dropped (their requesters time out); running ones finish.
            pool.shutdown(wait=True, cancel_futures=True)

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
            self._refused(None, f"unreadable: {error}")
            return
        try:
            command.verify(self.signer, self.keys, self.node_id)
            self.guard.check(command.id, command.issued_at)
        except CommandRefused as refusal:
            self._refused(command, str(refusal))
            return
        if command.deadline and time.time() > command.deadline:
            return
        if command.kind in self.concurrent:
            self._dispatch(command)
        else:
            self._handle(command)

    def _dispatch(self, command: Command) -> None:
        """Hand a command of a concurrent kind to the pool, or answer that the node is busy."""
        with self._pending_lock:
            busy = self._pending >= self.max_pending
            if not busy:
                self._pending += 1
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(self.pool_size, thread_name_prefix=f"commands-{self.node_id}")
                pool = self._pool
        if busy:
            self._reply(command, {"ok": False, "result": None, "error": (
                f"node {self.node_id} is busy: {self.max_pending} slow commands are waiting or running; ask again "
                "later")})
            return

        def run() -> None:
            try:
                if not command.deadline or time.time() <= command.deadline:
                    self._handle(command)
            finally:
                with self._pending_lock:
                    self._pending -= 1

        try:
            pool.submit(run)
        except RuntimeError:  # the pool shut down: the listener is stopping
            with self._pending_lock:
                self._pending -= 1

    def _handle(self, command: Command) -> None:
        """Answer ``command`` with its handler's result or error."""
        handler = self.handlers.get(command.kind)
        if handler is None:
            reply = {"ok": False, "result": None, "error": f"unknown command {command.kind!r}"}
        else:
            try:
                reply = {"ok": True, "result": handler(command), "error": ""}
            except Exception as error:  # noqa: BLE001 - the requester gets the reason
                log.warning("node %s: command %s failed: %s", self.node_id, command.kind, error)
                reply = {"ok": False, "result": None, "error": str(error) or type(error).__name__}
                if error_code(error):
                    reply["code"] = error_code(error)
        self._reply(command, reply)

    def _refused(self, command: Command | None, reason: str) -> None:
        what = f"command {command.kind!r} ({command.id})" if command else "a command"
        message = f"{what} refused: {reason}"
        log.warning("node %s: %s", self.node_id, message)
        if self.on_refused is not None:
            try:
                self.on_refused(message)
            except Exception:  # noqa: BLE001 - reporting must not stop the listener
                log.exception("node %s: reporting a refused command failed", self.node_id)
        if command is not None and command.reply_to.startswith(self.keys.reply("")):
            self._reply(command, {"ok": False, "result": None, "error": message, "refused": True})

    def _reply(self, command: Command, reply: dict[str, Any]) -> None:
        if not command.reply_to:
            return
        data = {"request": command.id, "node": self.node_id, **reply}
        data["mac"] = self.signer.mac("reply", _reply_content(data))
        try:
            self.client.rpush(command.reply_to, json.dumps(data))
        except redis.RedisError as error:
            log.debug("node %s: reply to %s lost: %s", self.node_id, command.id, error)
