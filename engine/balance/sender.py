"""The sending end of load-balanced connections: one worker per peer node, nothing forgotten early.

Each worker takes batches (up to ``batch_count`` FlowFiles / ``batch_bytes`` of one connection)
from that peer's remote partition of every load-balanced connection, in turn, and writes them to
the peer's stream (``engine.balance.wire``), waiting before each entry while the stream holds
``stream_cap`` entries. The FlowFiles stay unacknowledged in their partition until the peer
answers; up to ``window`` batches are in flight at once, and the entries of a batch are written
in pipelines (one round trip for as many as this node's share of the room left in the stream:
the room divided among the nodes that may write to it, so that the stream never holds more than
``stream_cap`` plus one entry per other sender, as with one XADD at a time). The batches
accepted by the time the worker looks are then ended together: one WAL transaction of DELETE
records with the SEND ("Re-distributed for Load-balanced connection") and DROP events as its
outbox entry (``NodeStorage.commit``), the events registered, then the partitions acknowledged.
A DELETE transaction that fails records no event: the batch is sent again, and the events are
recorded once, when its second answer is committed. A refused batch, one not answered within
``ack_timeout``, or one Redis failed to take goes to ``on_failure`` (by default back into the
same partition) and the peer is left alone for ``penalty`` seconds: the batch is sent again
later, and the receiver's transfer marks keep a batch it had already taken from being taken
twice. With ``pins`` (``engine.balance.pins``) a batch's FlowFiles are pinned to their node
before it leaves and until its outcome is known, so a batch in doubt is sent again only to that
node, never to another one (which would deliver it twice). A FlowFile whose content is gone is
dropped ("Content Not Found"). Only reachable peers are sent to.
"""

from __future__ import annotations

import itertools
import logging
import os
import queue as queue_module
import threading
import time
import uuid as uuid_module
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping

import redis

from engine.balance.contents import content_chunks
from engine.balance.pins import PinError, TransferPins
from engine.balance.receiver import COMPONENT_TYPE, BulletinPoster, _log_bulletin, transit_uri
from engine.balance.trust import Signer, Verifier
from engine.balance.wire import (
    BatchEncoder, Compression, FlowFileMeta, Header, WireError, ack_signed_data, decode_ack,
)
from engine.cluster.keys import ClusterKeys
from engine.content.reader import ContentNotFoundError
from engine.flowfile import FlowFile
from engine.provenance.event import ProvenanceEvent, ProvenanceEventType as E
from engine.queue import FlowFileQueue
from engine.repository.records import RepositoryRecord
from engine.session.component import SessionComponent
from engine.session.session import ProcessSession
from engine.storage import NodeStorage
from engine.wal.serde import UpdateType

__all__ = ["SEND_DETAILS", "TransferSender"]

log = logging.getLogger(__name__)

SEND_DETAILS = "Re-distributed for Load-balanced connection"
_new = tuple.__new__
_DELETE = UpdateType.DELETE
_PIPELINE_BYTES = 4 << 20

#: Every load-balanced connection: (connection id, compression, remote partitions by node id).
ConnectionLister = Callable[[], Iterable[tuple[str, "Compression | str", Mapping[str, FlowFileQueue]]]]
#: ``(connection id, node id, FlowFiles)``: takes back FlowFiles of a failed batch (requeue and acknowledge).
FailureHandler = Callable[[str, str, list[FlowFile]], None]


class TransferTimeout(Exception):
    """The destination's stream stayed full (its node does not read it)."""


@dataclass
class _Batch:
    connection_id: str
    node_id: str
    partition: FlowFileQueue
    flowfiles: list[FlowFile]
    compression: Compression = Compression.DO_NOT_COMPRESS
    key: str = ""
    deadline: float = 0.0
    started: float = field(default_factory=time.monotonic)


class TransferSender:
    """Sends the remote partitions of load-balanced connections to their nodes (see the module docstring).

    ``reachable_peers()`` names the peers that may be sent to now; ``connections()`` lists the
    load-balanced connections. ``signer`` signs batches; ``verifier`` checks acknowledgements.
    """

    def __init__(
        self,
        redis_factory: Callable[[], redis.Redis],
        keys: ClusterKeys,
        node_id: str,
        storage: NodeStorage,
        reachable_peers: Callable[[], set[str]],
        connections: ConnectionLister,
        signer: Signer,
        verifier: Verifier,
        *,
        on_failure: FailureHandler | None = None,
        pins: TransferPins | None = None,
        bulletin: BulletinPoster = _log_bulletin,
        ack_timeout: float = 30.0,
        penalty: float = 1.0,
        stream_cap: int = 64,
        chunk_size: int = 1 << 20,
        batch_count: int = 1000,
        batch_bytes: int = 10 << 20,
        window: int = 8,
        idle_wait: float = 0.05,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis_factory = redis_factory
        self._keys = keys
        self.node_id = node_id
        self._storage = storage
        self._reachable = reachable_peers
        self._connections = connections
        self._signer = signer
        self._verifier = verifier
        self._on_failure = on_failure
        self._pins = pins
        self._bulletin = bulletin
        self.ack_timeout = ack_timeout
        self.penalty = penalty
        self.stream_cap = stream_cap
        self.chunk_size = chunk_size
        self.batch_count = batch_count
        self.batch_bytes = batch_bytes
        self.window = window
        self._idle_wait = idle_wait
        self._clock = clock
        self._stop = threading.Event()
        self._threads: dict[str, threading.Thread] = {}
        self._acks: dict[str, queue_module.SimpleQueue] = {}
        self._pending: dict[str, str] = {}  # batch key -> destination node
        self._lock = threading.Lock()
        self._supervisor: threading.Thread | None = None
        #: Batches accepted by their destination since the start (for status and tests).
        self.batches_accepted = 0
        self.batches_failed = 0

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the acknowledgement reader and the thread that starts a worker per peer."""
        self._stop.clear()
        self._supervisor = threading.Thread(target=self._supervise, name=f"lb-sender-{self.node_id}", daemon=True)
        self._supervisor.start()
        ack_reader = threading.Thread(target=self._read_acks, name=f"lb-acks-{self.node_id}", daemon=True)
        ack_reader.start()
        self._threads["\0acks"] = ack_reader

    def stop(self) -> None:
        """Stop every thread; batches still unanswered go back to their partitions."""
        self._stop.set()
        if self._supervisor is not None:
            self._supervisor.join()
        for thread in list(self._threads.values()):
            thread.join()
        self._threads.clear()

    def _supervise(self) -> None:
        while not self._stop.wait(self._idle_wait):
            try:
                nodes = {node for _, _, partitions in self._connections() for node in partitions}
            except Exception:
                log.exception("listing the load-balanced connections failed")
                continue
            for node in nodes - set(self._threads):
                with self._lock:
                    self._acks[node] = queue_module.SimpleQueue()
                thread = threading.Thread(target=self._work, args=(node,), name=f"lb-send-{node}", daemon=True)
                self._threads[node] = thread
                thread.start()

    # -- acknowledgements ------------------------------------------------------------------

    def _read_acks(self) -> None:
        stream = self._keys.load_balance_acks(self.node_id)
        client: redis.Redis | None = None
        last = "0"
        while not self._stop.is_set():
            try:
                client = client or self._redis_factory()
                read = client.xread({stream: last}, count=256, block=100)
                entries = read[0][1] if read else []
                if not entries:
                    continue
                last = entries[-1][0]
                for entry_id, fields in entries:
                    self._route_ack(stream, entry_id, fields)
                client.xdel(stream, *[entry_id for entry_id, _ in entries])
            except redis.RedisError as error:
                log.warning("reading load-balance acknowledgements failed (%s); retrying", error)
                if client is not None:
                    client.close()
                client, last = None, "0"  # Redis may have restarted empty: its new ids start low
                self._stop.wait(0.2)
        if client is not None:
            client.close()

    def _route_ack(self, stream: str, entry_id: bytes, fields: dict[bytes, bytes]) -> None:
        where = f"stream {stream} entry {entry_id.decode()}"
        try:
            ack = decode_ack(fields, where)
        except WireError as error:
            self._bulletin("WARN", stream, str(error))
            return
        with self._lock:
            node = self._pending.get(ack.key)
        if node is None:
            return  # a late answer to a batch already given up (it is sent again)
        try:
            if ack.node != node:
                raise ValueError(f"it comes from node {ack.node}, the batch went to node {node}")
            self._verifier.verify(ack.node, ack.certificate, ack_signed_data(ack.key, ack.node, ack.accepted,
                                                                                ack.reason), ack.signature)
        except Exception as error:
            self._bulletin("WARN", stream, f"{where}: refused an acknowledgement of batch {ack.key}: {error}")
            return
        self._acks[node].put(ack)

    # -- a worker per destination ----------------------------------------------------------

    def _work(self, node: str) -> None:
        in_flight: dict[str, _Batch] = {}
        acks = self._acks[node]
        penalized_until = 0.0
        turn = itertools.count()
        client: redis.Redis | None = None
        while True:
            stopping = self._stop.is_set()
            now = time.monotonic()
            accepted: list[_Batch] = []
            while True:
                try:
                    ack = acks.get_nowait()
                except queue_module.Empty:
                    break
                batch = in_flight.pop(ack.key, None)
                if batch is not None:
                    if ack.accepted:
                        accepted.append(batch)
                    else:
                        self._bulletin("WARN", batch.connection_id,
                                       f"node {node} refused a batch of {len(batch.flowfiles)} FlowFile(s): "
                                       f"{ack.reason}; it is sent again")
                        self._settle(batch, delivered=False)
                        self._failed(batch)
                        penalized_until = time.monotonic() + self.penalty
            if accepted:
                self._accepted(accepted)
            for key, batch in list(in_flight.items()):
                if stopping or now >= batch.deadline:
                    if not stopping:
                        log.warning("node %s did not acknowledge batch %s within %.0f s; it is sent again", node,
                                    key, self.ack_timeout)
                    del in_flight[key]
                    self._failed(batch)
                    penalized_until = now + self.penalty
            if stopping:
                break
            if len(in_flight) >= self.window or now < penalized_until or node not in self._reachable():
                self._wait(acks)
                continue
            if in_flight and not self._batch_worth_sending(node):  # gather while the peer is busy
                self._wait(acks)
                continue
            batch = self._take(node, next(turn))
            if batch is None:
                self._wait(acks)
                continue
            try:
                client = client or self._redis_factory()
                self._send(client, batch)
                in_flight[batch.key] = batch
            except (redis.RedisError, TransferTimeout, PinError) as error:
                log.warning("sending a batch of %d FlowFile(s) to node %s failed (%s); it is sent again",
                            len(batch.flowfiles), node, error)
                if isinstance(error, TransferTimeout):  # its end entry never left: the node cannot have it
                    self._settle(batch, delivered=False)
                self._failed(batch)
                penalized_until = time.monotonic() + self.penalty
                if client is not None and isinstance(error, redis.RedisError):
                    client.close()
                    client = None
            except ContentNotFoundError as error:
                self._content_lost(batch, error)
        if client is not None:
            client.close()

    def _wait(self, acks: queue_module.SimpleQueue) -> None:
        """Sleep until an acknowledgement arrives or a short while passed."""
        try:
            ack = acks.get(timeout=self._idle_wait)
        except queue_module.Empty:
            return
        acks.put(ack)

    def _batch_worth_sending(self, node: str) -> bool:
        """Whether ``node``'s partitions hold half a batch: while batches to it are in flight, a
        smaller one waits for the next acknowledgement (its fixed costs — syncs on both ends, round
        trips — are then shared by more FlowFiles); an idle peer gets even one FlowFile at once."""
        count = size = 0
        for _, _, partitions in self._connections():
            partition = partitions.get(node)
            if partition is not None:
                figures = partition.size()
                count, size = count + figures.count, size + figures.bytes
                if count >= self.batch_count // 2 or size >= self.batch_bytes // 2:
                    return True
        return False

    def _take(self, node: str, turn: int) -> _Batch | None:
        """The next batch for ``node``, taking the connections in turn; None when none has data."""
        connections = list(self._connections())
        for offset in range(len(connections)):
            connection_id, compression, partitions = connections[(turn + offset) % len(connections)]
            partition = partitions.get(node)
            if partition is None:
                continue
            flowfiles = self._poll(connection_id, partition)
            flowfiles = self._readable(connection_id, partition, flowfiles)
            if flowfiles:
                return _Batch(connection_id, node, partition, flowfiles, Compression(compression))
        return None

    def _poll(self, connection_id: str, partition: FlowFileQueue) -> list[FlowFile]:
        taken: list[FlowFile] = []
        size = 0
        step = 1
        while len(taken) < self.batch_count and size < self.batch_bytes:
            polled = partition.poll(min(step, self.batch_count - len(taken)))
            if polled.expired:
                self._end(connection_id, partition, polled.expired, E.EXPIRE,
                          f"Expiration Threshold = {partition.settings.expiration:g} sec")
            if not polled.flowfiles:
                break
            taken.extend(polled.flowfiles)
            size += sum(f.size for f in polled.flowfiles)
            average = max(1, size // len(taken))
            step = max(1, (self.batch_bytes - size) // average)
        return taken

    def _readable(self, connection_id: str, partition: FlowFileQueue, flowfiles: list[FlowFile]) -> list[FlowFile]:
        """``flowfiles`` without those whose content file is gone (dropped: Content Not Found)."""
        ends: dict = {}
        for flowfile in flowfiles:
            claim = flowfile.content_claim
            if claim is not None and ends.get(claim.resource_claim, (None, -1))[1] < claim.offset + claim.length:
                ends[claim.resource_claim] = (claim, claim.offset + claim.length)
        content = self._storage.content
        missing = {resource for resource, (claim, end) in ends.items()
                   if not content.exists(claim._replace(offset=0, length=end))}
        if not missing:
            return flowfiles
        lost = [f for f in flowfiles if f.content_claim is not None and f.content_claim.resource_claim in missing]
        self._end(connection_id, partition, lost, E.DROP, "Content Not Found")
        return [f for f in flowfiles if f.content_claim is None or f.content_claim.resource_claim not in missing]

    # -- sending ---------------------------------------------------------------------------

    def _send(self, client: redis.Redis, batch: _Batch) -> None:
        transfer_id = uuid_module.uuid4().hex
        attempt = os.urandom(6).hex()
        batch.key = f"{transfer_id}:{attempt}"
        metas = [_new(FlowFileMeta, (f.uuid, _plain(f.attributes), f.entry_date, f.lineage_start_date, f.penalty_expiration,
                                     f.content_claim.length if f.content_claim is not None else -1))
                 for f in batch.flowfiles]
        header = Header(transfer_id, attempt, batch.connection_id, self.node_id, batch.compression,
                        int(self._clock() * 1000), self._signer.certificate_der, metas)
        encoder = BatchEncoder(header, self._signer)
        stream = self._keys.load_balance(batch.node_id)
        with self._lock:
            self._pending[batch.key] = batch.node_id
        batch.deadline = time.monotonic() + self.ack_timeout
        if self._pins is not None:
            self._pins.pin(batch.key, batch.node_id, (f.id for f in batch.flowfiles))
        chunks = content_chunks(self._storage.content, batch.flowfiles, self.chunk_size)
        self._add_all(client, stream, _entries(encoder, chunks, header.content_bytes <= self.chunk_size),
                      batch.deadline)
        batch.deadline = time.monotonic() + self.ack_timeout

    def _add_all(self, client: redis.Redis, stream: str, entries: Iterator[dict[bytes, bytes]],
                 deadline: float) -> None:
        """XADD ``entries`` in pipelines, never past ``stream_cap`` entries in the stream: each
        pipeline holds this node's share of the room left (up to about ``_PIPELINE_BYTES``)."""
        senders = max(1, len(self._reachable()))  # the peers: every one of them may write to this stream
        pause = 0.001
        entry = next(entries, None)
        while entry is not None:
            room = self.stream_cap - client.xlen(stream)
            if room > 0:
                room = max(1, room // senders)
            if room <= 0:
                if time.monotonic() > deadline or self._stop.is_set():
                    raise TransferTimeout(f"stream {stream} stayed at its cap of {self.stream_cap} entries")
                time.sleep(pause)
                pause = min(0.05, pause * 2)
                continue
            pause = 0.001
            size = 0
            with client.pipeline(transaction=False) as pipe:
                while entry is not None and room > 0 and size < _PIPELINE_BYTES:
                    pipe.xadd(stream, entry)
                    room -= 1
                    size += len(entry[b"d"])
                    entry = next(entries, None)
                pipe.execute()

    # -- outcomes --------------------------------------------------------------------------

    def _forget(self, batch: _Batch) -> None:
        with self._lock:
            self._pending.pop(batch.key, None)

    def _accepted(self, batches: list[_Batch]) -> None:
        """The peer committed ``batches``: end their FlowFiles here in one transaction (DELETE), then
        record SEND and DROP events and acknowledge the partitions."""
        for batch in batches:
            self._forget(batch)
        records = [_new(RepositoryRecord, (_DELETE, f, None, None, None, f.content_claim, None))
                   for batch in batches for f in batch.flowfiles]
        sends: list[ProvenanceEvent] = []
        drops: list[ProvenanceEvent] = []
        now = int(self._clock() * 1000)
        for batch in batches:
            uri = transit_uri(batch.node_id, batch.connection_id)
            duration = int((time.monotonic() - batch.started) * 1000)
            drop_details = f"Load-balanced to node {batch.node_id}"
            connection_id, queue_id = batch.connection_id, batch.partition.identifier
            for f in batch.flowfiles:
                claim = f.content_claim
                sends.append(_new(ProvenanceEvent, (
                    E.SEND, now, f.uuid, connection_id, COMPONENT_TYPE, f.entry_date, f.lineage_start_date, (), (),
                    f.attributes, {}, claim, claim, None, SEND_DETAILS, uri, None, None, None, duration, -1)))
                drops.append(_new(ProvenanceEvent, (
                    E.DROP, now, f.uuid, connection_id, COMPONENT_TYPE, f.entry_date, f.lineage_start_date, (), (),
                    f.attributes, {}, claim, claim, None, drop_details, None, None, None, queue_id, -1, -1)))
        try:
            self._storage.commit(records, sends + drops)
        except Exception:
            # The FlowFiles are queued again and sent again; the peer's marks keep it from taking
            # them twice, and its answer to the batch sent again records the SEND and DROP events.
            log.exception("could not record that %d batch(es) were taken by their nodes; they are sent again",
                          len(batches))
            for batch in batches:
                batch.partition.put_all(batch.flowfiles)
                batch.partition.acknowledge(batch.flowfiles)
            return
        for batch in batches:
            batch.partition.acknowledge(batch.flowfiles)
            self._settle(batch, delivered=True)
        self.batches_accepted += len(batches)

    def _settle(self, batch: _Batch, *, delivered: bool) -> None:
        if self._pins is not None and batch.key:
            self._pins.settle(batch.key, delivered=delivered)

    def _failed(self, batch: _Batch) -> None:
        """Give a batch that did not arrive back: to ``on_failure`` (which settles the partition
        itself), else to its partition."""
        self._forget(batch)
        self.batches_failed += 1
        if self._on_failure is not None:
            try:
                self._on_failure(batch.connection_id, batch.node_id, batch.flowfiles)
                return
            except Exception:
                log.exception("the failure handler of connection %s failed; the batch goes back to its partition",
                              batch.connection_id)
        batch.partition.put_all(batch.flowfiles)
        batch.partition.acknowledge(batch.flowfiles)

    def _content_lost(self, batch: _Batch, error: ContentNotFoundError) -> None:
        """A content vanished while it was being sent: that FlowFile is dropped, the rest sent again."""
        self._forget(batch)
        lost = [f for f in batch.flowfiles if f.content_claim is not None and f.content_claim == error.claim]
        self._bulletin("WARN", batch.connection_id, f"{error}; the FlowFile is dropped (Content Not Found)")
        self._end(batch.connection_id, batch.partition, lost, E.DROP, "Content Not Found")
        batch.flowfiles = [f for f in batch.flowfiles if f not in lost]
        if batch.flowfiles:
            self._failed(batch)

    def _end(self, connection_id: str, partition: FlowFileQueue, flowfiles: list[FlowFile], event: E,
             details: str) -> None:
        if not flowfiles:
            return
        session = self._session(connection_id, partition)
        session.adopt(partition, flowfiles, event, details)
        session.commit()

    def _session(self, connection_id: str, partition: FlowFileQueue) -> ProcessSession:
        component = SessionComponent(connection_id, COMPONENT_TYPE, incoming=[partition], clock=self._clock)
        return ProcessSession(self._storage, component)


def _entries(encoder: BatchEncoder, chunks: Iterator[bytes | bytearray], packed: bool) -> Iterator[dict[bytes, bytes]]:
    """The stream entries of a batch, made as they are written (the end entry last, once the
    digest covers every chunk)."""
    if packed:
        yield encoder.packed_entry(next(chunks, None))
        return
    yield encoder.header_entry()
    for chunk in chunks:
        yield encoder.chunk_entry(chunk)
    yield encoder.end_entry()


def _plain(attributes: Mapping[str, str]) -> dict[str, str]:
    return attributes if type(attributes) is dict else dict(attributes)
