"""Seed 002's ListSFTP → FetchSFTP on two real node processes over a real Redis and a real sshd:
the listing runs on the primary node only, a round-robin connection spreads the fetching over
both nodes, and when the primary stops the new primary continues from the cluster-wide listing
state, listing nothing twice (the originals stay on the server, so a second listing would show
as a duplicate)."""

from __future__ import annotations

import os
import time

import pytest

from engine.provenance.event import ProvenanceEventType
from engine.testing.flows import connection, flow, processor
from tests.sshd import SshServer
from tests.workers.balance import digests, events, wait_topology, written_by
from tests.workers.cluster import wait_until

#: Two hours ago at a whole second, so every file listed is old enough to be listed at once.
OLD = int(time.time()) - 7200


@pytest.fixture
def sshd(tmp_path):
    server = SshServer(tmp_path / "sshd")
    server.start()
    yield server
    server.stop()


def sftp_flow(server: SshServer, remote, outbox, duplicates) -> dict:
    login = {"Port": str(server.port), "Username": server.user, "Private Key Path": str(server.client_key)}
    return flow(processors=[
        processor("list", "ListSFTP", {"Hostname": "127.0.0.1", "Remote Path": str(remote), **login},
                  executionNode="PRIMARY", schedulingPeriod="500 millis"),
        processor("fetch", "FetchSFTP", {"Hostname": "${sftp.remote.host}", "Remote File": "${path}/${filename}",
                                         **login}, auto_terminate=["comms.failure", "not.found", "permission.denied"]),
        processor("put", "PutFile", {"Directory": str(outbox), "Conflict Resolution Strategy": "fail"},
                  auto_terminate=["success"]),
        processor("dup", "PutFile", {"Directory": str(duplicates), "Conflict Resolution Strategy": "replace"},
                  auto_terminate=["success", "failure"]),
    ], connections=[
        connection("c-lb", "list", "fetch", loadBalanceStrategy="ROUND_ROBIN"),
        connection("c-put", "fetch", "put"),
        connection("c-dup", "put", "dup", ["failure"]),
    ])


def put_files(remote, first: int, count: int, modified: int) -> dict[str, bytes]:
    written = {}
    for n in range(first, first + count):
        name = f"file-{n:04d}.txt"
        written[name] = f"content of {name}\n".encode() * (n % 7 + 1)
        (remote / name).write_bytes(written[name])
        os.utime(remote / name, (modified, modified))
    return written


def test_the_primary_lists_both_nodes_fetch_and_a_new_primary_lists_nothing_twice(cluster_factory, tmp_path, sshd):
    remote, outbox, duplicates = (tmp_path / name for name in ("remote", "outbox", "duplicates"))
    for directory in (remote, outbox, duplicates):
        directory.mkdir()
    cluster = cluster_factory(election_max_candidates=2)
    document = sftp_flow(sshd, remote, outbox, duplicates)
    cluster.start("n1", document)
    cluster.wait_connected("n1")
    wait_until(lambda: cluster.holder("primary") == "n1", 30, "n1 primary")
    cluster.start("n2", document)
    cluster.wait_connected("n2")
    wait_topology(cluster, ("n1", "n2"), ("n1", "n2"))

    first = put_files(remote, 0, 40, OLD)
    wait_until(lambda: len(digests(outbox)) >= len(first), 90, "the first files fetched and written")
    cluster.nodes["n1"].stop()
    wait_until(lambda: cluster.holder("primary") == "n2", 60, "n2 primary")
    second = put_files(remote, 40, 10, OLD + 60)
    node = cluster.start("n1")  # back, so that round robin has both nodes again
    node.wait_for_output("n1: running ", 60)
    wait_until(lambda: len(digests(outbox)) >= len(first) + len(second), 90, "the second files written")
    time.sleep(3)  # a few listings more: nothing may be listed again
    for node in cluster.nodes.values():
        assert node.stop() == 0, node.output

    expected = {name: data for name, data in {**first, **second}.items()}
    assert {path.name: path.read_bytes() for path in outbox.iterdir()} == expected
    assert not any(duplicates.iterdir()), "a file was listed and fetched twice"
    listed = {node_id: sorted(e.attributes["filename"] for e in events(node.data_dir, ProvenanceEventType.CREATE,
                                                                        "list"))
              for node_id, node in cluster.nodes.items()}
    assert listed["n1"] == sorted(first) and listed["n2"] == sorted(second), listed
    fetched = {node_id: written_by(node.data_dir) for node_id, node in cluster.nodes.items()}
    assert fetched["n1"] and fetched["n2"], "round robin gave both nodes files to fetch"
    assert sorted([*fetched["n1"], *fetched["n2"]]) == sorted(expected)
