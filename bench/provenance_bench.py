"""Provenance repository benchmark: sustained ingest rate and query latency.

Run ``python -m bench.provenance_bench [--events N]``. Ingest is measured by registering
batches (one session commit each) from one and from two threads with the background rollover
running, up to and including the final rollover (so the figure is sustained, indexing
included); a bare msgpack + ``os.write`` loop over the same batches gives the machine's raw
figure. Two shapes of batch: 10 unrelated events, and "flow-shaped" commits of 100 FlowFiles,
each with a SEND and a DROP sharing its attribute mapping, component and time, as a session
commit of PutFile makes them. Query latency is measured over a repository loaded with N events
(10,000,000 by default) spread over several shards. Data goes to ``.data/bench`` and is
deleted afterwards.

``--index-ceiling`` also measures ingest with the shard index's rows left out, then with the
index fragments left out too (in this process only: the repository then answers no query).
Those are the ceilings of any faster index: what registering, journaling, segment writing and
compression cost without it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import statistics
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

import msgpack

from bench.machine import describe_machine
from engine.flowfile import ContentClaim, ResourceClaim
from engine.provenance import (
    ProvenanceConfig,
    ProvenanceEvent,
    ProvenanceEventType,
    ProvenanceQuery,
    ProvenanceRepository,
    codec,
    index,
)

BATCH = 10
FLOW_FLOWFILES = 100
COMPONENTS = [f"{i:08x}-0000-4000-8000-00000000c0de" for i in range(50)]
TYPES = [
    ProvenanceEventType.RECEIVE, ProvenanceEventType.ATTRIBUTES_MODIFIED, ProvenanceEventType.ROUTE,
    ProvenanceEventType.CONTENT_MODIFIED, ProvenanceEventType.SEND, ProvenanceEventType.DROP,
]
INGEST_RATIO = 0.5
UUID_TARGET_MS = 50
COMPONENT_TARGET_MS = 500


def flowfile_uuid(n: int) -> str:
    """A uuid-shaped string unique to ``n``."""
    h = (n * 0x9E3779B97F4A7C15) & ((1 << 64) - 1)
    return f"{h >> 32:08x}-{(h >> 16) & 0xFFFF:04x}-4{n >> 48 & 0xFFF:03x}-8{n >> 36 & 0xFFF:03x}-{n & 0xFFFFFFFFFFFF:012x}"


def make_event(n: int, event_time: int) -> ProvenanceEvent:
    """A typical event: six attributes, one update, a content claim."""
    uuid = flowfile_uuid(n)
    return ProvenanceEvent(
        TYPES[n % len(TYPES)],
        event_time,
        uuid,
        COMPONENTS[n % len(COMPONENTS)],
        "UpdateAttribute",
        entry_date=event_time - 5,
        lineage_start_date=event_time - 10,
        previous_attributes={
            "filename": f"file-{n}.json", "path": "./", "uuid": uuid,
            "mime.type": "application/json", "http.status": "200", "tenant": f"t{n % 7}",
        },
        updated_attributes={"route": "matched"},
        content_claim=ContentClaim(ResourceClaim("default", n % 1024, f"{n // 1000}-1"), (n % 1000) * 512, 512),
        relationship="success",
        duration=3,
    )


def make_flow_batch(first: int, count: int, event_time: int) -> list[ProvenanceEvent]:
    """One PutFile commit of FlowFiles ``first ..``: per FlowFile a SEND, then a DROP (auto-
    terminated), both given the same attribute mapping and claim objects, as a session passes them."""
    component = COMPONENTS[first % len(COMPONENTS)]
    batch = []
    for n in range(first, first + count):
        uuid = flowfile_uuid(n)
        attributes = {
            "filename": f"file-{n}.json", "path": "./", "uuid": uuid,
            "mime.type": "application/json", "http.status": "200", "tenant": f"t{n % 7}",
        }
        content = ContentClaim(ResourceClaim("default", n % 1024, f"{n // 1000}-1"), (n % 1000) * 512, 512)
        shared = dict(entry_date=event_time - 5, lineage_start_date=event_time - 10, previous_attributes=attributes,
                      previous_content_claim=content, content_claim=content)
        batch.append(ProvenanceEvent(ProvenanceEventType.SEND, event_time, uuid, component, "PutFile",
                                     transit_uri=f"file:///data/out/file-{n}.json", duration=2, **shared))
        batch.append(ProvenanceEvent(ProvenanceEventType.DROP, event_time, uuid, component, "PutFile",
                                     details="Auto-Terminated by success Relationship", **shared))
    return batch


class Timeline:
    """Event times spread so that ``total`` events span ``hours`` of simulated time."""

    def __init__(self, total: int, hours: float) -> None:
        self.step = max(1, int(hours * 3_600_000 / max(total, 1)))
        self.base = int(time.time() * 1000) - int(hours * 3_600_000) - 60_000

    def at(self, n: int) -> int:
        return self.base + n * self.step


def plain_batches(total: int, timeline: Timeline) -> list[list[ProvenanceEvent]]:
    """``total`` unrelated events (``make_event``) in batches of ``BATCH``."""
    events = [make_event(n, timeline.at(n)) for n in range(total)]
    return [events[i : i + BATCH] for i in range(0, total, BATCH)]


def flow_batches(total: int, timeline: Timeline) -> list[list[ProvenanceEvent]]:
    """About ``total`` events in flow-shaped batches (``make_flow_batch``)."""
    return [make_flow_batch(n, FLOW_FLOWFILES, timeline.at(2 * n)) for n in range(0, total // 2, FLOW_FLOWFILES)]


def run_threads(threads: int, work: Callable[[int], None]) -> None:
    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def raw_rate(batches: Sequence[Sequence[ProvenanceEvent]], directory: Path) -> tuple[float, float]:
    """Events/s and CPU µs per event of packing each batch with msgpack and appending it with
    os.write, nothing else."""
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / "raw", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    packb = msgpack.packb
    cpu = time.process_time()
    start = time.perf_counter()
    for batch in batches:
        os.write(fd, packb([tuple(event) for event in batch], use_bin_type=True))
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    os.close(fd)
    shutil.rmtree(directory)
    count = sum(map(len, batches))
    return count / elapsed, cpu / count * 1e6


def sustained_rate(batches: Sequence[Sequence[ProvenanceEvent]], directory: Path, threads: int) -> tuple[float, float]:
    """Events/s and CPU µs per event (every thread of the process) registering ``batches`` from
    ``threads`` threads, final rollover included."""
    config = ProvenanceConfig(max_storage_size=1 << 40, max_storage_time=7 * 86400.0, rollover_size=16 << 20)
    repo = ProvenanceRepository(directory, config).open()
    repo.start()
    share = len(batches) // threads

    def work(index: int) -> None:
        for batch in batches[index * share : (index + 1) * share]:
            repo.register_events(batch)

    cpu = time.process_time()
    start = time.perf_counter()
    run_threads(threads, work)
    repo.rollover()
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    repo.close()
    shutil.rmtree(directory)
    count = sum(map(len, batches[: share * threads]))
    return count / elapsed, cpu / count * 1e6


def measure_ingest(label: str, batches: Sequence[Sequence[ProvenanceEvent]], root: Path) -> None:
    """Print the raw figure and the sustained rates from one and two threads over ``batches``.

    The raw loop runs before and after them and the faster run counts: on a shared machine a
    raw run slowed by a neighbour would flatter the ratio. CPU time per event, which a
    neighbour disturbs less than the wall clock, is printed beside each figure.
    """
    before = raw_rate(batches, root / "raw")
    one = sustained_rate(batches, root / "ingest-1", 1)
    two = sustained_rate(batches, root / "ingest-2", 2)
    after = raw_rate(batches, root / "raw")
    raw, raw_cpu = max(before, after)
    print(f"ingest, {label} (rollover and indexing included)")
    report(f"raw msgpack + os.write loop, events/s (cpu {raw_cpu:.2f} us/ev)", raw, "-", True)
    print(f"    (raw runs: {before[0]:,.0f} before, {after[0]:,.0f} after)")
    for threads, (rate, cpu) in ((1, one), (2, two)):
        ratio = rate / raw
        report(f"{threads} thread{'s' if threads > 1 else ''}, events/s (raw ratio {ratio:.2f}, cpu {cpu:.2f} us/ev)",
               rate, f">= {INGEST_RATIO} x raw", ratio >= INGEST_RATIO)


@contextlib.contextmanager
def without_index(fragments: bool) -> Iterator[None]:
    """Leave out the shard index's rows (and, with ``fragments``, the index fragments too: every
    event gets one constant fragment) while the block runs."""
    insert, index_fragments = index.insert, codec.index_fragments
    blank = f"{0:20d}{'CREATE':20}{0:20d}{0:8d}"
    index.insert = lambda conn, ids, fragments: None
    if fragments:
        codec.index_fragments = lambda events, indexed_attributes: [blank] * len(events)
    try:
        yield
    finally:
        index.insert, codec.index_fragments = insert, index_fragments


def measure_ceiling(label: str, batches: Sequence[Sequence[ProvenanceEvent]], root: Path) -> None:
    """Print the ingest figures of ``batches`` from one thread without the index's rows, then
    without its fragments too, each beside the raw figure of the same run."""
    raw, raw_cpu = max(raw_rate(batches, root / "raw"), raw_rate(batches, root / "raw"))
    print(f"ingest ceiling, {label}: raw {raw:,.0f} events/s (cpu {raw_cpu:.2f} us/ev)")
    for name, fragments in (("without the index rows", False), ("without the index rows and fragments", True)):
        with without_index(fragments):
            rate, cpu = sustained_rate(batches, root / "ceiling", 1)
        report(f"1 thread, {name} (raw ratio {rate / raw:.2f}, cpu {cpu:.2f} us/ev)", rate,
               f">= {INGEST_RATIO} x raw", rate / raw >= INGEST_RATIO)


def load(repo: ProvenanceRepository, total: int, timeline: Timeline) -> float:
    """Fill ``repo`` with ``total`` generated events from two threads; return events/s."""
    start = time.perf_counter()
    chunk = 1000

    def work(index: int) -> None:
        for base in range(index * chunk, total, 2 * chunk):
            batch = [make_event(n, timeline.at(n)) for n in range(base, min(base + chunk, total))]
            for i in range(0, len(batch), BATCH):
                repo.register_events(batch[i : i + BATCH])

    run_threads(2, work)
    repo.rollover()
    return total / (time.perf_counter() - start)


def latency_ms(repo: ProvenanceRepository, queries: Sequence[ProvenanceQuery]) -> tuple[float, float]:
    """Median and worst latency in ms of running each query once (after one warm-up)."""
    repo.query(queries[0])
    timings = []
    for query in queries:
        start = time.perf_counter()
        result = repo.query(query)
        timings.append((time.perf_counter() - start) * 1000)
        assert result.events, f"benchmark query found nothing: {query}"
    return statistics.median(timings), max(timings)


def report(label: str, value: float, target: str, ok: bool) -> None:
    print(f"  {label:<60} {value:>12,.1f}   target {target:<12} {'ok' if ok else 'MISSED'}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000_000, help="events loaded for the query figures")
    parser.add_argument("--ingest-events", type=int, default=500_000, help="events per ingest measurement")
    parser.add_argument("--index-ceiling", action="store_true",
                        help="also measure ingest without the index's rows, then without its fragments too")
    args = parser.parse_args(argv)
    root = Path(".data/bench").resolve()
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    try:
        pool_size = min(args.ingest_events, args.events) if args.events else args.ingest_events
        print(describe_machine(root))
        print(f"provenance benchmark: {pool_size:,} events per ingest run, {args.events:,} for queries")
        measure_ingest("batches of 10", plain_batches(pool_size, Timeline(pool_size, 1.0)), root)
        measure_ingest(f"flow-shaped batches of {FLOW_FLOWFILES} FlowFiles x (SEND, DROP)",
                       flow_batches(pool_size, Timeline(pool_size, 1.0)), root)
        if args.index_ceiling:
            measure_ceiling("batches of 10", plain_batches(pool_size, Timeline(pool_size, 1.0)), root)
            measure_ceiling("flow-shaped", flow_batches(pool_size, Timeline(pool_size, 1.0)), root)

        config = ProvenanceConfig(max_storage_size=1 << 40, max_storage_time=7 * 86400.0, rollover_size=16 << 20)
        timeline = Timeline(args.events, 10.0)
        with ProvenanceRepository(root / "query", config) as repo:
            repo.start()
            rate = load(repo, args.events, timeline)
            stats = repo.stats()
            print(f"query repository: {stats.event_count:,} events in {stats.shard_count} shards, "
                  f"{stats.bytes_on_disk / 2**20:,.0f} MB (loaded at {rate:,.0f} events/s)")
            rng = random.Random(7)
            uuid_queries = [
                ProvenanceQuery(flowfile_uuid=flowfile_uuid(rng.randrange(args.events))) for _ in range(50)
            ]
            window = 3_600_000
            component_queries = []
            for _ in range(20):
                start = timeline.at(rng.randrange(args.events)) - window // 2
                component_queries.append(ProvenanceQuery(
                    component_id=rng.choice(COMPONENTS), start_time=start, end_time=start + window, limit=100
                ))
            median, worst = latency_ms(repo, uuid_queries)
            print("query latency (ms)")
            report(f"uuid lookup, median (worst {worst:.1f})", median, f"<= {UUID_TARGET_MS}",
                   median <= UUID_TARGET_MS)
            median, worst = latency_ms(repo, component_queries)
            report(f"component + 1 h range, 1st page, median (worst {worst:.1f})", median,
                   f"<= {COMPONENT_TARGET_MS}", median <= COMPONENT_TARGET_MS)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
