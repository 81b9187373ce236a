"""The receiving end of load-balanced connections: batches from peers, committed before acknowledged.

One thread reads this node's stream (consumer group ``lb``, recreated when Redis lost it) and
reassembles each batch: the header is checked (replayed keys and unknown connections are
refused), the contents are written as they arrive into one content claim for the batch, and at
the end the digest and the sender's signature are verified. Then, in this order: the content
is synced, ONE FlowFile-repository transaction creates the FlowFiles (new ids and uuids; the
attributes, entry date, lineage start and penalty kept) together with a transfer mark per
FlowFile (``<sender node>:<sender uuid>``), the RECEIVE events are registered, the FlowFiles
join the connection's queue, and the sender is acknowledged. A FlowFile whose mark is already
in the log (a batch sent again after its acknowledgement was lost) is not created again, but
is acknowledged. Every entry is acknowledged and deleted from the stream once read, so the
stream only holds what was not read yet (what bounds Redis memory); a batch cut short (the
sender or Redis restarted) is given up after ``abandon_after`` seconds and sent again.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
import uuid as uuid_module
from typing import Any, Callable

import redis

from engine.balance.trust import Signer, Verifier
from engine.balance.wire import (
    CHUNK, END, HEADER, PACKED, BatchDigest, ContentSplitter, Header, Limits, WireError, decode_chunk, decode_end,
    decode_entry, decode_header, decode_packed, encode_ack,
)
from engine.checksums import crc32
from engine.cluster.keys import ClusterKeys
from engine.content.writer import ContentWriter
from engine.flowfile import ContentClaim, FlowFile
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.repository.records import RepositoryRecord
from engine.storage import NodeStorage
from engine.wal import SyncPolicy
from engine.wal.serde import UpdateType

__all__ = ["COMPONENT_TYPE", "GROUP", "TransferReceiver", "transit_uri"]

log = logging.getLogger(__name__)

GROUP = "lb"
COMPONENT_TYPE = "Load Balanced Connection"
_CREATE = UpdateType.CREATE
_new = tuple.__new__
_queue_date_index = itertools.count()

#: ``(level, source id, message)``: how the transfer reports what an operator should see.
BulletinPoster = Callable[[str, str, str], None]


def transit_uri(node_id: str, connection_id: str) -> str:
    """The transit URI of provenance events about a transfer with ``node_id``."""
    return f"flowsite://{node_id}/loadbalance/{connection_id}"


def _log_bulletin(level: str, source_id: str, message: str) -> None:
    log.log(logging.ERROR if level == "ERROR" else logging.WARNING, "%s: %s", source_id, message)


class _Incoming:
    """A batch being received."""

    def __init__(self, header: Header, where: str) -> None:
        self.header = header
        self.where = where
        self.started = time.monotonic()
        self.digest = BatchDigest()
        self.splitter = ContentSplitter([meta.size for meta in header.flowfiles])
        self.writer: ContentWriter | None = None
        self.offsets: dict[int, int] = {}
        self.crcs: dict[int, int] = {}
        self.skip: set[int] = set()
        self.refusal: str | None = None
        self.failure: BaseException | None = None


class TransferReceiver:
    """Receives the batches peers send to this node (see the module docstring).

    ``queue_lookup(connection_id)`` returns the connection's queue or None; a queue with
    ``receive_from_peer`` gets the FlowFiles through it, any other through ``put_all``.
    ``signer`` signs the acknowledgements; ``verifier`` checks the senders' signatures.
    """

    def __init__(
        self,
        redis_factory: Callable[[], redis.Redis],
        keys: ClusterKeys,
        node_id: str,
        storage: NodeStorage,
        queue_lookup: Callable[[str], Any],
        signer: Signer,
        verifier: Verifier,
        *,
        bulletin: BulletinPoster = _log_bulletin,
        limits: Limits = Limits(),
        read_count: int = 16,
        block_ms: int = 200,
        abandon_after: float = 60.0,
        replay_window: float = 600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis_factory = redis_factory
        self._keys = keys
        self.node_id = node_id
        self._storage = storage
        self._queue_lookup = queue_lookup
        self._signer = signer
        self._verifier = verifier
        self._bulletin = bulletin
        self._limits = limits
        self._read_count = read_count
        self._block_ms = block_ms
        self._abandon_after = abandon_after
        self._replay_window = replay_window
        self._clock = clock
        self.stream = keys.load_balance(node_id)
        self._incoming: dict[str, _Incoming] = {}
        self._seen: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._client: redis.Redis | None = None
        #: Batches committed and FlowFiles created since the start (for status and tests).
        self.batches_committed = 0
        self.flowfiles_created = 0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the receiving thread."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"lb-receiver-{self.node_id}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop receiving; batches half received are given up (their senders send them again)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        for incoming in self._incoming.values():
            self._discard(incoming)
        self._incoming.clear()
        if self._client is not None:
            self._client.close()
            self._client = None

    # -- the loop --------------------------------------------------------------------------

    def _run(self) -> None:
        backlog = True  # first what this consumer read before a restart and never acknowledged
        failures = 0
        while not self._stop.is_set():
            try:
                client = self._connect()
                start_id = "0" if backlog else ">"
                read = client.xreadgroup(GROUP, self.node_id, {self.stream: start_id}, count=self._read_count,
                                         block=None if backlog else self._block_ms)
                entries = read[0][1] if read else []
                if backlog and not entries:
                    backlog = False
                for entry_id, fields in entries:
                    self._handle(entry_id, fields)
                if entries:
                    ids = [entry_id for entry_id, _ in entries]
                    with client.pipeline(transaction=False) as pipe:
                        pipe.xack(self.stream, GROUP, *ids)
                        pipe.xdel(self.stream, *ids)
                        pipe.execute()
                self._abandon_stale()
                failures = 0
            except redis.ResponseError as error:
                if "NOGROUP" in str(error):
                    self._create_group()
                    backlog = True
                    continue
                failures += 1
                log.warning("reading %s failed: %s; retrying", self.stream, error)
                self._stop.wait(min(2.0, 0.1 * failures))
            except redis.RedisError as error:
                failures += 1
                log.warning("Redis is unreachable while receiving load-balanced batches (%s); retrying", error)
                self._drop_client()
                self._stop.wait(min(2.0, 0.1 * failures))
            except Exception:
                log.exception("the load-balance receiver of %s failed; continuing", self.node_id)
                self._stop.wait(0.5)

    def _connect(self) -> redis.Redis:
        if self._client is None:
            self._client = self._redis_factory()
            self._create_group()
        return self._client

    def _drop_client(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            except redis.RedisError:
                pass
            self._client = None

    def _create_group(self) -> None:
        try:
            self._client.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except redis.ResponseError as error:
            if "BUSYGROUP" not in str(error):
                raise

    def _abandon_stale(self) -> None:
        now = time.monotonic()
        for key, incoming in list(self._incoming.items()):
            if now - incoming.started > self._abandon_after:
                log.warning("%s: batch %s from %s was not complete after %.0f s; given up (its sender sends it "
                            "again)", incoming.where, key, incoming.header.sender, self._abandon_after)
                self._discard(incoming)
                del self._incoming[key]
        horizon = now - self._replay_window
        if len(self._seen) > 1000 or (self._seen and next(iter(self._seen.values())) < horizon):
            self._seen = {key: at for key, at in self._seen.items() if at >= horizon}

    # -- entries ---------------------------------------------------------------------------

    def _handle(self, entry_id: bytes, fields: dict[bytes, bytes] | None) -> None:
        where = f"stream {self.stream} entry {entry_id.decode()}"
        if not fields:
            return  # deleted while pending
        try:
            entry = decode_entry(fields, where)
        except WireError as error:
            self._bulletin("WARN", self.stream, str(error))
            return
        try:
            if entry.kind == PACKED:
                header, chunk, end = decode_packed(entry.payload, self._limits, where)
                incoming = self._begin(entry.key, header, where)
                if incoming is None:
                    return
                if chunk is not None:
                    self._chunk(incoming, chunk, where)
                self._end(incoming, end, where)
            elif entry.kind == HEADER:
                self._begin(entry.key, entry.payload, where)
            else:
                incoming = self._incoming.get(entry.key)
                if incoming is None:
                    return  # part of a batch given up, refused as a replay, or whose header Redis lost
                if entry.kind == CHUNK:
                    if entry.sequence != incoming.digest.chunks + 1:
                        raise WireError(f"{where}: chunk {entry.sequence} of batch {entry.key} arrived when chunk "
                                        f"{incoming.digest.chunks + 1} was expected")
                    self._chunk(incoming, entry.payload, where)
                elif entry.kind == END:
                    self._end(incoming, entry.payload, where)
        except WireError as error:
            self._bulletin("WARN", self.stream, f"{error}; the batch is refused")
            incoming = self._incoming.pop(entry.key, None)
            if incoming is not None:
                self._discard(incoming)
                self._acknowledge(incoming.header, False, str(error))

    def _begin(self, key: str, payload: bytes, where: str) -> _Incoming | None:
        header = decode_header(payload, self._limits, where)
        if header.key != key:
            raise WireError(f"{where}: the entry's transfer key {key} is not its header's {header.key}")
        now = time.monotonic()
        age = abs(self._clock() * 1000 - header.sent_at) / 1000
        if key in self._seen or key in self._incoming or age > self._replay_window:
            why = "was already received" if age <= self._replay_window else f"was sent {age:.0f} s ago"
            self._bulletin("WARN", header.connection_id,
                           f"refused a replayed load-balanced batch {key} claiming to come from node {header.sender}: "
                           f"it {why}")
            return None
        self._seen[key] = now
        incoming = self._incoming[key] = _Incoming(header, where)
        incoming.digest.header(payload)
        if self._queue_lookup(header.connection_id) is None:
            incoming.refusal = f"this node has no connection {header.connection_id}"
        else:
            was_received = self._storage.flowfiles.was_received
            sender = header.sender
            incoming.skip = {i for i, meta in enumerate(header.flowfiles) if was_received(f"{sender}:{meta.uuid}")}
        return incoming

    def _chunk(self, incoming: _Incoming, payload: bytes, where: str) -> None:
        incoming.digest.chunk(payload)
        data = decode_chunk(payload, incoming.header, self._limits, where)
        store = incoming.refusal is None and incoming.failure is None
        offsets, crcs, skip = incoming.offsets, incoming.crcs, incoming.skip
        for index, piece in incoming.splitter.feed(data, where):
            if not store or index in skip:
                continue
            try:
                writer = incoming.writer
                if writer is None:
                    writer = incoming.writer = self._storage.content.open_writer(checksum=False)
                if index not in offsets:
                    offsets[index] = writer.bytes_written
                writer.write(piece)
            except OSError as error:
                incoming.failure = error
                self._discard(incoming)
                store = False
                continue
            crcs[index] = crc32(piece, crcs.get(index, 0))

    def _end(self, incoming: _Incoming, payload: bytes, where: str) -> None:
        header = incoming.header
        chunks, digest, signature = decode_end(payload, where)
        del self._incoming[header.key]
        refusal = None
        if chunks != incoming.digest.chunks or digest != incoming.digest.digest():
            refusal = "its digest does not match its content (altered on the way)"
        elif not incoming.splitter.complete:
            refusal = "its content is shorter than its header announced"
        else:
            try:
                self._verifier.verify(header.sender, header.certificate, BatchDigest.signed_data(digest), signature)
            except Exception as error:
                refusal = f"the sender's signature is refused: {error}"
        refusal = refusal or incoming.refusal
        if refusal is None and incoming.failure is not None:
            refusal = f"this node could not store its content: {incoming.failure}"
        if refusal is None:
            refusal = self._commit(incoming)
        if refusal is not None:
            self._discard(incoming)
            self._bulletin("WARN", header.connection_id,
                           f"refused load-balanced batch {header.key} of {len(header.flowfiles)} FlowFile(s) from node "
                           f"{header.sender}: {refusal}")
        self._acknowledge(header, refusal is None, refusal or "")

    def _discard(self, incoming: _Incoming) -> None:
        if incoming.writer is not None:
            incoming.writer.abort()
            incoming.writer = None

    # -- commit ----------------------------------------------------------------------------

    def _commit(self, incoming: _Incoming) -> str | None:
        """Make the batch's FlowFiles durable and queued; None, or why it could not be done."""
        header = incoming.header
        queue = self._queue_lookup(header.connection_id)
        if queue is None:
            return f"this node has no connection {header.connection_id}"
        storage = self._storage
        base: ContentClaim | None = None
        try:
            if incoming.writer is not None:
                base = incoming.writer.close()
                incoming.writer = None
                if storage.flowfiles.sync_policy is not SyncPolicy.OS:
                    storage.content.sync([base.resource_claim])
        except OSError as error:
            if base is not None:
                storage.claims.decrement(base.resource_claim)
            return f"this node could not store its content: {error}"
        now = int(self._clock() * 1000)
        sender, connection_id = header.sender, header.connection_id
        resource = base.resource_claim if base is not None else None
        offsets, crcs, skip = incoming.offsets, incoming.crcs, incoming.skip
        next_id = storage.flowfiles.next_id
        uri = transit_uri(sender, connection_id)
        records: list[RepositoryRecord] = []
        marks: list[RepositoryRecord] = []
        events: list[ProvenanceEvent] = []
        flowfiles: list[FlowFile] = []
        for index, meta in enumerate(header.flowfiles):
            key = f"{sender}:{meta.uuid}"
            if index in skip:
                continue
            marks.append(RepositoryRecord(UpdateType.TRANSFER_RECEIVED, None, mark=(key, now)))
            claim = None
            if meta.size > 0:
                claim = _new(ContentClaim, (resource, base.offset + offsets[index], meta.size, crcs[index]))
            new_id = next_id()
            new_uuid = str(uuid_module.uuid4())
            attributes = dict(meta.attributes)
            attributes["uuid"] = new_uuid
            flowfile = _new(FlowFile, (new_id, new_uuid, attributes, claim, meta.entry_date, meta.lineage_start_date,
                                       new_id, now, next(_queue_date_index), meta.penalty_expiration))
            flowfiles.append(flowfile)
            records.append(_new(RepositoryRecord, (_CREATE, flowfile, connection_id, None, None, None, None)))
            events.append(_new(ProvenanceEvent, (
                E.RECEIVE, now, new_uuid, connection_id, COMPONENT_TYPE, meta.entry_date, meta.lineage_start_date,
                (), (), {}, attributes, None, claim, None, None, uri, meta.uuid, None, None, -1, -1,
            )))
        with_content = sum(1 for f in flowfiles if f.content_claim is not None)
        if with_content > 1:
            # The writer counted the batch's claim once; every FlowFile pointing into it counts.
            storage.claims.increment(resource, with_content - 1)
        try:
            storage.flowfiles.update(records + marks)
        except Exception as error:
            if resource is not None and with_content:
                storage.claims.decrement(resource, with_content)
            return f"this node could not commit it: {error}"
        if events:
            try:
                storage.provenance.register_events(events)
            except Exception:
                log.exception("the RECEIVE events of load-balanced batch %s could not be recorded", header.key)
        if flowfiles:
            receive = getattr(queue, "receive_from_peer", None)
            (receive or queue.put_all)(flowfiles)
        self.batches_committed += 1
        self.flowfiles_created += len(flowfiles)
        return None

    def _acknowledge(self, header: Header, accepted: bool, reason: str) -> None:
        fields = encode_ack(header.key, accepted, reason, self._signer)
        for attempt in range(3):
            try:
                self._connect().xadd(self._keys.load_balance_acks(header.sender), fields, maxlen=10_000,
                                     approximate=True)
                return
            except redis.RedisError as error:
                log.warning("could not acknowledge batch %s to %s (%s)", header.key, header.sender, error)
                self._drop_client()
                if self._stop.wait(0.1 * (attempt + 1)):
                    return
        # The sender times out and sends the batch again; its FlowFiles' marks make that harmless.
