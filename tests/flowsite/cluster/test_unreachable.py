"""With the cluster's Redis stopped, the cluster endpoints answer 503 with a clear body and the
flow definitions, which live in PostgreSQL, are still served."""

from __future__ import annotations

import time

import pytest

from flowsite.cluster import status as federated
from tests.flowsite.cluster.conftest import operator
from tests.flowsite.conftest import token_client


@pytest.mark.parametrize("method, path", [
    ("get", "/api/v1/cluster/nodes"), ("get", "/api/v1/cluster/nodes/n1"), ("post", "/api/v1/cluster/nodes/n1/disconnect"),
    ("post", "/api/v1/cluster/nodes/n1/offload"),
    ("get", "/api/v1/flow/status"), ("get", "/api/v1/process-groups/{root}/status"),
    ("post", "/api/v1/cluster/deployments"), ("post", "/api/v1/connections/{conn}/empty"),
])
def test_cluster_endpoints_answer_503_and_flow_definitions_200(cluster, deployed, method, path):
    flow_a, _, api_a, _ = deployed
    assert api_a.get("/api/v1/flow/status").status_code == 200
    cluster.server.stop()
    federated.forget_answers()
    started = time.monotonic()
    node_action = path.endswith(("/disconnect", "/offload"))
    client = token_client(operator()) if node_action else api_a  # node actions: operators
    answer = getattr(client, method)(path.format(root=flow_a["gen"].parent_id, conn=flow_a["conn"].pk))
    assert answer.status_code == 503, answer.json()
    assert time.monotonic() - started < 5
    body = answer.json()
    assert body["code"] == "cluster_unreachable" and body["status"] == 503
    assert body["message"].startswith(
        f"the cluster cannot be reached: Redis at 127.0.0.1:{cluster.server.port} does not answer")
    definition = api_a.get(f"/api/v1/process-groups/{flow_a['gen'].parent_id}/flow-definition")
    assert definition.status_code == 200
    assert any(p["name"] == "gen" for p in definition.json()["flowContents"]["processors"])
