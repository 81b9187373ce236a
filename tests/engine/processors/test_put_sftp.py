"""PutSFTP against a real OpenSSH server (tests/sshd.py): temporary names, conflict resolution,
file metadata, and what happens when the server is down, refuses or its disk is full."""

from __future__ import annotations

import os

import pytest

from engine.processors.put_sftp import PutSFTP
from engine.runtime import Outcome
from engine.testing import ProcessorTestRunner
from tests.engine.tmpfs import mounted_tmpfs
from tests.servers import free_port
from tests.sshd import sshd, world  # noqa: F401 - the module's server and a directory open to everyone


@pytest.fixture
def remote(tmp_path):
    directory = tmp_path / "remote"
    directory.mkdir()
    return directory


def runner_for(tmp_path, server, remote, **properties):
    return ProcessorTestRunner(PutSFTP, tmp_path, server.properties(**{"Remote Path": str(remote), **properties}))


def test_sends_each_flowfile_to_a_file_with_a_send_event(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote) as runner:
        runner.enqueue(b"first", filename="a.txt")
        runner.enqueue(b"second", filename="b.txt")
        runner.run()
        assert len(runner.output("success")) == 2
        uris = sorted(e.transit_uri for e in runner.events(event_type="SEND"))
        assert uris == [f"sftp://127.0.0.1/{str(remote).lstrip('/')}/{name}" for name in ("a.txt", "b.txt")]
    assert (remote / "a.txt").read_bytes() == b"first" and (remote / "b.txt").read_bytes() == b"second"
    assert sorted(p.name for p in remote.iterdir()) == ["a.txt", "b.txt"], "no temporary file is left"


def test_a_large_flowfile_is_sent_whole(tmp_path, sshd, remote):
    data = os.urandom(5 << 20)
    with runner_for(tmp_path, sshd, remote) as runner:
        runner.enqueue(data, filename="big.bin")
        runner.run()
        assert len(runner.output("success")) == 1
    assert (remote / "big.bin").read_bytes() == data


def test_the_file_is_written_under_a_temporary_name_then_renamed(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote, **{"Temporary Filename": "${filename}.part"}) as runner:
        runner.enqueue(b"x", filename="a.txt")
        runner.run()
    with runner_for(tmp_path, sshd, remote, **{"Dot Rename": "false"}) as runner:
        runner.enqueue(b"y", filename="b.txt")
        runner.run()
    assert sorted(p.name for p in remote.iterdir()) == ["a.txt", "b.txt"]


def test_time_permissions_and_owner_are_set(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote, **{"Last Modified Time": "2024-03-01T10:20:30+0000",
                                               "Permissions": "rw-r-----", "Remote Owner": "65534",
                                               "Remote Group": "65534"}) as runner:
        runner.enqueue(b"x", filename="a.txt")
        runner.run()
        assert len(runner.output("success")) == 1
    status = (remote / "a.txt").stat()
    assert status.st_mtime == 1709288430
    assert status.st_mode & 0o777 == 0o640
    assert (status.st_uid, status.st_gid) == (65534, 65534)
    with runner_for(tmp_path, sshd, remote, **{"Permissions": "not-a-mode"}) as runner:
        runner.enqueue(b"x", filename="b.txt")
        runner.run()
        assert len(runner.output("success")) == 1
        assert any("could not set its attributes" in m for m in runner.bulletins), runner.bulletins


@pytest.mark.parametrize(("strategy", "relationship", "content", "extra"), [
    ("REPLACE", "success", b"new", None),
    ("NONE", "success", b"new", None),
    ("IGNORE", "success", b"old", None),
    ("RENAME", "success", b"old", "1.a.txt"),
    ("REJECT", "reject", b"old", None),
    ("FAIL", "failure", b"old", None),
])
def test_conflict_resolution(tmp_path, sshd, remote, strategy, relationship, content, extra):
    (remote / "a.txt").write_bytes(b"old")
    with runner_for(tmp_path, sshd, remote, **{"Conflict Resolution": strategy}) as runner:
        runner.enqueue(b"new", filename="a.txt")
        runner.run()
        (flowfile,) = runner.output(relationship)
        assert (flowfile.penalty_expiration > 0) == (strategy == "FAIL")
    assert (remote / "a.txt").read_bytes() == content
    names = sorted(p.name for p in remote.iterdir())
    assert names == sorted(["a.txt"] + ([extra] if extra else []))
    if extra:
        assert (remote / extra).read_bytes() == b"new"


def test_a_directory_of_that_name_and_empty_flowfiles_are_rejected(tmp_path, sshd, remote):
    (remote / "taken").mkdir()
    with runner_for(tmp_path, sshd, remote, **{"Conflict Resolution": "REPLACE"}) as runner:
        runner.enqueue(b"x", filename="taken")
        runner.enqueue(b"", filename="empty.txt")
        runner.run()
        assert len(runner.output("reject")) == 2
    assert not (remote / "empty.txt").exists()
    with runner_for(tmp_path, sshd, remote, **{"Reject Zero-Byte Files": "false"}) as runner:
        runner.enqueue(b"", filename="empty.txt")
        runner.run()
        assert len(runner.output("success")) == 1
    assert (remote / "empty.txt").read_bytes() == b""


def test_a_missing_remote_path_fails_unless_created(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote / "new" / "dir") as runner:
        runner.enqueue(b"x", filename="a.txt")
        runner.run()
        (flowfile,) = runner.output("failure")
        assert flowfile.penalty_expiration > 0
        assert any("no such file or directory" in m for m in runner.bulletins), runner.bulletins
    with runner_for(tmp_path, sshd, remote / "new" / "dir", **{"Create Directory": "true"}) as runner:
        runner.enqueue(b"x", filename="a.txt")
        runner.run()
        assert len(runner.output("success")) == 1
    assert (remote / "new" / "dir" / "a.txt").read_bytes() == b"x"


def test_a_filename_leaving_the_directory_fails(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote) as runner:
        runner.enqueue(b"x", filename="../escape.txt")
        runner.run()
        assert len(runner.output("failure")) == 1
    assert not (remote.parent / "escape.txt").exists()


def test_a_server_that_is_down_fails_one_returns_the_rest_and_yields(tmp_path):
    port = free_port()
    with ProcessorTestRunner(PutSFTP, tmp_path, {"Hostname": "127.0.0.1", "Port": str(port), "Username": "u",
                                                 "Remote Path": "/x"}) as runner:
        for n in range(3):
            runner.enqueue(b"x", filename=f"{n}.txt")
        assert runner.run() == [Outcome.YIELDED]
        (failed,) = runner.output("failure")
        assert failed.penalty_expiration > 0 and failed.attributes["filename"] == "0.txt"
        assert sorted(f.attributes["filename"] for f in runner.input_flowfiles()) == ["1.txt", "2.txt"]
        assert runner.events(event_type="SEND") == []
        assert any(f"could not connect to 127.0.0.1:{port}" in m and "Connection refused" in m
                   for m in runner.bulletins), runner.bulletins


def test_a_full_remote_disk_fails_the_flowfile_and_leaves_no_partial_file(tmp_path, sshd):
    with mounted_tmpfs(tmp_path / "small", "64k") as small:
        with runner_for(tmp_path, sshd, small) as runner:
            runner.enqueue(os.urandom(1 << 20), filename="big.bin")
            runner.enqueue(b"fits", filename="small.txt")
            runner.run()
            (failed,) = runner.output("failure")
            assert failed.attributes["filename"] == "big.bin" and failed.penalty_expiration > 0
            assert any("big.bin" in m and "writing" in m for m in runner.bulletins), runner.bulletins
            assert [f.attributes["filename"] for f in runner.output("success")] == ["small.txt"]
            assert [e.transit_uri.rsplit("/", 1)[1] for e in runner.events(event_type="SEND")] == ["small.txt"]
        assert sorted(p.name for p in small.iterdir()) == ["small.txt"]


def test_permission_denied_by_the_server_fails_the_flowfile(tmp_path, sshd, world):
    locked = world / "locked"
    locked.mkdir()
    os.chmod(locked, 0o755)
    with runner_for(tmp_path, sshd, locked, Username="nobody") as runner:
        runner.enqueue(b"x", filename="a.txt")
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.penalty_expiration > 0
        assert any("permission denied" in m for m in runner.bulletins), runner.bulletins
    assert list(locked.iterdir()) == []


def test_a_tenant_without_a_grant_for_the_server_is_refused(tmp_path, sshd, remote):
    tenant = {"files": {"roots": [str(sshd.directory)]}}
    with ProcessorTestRunner(PutSFTP, tmp_path, sshd.properties(**{"Remote Path": str(remote)}),
                             tenant=tenant) as runner:
        runner.enqueue(b"x", filename="a.txt")
        runner.run()
        assert len(runner.output("failure")) == 1
        assert any(f"PutSFTP[processor-under-test] refused 127.0.0.1:{sshd.port}: 127.0.0.1 is this machine"
                   in m for m in runner.bulletins), runner.bulletins
    assert list(remote.iterdir()) == []


def test_batch_size_bounds_one_run(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote, **{"Batch Size": "2"}) as runner:
        for n in range(3):
            runner.enqueue(b"x", filename=f"{n}.txt")
        runner.run()
        assert len(runner.output("success")) == 2 and len(runner.input_flowfiles()) == 1


def test_nifi_names_and_defaults():
    assert PutSFTP.nifi_type == "org.apache.nifi.processors.standard.PutSFTP"
    assert [r.name for r in PutSFTP.relationships] == ["success", "failure", "reject"]
    defaults = {d.name: d.default for d in PutSFTP.properties}
    assert defaults["Conflict Resolution"] == "NONE" and defaults["Batch Size"] == "500"
    assert defaults["Dot Rename"] == defaults["Reject Zero-Byte Files"] == "true"
    assert defaults["Create Directory"] == "false"


def test_directories_are_created_without_looking_first_when_listing_is_disabled(tmp_path, sshd, remote):
    for _ in range(2):  # the second time the directories exist
        with runner_for(tmp_path, sshd, remote / "x" / "y", **{"Create Directory": "true",
                                                              "Disable Directory Listing": "true",
                                                              "Conflict Resolution": "REPLACE"}) as runner:
            runner.enqueue(b"x", filename="a.txt")
            runner.run()
            assert len(runner.output("success")) == 1, runner.bulletins
    assert (remote / "x" / "y" / "a.txt").read_bytes() == b"x"
