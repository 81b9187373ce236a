"""Scale-out: the runtime benchmark's flow on one node and on two nodes of one machine, same run.

Run with ``python -m bench.scale_out [--seconds S] [--warmup S] [--threads N] [--rounds N]
[--variants one,all,primary,local] [--policy grouped] [--output-dir DIR] [--profile DIR]``
(``redis-server`` on the path; no database: nodes have none; ``--profile`` needs py-spy in the
virtualenv or on the path). ``--output-dir`` on a tmpfs (not under /dev, which nodes refuse)
shows the engine's own rate. The flow is ``bench.flow_throughput``'s — GenerateFlowFile (1 KiB,
batches of 100) → UpdateAttribute → RouteOnAttribute → PutFile, the FlowFile repository on the
``grouped`` sync policy (``--policy``), provenance recorded — with a ROUND_ROBIN
connection after the source. Each variant is a fresh cluster of ``manage.py runnode`` processes
over a private redis-server the benchmark starts:

- ``1 node``: one node, the source on it (round robin over one node keeps everything local);
- ``2 nodes, source on all``: the source runs on both nodes and round robin sends half of each
  node's FlowFiles to the other (the issue's figure);
- ``2 nodes, source on primary``: the source runs on the primary node only and round robin
  spreads its FlowFiles over both;
- ``2 nodes, no load balancing`` (reference): the source on both nodes, every FlowFile stays
  where it was made — what two nodes give without any transfer.

The rate is the FlowFiles PutFile took, summed over the nodes (each node's ``status`` totals over
the cluster's command bus), during the measured seconds after a warm-up. Beside it, each
process's CPU use during the window (the node processes and the redis-server) and the CPU per
FlowFile delivered; for a two-node variant also what the transfer added per FlowFile that crossed
(its CPU per FlowFile less one node's, divided by the share that crossed: half under round robin).
First, the same machine's raw figures: 1 KiB files created, written and renamed in the output
directory (PutFile's floor), 1 KiB records appended with an fdatasync per 100 in the data
directory (a commit's floor), and 1 KiB entries through the benchmark's redis-server (XADD in
pipelines of 100, read back with XREADGROUP + XACK + XDEL: the transfer's floor).

Targets: two nodes (source on all) ≥ 1.6 × one node; issue 17: ≥ 25,000 FlowFiles/s together,
output on tmpfs.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import redis

from bench.flow_throughput import bench_files, bench_raw
from bench.machine import describe_machine
from engine.cluster.bus import CommandBus
from engine.cluster.signing import CommandSigner
from engine.testing.flows import connection, flow, processor
from tests.servers import RedisServer
from tests.workers.cluster import Cluster

TARGET = 1.6
TARGET_RATE = 25_000
#: The share of a two-node variant's FlowFiles that cross to the other node under round robin.
CROSSING = 0.5


@dataclass(frozen=True)
class Variant:
    """One configuration: how many nodes, where the source runs, the strategy after it."""

    name: str
    nodes: int
    execution: str = "ALL"
    strategy: str = "ROUND_ROBIN"


VARIANTS = {
    "one": Variant("1 node", 1),
    "all": Variant("2 nodes, source on all", 2),
    "primary": Variant("2 nodes, source on primary", 2, execution="PRIMARY"),
    "local": Variant("2 nodes, no load balancing (reference)", 2, strategy="DO_NOT_LOAD_BALANCE"),
}


def scale_out_flow(out: Path, execution: str, strategy: str) -> dict:
    """``bench.flow_throughput``'s four processors with ``strategy`` on the connection after the
    source, which runs on ``execution`` (ALL or PRIMARY) nodes."""
    return flow(
        processors=[
            processor("generate", "GenerateFlowFile", {"File Size": "1 KB", "Batch Size": "100"},
                      executionNode=execution, schedulingPeriod="0 millis"),
            processor("update", "UpdateAttribute", {"stage": "updated", "size.class": "${fileSize:gt(512)}"}),
            processor("route", "RouteOnAttribute", {"large": "${size.class:equals('true')}"},
                      auto_terminate=["unmatched"]),
            processor("put", "PutFile", {"Directory": str(out), "Conflict Resolution Strategy": "replace"},
                      auto_terminate=["success", "failure"]),
        ],
        connections=[connection("generated", "generate", "update", loadBalanceStrategy=strategy),
                     connection("updated", "update", "route"), connection("routed", "route", "put", ["large"])],
    )


def run_variant(root: Path, server: RedisServer, variant: Variant, name: str, out: Path, seconds: float,
                warmup: float, threads: int, cluster_key: str, profile: Path | None = None,
                policy: str = "grouped") -> dict:
    """Start ``variant``'s nodes as the cluster ``name``, measure, stop them; returns the figures."""
    cluster = Cluster(root / name, server.port, name, **{"election-max-candidates": variant.nodes})
    cluster.env["FLOWSITE_CLUSTER_KEY"] = cluster_key
    cluster.config.write_text(json.dumps({
        "cluster": {"heartbeat-interval": 1.0, "missed-heartbeats": 4, "election-max-wait": "30 sec",
                    "election-max-candidates": variant.nodes},
        "runtime": {"graceful-shutdown-period": "2 sec", "status-log-interval": "30 sec",
                    "max-timer-driven-threads": threads},
        "flowfile_repository": {"sync_policy": policy},
    }))
    out.mkdir(parents=True, exist_ok=True)
    document = scale_out_flow(out, variant.execution, variant.strategy)
    names = [f"n{index + 1}" for index in range(variant.nodes)]
    bus = CommandBus(redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=30), cluster.keys,
                     CommandSigner(cluster_key))
    try:
        for node in names:
            cluster.start(node, document)
        cluster.wait_connected(*names, timeout=120)
        time.sleep(warmup)
        processes = {node: psutil.Process(cluster.nodes[node].process.pid) for node in names}
        processes["redis"] = psutil.Process(server.process.pid)
        cpu_before = {key: _cpu(process) for key, process in processes.items()}
        before, start = _put_totals(bus, names), time.monotonic()
        profilers = [] if profile is None else [_profile(profile / f"{name}-{node}.txt", process.pid, seconds)
                                                for node, process in processes.items() if node != "redis"]
        time.sleep(seconds)
        after, end = _put_totals(bus, names), time.monotonic()
        for profiler in profilers:
            profiler.wait()
        cpu = {key: (_cpu(process) - cpu_before[key]) / (end - start) for key, process in processes.items()}
        queues = _queues(bus, names)
    finally:
        cluster.stop_all()
    warnings = {node: [line for line in cluster.nodes[node].lines if " WARNING " in line or " ERROR " in line]
                for node in names}
    for node, lines in warnings.items():
        if lines:
            print(f"  {node} logged {len(lines)} warning(s)/error(s), the last: {lines[-1].strip()}")
    elapsed = end - start
    per_node = {node: (after[node] - before[node]) / elapsed for node in names}
    rate = sum(per_node.values())
    return {"rate": rate, "per_node": per_node, "cpu": cpu, "queues": queues,
            "cpu_per_flowfile": sum(cpu.values()) / rate if rate else float("nan")}


def bench_stream(port: int, seconds: float) -> float:
    """1 KiB entries per second through redis-server: XADD in pipelines of 100, then read back
    with XREADGROUP + XACK + XDEL in reads of 100, one process doing both in turn."""
    client = redis.Redis(host="127.0.0.1", port=port)
    stream, payload = "bench:raw", {b"d": secrets.token_bytes(1024)}
    client.xgroup_create(stream, "raw", id="0", mkstream=True)
    count = 0
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < seconds:
            with client.pipeline(transaction=False) as pipe:
                for _ in range(100):
                    pipe.xadd(stream, payload)
                pipe.execute()
            ids = [entry_id for entry_id, _ in client.xreadgroup("raw", "c", {stream: ">"}, count=100)[0][1]]
            with client.pipeline(transaction=False) as pipe:
                pipe.xack(stream, "raw", *ids)
                pipe.xdel(stream, *ids)
                pipe.execute()
            count += len(ids)
        return count / (time.perf_counter() - started)
    finally:
        client.delete(stream)
        client.close()


def _profile(path: Path, pid: int, seconds: float) -> subprocess.Popen:
    """py-spy sampling ``pid`` for ``seconds`` into ``path`` (collapsed stacks, one per thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    spy = Path(sys.executable).with_name("py-spy")
    spy = str(spy) if spy.exists() else shutil.which("py-spy")
    if spy is None:
        raise RuntimeError("--profile needs py-spy in the virtualenv or on the PATH")
    return subprocess.Popen([spy, "record", "--pid", str(pid),
                             "--duration", str(int(seconds)), "--rate", "100", "--format", "raw", "--nonblocking",
                             "--output", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def _status(bus: CommandBus, names: list[str]) -> dict[str, dict]:
    replies = bus.request(names, "status", timeout=30)
    failed = [f"{node}: {reply.error}" for node, reply in replies.items() if not reply.ok]
    if failed:
        raise RuntimeError(f"status not answered: {'; '.join(failed)}")
    return {node: reply.result for node, reply in replies.items()}


def _put_totals(bus: CommandBus, names: list[str]) -> dict[str, int]:
    """FlowFiles PutFile took on each node since it started."""
    return {node: next(p["totals"]["flowfiles_in"] for p in status["processors"] if p["id"] == "put")
            for node, status in _status(bus, names).items()}


def _queues(bus: CommandBus, names: list[str]) -> dict[str, str]:
    """Each node's queued counts of every connection (awaiting transfer in brackets), as text;
    raises if a node posted an error bulletin (PutFile refusing its directory, a failed transfer):
    the figure would not be the flow's."""
    found = {}
    for node, status in _status(bus, names).items():
        errors = [b for b in status["bulletins"] if b.get("level") == "ERROR"]
        if errors:
            raise RuntimeError(f"node {node} reported {len(errors)} error(s), e.g. {errors[-1]}")
        found[node] = " ".join(f"{c['id']} {c['queued_count']:,} ({c['awaiting_transfer_count']:,})"
                               for c in status["connections"])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=10,
                        help="each node's max timer-driven threads (default 10, the node's default)")
    parser.add_argument("--policy", default="grouped", choices=["always", "grouped", "os"],
                        help="the FlowFile repository's sync policy on every node (default grouped)")
    parser.add_argument("--output-dir", type=Path,
                        help="where PutFile writes (default: in the scratch directory; nodes refuse /dev/shm)")
    parser.add_argument("--variants", default="one,all,primary,local",
                        help=f"which variants to run, in order (default all: {','.join(VARIANTS)})")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="sample the nodes with py-spy (in the virtualenv) during the window, into DIR")
    parser.add_argument("--rounds", type=int, default=1, help="run the variants this many times, alternating")
    args = parser.parse_args()
    base = Path(".data")
    base.mkdir(exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="bench-scale-out-", dir=base))
    cluster_key = secrets.token_hex(32)
    server = RedisServer(root / "redis")
    server.start()
    rates: dict[str, list[float]] = {}
    try:
        print(describe_machine(root))
        output = args.output_dir or root / "out"
        files = bench_files(output / "raw", 3.0)
        shutil.rmtree(output / "raw", ignore_errors=True)
        print(f"raw: 1 KiB file created, written and renamed in the output directory ({output}): {files:,.0f} files/s")
        print(f"raw: 1 KiB append + fdatasync per 100 records in the data directory: "
              f"{bench_raw(root, 3.0):,.0f} records/s")
        print(f"raw: 1 KiB entries through redis-server (XADD pipelined 100, XREADGROUP + XACK + XDEL): "
              f"{bench_stream(server.port, 3.0):,.0f} entries/s")
        print(f"{args.threads} thread(s) per node, sync policy {args.policy}; {args.warmup:g} s warm-up, "
              f"{args.seconds:g} s measured")
        cpu_one: list[float] = []
        for round_number in range(args.rounds):
            for key in args.variants.split(","):
                variant = VARIANTS[key]
                name = f"{key}{round_number}"
                out = output / name
                figures = run_variant(root, server, variant, name, out, args.seconds, args.warmup, args.threads,
                                      cluster_key, args.profile, args.policy)
                shutil.rmtree(out, ignore_errors=True)
                shutil.rmtree(root / name, ignore_errors=True)
                rates.setdefault(key, []).append(figures["rate"])
                if key == "one":
                    cpu_one.append(figures["cpu_per_flowfile"])
                crossed = ""
                if variant.nodes > 1 and variant.strategy != "DO_NOT_LOAD_BALANCE" and cpu_one:
                    added = (figures["cpu_per_flowfile"] - sum(cpu_one) / len(cpu_one)) / CROSSING
                    crossed = f"; the transfer added {added * 1e6:,.0f} CPU-µs per FlowFile that crossed"
                nodes = ", ".join(f"{node} {rate:,.0f}" for node, rate in figures["per_node"].items())
                cpu = ", ".join(f"{process} {share:.2f}" for process, share in figures["cpu"].items())
                queues = "; ".join(f"{node} {queued}" for node, queued in figures["queues"].items())
                load = ", ".join(f"{value:.2f}" for value in psutil.getloadavg())
                print(f"round {round_number + 1}, {variant.name}: {figures['rate']:,.0f} FlowFiles/s ({nodes}); "
                      f"CPU (cores): {cpu}; {figures['cpu_per_flowfile'] * 1e6:,.0f} CPU-µs per FlowFile{crossed}; "
                      f"load average {load}; queued at the end (awaiting transfer): {queues}", flush=True)
        if "one" in rates:
            one = sum(rates["one"]) / len(rates["one"])
            print(f"1 node, mean of {len(rates['one'])}: {one:,.0f} FlowFiles/s, {one / files:.3f} of the raw file rate")
            for key in ("all", "primary", "local"):
                if key in rates:
                    mean = sum(rates[key]) / len(rates[key])
                    ratio = mean / one
                    verdict = ""
                    if key == "all":
                        verdict = (f"; target >= {TARGET:g}: {'met' if ratio >= TARGET else 'missed'}; "
                                   f"target >= {TARGET_RATE:,}/s: {'met' if mean >= TARGET_RATE else 'missed'}")
                    print(f"{VARIANTS[key].name}, mean of {len(rates[key])}: {mean:,.0f} FlowFiles/s, "
                          f"{ratio:.2f} x 1 node, {mean / files:.3f} of the raw file rate{verdict}")
        print(f"load average after: {', '.join(f'{value:.2f}' for value in psutil.getloadavg())}")
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
