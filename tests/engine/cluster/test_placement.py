"""Tenant placement on a node: which pools a node's labels serve, the node keeping the whole flow
(one fingerprint on every node) while it builds and runs only the groups of tenants placed on it,
commands on components placed elsewhere, and a tenant moved away while its connections hold
FlowFiles refused rather than lost."""

from __future__ import annotations

import json
import time

import pytest

from engine.cluster.bundle import FlowBundle
from engine.cluster.bus import Command
from engine.cluster.inherit import inherit, local_bundle
from engine.cluster.placement import Placement, parse_labels
from engine.node import StandaloneNode
from engine.testing.flows import connection, flow, group, processor
from workers.commands import NodeCommands


def tenant_group(name: str) -> dict:
    """``<name>-gen`` (running) → ``<name>-held`` → ``<name>-log`` (stopped): FlowFiles pile up;
    ``<name>-gen`` reads a parameter of the tenant's own context."""
    return group(f"{name}-group", parameter_context=f"{name}/ctx", processors=[
        processor(f"{name}-gen", "GenerateFlowFile", {"File Size": "#{size}"}, schedulingPeriod="20 millis"),
        processor(f"{name}-log", "LogAttribute", {}, state="ENABLED", auto_terminate=["success"])],
        connections=[connection(f"{name}-held", f"{name}-gen", f"{name}-log")])


def cluster_flow(pools: dict[str, str], *, with_acme: bool = True) -> dict:
    """Tenants ``shop`` and ``acme`` (if ``with_acme``) with the given pools, as the control plane writes it."""
    names = ["shop", "acme"] if with_acme else ["shop"]
    document = flow(group("root", groups=[tenant_group(name) for name in names]),
                    parameter_contexts={f"{name}/ctx": {"size": "1 B"} for name in names})
    document["tenants"] = {name: {"group": f"{name}-group", "pool": pools.get(name, ""), "capabilities": [],
                                  "files": {"roots": []}, "network": {"allow": []}, "listenPorts": None}
                           for name in names}
    return document


@pytest.fixture
def running(tmp_path):
    started = []

    def start(name: str, document: dict, labels: tuple[str, ...] = ()) -> StandaloneNode:
        node = StandaloneNode(tmp_path / name, placement=Placement(labels))
        path = tmp_path / f"{name}-flow.json"
        path.write_text(json.dumps(document))
        node.load_flow(path)
        node.start()
        started.append(node)
        return node

    yield start
    for node in started:
        node.stop()


def wait_queued(node: StandaloneNode, connection_id: str, count: int) -> int:
    deadline = time.monotonic() + 30
    while node.queued_flowfiles().get(connection_id, 0) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return node.queued_flowfiles()[connection_id]


def test_pools_of_labels():
    assert Placement().runs("") and not Placement().runs("acme"), "no label: the shared pool only"
    assert Placement(("acme",)).runs("acme") and not Placement(("acme",)).runs(""), "a pinned node runs no one else"
    assert Placement(("acme", "shared")).runs("") and Placement(("acme", "shared")).runs("acme")
    assert not Placement(("acme",)).runs("globex")
    assert parse_labels(" shared,acme,acme ") == ("acme", "shared")
    with pytest.raises(ValueError, match="'a b' is not a node label"):
        parse_labels("a b")


def test_each_node_runs_only_the_tenants_placed_on_it_and_keeps_the_whole_flow(running):
    document = cluster_flow({"acme": "acme"})
    shared = running("shared", document)
    pinned = running("pinned", document, labels=("acme",))
    assert set(shared.controller.processors) == {"shop-gen", "shop-log"}
    assert set(pinned.controller.processors) == {"acme-gen", "acme-log"}
    assert set(pinned.flow.parameter_contexts) == {"acme/ctx"}, "another tenant's parameters are not opened here"
    assert set(pinned.flow.raw["tenants"]) == {"acme"} and set(shared.flow.raw["tenants"]) == {"shop"}
    assert local_bundle(shared).fingerprint == local_bundle(pinned).fingerprint == FlowBundle(document).fingerprint
    assert "shop-group" in json.dumps(pinned.stored_document()), "the whole flow is kept (and voted with)"

    handlers = {}
    NodeCommands(lambda: pinned.controller, "pinned", node=pinned).register(_Handlers(handlers))
    for kind in ("processor.stop", "processor.terminate", "queue.empty", "queue.list", "queue.flowfile",
                 "queue.content"):
        assert handlers[kind](Command("c1", kind, {"id": "shop-gen"})) == {"id": "shop-gen", "here": False}
    with pytest.raises(Exception, match="no processor has identifier 'nowhere'"):
        handlers["processor.stop"](Command("c2", "processor.stop", {"id": "nowhere"}))
    assert handlers["status"](Command("c3", "status", {}))["elsewhere"] == ["shop-group"]
    assert shared.controller.processor("shop-gen").run_status() == "Running"


def test_a_tenant_moved_away_with_flowfiles_queued_is_refused_and_moves_once_emptied(running):
    node = running("node", cluster_flow({}))
    held = wait_queued(node, "acme-held", 3)
    shop_gen = node.controller.processors["shop-gen"]

    moved = FlowBundle(cluster_flow({"acme": "acme"}))
    report = inherit(node, "node", moved)
    assert report.status == "refused"
    assert "acme-held" in report.message and "tenant(s) acme now run on other nodes" in report.message
    assert node.queued_flowfiles()["acme-held"] >= held, "nothing lost"
    assert node.controller.processors["acme-gen"].run_status() == "Running"

    node.controller.stop_processor("acme-gen", wait=5)
    node.controller.drop_queue("acme-held", "the test")
    report = inherit(node, "node", moved)
    assert report.status == "applied", report.message
    assert set(node.controller.processors) == {"shop-gen", "shop-log"}
    assert node.controller.processors["shop-gen"] is shop_gen and shop_gen.run_status() == "Running", \
        "the tenant that stays is untouched"
    assert local_bundle(node).fingerprint == moved.fingerprint


class _Handlers:
    """Collects the handlers ``NodeCommands.register`` gives a listener."""

    def __init__(self, handlers: dict) -> None:
        self.handlers = handlers

    def register(self, kind: str, handler, *, concurrent: bool = False) -> None:
        self.handlers[kind] = handler
