"""Fixtures of the provenance tests: the cluster's Redis (a private redis-server), Celery tasks
run in the test process; for analytics the analytics directory and the jobs' Spark (local,
small), tenants A and B each with a deployed small flow run by two real in-process nodes that
export into the analytics directory, and ways to put provenance events on those nodes; for the
inspection of provenance and queues, tenant A's text flow (a split and a merge) and B's small
flow run by two real in-process nodes (``inspected``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pytest
from engine.cluster.keys import ClusterKeys
from engine.config import StorageConfig
from engine.content.config import ContentConfig
from engine.node import NodeConfig
from engine.provenance import ProvenanceEvent, ProvenanceEventType as E
from engine.provenance.query import ProvenanceQuery
from flowsite import celery_app
from flowsite.cluster.status import forget_answers
from flowsite.flows.models import Connection, Processor
from tests.cluster_nodes import InProcessNode
from tests.engine.provenance.conftest import claim
from tests.engine.spark.fixtures import TEST_SETTINGS, spark_runtime  # noqa: F401 (the test session's Spark)
from tests.flowsite.cluster.conftest import Cluster, operator, small_flow
from tests.flowsite.conftest import token_client
from tests.processes import wait_until

ANALYTICS = "/api/v1/provenance-analytics"

__all__ = ["ANALYTICS", "TEXT", "Inspected", "World", "events_of", "operator", "wait_done"]


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


#: What tenant A's text flow generates on each node: one FlowFile of three lines.
TEXT = "one\ntwo\nthree\n"


def text_flow(world) -> dict[str, Processor | Connection]:
    """``gen`` (GenerateFlowFile: one FlowFile of ``TEXT`` per node at start) → ``c1`` →
    ``rewrite`` (ReplaceText: every "o" becomes "0") → ``c2`` → ``split`` (SplitText, a line each)
    → ``c3`` → ``merge`` (MergeContent, Defragment) → ``c4`` → ``sink`` (LogAttribute, stopped:
    ``c4`` holds the merged FlowFile). Every processor but ``sink`` runs once deployed."""
    tenant, root = world.tenant, world.root

    def processor(name, kind, properties=None, terminated=(), state="RUNNING", period="0 sec"):
        return Processor.objects.create(tenant=tenant, parent=root, name=name, type=kind, properties=properties or {},
                                        auto_terminated=list(terminated), scheduled_state=state,
                                        scheduling_period=period)

    made = {
        "gen": processor("gen", "GenerateFlowFile", {"Custom Text": TEXT, "Mime Type": "text/plain",
                                                     "filename": "words.txt"}, period="1 hour"),
        "rewrite": processor("rewrite", "ReplaceText", {"Evaluation Mode": "Entire text", "Regular Expression": "o",
                                                        "Replacement Value": "0"}, ["failure"]),
        "split": processor("split", "SplitText", {"Line Split Count": "1", "Remove Trailing Newlines": "false"},
                           ["original", "failure"]),
        "merge": processor("merge", "MergeContent", {"Merge Strategy": "Defragment"}, ["original", "failure"]),
        "sink": processor("sink", "LogAttribute", terminated=["success"], state="STOPPED"),
    }
    pairs = (("c1", "gen", "rewrite", "success"), ("c2", "rewrite", "split", "success"),
             ("c3", "split", "merge", "splits"), ("c4", "merge", "sink", "merged"))
    for name, source, destination, relationship in pairs:
        made[name] = Connection.objects.create(tenant=tenant, parent=root, name=name, source=made[source],
                                               destination=made[destination], selected_relationships=[relationship])
    return made


@dataclass
class Inspected:
    """Tenant A's text flow and tenant B's small flow (its ``gen`` run once, ``log`` stopped),
    both deployed to two real in-process nodes, each of which has carried one FlowFile of A's
    through to ``c4`` and holds one of B's in ``conn``."""

    cluster: Cluster
    a: dict[str, Any]
    b: dict[str, Any]
    nodes: dict[str, InProcessNode]

    def id(self, name: str) -> str:
        return str(self.a[name].pk)

    def events(self, node: str, **criteria) -> list[ProvenanceEvent]:
        """The node's events matching ``criteria`` (``engine.provenance.query.ProvenanceQuery``
        fields), oldest first: the engine's own answer, to check the API's against."""
        provenance = self.nodes[node].node.storage.provenance
        provenance.rollover()
        return list(reversed(provenance.query(ProvenanceQuery(limit=10_000, **criteria)).events))

    def event(self, node: str, kind: E, component: str) -> ProvenanceEvent:
        """The first event of ``kind`` of A's ``component`` on ``node``."""
        return self.events(node, event_type=kind, component_id=self.id(component))[0]

    def queued(self, node: str, connection: str) -> int:
        return len(self.nodes[node].node.controller.queue(str(connection)))


@pytest.fixture
def inspected(cluster_settings, redis_server, tmp_path, tenant_a, tenant_b, admin_a) -> Inspected:
    """See ``Inspected``."""
    a = text_flow(tenant_a)
    b = small_flow(tenant_b)
    b["gen"].scheduled_state, b["gen"].scheduling_period = "RUNNING", "1 hour"
    b["gen"].save()
    for api in (token_client(admin_a), token_client(tenant_b.admin("bob"))):
        assert api.post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    cluster = Cluster(redis_server, tmp_path)
    document = cluster.published_flow()
    # Every content in a file of its own, so that one can age off while another stays.
    config = NodeConfig(storage=StorageConfig(content_repository=ContentConfig(max_appendable_size=1)))
    nodes = {node_id: cluster.node(node_id, document, config=config) for node_id in ("n1", "n2")}
    world = Inspected(cluster, a, b, nodes)
    for node_id in nodes:
        wait_until(lambda node_id=node_id: world.queued(node_id, a["c4"].pk) == 1 and
                   world.queued(node_id, b["conn"].pk) == 1, 30, f"both flows ran on {node_id}")
        nodes[node_id].node.storage.provenance.rollover()
    yield world
    cluster.close()
