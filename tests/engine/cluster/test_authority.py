"""The cluster CA on the operator's machine: its files, issuing and revoking node certificates, and
what a full disk leaves behind (never half a file, never a state it cannot go on from)."""

from __future__ import annotations

import errno
import stat

import pytest

from engine.cluster.authority import ClusterAuthority
from engine.cluster.identity import IdentityError, NodeIdentity, TrustStore, read_certificate, read_crl
from engine.testing.faults import FaultPlan


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def all_files(directory) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_init_writes_the_ca_with_a_private_key_and_an_empty_list(tmp_path):
    authority = ClusterAuthority.create(tmp_path / "pki")
    directory = tmp_path / "pki"
    assert sorted(all_files(directory)) == ["ca.key", "ca.pem", "crl.pem"]
    assert mode(directory / "ca.key") == 0o600
    assert list(read_crl(directory / "crl.pem")) == []
    assert ClusterAuthority.open(directory).certificate == authority.certificate
    with pytest.raises(IdentityError, match="holds a cluster CA already"):
        ClusterAuthority.create(directory)
    with pytest.raises(IdentityError, match="holds no cluster CA.*cluster_pki init"):
        ClusterAuthority.open(tmp_path / "elsewhere")


def test_issue_refuses_a_node_with_a_valid_certificate_unless_forced_which_revokes_the_old(tmp_path):
    authority = ClusterAuthority.create(tmp_path / "pki")
    first = authority.issue("node-1")
    assert mode(first.key_file) == 0o600
    assert NodeIdentity.load(first.certificate_file, first.key_file).node_id == "node-1"
    with pytest.raises(IdentityError, match="has a certificate already.*--force"):
        authority.issue("node-1")
    second = authority.issue("node-1", force=True)
    assert second.replaced_serial == first.serial
    assert authority.revoked() == {first.serial}
    assert [(n.node_id, n.serial, n.revoked) for n in authority.nodes()] == [("node-1", second.serial, False)]
    with pytest.raises(IdentityError, match="not a node id"):
        authority.issue("../etc")


def test_revoke_lists_the_serial_and_keeps_earlier_revocations(tmp_path):
    authority = ClusterAuthority.create(tmp_path / "pki")
    one = authority.issue("node-1")
    two = authority.issue("node-2")
    assert authority.revoke("node-1") == one.serial
    first_date = {e.serial_number: e.revocation_date_utc for e in read_crl(authority.crl_file)}[one.serial]
    authority.revoke("node-2")
    revoked = {e.serial_number: e.revocation_date_utc for e in read_crl(authority.crl_file)}
    assert revoked == {one.serial: first_date, two.serial: revoked[two.serial]}
    with pytest.raises(IdentityError, match="revoked already"):
        authority.revoke("node-1")
    with pytest.raises(IdentityError, match="no certificate here"):
        authority.revoke("node-3")
    # A revoked node may be issued again without --force.
    assert authority.issue("node-1").replaced_serial is None
    assert {n.node_id: n.revoked for n in authority.nodes()} == {"node-1": False, "node-2": True}


def _operations(action) -> int:
    plan = FaultPlan()
    with plan.installed():
        action()
    return plan.count


def _no_half_file(directory) -> None:
    """Every file of the directory is whole: no temporary left, every PEM readable."""
    for name in all_files(directory):
        assert not name.endswith(".tmp"), name
        path = directory / name
        if name.endswith(".key"):
            assert mode(path) == 0o600
            continue
        (read_crl if name == "crl.pem" else read_certificate)(path)


@pytest.mark.parametrize("partial", [False, True])
def test_a_full_disk_during_init_leaves_no_ca_or_a_whole_one_and_init_can_run_again(tmp_path, partial):
    total = _operations(lambda: ClusterAuthority.create(tmp_path / "count"))
    for fail_at in range(1, total + 1):
        directory = tmp_path / f"pki-{fail_at}"
        plan = FaultPlan(fail_at=fail_at, errno=errno.ENOSPC, partial=partial)
        try:
            with plan.installed():
                ClusterAuthority.create(directory)
        except OSError:
            pass
        assert plan.triggered
        if directory.exists():
            _no_half_file(directory)
        if (directory / "ca.pem").exists():  # only the last directory sync failed: the CA is whole
            ClusterAuthority.open(directory)
        else:
            ClusterAuthority.create(directory)
        TrustStore(directory / "ca.pem", directory / "crl.pem")


@pytest.mark.parametrize("partial", [False, True])
def test_a_full_disk_during_issue_or_revoke_keeps_the_directory_usable(tmp_path, partial):
    template = ClusterAuthority.create(tmp_path / "template")
    template.issue("node-1")
    actions = {
        "issue": lambda a: a.issue("node-2"),
        "issue --force": lambda a: a.issue("node-1", force=True),
        "revoke": lambda a: a.revoke("node-1"),
    }
    for name, action in actions.items():
        total = _operations(lambda: action(_copy(template, tmp_path / f"count-{name}")))
        for fail_at in range(1, total + 1):
            authority = _copy(template, tmp_path / f"{name}-{fail_at}")
            before = all_files(authority.directory)
            plan = FaultPlan(fail_at=fail_at, errno=errno.ENOSPC, partial=partial)
            try:
                with plan.installed():
                    action(authority)
            except OSError:
                pass
            assert plan.triggered
            _no_half_file(authority.directory)
            after = all_files(authority.directory)
            assert set(after) <= set(before) | {"nodes/node-2.pem", "nodes/node-2.key"}
            # The operator runs the command again, and it finishes (or was done).
            authority = ClusterAuthority.open(authority.directory)
            if name == "revoke":
                if "node-1" not in {n.node_id for n in authority.nodes() if n.revoked}:
                    authority.revoke("node-1")
                assert {n.node_id for n in authority.nodes() if n.revoked} == {"node-1"}
            else:
                node = "node-2" if name == "issue" else "node-1"
                try:
                    authority.issue(node)
                except IdentityError as error:
                    assert "has a certificate already" in str(error)  # the failure came after the rename
                certificate, key = authority.node_files(node)
                NodeIdentity.load(certificate, key)


def _copy(template: ClusterAuthority, directory) -> ClusterAuthority:
    for name, data in all_files(template.directory).items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_bytes(data)
        if name.endswith(".key"):
            (directory / name).chmod(0o600)
    return ClusterAuthority.open(directory)
