"""FetchSFTP against a real OpenSSH server (tests/sshd.py): content, completion strategies and the
failure relationships."""

from __future__ import annotations

import os

import pytest

from engine.processors.fetch_sftp import FetchSFTP
from engine.testing import ProcessorTestRunner
from tests.servers import free_port
from tests.sshd import sshd, world  # noqa: F401 - the module's server and a directory open to everyone

FETCH = {"Remote File": "${path}/${filename}"}


@pytest.fixture
def remote(tmp_path):
    directory = tmp_path / "remote"
    directory.mkdir()
    return directory


def runner_for(tmp_path, server, **properties):
    return ProcessorTestRunner(FetchSFTP, tmp_path, server.properties(**{**FETCH, **properties}))


def test_fetches_the_content_with_nifis_attributes_and_a_fetch_event(tmp_path, sshd, remote):
    (remote / "a.txt").write_bytes(b"hello sftp")
    with runner_for(tmp_path, sshd) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == b"hello sftp"
        assert flowfile.attributes["sftp.remote.host"] == "127.0.0.1"
        assert flowfile.attributes["sftp.remote.port"] == str(sshd.port)
        assert flowfile.attributes["sftp.remote.filename"] == f"{remote}/a.txt"
        assert flowfile.attributes["filename"] == "a.txt" and flowfile.attributes["path"] == str(remote)
        (event,) = runner.events(event_type="FETCH")
        assert event.transit_uri == f"sftp://127.0.0.1:{sshd.port}/{str(remote).lstrip('/')}/a.txt"
    assert (remote / "a.txt").exists()


def test_a_large_file_is_fetched_whole(tmp_path, sshd, remote):
    data = os.urandom(3 << 20)
    (remote / "big.bin").write_bytes(data)
    with runner_for(tmp_path, sshd, **{"Use Compression": "true"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="big.bin")
        runner.run()
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == data


def test_delete_file_removes_it_after_the_commit(tmp_path, sshd, remote):
    for name in ("a.txt", "b.txt"):
        (remote / name).write_text(name)
    with runner_for(tmp_path, sshd, **{"Completion Strategy": "Delete File"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.enqueue(b"", path=str(remote), filename="b.txt")
        runner.run()
        assert len(runner.output("success")) == 2
    assert list(remote.iterdir()) == []


def test_move_file_creates_the_destination_and_resolves_conflicts(tmp_path, sshd, remote):
    (remote / "a.txt").write_text("new")
    done = tmp_path / "done" / "deep"
    with runner_for(tmp_path, sshd, **{"Completion Strategy": "Move File", "Move Destination Directory": str(done),
                                       "Create Directory": "true"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        assert len(runner.output("success")) == 1
    assert (done / "a.txt").read_text() == "new" and not (remote / "a.txt").exists()
    (remote / "a.txt").write_text("newer")
    with runner_for(tmp_path, sshd, **{"Completion Strategy": "Move File",
                                       "Move Destination Directory": str(done)}) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        assert len(runner.output("success")) == 1
        assert any("could not move it" in m and "the FlowFile stays in success" in m for m in runner.bulletins)
    assert (remote / "a.txt").read_text() == "newer", "FAIL leaves the file where it is"
    with runner_for(tmp_path, sshd, **{"Completion Strategy": "Move File", "Move Destination Directory": str(done),
                                       "Move Conflict Resolution": "REPLACE"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
    assert (done / "a.txt").read_text() == "newer" and not (remote / "a.txt").exists()


def test_a_file_gone_between_list_and_fetch_goes_to_not_found(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, **{"Completion Strategy": "Delete File"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="gone.txt")
        runner.run()
        (flowfile,) = runner.output("not.found")
        assert flowfile.penalty_expiration > 0
        assert flowfile.attributes["fetch.failure.reason"] == "not.found"
        assert flowfile.attributes["sftp.remote.filename"] == f"{remote}/gone.txt"
        assert [e.relationship for e in runner.events(event_type="ROUTE")] == ["not.found"]
        assert any(f"could not fetch {remote}/gone.txt" in m and "no such file" in m for m in runner.bulletins)
    with runner_for(tmp_path, sshd, **{"Log Level When File Not Found": "NONE"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="gone.txt")
        runner.run()
        assert len(runner.output("not.found")) == 1 and runner.bulletins == []


def test_a_file_the_server_will_not_let_the_user_read_goes_to_permission_denied(tmp_path, sshd, world):
    secret = world / "secret.txt"
    secret.write_text("root only")
    os.chmod(secret, 0o600)
    with runner_for(tmp_path, sshd, Username="nobody") as runner:
        runner.enqueue(b"", path=str(world), filename="secret.txt")
        runner.run()
        (flowfile,) = runner.output("permission.denied")
        assert flowfile.penalty_expiration > 0
        assert flowfile.attributes["fetch.failure.reason"] == "permission.denied"
        assert any("permission denied" in m for m in runner.bulletins), runner.bulletins
    assert secret.read_text() == "root only"


def test_a_server_that_is_down_sends_the_flowfiles_to_comms_failure(tmp_path):
    port = free_port()
    with ProcessorTestRunner(FetchSFTP, tmp_path, {**FETCH, "Hostname": "127.0.0.1", "Port": str(port),
                                                   "Username": "u"}) as runner:
        runner.enqueue(b"", path="/x", filename="a.txt")
        runner.run()
        (flowfile,) = runner.output("comms.failure")
        assert flowfile.penalty_expiration > 0
        assert flowfile.attributes["fetch.failure.reason"] == "comms.failure"
        assert any(f"could not connect to 127.0.0.1:{port}" in m and "comms.failure" in m for m in runner.bulletins)


def test_a_refused_login_goes_to_comms_failure(tmp_path, sshd, remote):
    (remote / "a.txt").write_text("x")
    with runner_for(tmp_path, sshd, **{"Private Key Path": None, "Password": "wrong"}) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        assert len(runner.output("comms.failure")) == 1
        assert any(f"refused the login of {sshd.user!r}" in m for m in runner.bulletins), runner.bulletins


def test_a_tenant_without_a_grant_for_the_server_is_refused(tmp_path, sshd, remote):
    (remote / "a.txt").write_text("x")
    tenant = {"files": {"roots": [str(sshd.directory)]}}
    with ProcessorTestRunner(FetchSFTP, tmp_path, sshd.properties(**FETCH), tenant=tenant) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        assert len(runner.output("comms.failure")) == 1
        assert any(f"FetchSFTP[processor-under-test] refused 127.0.0.1:{sshd.port}: 127.0.0.1 is this machine"
                   in m for m in runner.bulletins), runner.bulletins
    with ProcessorTestRunner(FetchSFTP, tmp_path, sshd.properties(**FETCH), tenant={
            **tenant, "network": {"allow": [f"127.0.0.1:{sshd.port}"]}}) as runner:
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        assert len(runner.output("success")) == 1


def test_nifi_names_and_validation(tmp_path, sshd):
    assert FetchSFTP.nifi_type == "org.apache.nifi.processors.standard.FetchSFTP"
    assert [r.name for r in FetchSFTP.relationships] == ["success", "comms.failure", "not.found",
                                                         "permission.denied"]
    defaults = {d.name: d.default for d in FetchSFTP.properties}
    assert defaults["Completion Strategy"] == "None" and defaults["Move Conflict Resolution"] == "FAIL"
    assert defaults["Log Level When File Not Found"] == "ERROR"
    with runner_for(tmp_path, sshd, **{"Completion Strategy": "Move File"}) as runner:
        assert any("Move Destination Directory" in problem for problem in runner.validate())
    with runner_for(tmp_path, sshd, **{"fetchfiletransfer-notfound-loglevel": "WARN"}) as runner:
        assert runner.validate() == []


def test_a_connection_serves_later_runs_until_the_processor_stops(tmp_path, sshd, remote):
    (remote / "a.txt").write_text("a")
    before = sshd.logins()
    with runner_for(tmp_path, sshd) as runner:
        for _ in range(3):
            runner.enqueue(b"", path=str(remote), filename="a.txt")
            runner.run(stop=False)
        assert len(runner.output("success")) == 3
        assert sshd.logins() == before + 1
        runner.stop()
        runner.enqueue(b"", path=str(remote), filename="a.txt")
        runner.run()
        assert sshd.logins() == before + 2, "stopping closed the idle connection"
