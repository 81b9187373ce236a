"""Fixtures of the cluster tests: a private redis-server as the cluster's Redis, tenants with a
small valid flow, and real engine nodes run in the test process that answer their command
streams (``tests.cluster_nodes.InProcessNode``)."""

from __future__ import annotations

import itertools

import pytest
import redis
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from engine.cluster.cluster_flow import read_flow
from engine.cluster.keys import ClusterKeys
from engine.flow.sealed import open_flow
from engine.node import NodeConfig
from flowsite.cluster.status import forget_answers
from flowsite.flows.models import Connection, Processor
from flowsite.flows.secrets import master_key
from flowsite.tenancy.models import OPERATE_PLATFORM
from tests.cluster_nodes import InProcessNode
from tests.flowsite.conftest import token_client
from tests.workers.cluster import Cluster as NodeProcesses


class Cluster:
    """The cluster's Redis (a private redis-server) and the nodes started on it."""

    def __init__(self, server, tmp_path) -> None:
        self.server = server
        self.tmp_path = tmp_path
        self.keys = ClusterKeys("default")
        self.client = redis.Redis(host="127.0.0.1", port=server.port)
        self.nodes: list[InProcessNode] = []

    def node(self, node_id: str, document: dict | None = None, *, register: bool = True,
             config: NodeConfig | None = None) -> InProcessNode:
        """A real node (with settings ``config``) running ``document`` and answering its commands;
        with ``register``, known to the cluster as CONNECTED (as its agent would make it)."""
        node = InProcessNode(node_id, self.tmp_path / node_id, self.server.port, self.keys,
                             config=config).start(document)
        self.nodes.append(node)
        if register:
            node.register()
        return node

    def published_flow(self) -> dict:
        """The cluster's flow as a node runs it: read from Redis, sealed values opened."""
        published = read_flow(self.client, self.keys)
        assert published is not None, "no flow was published"
        return open_flow(published.bundle.flow, master_key())

    def close(self) -> None:
        for node in self.nodes:
            node.stop()
        self.client.close()


@pytest.fixture
def cluster(redis_server, tmp_path, settings):
    """The control plane's cluster on a private redis-server."""
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    forget_answers()
    running = Cluster(redis_server, tmp_path)
    yield running
    running.close()
    forget_answers()


_operators = itertools.count(1)


def operator(username: str | None = None):
    """A platform operator: a user holding ``tenancy.operate_platform`` and member of no tenant."""
    user = get_user_model().objects.create_user(username or f"operator{next(_operators)}",
                                                password="correct horse battery staple")
    user.user_permissions.add(Permission.objects.get(content_type__app_label="tenancy", codename=OPERATE_PLATFORM))
    return user


def small_flow(world, *, period: str = "50 millis") -> dict[str, Processor | Connection]:
    """``gen`` (GenerateFlowFile, stopped) → ``conn`` → ``log`` (LogAttribute, stopped) in the
    tenant's root group: valid, so it deploys; nothing runs until started."""
    tenant, root = world.tenant, world.root
    gen = Processor.objects.create(tenant=tenant, parent=root, name="gen", type="GenerateFlowFile",
                                   properties={"File Size": "10 B"}, scheduling_period=period)
    log = Processor.objects.create(tenant=tenant, parent=root, name="log", type="LogAttribute",
                                   auto_terminated=["success"])
    conn = Connection.objects.create(tenant=tenant, parent=root, source=gen, destination=log,
                                     selected_relationships=["success"])
    return {"gen": gen, "log": log, "conn": conn}


@pytest.fixture
def deployed(cluster, tenant_a, tenant_b, admin_a):
    """Tenants A and B each with ``small_flow``, both deployed, and two nodes running the cluster's
    flow. Returns (flow of A, flow of B, admin client of A, admin client of B)."""
    flow_a, flow_b = small_flow(tenant_a), small_flow(tenant_b)
    api_a, api_b = token_client(admin_a), token_client(tenant_b.admin("bob"))
    assert api_a.post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    assert api_b.post("/api/v1/cluster/deployments", {}, format="json").status_code == 202
    document = cluster.published_flow()
    cluster.node("n1", document)
    cluster.node("n2", document)
    return flow_a, flow_b, api_a, api_b


@pytest.fixture
def start_nodes(tmp_path, redis_server, settings):
    """``start_nodes(n1="", n2="acme")``: real nodes with those labels, connected to the cluster."""
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    forget_answers()
    started = []

    def start(**labels: str) -> NodeProcesses:
        cluster = NodeProcesses(tmp_path / "nodes", redis_server.port, "default", election_max_candidates=len(labels))
        for node_id, node_labels in labels.items():
            cluster.start(node_id, None, None, *(("--labels", node_labels) if node_labels else ()))
        cluster.wait_connected(*labels)
        started.append(cluster)
        return cluster

    yield start
    for cluster in started:
        cluster.stop_all()
    forget_answers()
