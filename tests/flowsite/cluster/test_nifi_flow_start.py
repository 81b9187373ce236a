"""A flow NiFi 2 wrote, imported through the API, deployed to a real node process and started as a
group (``PUT /api/v1/process-groups/{id}/run-status``): nothing runs before the start, as NiFi
left it; after it, orders arrive in the output directory and the DISABLED processor stays
disabled on the node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowsite.flows.models import Processor
from tests.flowsite.api.test_flow_roundtrip import import_
from tests.flowsite.cluster.test_independence import deploy, processor_on
from tests.flowsite.conftest import token_client
from tests.workers.cluster import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

NIFI_FLOW = Path(__file__).parents[2] / "engine" / "flow" / "data" / "nifi-orders.json"


def test_a_nifi_flow_imported_deployed_and_started_as_a_group_runs_on_a_real_node(start_nodes, tenant_a, admin_a,
                                                                                    tmp_path):
    home = tmp_path / "files" / "acme"
    out = home / "orders"
    home.mkdir(parents=True)
    tenant_a.tenant.file_roots = [str(home)]
    tenant_a.tenant.save(update_fields=["file_roots"])
    document = json.loads(NIFI_FLOW.read_text())
    for parameter in document["parameterContexts"]["Orders"]["parameters"]:
        if parameter["name"] == "Output Directory":
            parameter["value"] = str(out)
    start_nodes(n1="")
    api = token_client(admin_a)
    group = import_(api, tenant_a.root, document)
    deploy(api, ("n1",))
    processors = {p.name: p for p in Processor.objects.filter(parent_id=group["id"])}
    assert processor_on("n1", processors["Generate orders"])["run_status"] == "Stopped"

    response = api.put(f"/api/v1/process-groups/{group['id']}/run-status", {"state": "RUNNING"}, format="json")

    assert response.status_code == 200, response.content
    cluster = response.json()["cluster"]
    assert cluster["reached"] and [(n["node"], n["ok"]) for n in cluster["nodes"]] == [("n1", True)], cluster
    assert cluster["nodes"][0]["result"]["not_started"] == []
    wait_until(lambda: out.is_dir() and any(out.iterdir()), 60, "orders written by the node")
    written = json.loads(next(out.iterdir()).read_text())
    assert written == [{"id": 1, "customer": "ACME"}]
    assert processor_on("n1", processors["Backfill (disabled)"])["run_status"] == "Disabled"
    assert processor_on("n1", processors["Write orders"])["run_status"] == "Running"
