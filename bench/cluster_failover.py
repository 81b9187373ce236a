"""How fast a cluster replaces a dead coordinator or primary node, and rebuilds after Redis restarts.

Run with ``python -m bench.cluster_failover [--rounds N] [--interval SECONDS]`` (it needs the
settings ``manage.py`` reads, e.g. ``DATABASE_URL``, and ``redis-server`` on the path). Three
``manage.py runnode`` processes share a private redis-server. Each round SIGKILLs the holder of
one role (coordinator and primary in turn), measures the time until another node holds it,
restarts the killed node and waits for it to be connected again. Last, the redis-server is
restarted empty and the time until all three nodes are connected again (election held anew) is
measured.

Bound: a role moves within two heartbeat intervals.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from bench.machine import describe_machine
from engine.testing.flows import flow, processor
from tests.servers import RedisServer
from tests.workers.cluster import Cluster, wait_until


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="kills per role (default 10)")
    parser.add_argument("--interval", type=float, default=1.0, help="heartbeat interval in seconds (default 1)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cluster-failover-") as directory:
        root = Path(directory)
        print(describe_machine(root))
        server = RedisServer(root / "redis")
        server.start()
        cluster = Cluster(root / "cluster", server.port, "bench", **{"heartbeat-interval": options.interval,
                                                                     "election-max-candidates": 3})
        document = flow(processors=[processor("gen", "GenerateFlowFile", {"File Size": "1 B"}, state="ENABLED")])
        try:
            names = ("n1", "n2", "n3")
            for name in names:
                cluster.start(name, document)
            cluster.wait_connected(*names, timeout=120)
            takeovers: dict[str, list[float]] = {"coordinator": [], "primary": []}
            for round_number in range(options.rounds * 2):
                role = "coordinator" if round_number % 2 == 0 else "primary"
                victim = wait_until(lambda: cluster.holder(role), 60, f"a {role}")
                cluster.nodes[victim].kill()
                started = time.monotonic()
                wait_until(lambda: cluster.holder(role) not in (None, victim), 60, f"a new {role}")
                takeovers[role].append(time.monotonic() - started)
                cluster.start(victim, data_dir=cluster.nodes[victim].data_dir)
                cluster.wait_connected(*names, timeout=120)
            print(f"heartbeat interval {options.interval:g} s; bound 2 intervals = {2 * options.interval:g} s")
            for role, seconds in takeovers.items():
                print(f"{role} takeover over {len(seconds)} kills: min {min(seconds):.2f} s, median "
                      f"{statistics.median(seconds):.2f} s, max {max(seconds):.2f} s "
                      f"({max(seconds) / options.interval:.2f} intervals)")
            server.stop()
            server.start()
            started = time.monotonic()
            cluster.wait_connected(*names, timeout=120)
            print(f"Redis restarted empty: all nodes connected again after {time.monotonic() - started:.2f} s")
        finally:
            cluster.stop_all()
            server.stop()


if __name__ == "__main__":
    main()
