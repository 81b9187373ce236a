"""The receiving end of load-balanced connections: batches from peers, committed before acknowledged.

One thread reads this node's stream (consumer group ``lb``, recreated when Redis lost it) and
reassembles each batch: the header is checked (replayed keys and unknown connections are
refused), the contents are written as they arrive into one content claim for the batch, and at
the end the digest and the sender's signature are verified. The batches completed by one read of
the stream are then committed together, in this order: their content is synced, ONE
FlowFile-repository transaction creates the FlowFiles (new ids and uuids; the attributes, entry
date, lineage start and penalty kept) together with a transfer mark per FlowFile (``<sender
node>:<sender uuid>``) and the RECEIVE events as its outbox entry (``NodeStorage.commit``: a
node killed before it registers them registers them when it starts again), the RECEIVE events
are registered, the FlowFiles join their connections' queues, and only then are the senders
acknowledged. A FlowFile whose mark is already in the log (a batch sent again after its
acknowledgement was lost) is not created again, but is acknowledged. Every entry is acknowledged
and deleted from the stream once read, so the stream only holds what was not read yet (what
bounds Redis memory); a batch cut short (the sender or Redis restarted) is given up after
``abandon_after`` seconds and sent again.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
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
_MARK = UpdateType.TRANSFER_RECEIVED
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
        self.claimants = 0
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
        self._complete: list[_Incoming] = []  # verified, to be committed with the rest of this read
        self._answers: list[tuple[Header, bool, str]] = []  # acknowledgements to send after the commit
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
                self._commit_complete()
                self._send_answers()
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
                header, chunk, end, codec = decode_packed(entry.payload, self._limits, where)
                incoming = self._begin(entry.key, header, where)
                if incoming is None:
                    return
                if chunk is not None:
                    self._chunk(incoming, chunk, codec, where)
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
                    self._chunk(incoming, entry.payload, entry.codec, where)
                elif entry.kind == END:
                    self._end(incoming, entry.payload, where)
        except WireError as error:
            self._bulletin("WARN", self.stream, f"{error}; the batch is refused")
            incoming = self._incoming.pop(entry.key, None)
            if incoming is not None:
                self._discard(incoming)
                self._answers.append((incoming.header, False, str(error)))

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

    def _chunk(self, incoming: _Incoming, payload: bytes, codec: int, where: str) -> None:
        incoming.digest.chunk(payload, codec)
        data = decode_chunk(payload, codec, incoming.header, self._limits, where)
        pieces = list(incoming.splitter.feed(data, where))
        if incoming.refusal is not None or incoming.failure is not None:
            return
        offsets, crcs, skip = incoming.offsets, incoming.crcs, incoming.skip
        try:
            writer = incoming.writer
            if writer is None:
                writer = incoming.writer = self._storage.content.open_writer(checksum=False)
            if not skip:
                # The usual case: the whole chunk in one write, each FlowFile's place noted.
                position = writer.bytes_written
                writer.write(data)
                for index, piece in pieces:
                    if index not in offsets:
                        offsets[index] = position
                    position += len(piece)
                    crcs[index] = crc32(piece, crcs.get(index, 0))
                return
            for index, piece in pieces:
                if index in skip:
                    continue
                if index not in offsets:
                    offsets[index] = writer.bytes_written
                writer.write(piece)
                crcs[index] = crc32(piece, crcs.get(index, 0))
        except OSError as error:
            incoming.failure = error
            self._discard(incoming)

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
            self._complete.append(incoming)
        else:
            self._refuse(incoming, refusal)

    def _refuse(self, incoming: _Incoming, refusal: str) -> None:
        header = incoming.header
        self._discard(incoming)
        self._bulletin("WARN", header.connection_id,
                       f"refused load-balanced batch {header.key} of {len(header.flowfiles)} FlowFile(s) from node "
                       f"{header.sender}: {refusal}")
        self._answers.append((header, False, refusal))

    def _discard(self, incoming: _Incoming) -> None:
        if incoming.writer is not None:
            incoming.writer.abort()
            incoming.writer = None

    # -- commit ----------------------------------------------------------------------------

    def _commit_complete(self) -> None:
        """Commit every batch completed by this read in one transaction (see the module docstring)."""
        batches, self._complete = self._complete, []
        if not batches:
            return
        storage = self._storage
        ready: list[tuple[_Incoming, Any, ContentClaim | None]] = []
        for incoming in batches:
            queue = self._queue_lookup(incoming.header.connection_id)
            if queue is None:
                self._refuse(incoming, f"this node has no connection {incoming.header.connection_id}")
                continue
            try:
                base = incoming.writer.close() if incoming.writer is not None else None
            except OSError as error:
                self._refuse(incoming, f"this node could not store its content: {error}")
                continue
            incoming.writer = None
            ready.append((incoming, queue, base))
        written = [base.resource_claim for _, _, base in ready if base is not None]
        if written and storage.flowfiles.sync_policy is not SyncPolicy.OS:
            try:
                storage.content.sync(written)
            except OSError as error:
                self._give_up(ready, f"this node could not store its content: {error}")
                return
        now = int(self._clock() * 1000)
        records: list[RepositoryRecord] = []
        marks: list[RepositoryRecord] = []
        events: list[ProvenanceEvent] = []
        queued: list[tuple[Any, list[FlowFile]]] = []
        taken: set[str] = set()  # marks of this commit: the same FlowFile twice in one read is created once
        for incoming, queue, base in ready:
            flowfiles = self._flowfiles(incoming, base, now, taken, records, marks, events)
            queued.append((queue, flowfiles))
        try:
            storage.commit(records + marks, events)
        except Exception as error:
            self._give_up(ready, f"this node could not commit it: {error}", counted=True)
            return
        for queue, flowfiles in queued:
            if flowfiles:
                receive = getattr(queue, "receive_from_peer", None)
                (receive or queue.put_all)(flowfiles)
            self.flowfiles_created += len(flowfiles)
        self.batches_committed += len(ready)
        self._answers.extend((incoming.header, True, "") for incoming, _, _ in ready)

    def _flowfiles(self, incoming: _Incoming, base: ContentClaim | None, now: int, taken: set[str],
                   records: list[RepositoryRecord], marks: list[RepositoryRecord],
                   events: list[ProvenanceEvent]) -> list[FlowFile]:
        """The FlowFiles of one batch, their CREATE records, marks and RECEIVE events appended."""
        header = incoming.header
        sender, connection_id = header.sender, header.connection_id
        resource = base.resource_claim if base is not None else None
        start = base.offset if base is not None else 0
        offsets, crcs, skip = incoming.offsets, incoming.crcs, incoming.skip
        next_id = self._storage.flowfiles.next_id
        uri = transit_uri(sender, connection_id)
        metas = header.flowfiles
        uuids = _uuid4s(len(metas))
        flowfiles: list[FlowFile] = []
        with_content = 0
        for index, meta in enumerate(metas):
            key = f"{sender}:{meta.uuid}"
            if index in skip or key in taken:
                continue
            taken.add(key)
            marks.append(_new(RepositoryRecord, (_MARK, None, None, None, None, None, (key, now))))
            claim = None
            if meta.size > 0:
                claim = _new(ContentClaim, (resource, start + offsets[index], meta.size, crcs[index]))
                with_content += 1
            new_id = next_id()
            new_uuid = uuids[index]
            attributes = meta.attributes  # decoded for this batch alone: the FlowFile may own it
            attributes["uuid"] = new_uuid
            flowfile = _new(FlowFile, (new_id, new_uuid, attributes, claim, meta.entry_date, meta.lineage_start_date,
                                       new_id, now, next(_queue_date_index), meta.penalty_expiration))
            flowfiles.append(flowfile)
            records.append(_new(RepositoryRecord, (_CREATE, flowfile, connection_id, None, None, None, None)))
            events.append(_new(ProvenanceEvent, (
                E.RECEIVE, now, new_uuid, connection_id, COMPONENT_TYPE, meta.entry_date, meta.lineage_start_date,
                (), (), {}, attributes, None, claim, None, None, uri, meta.uuid, None, None, -1, -1,
            )))
        # The writer counted the batch's claim once; every FlowFile pointing into it counts.
        if base is not None and with_content != 1:
            if with_content > 1:
                self._storage.claims.increment(resource, with_content - 1)
            else:
                self._storage.claims.decrement(resource)
        incoming.claimants = with_content
        return flowfiles

    def _give_up(self, ready: list[tuple[_Incoming, Any, ContentClaim | None]], refusal: str,
                 counted: bool = False) -> None:
        """Refuse batches whose commit failed, giving back the claimants their contents held."""
        for incoming, _, base in ready:
            if base is not None:
                count = incoming.claimants if counted else 1
                if count:
                    self._storage.claims.decrement(base.resource_claim, count)
            self._refuse(incoming, refusal)

    def _send_answers(self) -> None:
        """Acknowledge the batches of this read (committed ones only now), in one round trip."""
        answers, self._answers = self._answers, []
        if not answers:
            return
        entries = [(self._keys.load_balance_acks(header.sender), encode_ack(header.key, accepted, reason, self._signer))
                   for header, accepted, reason in answers]
        for attempt in range(3):
            try:
                with self._connect().pipeline(transaction=False) as pipe:
                    for stream, fields in entries:
                        pipe.xadd(stream, fields, maxlen=10_000, approximate=True)
                    pipe.execute()
                return
            except redis.RedisError as error:
                log.warning("could not acknowledge %d batch(es) (%s)", len(entries), error)
                self._drop_client()
                if self._stop.wait(0.1 * (attempt + 1)):
                    return
        # The senders time out and send the batches again; their FlowFiles' marks make that harmless.


def _uuid4s(count: int) -> list[str]:
    """``count`` random (version 4) uuids, made in bulk: one urandom call instead of one per uuid."""
    raw = bytearray(os.urandom(16 * count))
    raw[6::16] = bytes(b & 0x0F | 0x40 for b in raw[6::16])
    raw[8::16] = bytes(b & 0x3F | 0x80 for b in raw[8::16])
    h = raw.hex()
    return [f"{h[i:i + 8]}-{h[i + 8:i + 12]}-{h[i + 12:i + 16]}-{h[i + 16:i + 20]}-{h[i + 20:i + 32]}"
            for i in range(0, 32 * count, 32)]
