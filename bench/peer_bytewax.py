"""Flowsite beside bytewax on the same work, in the same run: records written per second.

Run with ``python -m bench.peer_bytewax [--seconds S] [--output-dir DIR] [--rounds N]``. Each
round runs both sides one after the other (the order alternates between rounds), then removes
what they wrote:

- Flowsite: ``bench.flow_throughput``'s flow (GenerateFlowFile 1 KiB in batches of 100 →
  UpdateAttribute → RouteOnAttribute → PutFile into DIR/flowsite), node defaults, the
  ``grouped`` sync policy and provenance on: every FlowFile's content, attributes and provenance
  are durable once its commit returns.
- bytewax with recovery on, one worker: a source making 1 KiB records with a uuid, filename and
  path as fast as the dataflow takes them (batches of 100, its position snapshotted), a map that
  adds two attributes, a filter on one of them, and a sink writing one file per record into
  DIR/bytewax under a temporary name, renamed into place as PutFile does. Its recovery
  partition is initialised with ``bytewax.recovery.init_db_dir`` beside Flowsite's repositories
  (the scratch directory under .data) and snapshots the source's position at every epoch.

The rate is what each side wrote during ``--seconds`` after ``--warmup``. Beside them, the raw
rate of 1 KiB files created, written and renamed in DIR, the ratio Flowsite ÷ bytewax (target
≥ 0.4), and the same ratio from the process's CPU time per record during the window, which the
other work of a shared machine moves less than the rates. DIR should be a tmpfs so that neither
side is bound by the disk; /dev/shm will not do, node confinement refuses PutFile any path under
/dev.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.inputs import FixedPartitionedSource, StatefulSourcePartition
from bytewax.outputs import DynamicSink, StatelessSinkPartition
from bytewax.recovery import RecoveryConfig, init_db_dir
from bytewax.testing import run_main

from bench.flow_throughput import bench_files, bench_flow
from bench.machine import describe_machine

TARGET = 0.4
RECORD_SIZE = 1024
BATCH_SIZE = 100
# The shortest snapshot interval bytewax's command line takes (whole seconds): the least data a
# resume would replay.
SNAPSHOT_INTERVAL = timedelta(seconds=1)

Record = tuple[dict[str, str], bytes]


class _Generator(StatefulSourcePartition[Record, int]):
    """Batches of records until told to stop or ``limit`` is reached; its state is how many it made."""

    def __init__(self, made: int, stop: threading.Event, limit: int | None):
        self._made = made
        self._stop = stop
        self._limit = limit
        self._content = os.urandom(RECORD_SIZE)

    def next_batch(self) -> list[Record]:
        if self._stop.is_set() or (self._limit is not None and self._made >= self._limit):
            raise StopIteration
        count = BATCH_SIZE if self._limit is None else min(BATCH_SIZE, self._limit - self._made)
        self._made += count
        batch = []
        for _ in range(count):
            name = str(uuid.uuid4())
            batch.append(({"uuid": name, "filename": name, "path": "./"}, self._content))
        return batch

    def snapshot(self) -> int:
        return self._made


class RecordSource(FixedPartitionedSource[Record, int]):
    """One partition of generated 1 KiB records (GenerateFlowFile's part)."""

    def __init__(self, stop: threading.Event, limit: int | None = None):
        self._stop = stop
        self._limit = limit

    def list_parts(self) -> list[str]:
        return ["generator"]

    def build_part(self, step_id: str, for_part: str, resume_state: int | None) -> _Generator:
        return _Generator(resume_state or 0, self._stop, self._limit)


def update_attributes(record: Record) -> Record:
    """UpdateAttribute's part: the record with ``stage`` and ``size.class`` added."""
    attributes, content = record
    return {**attributes, "stage": "updated", "size.class": "true" if len(content) > 512 else "false"}, content


def is_large(record: Record) -> bool:
    """RouteOnAttribute's part: whether the record goes on to the sink."""
    return record[0]["size.class"] == "true"


class _FileWriter(StatelessSinkPartition[Record]):
    def __init__(self, sink: FilePerRecordSink):
        self._sink = sink
        sink.directory.mkdir(parents=True, exist_ok=True)
        self._folder_fd = os.open(sink.directory, os.O_RDONLY | os.O_DIRECTORY)

    def write_batch(self, items: list[Record]) -> None:
        for attributes, content in items:
            name = attributes["filename"]
            temporary = "." + name
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                         dir_fd=self._folder_fd)
            try:
                os.write(fd, content)
            finally:
                os.close(fd)
            os.replace(temporary, name, src_dir_fd=self._folder_fd, dst_dir_fd=self._folder_fd)
        self._sink.written += len(items)

    def close(self) -> None:
        os.close(self._folder_fd)


class FilePerRecordSink(DynamicSink[Record]):
    """PutFile's part: one file per record in ``directory``; ``written`` counts them."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.written = 0

    def build(self, step_id: str, worker_index: int, worker_count: int) -> _FileWriter:
        return _FileWriter(self)


def build_dataflow(source: RecordSource, sink: FilePerRecordSink) -> Dataflow:
    """The bytewax dataflow: generate → update attributes → keep the large ones → a file each."""
    flow = Dataflow("peer_bytewax")
    generated = op.input("generate", flow, source)
    updated = op.map("update", generated, update_attributes)
    routed = op.filter("route", updated, is_large)
    op.output("put", routed, sink)
    return flow


def run_with_recovery(flow: Dataflow, recovery: Path) -> None:
    """Run ``flow`` on one worker with a new recovery partition in ``recovery``, snapshotting every
    SNAPSHOT_INTERVAL."""
    recovery.mkdir(parents=True)
    init_db_dir(recovery, 1)
    # A backup interval of zero: superseded snapshots go at once (nothing archives them).
    run_main(flow, epoch_interval=SNAPSHOT_INTERVAL, recovery_config=RecoveryConfig(recovery, timedelta(0)))


def bench_bytewax(directory: Path, out: Path, seconds: float, warmup: float) -> dict[str, float]:
    """Run the bytewax dataflow (recovery in ``directory``, files in ``out``); return its rate."""
    stop = threading.Event()
    sink = FilePerRecordSink(out)
    failures: list[BaseException] = []

    def run() -> None:
        try:
            run_with_recovery(build_dataflow(RecordSource(stop), sink), directory / "recovery")
        except BaseException as error:  # noqa: BLE001 - handed to the measuring thread
            failures.append(error)

    worker = threading.Thread(target=run, name="bytewax")
    worker.start()
    time.sleep(warmup)
    start_count, start_time, start_cpu = sink.written, time.time(), time.process_time()
    time.sleep(seconds)
    end_count, end_time, end_cpu = sink.written, time.time(), time.process_time()
    stop.set()
    worker.join()
    if failures:
        raise failures[0]
    return {
        "rate": (end_count - start_count) / (end_time - start_time),
        "cpu_us": (end_cpu - start_cpu) * 1e6 / max(1, end_count - start_count),
    }


def _clear(*paths: Path) -> None:
    for path in paths:
        shutil.rmtree(path, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--output-dir", type=Path,
                        help="where both sides write their files, best a tmpfs (default: in the scratch directory)")
    args = parser.parse_args()
    base = Path(".data")
    base.mkdir(exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="bench-peer-", dir=base))
    out = args.output_dir or scratch / "out"
    out.mkdir(parents=True, exist_ok=True)
    try:
        print(describe_machine(scratch))
        print(f"files written under {out}")
        runs = {
            "flowsite": lambda: bench_flow(scratch / "node", out / "flowsite", args.seconds, args.warmup, "grouped",
                                           put_tasks=1),
            "bytewax": lambda: bench_bytewax(scratch / "bytewax", out / "bytewax", args.seconds, args.warmup),
        }
        ratios = []
        for round_number in range(1, args.rounds + 1):
            files = bench_files(out / "raw", 3.0)
            sides = ["flowsite", "bytewax"] if round_number % 2 else ["bytewax", "flowsite"]
            figures = {}
            for side in sides:
                figures[side] = runs[side]()
                _clear(scratch / "node", scratch / "bytewax", out / side)
            flowsite, peer = figures["flowsite"], figures["bytewax"]
            ratio = flowsite["rate"] / peer["rate"]
            ratios.append(ratio)
            print(f"round {round_number} ({' then '.join(sides)}, load {os.getloadavg()[0]:.1f}): "
                  f"Flowsite {flowsite['rate']:,.0f} FlowFiles/s ({flowsite['cpu_us']:.0f} CPU-µs each); "
                  f"bytewax {peer['rate']:,.0f} records/s ({peer['cpu_us']:.0f} CPU-µs each); "
                  f"raw files {files:,.0f}/s; Flowsite ÷ bytewax {ratio:.3f} "
                  f"(by CPU per record {peer['cpu_us'] / flowsite['cpu_us']:.3f})")
        median = statistics.median(ratios)
        print(f"Flowsite ÷ bytewax: median {median:.3f} over {len(ratios)} round(s) "
              f"({min(ratios):.3f}–{max(ratios):.3f}); target >= {TARGET}: {'met' if median >= TARGET else 'missed'}")
    finally:
        _clear(scratch, out / "flowsite", out / "bytewax", out / "raw")


if __name__ == "__main__":
    main()
