"""ListSFTP against a real OpenSSH server (tests/sshd.py), with its cluster-wide listing state."""

from __future__ import annotations

import os
import socket
import time

import pytest

from engine.components import Scope
from engine.processors.list_sftp import ListSFTP
from engine.runtime import Outcome
from engine.testing import ProcessorTestRunner
from tests.servers import free_port
from tests.sshd import sshd  # noqa: F401 - the module's server

#: An hour ago, at 17 seconds past a minute, so that the detected precision is seconds.
BASE = ((int(time.time()) - 3600) // 60 * 60 + 17) * 1000


def make(path, content=b"data", modified_ms=BASE):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    os.utime(path, ns=(modified_ms * 1_000_000, modified_ms * 1_000_000))
    return path


@pytest.fixture
def remote(tmp_path):
    directory = tmp_path / "remote"
    directory.mkdir()
    return directory


def runner_for(tmp_path, server, remote, **properties):
    return ProcessorTestRunner(ListSFTP, tmp_path, server.properties(**{"Remote Path": str(remote), **properties}),
                               input=False)


def names(runner):
    return sorted(flowfile.attributes["filename"] for flowfile in runner.output("success"))


def test_lists_files_with_nifis_attributes(tmp_path, sshd, remote):
    make(remote / "a.txt", b"hello")
    os.chmod(remote / "a.txt", 0o640)
    with runner_for(tmp_path, sshd, remote) as runner:
        assert runner.run() == [Outcome.DID_WORK]
        (flowfile,) = runner.output("success")
        attributes = flowfile.attributes
        assert flowfile.size == 0
        assert attributes["filename"] == "a.txt"
        assert attributes["path"] == str(remote)
        assert attributes["sftp.remote.host"] == "127.0.0.1"
        assert attributes["sftp.remote.port"] == str(sshd.port)
        assert attributes["sftp.listing.user"] == sshd.user
        assert attributes["file.size"] == "5"
        assert attributes["file.permissions"] == "rw-r-----"
        assert attributes["file.owner"] == str(os.getuid()) and attributes["file.group"] == str(os.getgid())
        assert attributes["file.lastModifiedTime"] == time.strftime("%Y-%m-%dT%H:%M:%S%z",
                                                                    time.localtime(BASE / 1000))
        assert runner.events(event_type="CREATE")


def test_a_file_is_listed_once_and_again_when_modified(tmp_path, sshd, remote):
    make(remote / "a.txt")
    make(remote / "b.txt", modified_ms=BASE + 1000)
    with runner_for(tmp_path, sshd, remote) as runner:
        runner.run()
        assert names(runner) == ["a.txt", "b.txt"]
        state = runner.state(Scope.CLUSTER).values
        assert state["listing.timestamp"] == state["processed.timestamp"] == str(BASE + 1000)
        assert state["id.0"] == f"{remote}/b.txt"
        assert runner.run() == [Outcome.YIELDED]
        assert names(runner) == ["a.txt", "b.txt"]
        make(remote / "a.txt", b"changed", modified_ms=BASE + 5000)
        runner.run()
        assert names(runner) == ["a.txt", "a.txt", "b.txt"]


def test_the_newest_files_wait_while_they_may_still_be_written(tmp_path, sshd, remote):
    make(remote / "old.txt")
    make(remote / "new.txt", modified_ms=int(time.time() * 1000))
    with runner_for(tmp_path, sshd, remote, **{"Target System Timestamp Precision": "minutes"}) as runner:
        runner.run()
        assert names(runner) == ["old.txt"]


def test_a_restarted_node_or_a_new_primary_lists_nothing_twice(tmp_path, sshd, remote):
    make(remote / "a.txt")
    with runner_for(tmp_path, sshd, remote) as former:
        former.run()
        shared = dict(former.state(Scope.CLUSTER).values)
        former.node.processor = ListSFTP()  # a restarted process: only the stored state remains
        assert former.run() == [Outcome.YIELDED]
        assert names(former) == ["a.txt"]
    make(remote / "b.txt", modified_ms=BASE + 1000)
    with runner_for(tmp_path, sshd, remote) as successor:
        successor.node.state_manager.set_state(shared, Scope.CLUSTER)
        successor.run()
        assert names(successor) == ["b.txt"]


def test_execution_node_primary_lists_on_the_primary_only(tmp_path, sshd, remote):
    make(remote / "a.txt")
    with ProcessorTestRunner(ListSFTP, tmp_path, sshd.properties(**{"Remote Path": str(remote)}), input=False,
                             scheduling={"executionNode": "PRIMARY"}) as runner:
        runner.controller.set_primary(False)
        assert runner.run(stop=False) == [Outcome.NOT_PRIMARY]
        assert names(runner) == []
        runner.controller.set_primary(True)
        runner.run()
        assert names(runner) == ["a.txt"]


def test_changing_the_filters_starts_a_new_listing_and_no_tracking_keeps_no_state(tmp_path, sshd, remote):
    make(remote / "a.txt")
    with runner_for(tmp_path, sshd, remote) as runner:
        runner.run()
    with runner_for(tmp_path, sshd, remote, **{"File Filter Regex": ".*"}) as runner:
        runner.node.state_manager.set_state({"listing.timestamp": str(BASE), "processed.timestamp": str(BASE),
                                             "id.0": f"{remote}/a.txt", "listing.configuration": "other"},
                                            Scope.CLUSTER)
        runner.run()
        assert names(runner) == ["a.txt"]
    with runner_for(tmp_path, sshd, remote, **{"Listing Strategy": "none"}) as runner:
        runner.run(2)
        assert names(runner) == ["a.txt", "a.txt"]
        assert runner.state(Scope.CLUSTER).values == {}


def test_filters_dotted_files_recursion_and_path_filter(tmp_path, sshd, remote):
    make(remote / "a.csv")
    make(remote / "b.txt")
    make(remote / ".hidden.csv")
    make(remote / "keep" / "c.csv")
    make(remote / "skip" / "d.csv")
    make(remote / ".dotdir" / "e.csv")
    with runner_for(tmp_path, sshd, remote, **{"File Filter Regex": r".*\.csv"}) as runner:
        runner.run()
        assert names(runner) == ["a.csv"]
    with runner_for(tmp_path, sshd, remote, **{"File Filter Regex": r".*\.csv", "Search Recursively": "true",
                                               "Path Filter Regex": "keep"}) as runner:
        runner.run()
        assert names(runner) == ["a.csv", "c.csv"]
        paths = {f.attributes["filename"]: f.attributes["path"] for f in runner.output("success")}
        assert paths["c.csv"] == f"{remote}/keep"
    with runner_for(tmp_path, sshd, remote, **{"Search Recursively": "true", "Ignore Dotted Files": "false",
                                               "Listing Strategy": "none"}) as runner:
        runner.run()
        assert names(runner) == [".hidden.csv", "a.csv", "b.txt", "c.csv", "d.csv", "e.csv"]


def test_symbolic_links_are_followed_only_when_asked(tmp_path, sshd, remote):
    target = make(tmp_path / "elsewhere" / "linked.txt")
    os.symlink(target, remote / "link.txt")
    with runner_for(tmp_path, sshd, remote, **{"Listing Strategy": "none"}) as runner:
        assert runner.run() == [Outcome.YIELDED]
    with runner_for(tmp_path, sshd, remote, **{"Listing Strategy": "none", "Follow Symbolic Links": "true"}) as runner:
        runner.run()
        assert names(runner) == ["link.txt"]


def test_size_and_age_limits(tmp_path, sshd, remote):
    make(remote / "small.txt", b"x")
    make(remote / "big.txt", b"x" * 2000)
    make(remote / "ancient.txt", b"xx", modified_ms=BASE - 86_400_000)
    with runner_for(tmp_path, sshd, remote, **{"Minimum File Size": "2 B", "Maximum File Size": "1 KB",
                                               "Maximum File Age": "1 day", "Listing Strategy": "none"}) as runner:
        runner.run()
        assert names(runner) == []
    with runner_for(tmp_path, sshd, remote, **{"Minimum File Size": "2 B", "Maximum File Age": "2 days",
                                               "Minimum File Age": "10 min", "Listing Strategy": "none"}) as runner:
        runner.run()
        assert names(runner) == ["ancient.txt", "big.txt"]


def test_a_server_that_is_down_posts_a_bulletin_and_yields(tmp_path, remote):
    port = free_port()
    properties = {"Hostname": "127.0.0.1", "Port": str(port), "Username": "someone", "Remote Path": str(remote)}
    with ProcessorTestRunner(ListSFTP, tmp_path, properties, input=False) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert runner.output("success") == []
        assert any(f"could not connect to 127.0.0.1:{port}" in m and "Connection refused" in m
                   for m in runner.bulletins), runner.bulletins


def test_a_missing_remote_path_or_a_refused_login_is_reported(tmp_path, sshd, remote):
    with runner_for(tmp_path, sshd, remote / "missing") as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any("no such file or directory" in m for m in runner.bulletins), runner.bulletins
    with runner_for(tmp_path, sshd, remote, **{"Private Key Path": None, "Password": "wrong"}) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any(f"refused the login of {sshd.user!r}" in m for m in runner.bulletins), runner.bulletins


def test_host_keys_are_checked_against_the_host_key_file(tmp_path, sshd, remote):
    make(remote / "a.txt")
    with runner_for(tmp_path, sshd, remote, **{"Host Key File": str(sshd.known_hosts),
                                               "Strict Host Key Checking": "true"}) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]
    other = tmp_path / "other_known_hosts"
    other.write_text(f"[127.0.0.1]:{sshd.port} ssh-ed25519 "
                     "AAAAC3NzaC1lZDI1NTE5AAAAIHh5cGhlbnRocm91Z2hvdXRtaXNtYXRjaGVka2V5eHg=\n")
    with runner_for(tmp_path, sshd, remote, **{"Host Key File": str(other)}) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any("differs from the one known" in m for m in runner.bulletins), runner.bulletins
    empty = tmp_path / "empty_known_hosts"
    empty.write_text("")
    with runner_for(tmp_path, sshd, remote, **{"Host Key File": str(empty),
                                               "Strict Host Key Checking": "true"}) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any("is not known and Strict Host Key Checking is on" in m for m in runner.bulletins)


def test_compression_keep_alive_and_custom_algorithms(tmp_path, sshd, remote):
    make(remote / "a.txt")
    with runner_for(tmp_path, sshd, remote, **{"Use Compression": "true", "Algorithm Negotiation": "CUSTOM",
                                               "Ciphers Allowed": "aes256-ctr", "Listing Strategy": "none"}) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]
    with runner_for(tmp_path, sshd, remote, **{"Algorithm Negotiation": "CUSTOM",
                                               "Ciphers Allowed": "no-such-cipher"}) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any("ciphers" in m for m in runner.bulletins), runner.bulletins


def test_a_tenant_without_a_grant_for_the_server_is_refused(tmp_path, sshd, remote):
    make(remote / "a.txt")
    properties = sshd.properties(**{"Remote Path": str(remote)})
    with ProcessorTestRunner(ListSFTP, tmp_path, properties, input=False, tenant={}) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any(f"ListSFTP[processor-under-test] refused {sshd.client_key}: tenant acme has no file roots"
                   in m for m in runner.bulletins), runner.bulletins
    files = {"files": {"roots": [str(sshd.directory)]}}
    with ProcessorTestRunner(ListSFTP, tmp_path, properties, input=False, tenant=files) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert runner.output("success") == []
        assert any(f"ListSFTP[processor-under-test] refused 127.0.0.1:{sshd.port}: 127.0.0.1 is this machine, which "
                   f"tenant acme's network allowlist does not open" in m for m in runner.bulletins), runner.bulletins
    granted = {**files, "network": {"allow": [f"127.0.0.1:{sshd.port}"]}}
    with ProcessorTestRunner(ListSFTP, tmp_path, properties, input=False, tenant=granted) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]


def test_nifi_names_defaults_and_unoffered_properties(tmp_path, sshd, remote):
    assert ListSFTP.nifi_type == "org.apache.nifi.processors.standard.ListSFTP"
    defaults = {d.name: d.default for d in ListSFTP.properties}
    assert defaults["Listing Strategy"] == "timestamps"
    assert defaults["Port"] == "22" and defaults["Remote Path"] == "."
    assert defaults["Search Recursively"] == "false" and defaults["Ignore Dotted Files"] == "true"
    assert defaults["Connection Timeout"] == defaults["Data Timeout"] == "30 sec"
    assert defaults["Send Keep Alive On Timeout"] == "true" and defaults["Strict Host Key Checking"] == "false"
    assert ListSFTP.default_scheduling_period == "1 min" and ListSFTP.trigger_serially
    with runner_for(tmp_path, sshd, remote, **{"Record Writer": "writer"}) as runner:
        assert any("Record Writer" in problem for problem in runner.validate())


def test_a_server_that_never_answers_times_out_after_the_connection_timeout(tmp_path, remote):
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        properties = {"Hostname": "127.0.0.1", "Port": str(port), "Username": "u", "Remote Path": str(remote),
                      "Connection Timeout": "1 sec"}
        with ProcessorTestRunner(ListSFTP, tmp_path, properties, input=False) as runner:
            started = time.monotonic()
            assert runner.run() == [Outcome.YIELDED]
            assert time.monotonic() - started < 10
            assert any(f"127.0.0.1:{port}" in m for m in runner.bulletins), runner.bulletins


def test_a_private_key_protected_by_a_passphrase(tmp_path, sshd, remote):
    make(remote / "a.txt")
    key = sshd.authorize(tmp_path / "protected_key", passphrase="open sesame")
    with runner_for(tmp_path, sshd, remote, **{"Private Key Path": str(key), "Private Key Passphrase": "open sesame",
                                               "Listing Strategy": "none"}) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]
    with runner_for(tmp_path, sshd, remote, **{"Private Key Path": str(key)}) as runner:
        assert runner.run() == [Outcome.YIELDED]
        assert any(f"the private key {key} needs a passphrase" in m for m in runner.bulletins), runner.bulletins
    with runner_for(tmp_path, sshd, remote, **{"Private Key Path": str(key), "Private Key Passphrase": "wrong"}) as r:
        assert r.run() == [Outcome.YIELDED]
        assert any(f"the private key {key} could not be read (wrong passphrase" in m for m in r.bulletins), r.bulletins


@pytest.mark.parametrize("kind", ["rsa", "ecdsa"])
def test_rsa_and_ecdsa_keys(tmp_path, sshd, remote, kind):
    make(remote / "a.txt")
    key = sshd.authorize(tmp_path / f"{kind}_key", kind=kind)
    with runner_for(tmp_path, sshd, remote, **{"Private Key Path": str(key)}) as runner:
        runner.run()
        assert names(runner) == ["a.txt"]
