"""A real node process runs a flow with a ``tenants`` section: the tenant's FetchFile of
/proc/self/environ and of the node's own flow file, and its PutFile outside its root, are refused
with bulletins (logged) and nothing is written; its PutFile inside its root writes; a tenant
without the write-filesystem capability cannot start PutFile."""

from __future__ import annotations

import json
import time

from engine.testing.flows import connection, flow, group, processor

from ..node_process import NodeProcess


def test_a_node_confines_a_tenants_flow(tmp_path):
    files_root, outside, data_dir = tmp_path / "files", tmp_path / "outside", tmp_path / "node"
    (files_root / "acme").mkdir(parents=True)
    outside.mkdir()
    every_second, quick_penalty = {"schedulingPeriod": "1 sec"}, {"penaltyDuration": "100 millis"}
    acme = group("acme-group", processors=[
        processor("gen", "GenerateFlowFile", **every_second),
        processor("fetch-environ", "FetchFile", {"File to Fetch": "/proc/self/environ"}, **quick_penalty),
        processor("fetch-flow", "FetchFile", {"File to Fetch": str(data_dir / "flow.json.gz")},
                  **quick_penalty),
        processor("put-out", "PutFile", {"Directory": str(outside / "stolen")}, auto_terminate=["success", "failure"]),
        processor("put-in", "PutFile", {"Directory": str(files_root / "acme" / "in")},
                  auto_terminate=["success", "failure"]),
    ], connections=[
        connection("c1", "gen", "fetch-environ"), connection("c2", "gen", "fetch-flow"),
        connection("c3", "gen", "put-in"),
        connection("c4", "fetch-environ", "put-out", ["success", "failure", "not.found", "permission.denied"]),
        connection("c5", "fetch-flow", "put-out", ["success", "failure", "not.found", "permission.denied"]),
    ])
    beta = group("beta-group", processors=[
        processor("beta-gen", "GenerateFlowFile", **every_second),
        processor("beta-put", "PutFile", {"Directory": str(files_root / "beta")}, auto_terminate=["success", "failure"]),
    ], connections=[connection("b1", "beta-gen", "beta-put")])
    document = flow(group("root", groups=[acme, beta]))
    document["tenants"] = {
        "acme": {"group": "acme-group", "capabilities": ["read-filesystem", "write-filesystem"], "files": {"roots": []},
                 "network": {"allow": []}, "listenPorts": None},
        "beta": {"group": "beta-group", "capabilities": [], "listenPorts": None},
    }
    flow_path = tmp_path / "flow.json"
    flow_path.write_text(json.dumps(document))
    node = NodeProcess(tmp_path / "node.log", "--flow", str(flow_path), "--data-dir", str(data_dir),
                       "--files-root", str(files_root))
    try:
        node.wait_for(r"FetchFile\[fetch-environ\] refused /proc/self/environ: /proc is never reachable")
        node.wait_for(rf"FetchFile\[fetch-flow\] refused {data_dir}/flow.json.gz: it is inside the node's data "
                      r"directory")
        node.wait_for(rf"PutFile\[put-out\] refused {outside}/stolen: outside tenant acme's file roots "
                      rf"\({files_root}/acme\)")
        node.wait_for(r"'beta-put': PutFile needs the restricted capability 'write-filesystem', which tenant "
                      r"'beta' has not been granted")
        node.wait_for(r"running .* could not start")
        deadline = time.monotonic() + 30
        while not list((files_root / "acme").glob("in/*")) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        assert node.stop() == 0
    assert sorted(path.name for path in outside.iterdir()) == []  # nothing written outside the root
    assert not (files_root / "beta").exists()
    written = list((files_root / "acme" / "in").iterdir())
    assert written and all(path.read_bytes() == b"" for path in written)
