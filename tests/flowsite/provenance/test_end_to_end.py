"""Provenance end to end: flows deployed through the API run on two ``manage.py runnode``
processes; a real ``celery -A flowsite worker`` (serving both queues, on threads as deployed)
takes the requests.

- Analytics: the nodes export into the shared analytics directory and the worker runs Spark SQL
  (its own local Spark); each tenant sees its own components only, a platform operator's SQL
  sees both tenants and both nodes.
- A query gathers the events of both nodes; a replay of one of them reaches the next processor.
- A node killed (SIGKILL) makes a query partial, naming it, while the other node answers."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from flowsite import celery_app
from flowsite.cluster.status import forget_answers
from flowsite.flows.models import Connection, Processor
from tests.flowsite.conftest import token_client
from tests.flowsite.provenance.conftest import ANALYTICS, operator, wait_done
from tests.processes import OutputProcess
from tests.workers.cluster import Cluster, wait_until

pytestmark = pytest.mark.slow

REPO_ROOT = Path(__file__).resolve().parents[3]
DEPLOYMENTS = "/api/v1/cluster/deployments"


#: How long the worker and the web tier wait for a node's answer here, in seconds.
NODE_TIMEOUT = 3


@pytest.fixture
def platform(tmp_path, redis_server, settings):
    """Two node processes (their provenance searchable a second after it is recorded; a node
    that stops beating its heart stays CONNECTED for 30 s) and a Celery worker process on a
    private Redis, sharing one analytics directory."""
    analytics_dir = tmp_path / "analytics"
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    settings.FLOWSITE_ANALYTICS_DIR = analytics_dir
    settings.FLOWSITE_NODE_REQUEST_TIMEOUT = NODE_TIMEOUT
    broker = f"redis://127.0.0.1:{redis_server.port}/1"
    forget_answers()
    cluster = Cluster(tmp_path / "nodes", redis_server.port, "default", election_max_candidates=2,
                      **{"missed-heartbeats": 30})
    config = json.loads(cluster.config.read_text())
    cluster.config.write_text(json.dumps({**config, "provenance_repository": {"rollover_time": "1 sec"}}))
    env = {"FLOWSITE_ANALYTICS_DIR": str(analytics_dir)}
    for node_id in ("n1", "n2"):
        cluster.start(node_id, env=env)
    worker = OutputProcess(
        [sys.executable, "-m", "celery", "-A", "flowsite", "worker", "--queues", "provenance,analytics", "--pool",
         "threads", "--concurrency", "2", "--loglevel", "INFO",
         "--hostname", "jobs-test@%h", "--without-mingle", "--without-gossip", "--without-heartbeat"],
        REPO_ROOT, {**os.environ, **env, "REDIS_URL": settings.REDIS_URL, "CELERY_BROKER_URL": broker,
                    "FLOWSITE_CLUSTER": "default", "SPARK_MASTER": "local[1]",
                    "FLOWSITE_NODE_REQUEST_TIMEOUT": str(NODE_TIMEOUT)})
    saved = celery_app.conf.broker_url
    use_broker(broker)
    try:
        cluster.wait_connected("n1", "n2")
        worker.wait_for_output("ready", timeout=120)
        yield cluster, worker, analytics_dir
    finally:
        use_broker(saved)
        worker.terminate()
        cluster.stop_all()
        forget_answers()


def use_broker(url: str) -> None:
    """Send this process's Celery tasks to the broker at ``url``: the connection and producer
    pools Celery made for the previous broker (if any) are dropped, to be made again."""
    celery_app.conf.broker_url = url
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


def running_flow(world) -> dict:
    """gen (GenerateFlowFile every 100 ms, running) → log (LogAttribute, auto-terminating, running)."""
    tenant, root = world.tenant, world.root
    gen = Processor.objects.create(tenant=tenant, parent=root, name="gen", type="GenerateFlowFile",
                                   properties={"File Size": "10 B"}, scheduling_period="100 millis",
                                   scheduled_state="RUNNING")
    log = Processor.objects.create(tenant=tenant, parent=root, name="log", type="LogAttribute",
                                   auto_terminated=["success"], scheduled_state="RUNNING")
    Connection.objects.create(tenant=tenant, parent=root, source=gen, destination=log,
                              selected_relationships=["success"])
    return {"gen": str(gen.pk), "log": str(log.pk)}


def applied(api, deploy_id: str) -> bool:
    reports = api.get(f"{DEPLOYMENTS}/{deploy_id}").json()["reports"]
    return {report["node"]: report["status"] for report in reports} == {"n1": "applied", "n2": "applied"}


def rows(body: dict) -> list[dict]:
    names = [column["name"] for column in body["result"]["columns"]]
    return [dict(zip(names, row)) for row in body["result"]["rows"]]


def ask(api, **body) -> dict:
    answer = api.post(ANALYTICS, body, format="json")
    assert answer.status_code == 202, answer.json()
    done = wait_done(api, answer.json()["id"], timeout=400)
    assert done["state"] == "done", done
    return done


def test_the_jobs_process_answers_each_tenant_about_its_own_components(platform, tenant_a, tenant_b, admin_a):
    cluster, worker, analytics_dir = platform
    a, b = running_flow(tenant_a), running_flow(tenant_b)
    api_a, api_b = token_client(admin_a), token_client(tenant_b.admin("bob"))
    for api in (api_a, api_b):
        deploy_id = api.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
        wait_until(lambda: applied(api, deploy_id), 90, "both nodes applied the deployment")
    time.sleep(3)  # FlowFiles flow on both nodes

    drops = ask(api_a, question="drops")
    assert (drops["partial"], drops["nodes"]["answered"]) == (False, ["n1", "n2"])
    (row,) = rows(drops)
    assert (row["component_id"], row["component_name"], row["reason"]) == (
        a["log"], "log", "Auto-Terminated by success Relationship")
    assert row["flowfiles"] > 0
    assert api_b.get(f"{ANALYTICS}/{drops['id']}").status_code == 404

    throughput = ask(api_b, question="throughput")
    assert {row["component_id"] for row in rows(throughput)} == {b["gen"], b["log"]}

    everything = ask(token_client(operator()), sql="SELECT node, component_id, count(*) AS events FROM provenance "
                                                   "GROUP BY node, component_id")
    seen = rows(everything)
    assert {row["component_id"] for row in seen} >= {a["gen"], a["log"], b["gen"], b["log"]}
    assert {row["node"] for row in seen} == {"n1", "n2"}

    for node in ("n1", "n2"):
        assert list((analytics_dir / "provenance" / node).glob("*.parquet")), f"{node} exported into the shared directory"
    assert "provenance.run_analytics" in worker.output and "succeeded" in worker.output


def rewriting_flow(world) -> dict:
    """gen (one FlowFile of "hello" per node) → c1 → rewrite (ReplaceText: "HELLO WORLD") → c2 →
    sink (LogAttribute, stopped: c2 holds what arrives)."""
    tenant, root = world.tenant, world.root
    gen = Processor.objects.create(tenant=tenant, parent=root, name="gen", type="GenerateFlowFile",
                                   properties={"Custom Text": "hello"}, scheduling_period="1 hour",
                                   scheduled_state="RUNNING")
    rewrite = Processor.objects.create(tenant=tenant, parent=root, name="rewrite", type="ReplaceText",
                                       properties={"Evaluation Mode": "Entire text", "Regular Expression": "hello",
                                                   "Replacement Value": "HELLO WORLD"},
                                       auto_terminated=["failure"], scheduled_state="RUNNING")
    sink = Processor.objects.create(tenant=tenant, parent=root, name="sink", type="LogAttribute",
                                    auto_terminated=["success"])
    c1 = Connection.objects.create(tenant=tenant, parent=root, source=gen, destination=rewrite,
                                   selected_relationships=["success"])
    c2 = Connection.objects.create(tenant=tenant, parent=root, source=rewrite, destination=sink,
                                   selected_relationships=["success"])
    return {"rewrite": str(rewrite.pk), "c1": str(c1.pk), "c2": str(c2.pk)}


def finished(api, path: str, envelope: str, timeout: float = 60) -> dict:
    """The request at ``path`` once finished."""
    def done():
        body = api.get(path).json()[envelope]
        return body if body["finished"] else None
    return wait_until(done, timeout, f"{path} finished")


def modifications(api) -> list[dict]:
    """The CONTENT_MODIFIED events of a query (submitted, followed until finished, deleted)."""
    answer = api.post("/api/v1/provenance", {"provenance": {"request": {
        "searchTerms": {"EventType": {"value": "CONTENT_MODIFIED"}}}}}, format="json")
    assert answer.status_code == 201, answer.json()
    body = finished(api, answer.json()["provenance"]["uri"], "provenance")
    api.delete(body["uri"])
    return body


def deployed(api) -> None:
    deploy_id = api.post(DEPLOYMENTS, {}, format="json").json()["deploy_id"]
    wait_until(lambda: applied(api, deploy_id), 90, "both nodes applied the deployment")


def test_a_query_gathers_both_nodes_and_a_replay_reaches_the_next_processor(platform, tenant_a, admin_a):
    cluster, worker, _ = platform
    ids = rewriting_flow(tenant_a)
    api = token_client(admin_a)
    deployed(api)
    body = wait_until(lambda: (lambda b: b if len(b["results"]["provenanceEvents"]) == 2 else None)(
        modifications(api)), 60, "both nodes' events searchable")
    assert (body["partial"], body["nodes"]["answered"]) == (False, ["n1", "n2"])
    events = body["results"]["provenanceEvents"]
    assert {event["clusterNodeId"] for event in events} == {"n1", "n2"}
    assert {event["componentName"] for event in events} == {"rewrite"}

    n1 = next(event for event in events if event["clusterNodeId"] == "n1")
    replay = api.post("/api/v1/provenance-events/replays", {"eventId": n1["id"]}, format="json")
    assert replay.status_code == 201, replay.json()
    assert replay.json()["provenanceEvent"]["eventType"] == "REPLAY"

    def listed() -> dict | None:
        answer = api.post(f"/api/v1/flowfile-queues/{ids['c2']}/listing-requests")
        assert answer.status_code == 202, answer.json()
        listing = finished(api, answer.json()["listingRequest"]["uri"], "listingRequest")
        api.delete(listing["uri"])
        return listing if listing["queueSize"]["objectCount"] == 3 else None

    listing = wait_until(listed, 60, "the replayed FlowFile rewritten again into c2")
    assert sorted(summary["clusterNodeId"] for summary in listing["flowFileSummaries"]) == ["n1", "n1", "n2"]
    content = api.get(listing["flowFileSummaries"][0]["uri"].replace("?", "/content?"))
    assert b"".join(content.streaming_content) == b"HELLO WORLD"
    assert "provenance.run_request" in worker.output


def test_a_node_killed_makes_a_query_partial_naming_it(platform, tenant_a, admin_a):
    cluster, worker, _ = platform
    rewriting_flow(tenant_a)
    api = token_client(admin_a)
    deployed(api)
    wait_until(lambda: len(modifications(api)["results"]["provenanceEvents"]) == 2, 60, "both nodes' events")
    cluster.nodes["n2"].kill()
    assert cluster.states()["n2"] == "CONNECTED", "its heartbeat has not yet expired"
    started = time.monotonic()
    body = modifications(api)
    assert body["state"] == "done" and body["partial"]
    assert body["nodes"]["answered"] == ["n1"]
    assert body["nodes"]["missing"] == [{"node": "n2", "reason": f"it did not answer within {NODE_TIMEOUT} s"}]
    assert body["results"]["errors"] == [f"n2 -- it did not answer within {NODE_TIMEOUT} s"]
    assert [event["clusterNodeId"] for event in body["results"]["provenanceEvents"]] == ["n1"]
    assert time.monotonic() - started < NODE_TIMEOUT + 20
