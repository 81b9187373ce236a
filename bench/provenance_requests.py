"""Provenance and queues through the API: searches, a lineage and a queue listing answered by two
node processes holding 10,000,000 provenance events together.

Run with ``scripts/bench provenance_requests [--events 10000000] [--descendants 1000]
[--queue 1000000] [--rounds 50]`` (``scripts/bench`` starts the project's own PostgreSQL and
Redis, as ``scripts/test`` does; this benchmark works in a database of its own,
``<name>_bench_provenance``, made afresh, and in a scratch directory under ``.data/``).

1. A tenant's design: 50 processors the events are made of, and ``gen`` (GenerateFlowFile, 10,000
   empty FlowFiles a run, on the primary node only) → ``queue`` (back pressure at ``--queue``
   FlowFiles) → ``sink`` (stopped).
2. Each node's provenance repository is filled before the node starts: ``--events`` / 2 events
   each (the 50 processors' events over the last 20 hours, as ``bench.provenance_bench`` makes
   them), and on the first node a FlowFile split into ``--descendants`` children, each of which is
   modified and dropped.
3. Two ``manage.py runnode`` processes, one daphne process (the API) and one Celery worker for the
   provenance queue start; the flow is deployed; ``gen`` fills ``queue`` on the primary node
   until its back pressure stops it.
4. Measured through the API with an API token, a client polling every 20 ms: the first page (100
   events) of a component + one-hour query (``--rounds`` times, a random component and hour each),
   the lineage of the split FlowFile, and a listing of the first 100 FlowFiles of ``queue``.

Beside each figure, the raw one: the same question put straight to the node holding the data over
the command bus (``provenance.query``, ``provenance.lineage``, ``queue.list``: what the node itself
takes, without the API, the Celery job and the merging), and the ratio.
Targets (issue 15): query p99 under 1 s; lineage of 1,000 descendants under 2 s; listing 100
FlowFiles of a queue of 1,000,000 under 1 s.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import psycopg
import redis
import requests

from bench.machine import describe_machine
from bench.provenance_bench import flowfile_uuid, make_event
from tests.daphne import REPO_ROOT, daphne
from tests.processes import OutputProcess, wait_until
from tests.servers import RedisServer

CLUSTER = "bench-provenance"
CLUSTER_KEY = "bench-provenance-cluster-key"
COMPONENTS = 50
HOURS = 20
POLL = 0.02
PAGE = 100
NODE_SETTINGS = {"provenance_repository": {"max-storage-size": "16 GB"},
                 "cluster": {"heartbeat-interval": 1.0, "election-max-wait": "20 sec"}}


def _fresh_database(url: str) -> str:
    """A new, empty database beside the one ``url`` names; its URL."""
    base, _, name = url.rpartition("/")
    bench = f"{name.split('?')[0]}_bench_provenance"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{bench}"')
        admin.execute(f'CREATE DATABASE "{bench}"')
    return f"{base}/{bench}"


def _design(queue_size: int) -> dict:
    """The tenant's processors and flow (see the module docstring); ids and an API token."""
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from flowsite.api.models import ApiToken
    from flowsite.flows.models import Connection, Processor
    from tests.flowsite.conftest import TenantWorld

    world = TenantWorld("Bench")
    admin = world.admin("bench")
    components = [Processor.objects.create(tenant=world.tenant, parent=world.root, name=f"p{i}", type="GenerateFlowFile",
                                           auto_terminated=["success"], position_x=(i % 10) * 220.0,
                                           position_y=(i // 10) * 160.0)
                  for i in range(COMPONENTS)]
    gen = Processor.objects.create(tenant=world.tenant, parent=world.root, name="gen", type="GenerateFlowFile",
                                   properties={"File Size": "0 B", "Batch Size": "10000"}, execution_node="PRIMARY",
                                   scheduled_state="RUNNING", position_y=1000)
    sink = Processor.objects.create(tenant=world.tenant, parent=world.root, name="sink", type="LogAttribute",
                                    auto_terminated=["success"], scheduled_state="STOPPED", position_y=1300)
    queue = Connection.objects.create(tenant=world.tenant, parent=world.root, name="queue", source=gen,
                                      destination=sink, selected_relationships=["success"],
                                      back_pressure_object_threshold=queue_size,
                                      back_pressure_data_size_threshold="100 GB")
    _, secret = ApiToken.issue(admin, "bench")
    return {"components": [str(c.pk) for c in components], "queue": str(queue.pk), "token": secret}


def _fill(data_dir: str, components: list[str], total: int, seed: int, descendants: int) -> dict:
    """Fill one node's provenance repository (see the module docstring); the split FlowFile's
    uuid when ``descendants``, and how long the filling took."""
    from engine.provenance import ProvenanceConfig, ProvenanceEvent, ProvenanceEventType as E, ProvenanceRepository

    started = time.monotonic()
    config = ProvenanceConfig(max_storage_size=16 << 30, rollover_size=64 << 20)
    span = HOURS * 3_600_000
    base = int(time.time() * 1000) - span - 60_000
    step = max(1, span // max(total, 1))
    with ProvenanceRepository(Path(data_dir) / "provenance_repository", config) as repo:
        repo.start()
        chunk = []
        for n in range(total):
            number = seed * total + n
            event = make_event(number, base + n * step)
            chunk.append(event._replace(component_id=components[number % len(components)]))
            if len(chunk) == 1000:
                repo.register_events(chunk)
                chunk = []
        repo.register_events(chunk)
        root = None
        if descendants:
            now = int(time.time() * 1000) - 60_000
            root = flowfile_uuid(10**12)
            children = [flowfile_uuid(10**12 + 1 + i) for i in range(descendants)]
            split, modify, drop = components[0], components[1], components[2]
            events = [ProvenanceEvent(E.CREATE, now, root, split, "GenerateFlowFile", now, now,
                                      updated_attributes={"filename": "root.txt"}),
                      ProvenanceEvent(E.FORK, now + 1, root, split, "SplitText", now, now, child_uuids=tuple(children))]
            for i, child in enumerate(children):
                events.append(ProvenanceEvent(E.ATTRIBUTES_MODIFIED, now + 2 + i, child, modify, "UpdateAttribute",
                                              now, now, updated_attributes={"part": str(i)}))
                events.append(ProvenanceEvent(E.DROP, now + 3 + i, child, drop, "LogAttribute", now, now,
                                              details="Auto-Terminated by success Relationship"))
            repo.register_events(events)
        repo.rollover()
    return {"root": root, "seconds": time.monotonic() - started}


class Api:
    """The API over HTTP with an API token; ``follow`` polls a request resource until it is done."""

    def __init__(self, port: int, token: str) -> None:
        self.base = f"http://127.0.0.1:{port}/api/v1"
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: dict | None = None) -> dict:
        answer = self.session.request(method, self.base + path, json=body, timeout=120)
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:500]}")
        return answer.json() if answer.content else {}

    def follow(self, path: str, envelope: str, body: dict) -> tuple[float, dict]:
        """Submit ``body`` to ``path``, poll until finished; (seconds, the finished request)."""
        started = time.monotonic()
        request = self.call("POST", path, body)[envelope]
        while not request["finished"]:
            time.sleep(POLL)
            request = self.call("GET", request["uri"].split("/api/v1", 1)[1])[envelope]
        took = time.monotonic() - started
        self.call("DELETE", request["uri"].split("/api/v1", 1)[1])
        if request.get("state") == "failed" or request.get("partial"):
            raise RuntimeError(f"{path}: {json.dumps(request)[:1000]}")
        return took, request


def _nifi_date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%m/%d/%Y %H:%M:%S UTC")


def _direct(bus, node: str, kind: str, args: dict) -> tuple[float, dict]:
    """One command straight to ``node`` over the command bus: (seconds, result)."""
    started = time.monotonic()
    reply = bus.request([node], kind, args, timeout=60)[node]
    took = time.monotonic() - started
    if not reply.ok:
        raise RuntimeError(f"{kind} on {node}: {reply.error}")
    return took, reply.result


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def _line(what: str, api: list[float], raw: list[float], target: float) -> str:
    p50, p99 = statistics.median(api), _percentile(api, 0.99)
    raw50 = statistics.median(raw)
    verdict = "met" if p99 < target else "MISSED"
    return (f"{what}: API p50 {p50:.3f} s, p99 {p99:.3f} s, max {max(api):.3f} s ({len(api)} rounds); "
            f"straight to the node p50 {raw50:.3f} s (ratio {p50 / raw50:.1f}); target p99 < {target:g} s: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--descendants", type=int, default=1000)
    parser.add_argument("--queue", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    if "DATABASE_URL" not in os.environ:
        sys.exit("DATABASE_URL is not set: run this through scripts/bench provenance_requests")

    database = _fresh_database(os.environ["DATABASE_URL"])
    scratch = REPO_ROOT / ".data" / "bench-provenance"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    server = RedisServer(scratch / "redis")
    server.start()
    redis_url = f"redis://127.0.0.1:{server.port}/0"
    os.environ.update(DATABASE_URL=database, REDIS_URL=redis_url, FLOWSITE_CLUSTER=CLUSTER,
                      FLOWSITE_CLUSTER_KEY=CLUSTER_KEY, DJANGO_SETTINGS_MODULE="flowsite.settings",
                      CELERY_BROKER_URL=f"redis://127.0.0.1:{server.port}/1")
    import django

    django.setup()
    from engine.cluster.bus import CommandBus
    from engine.cluster.keys import ClusterKeys
    from engine.cluster.signing import CommandSigner
    from tests.workers.cluster import Cluster

    design = _design(args.queue)
    started = time.monotonic()
    with multiprocessing.Pool(2) as pool:
        filled = pool.starmap(_fill, [(str(scratch / "nodes" / f"n{i + 1}"), design["components"], args.events // 2, i,
                                       args.descendants if i == 0 else 0) for i in range(2)])
    print(f"filled two provenance repositories with {args.events:,} events in {time.monotonic() - started:.0f} s",
          flush=True)
    root = filled[0]["root"]

    cluster = Cluster(scratch / "nodes", server.port, CLUSTER)
    cluster.config.write_text(json.dumps(NODE_SETTINGS))
    env = {"FLOWSITE_CLUSTER_KEY": CLUSTER_KEY}
    worker = None
    try:
        for node in ("n1", "n2"):
            cluster.start(node, env=env)
        cluster.wait_connected("n1", "n2", timeout=600)
        worker = OutputProcess([sys.executable, "-m", "celery", "-A", "flowsite", "worker", "--queues", "provenance",
                                "--pool", "threads", "--concurrency", "4", "--loglevel", "WARNING",
                                "--without-mingle", "--without-gossip", "--without-heartbeat"],
                               REPO_ROOT, dict(os.environ))
        with daphne(dict(os.environ), echo=False) as web:
            api = Api(web.port, design["token"])
            deploy = api.call("POST", "/cluster/deployments", {})["deploy_id"]
            wait_until(lambda: {r["node"]: r["status"] for r in api.call("GET", f"/cluster/deployments/{deploy}")
                                ["reports"]} == {"n1": "applied", "n2": "applied"}, 300, "the flow deployed")
            bus = CommandBus(redis.Redis.from_url(redis_url), ClusterKeys(CLUSTER), CommandSigner(CLUSTER_KEY))

            def queued() -> int:
                answers = bus.request(["n1", "n2"], "queue.list", {"id": design["queue"], "max": 1}, timeout=30)
                return sum(reply.result.get("count", 0) for reply in answers.values() if reply.ok)

            started = time.monotonic()
            wait_until(lambda: queued() >= args.queue, 1800, f"the queue holding {args.queue:,} FlowFiles")
            print(f"queued {queued():,} FlowFiles in {time.monotonic() - started:.0f} s", flush=True)
            holder = next(node for node in ("n1", "n2")
                          if _direct(bus, node, "queue.list", {"id": design["queue"], "max": 1})[1]["count"])
            figures = _measure(api, bus, design, root, holder, args)
    finally:
        if worker is not None:
            worker.terminate()
        cluster.stop_all()
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)

    print(describe_machine(REPO_ROOT))
    print(f"two nodes holding {args.events:,} events (plus the queue's own CREATE events); a FlowFile split into "
          f"{args.descendants:,}; {args.queue:,} FlowFiles queued on {holder}")
    print(_line("component + 1 h query, first page of 100", figures["query"], figures["query_raw"], 1.0))
    print(_line(f"lineage of a FlowFile with {args.descendants:,} descendants ({figures['lineage_nodes']:,} graph "
                "nodes)", figures["lineage"], figures["lineage_raw"], 2.0))
    print(_line(f"listing 100 FlowFiles of a queue of {figures['queue_count']:,}", figures["listing"],
                figures["listing_raw"], 1.0))


def _measure(api: Api, bus, design: dict, root: str, holder: str, args) -> dict:
    """The figures of step 4 (see the module docstring)."""
    now = int(time.time() * 1000)
    rng = random.Random(15)
    scope = design["components"]
    figures: dict = {"query": [], "query_raw": [], "lineage": [], "lineage_raw": [], "listing": [], "listing_raw": []}
    for round_ in range(args.rounds + 3):  # the first three warm up: not counted
        component = rng.choice(design["components"])
        end = now - rng.randrange(60_000, (HOURS - 1) * 3_600_000)
        took, request = api.follow("/provenance", "provenance", {"provenance": {"request": {
            "maxResults": PAGE, "startDate": _nifi_date(end - 3_600_000), "endDate": _nifi_date(end),
            "searchTerms": {"ProcessorID": {"value": component}}}}})
        events = request["results"]["provenanceEvents"]
        if len(events) != PAGE:
            raise RuntimeError(f"the query found {len(events)} events, not a page of {PAGE}")
        raw = max(_direct(bus, node, "provenance.query", {
            "query": {"component_ids": [component], "start_time": end - 3_600_000, "end_time": end},
            "scope": scope, "limit": PAGE})[0] for node in ("n1", "n2"))
        if round_ >= 3:
            figures["query"].append(took)
            figures["query_raw"].append(raw)
    for round_ in range(6):
        took, request = api.follow("/provenance/lineage", "lineage", {"lineage": {"request": {
            "lineageRequestType": "FLOWFILE", "uuid": root}}})
        raw = _direct(bus, "n1", "provenance.lineage", {"uuid": root, "scope": scope, "max_nodes": 10_000})[0]
        figures["lineage_nodes"] = len(request["results"]["nodes"])
        if request["results"]["truncated"]:
            raise RuntimeError("the lineage was truncated")
        if round_:
            figures["lineage"].append(took)
            figures["lineage_raw"].append(raw)
    for round_ in range(21):
        took, request = api.follow(f"/flowfile-queues/{design['queue']}/listing-requests", "listingRequest", {})
        raw = _direct(bus, holder, "queue.list", {"id": design["queue"], "max": 100})[0]
        if len(request["flowFileSummaries"]) != 100:
            raise RuntimeError(f"the listing holds {len(request['flowFileSummaries'])} FlowFiles")
        figures["queue_count"] = request["queueSize"]["objectCount"]
        if round_:
            figures["listing"].append(took)
            figures["listing_raw"].append(raw)
    return figures


if __name__ == "__main__":
    main()
