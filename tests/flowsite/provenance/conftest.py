"""Fixtures of the provenance analytics tests: the cluster's Redis (a private redis-server), the
analytics directory, the jobs' Spark (local, small) and Celery tasks run in the test process,
tenants A and B each with a deployed small flow run by two real in-process nodes that export
into the analytics directory, and ways to put provenance events on those nodes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
from engine.cluster.keys import ClusterKeys
from engine.provenance import ProvenanceEvent, ProvenanceEventType as E
from flowsite import celery_app
from flowsite.cluster.status import forget_answers
from tests.cluster_nodes import InProcessNode
from tests.engine.provenance.conftest import claim
from tests.engine.spark.fixtures import TEST_SETTINGS, spark_runtime  # noqa: F401 (the test session's Spark)
from tests.flowsite.cluster.conftest import Cluster, operator, small_flow
from tests.flowsite.conftest import token_client

ANALYTICS = "/api/v1/provenance-analytics"

__all__ = ["ANALYTICS", "World", "events_of", "operator", "wait_done"]


@pytest.fixture
def eager_tasks():
    """Celery tasks run at once, in the test process (as ``delay`` is called)."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def cluster_settings(settings, redis_server, eager_tasks):
    """The cluster's Redis (a private redis-server), jobs run in the test process, and two
    seconds for each node to answer."""
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    settings.FLOWSITE_NODE_REQUEST_TIMEOUT = 2.0
    forget_answers()
    yield settings
    forget_answers()


@pytest.fixture
def analytics_settings(settings, redis_server, tmp_path, eager_tasks, spark_runtime):  # noqa: F811
    """The cluster's Redis, the shared analytics directory, and as the jobs' Spark the test
    session's (``TEST_SETTINGS``: the job finds the process's runtime set up as it wants it)."""
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    settings.FLOWSITE_ANALYTICS_DIR = tmp_path / "analytics"
    settings.SPARK_MASTER = TEST_SETTINGS.master
    settings.FLOWSITE_ANALYTICS_SPARK = {"ui_enabled": TEST_SETTINGS.ui_enabled,
                                         "driver_memory": TEST_SETTINGS.driver_memory, "conf": TEST_SETTINGS.conf}
    settings.FLOWSITE_ANALYTICS_EXPORT_TIMEOUT = 30.0
    forget_answers()
    yield settings
    forget_answers()


@dataclass
class World:
    """Tenants A and B with their flows (``gen`` → ``conn`` → ``log``), and the nodes."""

    cluster: Cluster
    flow_a: dict[str, Any]
    flow_b: dict[str, Any]
    nodes: dict[str, InProcessNode]

    def ids(self, flow: dict[str, Any]) -> dict[str, str]:
        return {name: str(component.pk) for name, component in flow.items()}

    def record(self, node: str, *events: ProvenanceEvent) -> None:
        """Register ``events`` on ``node``'s provenance repository, as its sessions would."""
        self.nodes[node].node.storage.provenance.register_events(list(events))


def events_of(ids: dict[str, str], uuid: str, size: int, *, when: int | None = None) -> list[ProvenanceEvent]:
    """A FlowFile's life in a small flow: created by gen, auto-terminated by log."""
    now = when or int(time.time() * 1000) - 60_000
    content = claim(uuid, length=size)
    return [
        ProvenanceEvent(E.CREATE, now, uuid, ids["gen"], "GenerateFlowFile", now, now, duration=2,
                        previous_attributes={"uuid": uuid}, content_claim=content),
        ProvenanceEvent(E.DROP, now + 40, uuid, ids["log"], "LogAttribute", now, now, duration=7,
                        details="Auto-Terminated by success Relationship", previous_attributes={"uuid": uuid},
                        previous_content_claim=content, content_claim=content),
    ]


@pytest.fixture
def world(analytics_settings, redis_server, tmp_path, tenant_a, tenant_b, admin_a) -> World:
    """Tenants A and B deployed to two in-process nodes that export into the analytics directory."""
    flow_a, flow_b = small_flow(tenant_a), small_flow(tenant_b)
    api_a, api_b = token_client(admin_a), token_client(tenant_b.admin("bob"))
    assert api_a.post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    assert api_b.post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    cluster = Cluster(redis_server, tmp_path)
    document = cluster.published_flow()
    nodes = {}
    for node_id in ("n1", "n2"):
        node = InProcessNode(node_id, tmp_path / node_id, redis_server.port, ClusterKeys("default"),
                             analytics_dir=analytics_settings.FLOWSITE_ANALYTICS_DIR).start(document)
        node.register()
        cluster.nodes.append(node)
        nodes[node_id] = node
    yield World(cluster, flow_a, flow_b, nodes)
    cluster.close()


def wait_done(api, request_id: str, timeout: float = 300) -> dict:
    """The request once done or failed."""
    deadline = time.monotonic() + timeout
    while True:
        answer = api.get(f"{ANALYTICS}/{request_id}")
        assert answer.status_code == 200, answer.content
        body = answer.json()
        if body["state"] in ("done", "failed"):
            return body
        assert time.monotonic() < deadline, f"request {request_id} still {body['state']} after {timeout} s"
        time.sleep(0.5)
