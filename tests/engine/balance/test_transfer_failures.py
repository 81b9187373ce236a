"""Load-balanced transfer when things go wrong: lost acks, Redis or the receiver restarting, a full
disk, a full stream, and batches that must be refused."""

from __future__ import annotations

import errno
import threading
import time

import redis

from engine.balance.trust import ClusterKeyTrust
from engine.balance.wire import BatchEncoder, Compression, FlowFileMeta, Header
from engine.testing.faults import FaultPlan
from tests.engine.balance.conftest import CONNECTION, SECRET, wait_for


def _exactly_once(cluster, sent):
    wait_for(lambda: len(cluster.received()) >= len(sent) and len(cluster.a.flowfiles.wal.records) == 0
             and cluster.partition.size().unacknowledged_count == 0, timeout=40, what="every FlowFile delivered")
    time.sleep(0.3)  # anything sent twice would show up now
    received = cluster.received()
    assert len(received) == len(sent)
    sent_contents = sorted(cluster.a.content.read_bytes(f.content_claim) for f in sent)
    assert sorted(cluster.b.content.read_bytes(f.content_claim) for f in received) == sent_contents
    assert len(cluster.b.flowfiles.wal.records) == len(sent)


class _AckDropping(redis.Redis):
    """A client whose first ``lose`` acknowledgements to node A never reach Redis (a lost reply)."""

    lose = 0

    def xadd(self, name, fields, *args, **kwargs):
        if name.endswith("lback:node-a") and _AckDropping.lose > 0:
            _AckDropping.lose -= 1
            return b"0-0"
        return super().xadd(name, fields, *args, **kwargs)

    def pipeline(self, transaction=True, shard_hint=None):
        pipe = super().pipeline(transaction, shard_hint)
        queue = pipe.xadd

        def xadd(name, fields, *args, **kwargs):
            if name.endswith("lback:node-a") and _AckDropping.lose > 0:
                _AckDropping.lose -= 1
                return pipe
            return queue(name, fields, *args, **kwargs)

        pipe.xadd = xadd
        return pipe


def test_a_lost_acknowledgement_makes_the_sender_send_again_and_nothing_is_taken_twice(cluster):
    sent = cluster.make([1024] * 40)
    _AckDropping.lose = 1
    port = cluster.redis_server.port
    cluster.start_receiver(factory=lambda: _AckDropping(host="127.0.0.1", port=port))
    cluster.start_sender(ack_timeout=1.0, batch_count=40)
    _exactly_once(cluster, sent)
    assert cluster.sender.batches_failed >= 1
    assert cluster.receiver.batches_committed == 2  # the second created nothing, its marks matched
    assert cluster.receiver.flowfiles_created == len(sent)


def test_a_receiver_restarted_with_its_storage_mid_transfer_recovers_its_marks(cluster):
    sent = cluster.make([1024] * 30 + [200_000] * 4)
    _AckDropping.lose = 1
    port = cluster.redis_server.port
    receiver = cluster.start_receiver(factory=lambda: _AckDropping(host="127.0.0.1", port=port))
    cluster.start_sender(ack_timeout=1.5, batch_count=10, window=1)
    wait_for(lambda: receiver.batches_committed >= 1, what="a first batch committed")
    assert _AckDropping.lose == 0  # its acknowledgement was lost
    receiver.stop()
    cluster.receiver = None
    queued = cluster.received()
    cluster.b.close()
    cluster.b = cluster.open_storage("b")
    cluster.b_queue = type(cluster.b_queue)(CONNECTION)
    cluster.b_queue.put_all(cluster.b.recovered.queues.get(CONNECTION, []))
    assert len(cluster.received()) == len(queued)
    cluster.start_receiver()
    _exactly_once(cluster, sent)
    assert cluster.sender.batches_failed >= 1


def test_redis_restarted_empty_mid_transfer_loses_and_duplicates_nothing(cluster):
    sent = cluster.make([300_000] * 12)
    receiver = cluster.start_receiver()
    cluster.start_sender(ack_timeout=1.5, chunk_size=64 << 10, batch_bytes=700_000, stream_cap=8)
    wait_for(lambda: receiver.batches_committed >= 1, what="a first batch committed")
    cluster.redis_server.stop()
    time.sleep(0.3)
    cluster.redis_server.start()
    _exactly_once(cluster, sent)


def test_the_destination_stream_never_grows_past_its_cap(cluster):
    sent = cluster.make([1 << 20] * 4)
    cluster.start_sender(chunk_size=128 << 10, stream_cap=5, ack_timeout=20)
    watcher = cluster.client()
    stream = cluster.keys.load_balance("node-b")
    lengths = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            lengths.append(watcher.xlen(stream))
            time.sleep(0.002)

    thread = threading.Thread(target=watch)
    thread.start()
    try:
        wait_for(lambda: watcher.xlen(stream) >= 5, what="the stream filling up")
        time.sleep(0.5)  # a slow receiver: nothing read for a while
        cluster.start_receiver()
        _exactly_once(cluster, sent)
    finally:
        stop.set()
        thread.join()
    assert max(lengths) == 5


def test_a_full_disk_on_the_receiver_commits_nothing_and_the_batch_is_sent_again(cluster):
    sent = cluster.make([1024] * 10 + [100_000])
    plan = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"}, matches=str(cluster.b.data_dir),
                     persistent=True)
    with plan.installed():
        cluster.start_receiver()
        cluster.start_sender(ack_timeout=2.0)
        wait_for(lambda: cluster.receiver_bulletins.saying("could not store"), what="the refusal")
        assert plan.triggered
        assert len(cluster.b.flowfiles.wal.records) == 0 and cluster.b.flowfiles.wal.transfer_marks == {}
        assert cluster.received() == []
        plan.heal()
        _exactly_once(cluster, sent)
    assert cluster.b.verify().ok


def test_a_sender_that_cannot_commit_the_end_of_a_batch_sends_it_again_and_records_send_once(cluster):
    sent = cluster.make([1024] * 5)
    plan = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={"write"},
                     matches=str(cluster.a.data_dir / "flowfile_repository"))
    cluster.start_receiver()
    with plan.installed():
        cluster.start_sender(ack_timeout=2.0, batch_count=5)
        wait_for(lambda: plan.triggered, what="the DELETE transaction refused")
        _exactly_once(cluster, sent)
    cluster.sender.stop()
    cluster.a.provenance.rollover()
    for flowfile in sent:
        types = [e.event_type.name for e in cluster.a.provenance.events_mentioning(flowfile.uuid)]
        assert types == ["SEND", "DROP"], (flowfile.uuid, types)


def test_a_forged_batch_is_refused(cluster):
    cluster.make([1024] * 3)
    cluster.start_receiver()
    cluster.start_sender(trust=ClusterKeyTrust("another-key", "node-a"))
    wait_for(lambda: cluster.receiver_bulletins.saying("signature is refused"), what="the refusal")
    assert cluster.received() == [] and len(cluster.b.flowfiles.wal.records) == 0
    wait_for(lambda: cluster.sender.batches_failed >= 1, what="the sender taking the refusal")
    assert len(cluster.a.flowfiles.wal.records) == 3


def test_a_batch_for_an_unknown_connection_is_refused(cluster):
    cluster.make([1024] * 3)
    cluster.start_receiver(lookup=lambda connection_id: None)
    cluster.start_sender()
    wait_for(lambda: cluster.receiver_bulletins.saying(f"no connection {CONNECTION}"), what="the refusal")
    wait_for(lambda: cluster.sender_bulletins.saying("refused"), what="the sender told")
    assert len(cluster.a.flowfiles.wal.records) == 3


def _entries(compression=Compression.DO_NOT_COMPRESS, secret=SECRET, transfer_id="t1", sent_at=None):
    header = Header(transfer_id, "a1", CONNECTION, "node-a", compression,
                    sent_at if sent_at is not None else int(time.time() * 1000), b"",
                    [FlowFileMeta("u1", {"filename": "x"}, 1, 1, 0, 5), FlowFileMeta("u2", {}, 1, 1, 0, 3)])
    encoder = BatchEncoder(header, ClusterKeyTrust(secret, "node-a"))
    return [encoder.header_entry(), encoder.chunk_entry(b"hello"), encoder.chunk_entry(b"abc"), encoder.end_entry()]


def test_a_tampered_batch_is_refused_and_the_sender_told(cluster):
    entries = _entries()
    entries[2][b"d"] = b"xyz"
    cluster.start_receiver()
    client = cluster.client()
    for fields in entries:
        client.xadd(cluster.keys.load_balance("node-b"), fields)
    wait_for(lambda: cluster.receiver_bulletins.saying("digest does not match"), what="the refusal")
    acks = client.xrange(cluster.keys.load_balance_acks("node-a"))
    assert [fields[b"ok"] for _, fields in acks] == [b"0"]
    assert cluster.received() == []


def test_a_replayed_batch_is_refused(cluster):
    entries = _entries()
    cluster.start_receiver()
    client = cluster.client()
    stream = cluster.keys.load_balance("node-b")
    for fields in entries:
        client.xadd(stream, fields)
    wait_for(lambda: len(cluster.received()) == 2, what="the batch accepted")
    for fields in entries:
        client.xadd(stream, fields)
    wait_for(lambda: cluster.receiver_bulletins.saying("replayed"), what="the replay refused")
    old = _entries(transfer_id="t2", sent_at=int(time.time() * 1000) - 3_600_000)
    for fields in old:
        client.xadd(stream, fields)
    wait_for(lambda: len(cluster.receiver_bulletins.saying("replayed")) == 2, what="the old batch refused")
    assert len(cluster.received()) == 2
    assert sorted(cluster.b.content.read_bytes(f.content_claim) for f in cluster.received()) == [b"abc", b"hello"]
