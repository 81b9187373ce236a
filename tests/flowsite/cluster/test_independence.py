"""Tenants run independently on real node processes (``manage.py runnode``): one tenant's
deployment, start and stop never stop, restart or change another tenant's flow, and the API shows
what the nodes run; a tenant pinned to a pool of nodes (``runnode --labels``) runs only there, and
the others only on the shared pool, with status and commands coming from those nodes only."""

from __future__ import annotations

import threading

import pytest

from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.models import Deployment
from flowsite.cluster.status import forget_answers
from flowsite.flows.models import Processor
from tests.flowsite.cluster.conftest import small_flow
from tests.flowsite.conftest import token_client
from tests.workers.cluster import wait_until

# Run-state changes reach the nodes when their transaction commits: these tests commit.
pytestmark = pytest.mark.django_db(transaction=True)

DEPLOYMENTS = "/api/v1/cluster/deployments"


def node_status(node_id: str) -> dict:
    """What node ``node_id`` itself answers to ``status`` (every component it runs, totals included)."""
    reply = cluster_redis.bus().request([node_id], "status", {}, timeout=5)[node_id]
    assert reply.ok, reply.error
    return reply.result


def processor_on(node_id: str, processor: Processor) -> dict | None:
    return next((p for p in node_status(node_id)["processors"] if p["id"] == str(processor.pk)), None)


def queued_on(node_id: str, connection) -> int:
    found = [c["queued_count"] for c in node_status(node_id)["connections"] if c["id"] == str(connection.pk)]
    return found[0] if found else -1


def deploy(api, nodes: tuple[str, ...]) -> str:
    answer = api.post(DEPLOYMENTS, {}, format="json")
    assert answer.status_code == 202, answer.json()
    deploy_id = answer.json()["deploy_id"]

    def applied() -> bool:
        reports = {r["node"]: r["status"] for r in api.get(f"{DEPLOYMENTS}/{deploy_id}").json()["reports"]}
        assert "refused" not in reports.values() and "failed" not in reports.values(), reports
        return reports == {node: "applied" for node in nodes}
    wait_until(applied, 60, f"deployment {deploy_id} applied on {', '.join(nodes)}")
    return deploy_id


def set_state(api, processor: Processor, state: str) -> dict:
    processor.refresh_from_db()
    answer = api.put(f"/api/v1/processors/{processor.pk}/run-status",
                     {"state": state, "revision": {"version": processor.version}}, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()["cluster"]


def saved_state(node, identifier: str) -> str:
    def walk(group: dict):
        for processor in group.get("processors") or ():
            if processor["identifier"] == identifier:
                return processor["scheduledState"]
        for child in group.get("processGroups") or ():
            found = walk(child)
            if found:
                return found
        return None
    return walk(node.saved_flow()["flowContents"])


class Watch:
    """Samples a processor's run state, task total and a queue on nodes while something happens."""

    def __init__(self, nodes: tuple[str, ...], processor: Processor, connection) -> None:
        self.nodes, self.processor, self.connection = nodes, processor, connection
        self.samples: list[tuple[str, str, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for node in self.nodes:
                status = node_status(node)
                found = next((p for p in status["processors"] if p["id"] == str(self.processor.pk)), None)
                queued = [c["queued_count"] for c in status["connections"] if c["id"] == str(self.connection.pk)]
                if found is None or not queued:
                    self.samples.append((node, "missing", -1, -1))
                else:
                    self.samples.append((node, found["run_status"], found["totals"]["invocations"], queued[0]))

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def test_one_tenants_deployments_and_commands_leave_another_tenants_flow_running(start_nodes, tenant_a, tenant_b,
                                                                                admin_a):
    nodes = start_nodes(n1="", n2="")
    both = ("n1", "n2")
    flow_a, flow_b = small_flow(tenant_a), small_flow(tenant_b)
    api_a, api_b = token_client(admin_a), token_client(tenant_b.admin("bob"))
    deploy(api_b, both)
    assert all(node["ok"] for node in set_state(api_b, flow_b["gen"], "RUNNING")["nodes"])
    latest = Deployment.objects.filter(tenant=tenant_b.tenant).first()
    assert '"scheduledState": "ENABLED"' in str(latest.document).replace("'", '"'), \
        "B's deployment document still says its generator is stopped"
    wait_until(lambda: all(queued_on(n, flow_b["conn"]) >= 5 for n in both), 30, "B's FlowFiles queueing")

    with Watch(both, flow_b["gen"], flow_b["conn"]) as watch:
        deploy(api_a, both)
        flow_a["gen"].refresh_from_db()
        flow_a["gen"].properties = {"File Size": "20 B"}
        flow_a["gen"].save()
        deploy(api_a, both)
        assert all(node["ok"] for node in set_state(api_a, flow_a["gen"], "RUNNING")["nodes"])
        wait_until(lambda: all((processor_on(n, flow_a["gen"]) or {}).get("totals", {}).get("invocations", 0) > 3
                               for n in both), 30, "A's generator running")
        outcome = set_state(api_a, flow_a["gen"], "STOPPED")
        assert {node["result"]["id"] for node in outcome["nodes"]} == {str(flow_a["gen"].pk)}
    for node in both:
        samples = [s for s in watch.samples if s[0] == node]
        assert len(samples) >= 3, watch.samples
        assert {s[1] for s in samples} == {"Running"}, f"B's generator never stopped on {node}"
        tasks, queued = [s[2] for s in samples], [s[3] for s in samples]
        assert tasks == sorted(tasks) and tasks[-1] > tasks[0], f"B's generator was never rebuilt on {node}"
        assert queued == sorted(queued), f"B's queue kept its FlowFiles on {node}"
        assert processor_on(node, flow_a["gen"])["run_status"] == "Stopped"
        assert saved_state(nodes.nodes[node], str(flow_b["gen"].pk)) == "RUNNING", "a restart resumes it"

    forget_answers()
    status = api_b.get("/api/v1/flow/status").json()
    gen = next(p for p in status["processors"] if p["id"] == str(flow_b["gen"].pk))
    assert gen["run_status"] == "Running" and [n["node"] for n in gen["nodes"]] == ["n1", "n2"]
    assert api_b.get(f"/api/v1/processors/{flow_b['gen'].pk}").json()["state"] == "RUNNING"


def test_a_pinned_tenant_runs_only_on_its_pool_and_the_others_only_on_the_shared_one(start_nodes, tenant_a,
                                                                                    tenant_b, admin_a):
    nodes = start_nodes(n1="", n2="acme")
    tenant_a.tenant.pool = "acme"
    tenant_a.tenant.save()
    flow_a, flow_b = small_flow(tenant_a), small_flow(tenant_b)
    for flow in (flow_a, flow_b):
        Processor.objects.filter(pk=flow["gen"].pk).update(scheduled_state="RUNNING")
    api_a, api_b = token_client(admin_a), token_client(tenant_b.admin("bob"))
    deploy(api_a, ("n1", "n2"))
    deploy(api_b, ("n1", "n2"))

    view = nodes.view()
    assert view.nodes["n2"].labels == ["acme"] and view.nodes["n1"].labels == []
    assert view.nodes["n1"].heartbeat.flow_fingerprint == view.nodes["n2"].heartbeat.flow_fingerprint == \
        Deployment.objects.first().fingerprint, "every node keeps (and votes with) the whole cluster flow"
    a_ids = {str(flow_a[name].pk) for name in ("gen", "log")}
    b_ids = {str(flow_b[name].pk) for name in ("gen", "log")}
    assert {p["id"] for p in node_status("n2")["processors"]} == a_ids
    assert {p["id"] for p in node_status("n1")["processors"]} == b_ids
    wait_until(lambda: queued_on("n2", flow_a["conn"]) > 3 and queued_on("n1", flow_b["conn"]) > 3, 30,
               "each tenant running on its own nodes")

    forget_answers()
    status = api_a.get("/api/v1/flow/status").json()
    assert [node["node"] for node in status["nodes"]] == ["n2"]
    gen = next(p for p in status["processors"] if p["id"] == str(flow_a["gen"].pk))
    assert gen["run_status"] == "Running" and [n["node"] for n in gen["nodes"]] == ["n2"]
    status = api_b.get("/api/v1/flow/status").json()
    assert [node["node"] for node in status["nodes"]] == ["n1"]

    outcome = set_state(api_a, flow_a["gen"], "STOPPED")
    assert [(node["node"], node["ok"]) for node in outcome["nodes"]] == [("n2", True)]
    answer = api_a.post(f"/api/v1/connections/{flow_a['conn'].pk}/empty").json()
    assert [node["node"] for node in answer["nodes"]] == ["n2"] and answer["dropped"] > 3
    assert processor_on("n1", flow_b["gen"])["run_status"] == "Running"
    assert "runs the tenants of pools acme" in nodes.nodes["n2"].output
