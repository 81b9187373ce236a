"""Provenance analytics end to end: two tenants' flows deployed through the API run on two
``manage.py runnode`` processes; a real ``celery -A flowsite worker`` takes the requests, has the
nodes export into the shared analytics directory and runs Spark SQL (its own local Spark); each
tenant sees its own components only, a platform operator's SQL sees both tenants and both nodes."""

from __future__ import annotations

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


@pytest.fixture
def platform(tmp_path, redis_server, settings):
    """Two node processes and a Celery worker process on a private Redis, sharing one analytics directory."""
    analytics_dir = tmp_path / "analytics"
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    settings.FLOWSITE_ANALYTICS_DIR = analytics_dir
    broker = f"redis://127.0.0.1:{redis_server.port}/1"
    forget_answers()
    cluster = Cluster(tmp_path / "nodes", redis_server.port, "default", election_max_candidates=2)
    env = {"FLOWSITE_ANALYTICS_DIR": str(analytics_dir)}
    for node_id in ("n1", "n2"):
        cluster.start(node_id, env=env)
    worker = OutputProcess(
        [sys.executable, "-m", "celery", "-A", "flowsite", "worker", "--queues", "provenance,analytics", "--pool", "solo",
         "--loglevel", "INFO",
         "--hostname", "jobs-test@%h", "--without-mingle", "--without-gossip", "--without-heartbeat"],
        REPO_ROOT, {**os.environ, **env, "REDIS_URL": settings.REDIS_URL, "CELERY_BROKER_URL": broker,
                    "FLOWSITE_CLUSTER": "default", "SPARK_MASTER": "local[1]"})
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
