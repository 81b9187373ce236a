"""The node's ``group.start`` command on a real node and a real redis-server: a flow NiFi wrote
(everything stopped, one processor DISABLED) is started as NiFi's start of a group would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cluster.keys import ClusterKeys
from tests.cluster_nodes import InProcessNode
from tests.processes import wait_until

KEYS = ClusterKeys("test")
NIFI_FLOW = Path(__file__).parents[1] / "engine" / "flow" / "data" / "nifi-orders.json"
ROOT = "6f1c2b3a-0c4d-3e5f-8a9b-0123456789ab"
BACKFILL = "0a1b2c3d-0002-3000-8000-000000000002"


@pytest.fixture
def node(redis_server, tmp_path):
    document = json.loads(NIFI_FLOW.read_text())
    for entry in document["parameterContexts"]["Orders"]["parameters"]:
        if entry["name"] == "Output Directory":
            entry["value"] = str(tmp_path / "orders")
    running = InProcessNode("n1", tmp_path / "n1", redis_server.port, KEYS).start(document)
    yield running
    running.stop()


def _ask(bus, kind, **args):
    return bus.request(["n1"], kind, args, timeout=5)["n1"]


def test_group_start_starts_a_nifi_flow_but_its_disabled_processor(bus, node, tmp_path):
    controller = node.node.controller
    assert not any(p.run_status() == "Running" for p in controller.processors.values()), "NiFi wrote them stopped"

    reply = _ask(bus, "group.start", id=ROOT)

    assert reply.ok, reply.error
    assert reply.result == {"id": ROOT, "not_started": []}
    assert {p.name: p.run_status() for p in controller.processors.values()} == {
        "Generate orders": "Running", "Backfill (disabled)": "Disabled", "CSV to JSON": "Running",
        "Write orders": "Running"}
    wait_until(lambda: (tmp_path / "orders").is_dir() and any((tmp_path / "orders").iterdir()),
               what="orders written")
    assert all("BACKFILL" not in path.read_text() for path in (tmp_path / "orders").iterdir())
    assert controller.processor(BACKFILL).config.scheduled_state == "DISABLED"


def test_group_start_of_an_unknown_group_is_a_clear_error(bus, node):
    reply = _ask(bus, "group.start", id="ghost")
    assert not reply.ok and "no process group has identifier 'ghost'" in reply.error
    reply = _ask(bus, "group.start")
    assert not reply.ok and "needs the component's 'id'" in reply.error
