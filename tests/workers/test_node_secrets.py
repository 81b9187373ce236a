"""A real node (``manage.py runnode``, production settings) holds only the secrets it needs: it
starts without SECRET_KEY and DATABASE_URL, opens each tenant's sealed values with the key it
derives from the master key, and refuses forged, altered and replayed commands on real Redis."""

from __future__ import annotations

import json
import secrets
import time
import uuid
from pathlib import Path

import pytest

from engine.cluster.bundle import FlowBundle
from engine.cluster.bus import Command, CommandBus
from engine.cluster.cluster_flow import publish_flow, read_reports
from engine.cluster.signing import CommandSigner
from engine.flow.sealed import seal_flow
from engine.secrets import MasterKey
from engine.testing.flows import connection, flow, processor
from tests.workers.cluster import wait_until

SENSITIVE_KEY = secrets.token_urlsafe(32)
CLUSTER_KEY = secrets.token_urlsafe(32)
SIGNER = CommandSigner(CLUSTER_KEY)
#: What only the control plane holds.
CONTROL_PLANE = ("SECRET_KEY", "SECRET_KEY_FILE", "DATABASE_URL", "DATABASE_URL_FILE", "FLOWSITE_ENV", "DEBUG",
                 "FLOWSITE_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY", "FLOWSITE_ROLE")


@pytest.fixture
def cluster(cluster_factory, tmp_path):
    """One-node clusters whose node runs under production settings with only its own secrets (the
    master key from a file, as compose gives it)."""
    made = cluster_factory(election_max_candidates=1)
    key_file = tmp_path / "sensitive_key"
    key_file.write_text(SENSITIVE_KEY + "\n")
    made.env = {**{k: v for k, v in made.env.items() if k not in CONTROL_PLANE},
                "FLOWSITE_ENV": "production", "FLOWSITE_SENSITIVE_KEY_FILE": str(key_file),
                "FLOWSITE_CLUSTER_KEY": CLUSTER_KEY}
    return made


def generating(out: Path) -> dict:
    return flow(processors=[
        processor("gen", "GenerateFlowFile", {"File Size": "3 B"}, schedulingPeriod="200 millis"),
        processor("put", "PutFile", {"Directory": str(out), "Conflict Resolution Strategy": "replace"},
                  auto_terminate=["success", "failure"]),
    ], connections=[connection("c", "gen", "put")])


def _environment(pid: int) -> set[str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    return {entry.split(b"=", 1)[0].decode() for entry in raw.split(b"\0") if b"=" in entry}


def test_a_node_without_secret_key_or_database_runs_a_deployed_flow_with_two_tenants_values(cluster, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    node = cluster.start("n1")
    cluster.wait_connected("n1")
    assert not {"SECRET_KEY", "DATABASE_URL", "SECRET_KEY_FILE", "DATABASE_URL_FILE"} & _environment(node.process.pid)

    document = generating(out)
    master, tenants = MasterKey(SENSITIVE_KEY), {}
    for slug in ("acme", "globex"):
        tenant_id = str(uuid.uuid4())
        group = {"identifier": f"g-{slug}", "name": slug, "componentType": "PROCESS_GROUP", "processors": [
            processor(f"http-{slug}", "InvokeHTTP", {"HTTP URL": "http://127.0.0.1:9/",
                                                     "Request Username": slug,
                                                     "Request Password": f"{slug}-password"},
                      state="DISABLED", auto_terminate=["Original", "Response", "Retry", "No Retry", "Failure"])],
                 "connections": [], "processGroups": [], "controllerServices": [], "funnels": [],
                 "inputPorts": [], "outputPorts": []}
        sealed = seal_flow({"flowContents": group}, master.tenant(tenant_id))["flowContents"]
        assert f"{slug}-password" not in json.dumps(sealed)
        document["flowContents"].setdefault("processGroups", []).append(dict(sealed, groupIdentifier="root"))
        tenants[slug] = {"group": f"g-{slug}", "id": tenant_id, "pool": "", "capabilities": [],
                         "files": {"roots": []}, "network": {"allow": []}, "listenPorts": None}
    document["tenants"] = tenants
    bundle = FlowBundle(document, {"tenants": {}})
    deploy_id = uuid.uuid4().hex
    publish_flow(cluster.client, cluster.keys, bundle, "acme:v1,globex:v1", deploy_id, signer=SIGNER)
    CommandBus(cluster.client, cluster.keys, SIGNER).send(["n1"], "deploy", {"deploy_id": deploy_id})
    reports = wait_until(lambda: read_reports(cluster.client, cluster.keys, deploy_id), 60, "the node's report")
    assert reports["n1"].status == "applied", reports["n1"]
    wait_until(lambda: any(p.stat().st_size == 3 for p in out.iterdir()), 30, "the deployed flow running")
    saved = json.dumps(node.saved_flow())
    assert "acme-password" not in saved and "globex-password" not in saved, "sealed on the node's disk"
    assert "Traceback" not in node.output and "does not open" not in node.output, node.output
    assert node.stop() == 0, node.output


def _reply(client, key: str) -> dict:
    popped = client.blpop([key], timeout=10)
    assert popped is not None, f"no answer on {key}"
    return json.loads(popped[1])


def test_forged_altered_and_replayed_commands_are_refused_and_reported_a_valid_one_works(cluster, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    node = cluster.start("n1", generating(out))
    cluster.wait_connected("n1")
    keys, client = cluster.keys, cluster.client
    bus = CommandBus(client, keys, SIGNER)

    def run_status(identifier: str) -> str:
        status = bus.request(["n1"], "status", timeout=10)["n1"]
        assert status.ok, status.error
        return {p["id"]: p["run_status"] for p in status.result["processors"]}[identifier]

    wait_until(lambda: run_status("gen") == "Running", 30, "gen running")

    def stop_command(request_id: str, signer: CommandSigner, **changes) -> dict[str, str]:
        command = Command(request_id, "processor.stop", {"id": "gen"}, keys.reply(request_id), time.time() + 30,
                          time.time())
        entry = command.encode(signer, keys, "n1")
        if changes:
            entry["command"] = json.dumps({**json.loads(entry["command"]), **changes})
        return entry

    client.xadd(keys.commands("n1"), stop_command("forged", CommandSigner("a guessed cluster key")))
    forged = _reply(client, keys.reply("forged"))
    assert forged["refused"] and "forged or altered: the MAC does not match" in forged["error"]
    client.xadd(keys.commands("n1"), stop_command("altered", SIGNER, args={"id": "put"}))
    altered = _reply(client, keys.reply("altered"))
    assert altered["refused"] and "forged or altered" in altered["error"]
    assert run_status("gen") == "Running" and run_status("put") == "Running", "neither command ran"

    genuine = stop_command("genuine", SIGNER)
    client.xadd(keys.commands("n1"), genuine)
    answer = _reply(client, keys.reply("genuine"))
    assert answer["ok"] and answer["result"]["id"] == "gen", answer
    assert run_status("gen") == "Stopped"
    bus.request(["n1"], "processor.start", {"id": "gen"}, timeout=10)
    assert run_status("gen") == "Running"
    client.xadd(keys.commands("n1"), genuine)
    replayed = _reply(client, keys.reply("genuine"))
    assert replayed["refused"] and "replayed: command genuine was already accepted" in replayed["error"]
    assert run_status("gen") == "Running", "the replayed stop did not run"

    for reason in ("refused: forged or altered", "refused: replayed"):
        assert reason in node.output, f"the node logs {reason!r}:\n{node.output}"
    bulletins = bus.request(["n1"], "status", timeout=10)["n1"].result["bulletins"]
    messages = [b["message"] for b in bulletins if b["source_type"] == "Node"]
    assert any("forged or altered" in m for m in messages) and any("replayed" in m for m in messages), bulletins
    assert node.stop() == 0, node.output


def test_a_cluster_flow_not_published_with_the_cluster_key_is_not_taken(cluster, tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    node = cluster.start("n1", generating(out))
    cluster.wait_connected("n1")
    forged = FlowBundle(generating(elsewhere), {"tenants": {}})
    publish_flow(cluster.client, cluster.keys, forged, "intruder", "forged-deploy",
                 signer=CommandSigner("a guessed cluster key"))
    wait_until(lambda: "was not taken: the cluster's flow is not signed with the cluster key" in node.output, 30,
               "the node refusing the forged flow")
    CommandBus(cluster.client, cluster.keys, SIGNER).send(["n1"], "deploy", {"deploy_id": "forged-deploy"})
    report = wait_until(lambda: read_reports(cluster.client, cluster.keys, "forged-deploy").get("n1"), 30, "a report")
    assert report.status == "refused" and "not signed with the cluster key" in report.message
    time.sleep(1)
    assert not list(elsewhere.iterdir()), "the forged flow never ran"
    assert any(out.iterdir()), "the node kept running its own flow"
    assert node.stop() == 0, node.output
