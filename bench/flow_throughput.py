"""FlowFiles per second through GenerateFlowFile → UpdateAttribute → RouteOnAttribute → PutFile.

Run with ``python -m bench.flow_throughput [--seconds S] [--warmup S] [--policy grouped]``. One
node runs the four processors with the given sync policy of the FlowFile repository (grouped by
default); GenerateFlowFile makes 1 KiB FlowFiles in batches of 100 as fast as the flow takes
them. After a warm-up, the rate is what PutFile wrote during the measured seconds; latency is
the time from each FlowFile's CREATE event to PutFile's SEND event (provenance times are in
milliseconds). At full speed the queues fill up to their back-pressure limits, so latency is
mostly waiting in queues; a second run offers a steady load below capacity (``--paced-rate``
FlowFiles/s) to show the latency of the processing itself.

Beside it, in the same run on the same disk, two raw figures: 1 KiB records appended to a file
with an fdatasync after every 100 (what a commit of 100 FlowFiles needs at least), and 1 KiB
files created, written and renamed in PutFile's output directory (what PutFile does per
FlowFile).

Targets (issue 17): with PutFile's output on a tmpfs, ≥ 15,000 FlowFiles/s; on a disk, with the
node's defaults (10 threads), ≥ 0.9 × the raw file rate of the same run. With ``--output-dir``
the bench writes into a new folder inside it and deletes that folder at the end (a tmpfs filled
by earlier runs slows the next ones).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from bench.machine import describe_machine, file_system_type
from engine.flow import load_flow
from engine.node import NodeConfig
from engine.provenance.event import ProvenanceEventType as E
from engine.provenance.query import ProvenanceQuery
from engine.runtime import FlowController
from engine.runtime.config import RuntimeConfig
from engine.storage import NodeStorage
from engine.testing.flows import connection, flow, processor

#: The node's default number of timer-driven threads (the disk target is for the defaults).
DEFAULT_THREADS = RuntimeConfig.max_timer_driven_threads


def bench_flow(directory: Path, out: Path, seconds: float, warmup: float, policy: str,
               put_tasks: int, period: float = 0.0, threads: int = 10) -> dict[str, float]:
    """Run the flow (GenerateFlowFile triggered every ``period`` seconds); return the rate and
    latency figures."""
    document = flow(
        processors=[
            processor("generate", "GenerateFlowFile", {"File Size": "1 KB", "Batch Size": "100"},
                      schedulingPeriod=f"{period * 1000:g} millis"),
            processor("update", "UpdateAttribute", {"stage": "updated", "size.class": "${fileSize:gt(512)}"}),
            processor("route", "RouteOnAttribute", {"large": "${size.class:equals('true')}"},
                      auto_terminate=["unmatched"]),
            processor("put", "PutFile", {"Directory": str(out), "Conflict Resolution Strategy": "replace"},
                      auto_terminate=["success", "failure"], concurrentlySchedulableTaskCount=put_tasks),
        ],
        connections=[connection("generated", "generate", "update"), connection("updated", "update", "route"),
                     connection("routed", "route", "put", ["large"])],
    )
    config = NodeConfig.from_mapping({"flowfile_repository": {"sync_policy": policy},
                                      "runtime": {"max_timer_driven_threads": threads}})
    storage = NodeStorage(directory / "node", config.storage)
    recovered = storage.open()
    controller = FlowController(storage, config=config.runtime)
    controller.load(load_flow(document), recovered)
    controller.start()
    controller.start_components()
    put = controller.processor("put")
    time.sleep(warmup)
    start_count, start_time, start_cpu = put.stats.totals.flowfiles_in, time.time(), time.process_time()
    time.sleep(seconds)
    end_count, end_time, end_cpu = put.stats.totals.flowfiles_in, time.time(), time.process_time()
    controller.shutdown()
    latencies = _latencies(storage, int(start_time * 1000), int(end_time * 1000))
    storage.close()
    return {
        "rate": (end_count - start_count) / (end_time - start_time),
        "written": end_count - start_count,
        "cpu_us": (end_cpu - start_cpu) * 1e6 / max(1, end_count - start_count),
        "p50": statistics.median(latencies) if latencies else float("nan"),
        "p99": statistics.quantiles(latencies, n=100)[98] if len(latencies) >= 100 else float("nan"),
    }


def _latencies(storage: NodeStorage, start_ms: int, end_ms: int) -> list[int]:
    storage.provenance.rollover()
    sends = storage.provenance.query(ProvenanceQuery(event_type=E.SEND, start_time=start_ms, end_time=end_ms,
                                                     limit=5_000_000)).events
    wanted = {event.flowfile_uuid: event.event_time for event in sends}
    created = storage.provenance.query(ProvenanceQuery(event_type=E.CREATE, start_time=start_ms - 60_000,
                                                       end_time=end_ms, limit=5_000_000)).events
    return [wanted[event.flowfile_uuid] - event.event_time for event in created if event.flowfile_uuid in wanted]


def bench_files(directory: Path, seconds: float) -> float:
    """1 KiB files per second created, written and renamed into place (what PutFile does per FlowFile)."""
    directory.mkdir(parents=True, exist_ok=True)
    data = os.urandom(1024)
    count = 0
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < stop:
        temporary = directory / f".raw-{count}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, data)
        os.close(fd)
        os.replace(temporary, directory / f"raw-{count}")
        count += 1
    rate = count / (time.perf_counter() - started)
    for index in range(count):
        (directory / f"raw-{index}").unlink()
    return rate


def bench_raw(directory: Path, seconds: float) -> float:
    """1 KiB records per second, appended with an fdatasync every 100 records."""
    path = directory / "raw"
    record = os.urandom(1024)
    batch = record * 100
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    count = 0
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    try:
        while time.perf_counter() < stop:
            os.write(fd, batch)
            os.fdatasync(fd)
            count += 100
    finally:
        os.close(fd)
        path.unlink()
    return count / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--policy", default="grouped", choices=["always", "grouped", "os"])
    parser.add_argument("--put-tasks", type=int, default=1, help="concurrent tasks of PutFile (default 1)")
    parser.add_argument("--output-dir", type=Path, help="where PutFile writes (default: in the scratch directory)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"the node's max timer-driven threads (default {DEFAULT_THREADS}, the node's default)")
    parser.add_argument("--paced-rate", type=float, default=1000.0,
                        help="FlowFiles/s offered in the latency run (default 1,000; 0: no latency run)")
    args = parser.parse_args()
    base = Path(".data")
    base.mkdir(exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="bench-flow-", dir=base))
    out = Path(tempfile.mkdtemp(prefix="bench-flow-", dir=args.output_dir)) if args.output_dir else directory / "out"
    try:
        print(describe_machine(directory))
        raw = bench_raw(directory, 3.0)
        files = bench_files(out, 3.0)
        figures = bench_flow(directory, out, args.seconds, args.warmup, args.policy, args.put_tasks,
                             threads=args.threads)
        print(f"raw: 1 KiB append + fdatasync per 100 records: {raw:,.0f} records/s")
        print(f"raw: 1 KiB file created, written and renamed in the output directory: {files:,.0f} files/s")
        print(f"flow ({args.policy}, {args.threads} threads): {figures['rate']:,.0f} FlowFiles/s end to end "
              f"({figures['written']:,} written in {args.seconds:g} s), {figures['rate'] / files:.3f} of the raw "
              f"file rate; {figures['cpu_us']:.0f} CPU-µs per FlowFile (the process, every thread); "
              f"{_verdict(figures['rate'], files, file_system_type(out), args.threads)}")
        print(f"latency creation -> PutFile at full speed (queues full): p50 {figures['p50']:.0f} ms, "
              f"p99 {figures['p99']:.0f} ms")
        if not args.paced_rate:
            return
        paced = bench_flow(directory / "paced", out.with_name(out.name + "-paced"), args.seconds, args.warmup,
                           args.policy, args.put_tasks, period=100 / args.paced_rate, threads=args.threads)
        print(f"latency creation -> PutFile at {args.paced_rate:,.0f} FlowFiles/s offered "
              f"({paced['rate']:,.0f}/s written): p50 {paced['p50']:.0f} ms, p99 {paced['p99']:.0f} ms")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        if args.output_dir:
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out.with_name(out.name + "-paced"), ignore_errors=True)


def _verdict(rate: float, files: float, fs_type: str, threads: int) -> str:
    """Issue 17's target for where the output went: a rate on a tmpfs, a share of raw on a disk."""
    if fs_type == "tmpfs":
        return f"target on a tmpfs >= 15,000 FlowFiles/s: {'met' if rate >= 15_000 else 'missed'}"
    verdict = f"target on a disk >= 0.9 x the raw file rate: {'met' if rate >= 0.9 * files else 'missed'}"
    if threads == DEFAULT_THREADS:
        return verdict
    return f"{verdict} (the target is for the node's defaults, {DEFAULT_THREADS} threads)"


if __name__ == "__main__":
    main()
