"""Load-balanced transfer throughput from one node's storage to another's, beside raw Redis streams.

Run with ``python -m bench.transfer [--small N] [--large N]`` (``redis-server`` on the path).
Node A (this process) holds N FlowFiles in a remote partition and sends them with a
``TransferSender``; node B (a child process: two nodes are two processes) receives them with a
``TransferReceiver`` into its own data directory. The clock runs from the sender's start until
B has committed the last FlowFile (content synced, WAL, provenance, queued). For each content
size (1 KiB, 1 MiB) and each compression mode it prints FlowFiles/s and MB/s, and beside them
the same run's raw figure: the same bytes in 1 MiB entries, XADD pipelined from this process
and read with XREADGROUP + XACK + XDEL by a child process. Contents are random bytes (which
compression cannot shrink: the cost of trying) and, for COMPRESS_ATTRIBUTES_AND_CONTENT, also
log-like text (timestamps, levels, ids, amounts) that zstd shrinks about fourfold. Beside each
figure: the CPU time the sending and the receiving process spent (per 1,000 FlowFiles or per
MiB), which a shared machine disturbs far less than the throughput. ``--repeat N`` prints the
best of N runs of each case.

Targets (issue 12): >= 25,000 FlowFiles/s committed on the receiver for 1 KiB; >= 60 % of the
raw byte rate for 1 MiB.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import redis

from bench.machine import describe_machine
from engine.balance.receiver import TransferReceiver
from engine.balance.sender import TransferSender
from engine.balance.trust import ClusterKeyTrust
from engine.balance.wire import Compression
from engine.cluster.keys import ClusterKeys
from engine.flowfile import FlowFile
from engine.queue import FlowFileQueue, QueueSettings
from engine.repository.records import RepositoryRecord
from engine.storage import NodeStorage
from tests.servers import RedisServer

SECRET = "bench-cluster-key"
CONNECTION = "conn"
_UNSWAPPED = QueueSettings(swap_threshold=10_000_000, swap_batch_size=10_000, back_pressure_object_threshold=0,
                           back_pressure_data_size_threshold=0)


def _receive(port: int, directory: str, cluster: str, created, cpu, ready, stop) -> None:
    storage = NodeStorage(Path(directory), node="node-b")
    storage.open(background=False)
    queue = FlowFileQueue(CONNECTION, _UNSWAPPED)
    receiver = TransferReceiver(lambda: redis.Redis(port=port), ClusterKeys(cluster), "node-b", storage,
                                {CONNECTION: queue}.get, ClusterKeyTrust(SECRET, "node-b"), ClusterKeyTrust(SECRET))
    receiver.start()
    ready.set()
    started = time.process_time()
    while not stop.wait(0.005):
        if created.value != receiver.flowfiles_created:
            created.value = receiver.flowfiles_created
            cpu.value = time.process_time() - started
    receiver.stop()
    storage.close()


def _consume_raw(port: int, stream: str, total: int, done, ready) -> None:
    client = redis.Redis(port=port)
    client.xgroup_create(stream, "g", id="0", mkstream=True)
    ready.set()
    seen = 0
    while seen < total:
        read = client.xreadgroup("g", "c", {stream: ">"}, count=16, block=1000)
        for _, entries in read or ():
            ids = [entry_id for entry_id, _ in entries]
            seen += sum(len(fields[b"d"]) for _, fields in entries)
            pipe = client.pipeline(transaction=False)
            pipe.xack(stream, "g", *ids)
            pipe.xdel(stream, *ids)
            pipe.execute()
    done.set()


def raw_rate(port: int, total_bytes: int, cluster: str) -> float:
    """Bytes/s of raw pipelined XADD + XREADGROUP of ``total_bytes`` in 1 MiB entries, capped like the sender."""
    stream = f"raw:{cluster}"
    ready, done = multiprocessing.Event(), multiprocessing.Event()
    consumer = multiprocessing.Process(target=_consume_raw, args=(port, stream, total_bytes, done, ready))
    consumer.start()
    ready.wait()
    client = redis.Redis(port=port)
    payload = os.urandom(1 << 20)
    started = time.perf_counter()
    sent = 0
    while sent < total_bytes:
        while client.xlen(stream) >= 64:
            time.sleep(0.0005)
        pipe = client.pipeline(transaction=False)
        for _ in range(8):
            if sent >= total_bytes:
                break
            piece = payload[: min(len(payload), total_bytes - sent)]
            pipe.xadd(stream, {b"d": piece})
            sent += len(piece)
        pipe.execute()
    done.wait()
    elapsed = time.perf_counter() - started
    consumer.join()
    client.delete(stream)
    return total_bytes / elapsed


def text_pool(size: int) -> bytes:
    """``size`` bytes of log-like lines, the same every run (compressible as real logs are)."""
    rng = random.Random(12)
    levels = ["INFO", "INFO", "INFO", "WARN", "DEBUG", "ERROR"]
    lines = []
    total = 0
    while total < size:
        line = (f"2026-11-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:"
                f"{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z {rng.choice(levels)} order={rng.randint(1, 10**7)} "
                f"customer=c{rng.randint(1, 50000)} amount={rng.randint(1, 99999) / 100:.2f} "
                f"region={rng.choice(['eu-west', 'us-east', 'ap-south'])} status={rng.choice(['ok', 'retry', 'ok'])}\n")
        lines.append(line)
        total += len(line)
    return "".join(lines).encode()[:size]


def transfer_rate(port: int, root: Path, size: int, count: int, compression: Compression, cluster: str,
                  text: bool = False) -> tuple[float, float, float]:
    """Seconds to move ``count`` FlowFiles of ``size`` bytes from node A to node B, and the CPU
    seconds the sending and the receiving process spent meanwhile."""
    sender_storage = NodeStorage(root / "a", node="node-a")
    sender_storage.open(background=False)
    partition = FlowFileQueue(CONNECTION, _UNSWAPPED)
    pool = text_pool(size + 64 * 1024) if text else os.urandom(size + 64 * 1024)
    for start in range(0, count, 1000):
        flowfiles = []
        for index in range(min(1000, count - start)):
            offset = (start + index) * 97 % (64 * 1024)
            claim = sender_storage.content.write_bytes(pool[offset:offset + size])
            ff_id = sender_storage.flowfiles.next_id()
            uuid = f"a-{ff_id}"
            flowfiles.append(FlowFile(ff_id, uuid, {"filename": f"f{ff_id}", "path": "./", "uuid": uuid}, claim,
                                      0, 0, ff_id))
        sender_storage.flowfiles.update([RepositoryRecord.create(f, CONNECTION) for f in flowfiles])
        partition.put_all(flowfiles)
    created, cpu = multiprocessing.Value("q", 0), multiprocessing.Value("d", 0.0)
    ready, stop = multiprocessing.Event(), multiprocessing.Event()
    receiver = multiprocessing.Process(target=_receive, args=(port, str(root / "b"), cluster, created, cpu, ready,
                                                               stop))
    receiver.start()
    ready.wait()
    sender = TransferSender(lambda: redis.Redis(port=port), ClusterKeys(cluster), "node-a", sender_storage,
                            lambda: {"node-b"}, lambda: [(CONNECTION, compression, {"node-b": partition})],
                            ClusterKeyTrust(SECRET, "node-a"), ClusterKeyTrust(SECRET), idle_wait=0.005)
    started, sender_cpu = time.perf_counter(), time.process_time()
    sender.start()
    while created.value < count:
        time.sleep(0.002)
    elapsed, sender_cpu = time.perf_counter() - started, time.process_time() - sender_cpu
    sender.stop()
    stop.set()
    receiver.join()
    sender_storage.close()
    return elapsed, sender_cpu, cpu.value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=50_000, help="1 KiB FlowFiles per run (default 50,000)")
    parser.add_argument("--large", type=int, default=200, help="1 MiB FlowFiles per run (default 200)")
    parser.add_argument("--only", choices=["small", "large"], help="run one content size only")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each case, transfer and raw alternating; the best of each is printed "
                             "(on a shared machine the best is the least disturbed)")
    options = parser.parse_args()
    runs = [(size, count, compression, text) for size, count in ((1024, options.small), (1 << 20, options.large))
            if options.only is None or options.only == ("small" if size == 1024 else "large")
            for compression, text in [(mode, False) for mode in Compression]
            + [(Compression.COMPRESS_ATTRIBUTES_AND_CONTENT, True)]]
    with tempfile.TemporaryDirectory(prefix="transfer-bench-") as directory:
        root = Path(directory)
        print(describe_machine(root))
        server = RedisServer(root / "redis")
        server.start()
        try:
            for run, (size, count, compression, text) in enumerate(runs):
                seconds, raw, cpu = float("inf"), 0.0, (0.0, 0.0)
                for attempt in range(options.repeat):
                    cluster = f"bench{run}-{attempt}"
                    elapsed, sender_cpu, receiver_cpu = transfer_rate(server.port, root / cluster, size, count,
                                                                      compression, cluster, text)
                    if elapsed < seconds:
                        seconds, cpu = elapsed, (sender_cpu, receiver_cpu)
                    raw = max(raw, raw_rate(server.port, size * count, cluster))
                    shutil.rmtree(root / cluster)
                rate = size * count / seconds
                content = "text" if text else "random"
                unit, per = ("1,000 FlowFiles", count / 1000) if size == 1024 else ("MiB", count * size / (1 << 20))
                print(f"{size:>8} B x {count:>6}  {compression.value:<32} {content:<6} {count / seconds:>9,.0f} "
                      f"FlowFiles/s {rate / 1e6:>8.1f} MB/s   raw XADD+XREADGROUP {raw / 1e6:>8.1f} MB/s   "
                      f"ratio {rate / raw:.2f}   CPU per {unit}: sender {cpu[0] * 1000 / per:.1f} ms, "
                      f"receiver {cpu[1] * 1000 / per:.1f} ms", flush=True)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
