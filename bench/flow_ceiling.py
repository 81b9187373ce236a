"""What the four-processor flow of ``bench.flow_throughput`` costs with parts of its work left out.

Run with ``python -m bench.flow_ceiling --output-dir DIR [--rounds N] [--seconds S] [--warmup S]
[--threads N]`` (DIR best a tmpfs outside ``/dev``). The same flow runs once per variant and round,
rounds interleaved, beside the raw file rate of the same run; each line gives the rate, its share
of the raw file rate and the process's CPU time per FlowFile (every thread). The variants, each
leaving out more:

- *as it is*: the FlowFile repository's ``grouped`` sync policy, provenance recorded;
- *rollover held back*: events stored as a commit stores them, but a full journal does not start
  a rollover (segments and SQLite index) in the window; the timed one, every 30 s, still runs in
  a run longer than that;
- *events encoded, not stored*: commits pack each event and make its index fragment, then
  drop them (no outbox entry in the WAL, no journal, no rollover);
- *events built, not stored*: commits build their events and drop them;
- *without provenance*: sessions do not work out their commit-time events either (the events
  processors report and the DROP events are still built, then dropped);
- *without provenance or syncs*: the same on the ``os`` sync policy (no commit waits for the
  disk): what is left is the engine's Python and PutFile's system calls.

The differences between neighbouring lines are what the rollover, storing, encoding and building
events and syncing cost per FlowFile; the last line is a floor for issue 17's targets (as a share of the raw
file rate, which carries between machines and days): no provenance or sync design gets under
it. A rollover starts every 30 s or when the journals hold 100 MB, which a fast flow reaches
within a 15 s window. The variants patch the engine for the bench only.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
from pathlib import Path
from typing import Callable, ContextManager, Iterator

from bench.flow_throughput import bench_files, bench_flow
from bench.machine import describe_machine
from engine.provenance.repository import ProvenanceRepository
from engine.session.events import SessionEvents
from engine.storage import NodeStorage

#: Issue 17's target for this flow with its output on a tmpfs.
TMPFS_TARGET = 15_000


@contextlib.contextmanager
def _commits(handle_events: Callable[[NodeStorage, list], object]) -> Iterator[None]:
    """Commits write their FlowFile records and hand their storage and events to
    ``handle_events`` instead of storing the events."""
    commit = NodeStorage.commit

    def without_events(self, records, events, *, force_sync=False):
        if events:
            handle_events(self, events)
        return commit(self, records, [], force_sync=force_sync)

    NodeStorage.commit = without_events
    try:
        yield
    finally:
        NodeStorage.commit = commit


@contextlib.contextmanager
def rollover_held_back() -> Iterator[None]:
    """Commits store their events, but a full journal does not ask for a rollover."""
    request = ProvenanceRepository._request_rollover
    ProvenanceRepository._request_rollover = lambda self: None
    try:
        yield
    finally:
        ProvenanceRepository._request_rollover = request


def events_encoded_not_stored() -> ContextManager[None]:
    """Events are encoded as a commit encodes them (packed, with their index fragments), then dropped."""
    return _commits(lambda storage, events: storage.provenance.encode(events))


def events_built_not_stored() -> ContextManager[None]:
    """Events are built and dropped."""
    return _commits(lambda storage, events: None)


@contextlib.contextmanager
def without_provenance() -> Iterator[None]:
    """Sessions do not work out their commit-time events, and commits store none."""
    plan_events = SessionEvents._plan_events
    SessionEvents._plan_events = lambda self, plan, duration: []
    try:
        with events_built_not_stored():
            yield
    finally:
        SessionEvents._plan_events = plan_events


VARIANTS = (
    ("as it is", "grouped", contextlib.nullcontext),
    ("rollover held back", "grouped", rollover_held_back),
    ("events encoded, not stored", "grouped", events_encoded_not_stored),
    ("events built, not stored", "grouped", events_built_not_stored),
    ("without provenance", "grouped", without_provenance),
    ("without provenance or syncs", "os", without_provenance),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="the node's max timer-driven threads (default 1)")
    parser.add_argument("--output-dir", type=Path, required=True, help="where PutFile writes, best a tmpfs")
    args = parser.parse_args()
    base = Path(".data")
    base.mkdir(exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix="bench-ceiling-", dir=base))
    out = Path(tempfile.mkdtemp(prefix="bench-ceiling-", dir=args.output_dir))
    try:
        print(describe_machine(out))
        files = bench_files(out / "raw", 3.0)
        shutil.rmtree(out / "raw", ignore_errors=True)
        print(f"raw: 1 KiB file created, written and renamed in the output directory: {files:,.0f} files/s; "
              f"{TMPFS_TARGET:,} FlowFiles/s would be {TMPFS_TARGET / files:.2f} of it")
        for round_number in range(args.rounds):
            for number, (name, policy, patch) in enumerate(VARIANTS):
                run = f"{round_number}-{number}"
                with patch():
                    figures = bench_flow(directory / run, out / run, args.seconds, args.warmup, policy,
                                         put_tasks=1, threads=args.threads)
                shutil.rmtree(out / run, ignore_errors=True)
                shutil.rmtree(directory / run, ignore_errors=True)
                print(f"round {round_number + 1}, {name} ({policy}, {args.threads} thread(s)): "
                      f"{figures['rate']:,.0f} FlowFiles/s, {figures['rate'] / files:.3f} of the raw file rate; "
                      f"{figures['cpu_us']:.0f} CPU-µs per FlowFile", flush=True)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
