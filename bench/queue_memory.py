"""Resident memory of a node holding 1,000,000 small FlowFiles in one queue.

Run with ``python -m bench.queue_memory [--flowfiles N]``. A node runs GenerateFlowFile (100-byte
FlowFiles in batches of 1,000) into a connection without back pressure whose destination is
stopped, until N FlowFiles wait in it. The queue keeps 20,000 of them in memory and writes
the rest to swap files (batches of 10,000). The figures: the process's resident size before
and after, its peak, and the node restarted over the same data (recovery reads only the swap
files' summaries), measured in a fresh process.

Target: resident size under 1 GiB with 1,000,000 FlowFiles queued.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

from bench.machine import describe_machine
from engine.flow import load_flow
from engine.runtime import FlowController
from engine.storage import NodeStorage
from engine.testing.flows import connection, flow, processor

MiB = 1 << 20


def rss() -> int:
    """This process's resident size in bytes."""
    return psutil.Process().memory_info().rss


def peak_rss() -> int:
    """This process's peak resident size in bytes (Linux reports it in KiB)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def build(directory: Path) -> tuple[NodeStorage, FlowController]:
    document = flow(
        processors=[processor("generate", "GenerateFlowFile", {"File Size": "100 B", "Batch Size": "1000"},
                              schedulingPeriod="0 sec"),
                    processor("sink", "PutFile", {"Directory": str(directory / "out")}, state="ENABLED",
                              auto_terminate=["success", "failure"])],
        connections=[connection("queue", "generate", "sink", backPressureObjectThreshold=0,
                                backPressureDataSizeThreshold="0 B")],
    )
    storage = NodeStorage(directory / "node")
    recovered = storage.open()
    controller = FlowController(storage)
    controller.load(load_flow(document), recovered)
    return storage, controller


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flowfiles", type=int, default=1_000_000)
    parser.add_argument("--recover", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.recover:
        started = time.monotonic()
        storage, controller = build(args.recover)
        recovered_in = time.monotonic() - started
        gc.collect()
        print(f"restart (a fresh process): {len(controller.queue('queue')):,} FlowFiles back in the queue in "
              f"{recovered_in:.1f} s; resident size {rss() / MiB:.0f} MiB")
        storage.close()
        return
    base = Path(".data")
    base.mkdir(exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="bench-queue-", dir=base))
    try:
        print(describe_machine(directory))
        storage, controller = build(directory)
        before = rss()
        started = time.monotonic()
        controller.start()
        controller.start_processor("generate")
        queue = controller.queue("queue")
        while len(queue) < args.flowfiles:
            time.sleep(0.2)
        controller.stop_processor("generate", wait=30)
        filled = time.monotonic() - started
        gc.collect()
        size = queue.size()
        full = rss()
        print(f"queued {size.count:,} FlowFiles ({size.bytes / MiB:.0f} MiB of content) in {filled:.0f} s: "
              f"{size.active_count:,} in memory, {size.swapped_count:,} in {size.swap_files} swap files")
        print(f"resident size: {before / MiB:.0f} MiB before, {full / MiB:.0f} MiB with them queued, "
              f"peak {peak_rss() / MiB:.0f} MiB; target < 1024 MiB: {'met' if full < 1024 * MiB else 'missed'}")
        controller.shutdown()
        storage.close()
        subprocess.run([sys.executable, "-m", "bench.queue_memory", "--recover", str(directory)], check=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
