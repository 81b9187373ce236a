"""Seed 002's example, ListSFTP → FetchSFTP → PutFile (examples/sftp-list-fetch-put.json), on a
real node process against a real OpenSSH server; the listing state survives a restart."""

from __future__ import annotations

import os
import time

from tests.examples.test_file_examples import run_example, stop, wait_until
from tests.sshd import SshServer


def test_sftp_list_fetch_put_copies_each_file_once_across_a_restart(tmp_path):
    server = SshServer(tmp_path / "sshd")
    server.start()
    remote, outputs, log = tmp_path / "remote", tmp_path / "out", tmp_path / "node.log"
    files = {"a.txt": b"alpha\n", "nested/b.csv": b"1,2,3\n", "c.bin": os.urandom(300_000)}
    an_hour_ago = time.time() - 3600
    for name, data in files.items():
        (remote / name).parent.mkdir(parents=True, exist_ok=True)
        (remote / name).write_bytes(data)
        os.utime(remote / name, (an_hour_ago, an_hour_ago))
    parameters = {"sftp_hostname": "127.0.0.1", "sftp_port": str(server.port), "sftp_username": server.user,
                  "sftp_private_key": str(server.client_key), "sftp_remote_path": str(remote),
                  "output_directory": str(outputs)}
    try:
        node = run_example("sftp-list-fetch-put.json", tmp_path / "node", log, **parameters)
        try:
            wait_until(lambda: all((outputs / os.path.basename(n)).exists() for n in files), 60, "the copies")
            wait_until(lambda: not any((remote / n).exists() for n in files), 30, "the originals deleted")
        finally:
            stop(node, log)
        for name, data in files.items():
            assert (outputs / os.path.basename(name)).read_bytes() == data
        assert "problem" not in log.read_text() and "ERROR" not in log.read_text(), log.read_text()[-3000:]
        # The same files reappear with their old times: the restarted node, reading its stored
        # listing state, must not list them again; a newer file is listed.
        for name, data in files.items():
            (remote / name).write_bytes(data)
            os.utime(remote / name, (an_hour_ago, an_hour_ago))
        for copy in outputs.iterdir():
            copy.unlink()
        (remote / "new.txt").write_bytes(b"new\n")
        os.utime(remote / "new.txt", (an_hour_ago + 60, an_hour_ago + 60))
        node = run_example("sftp-list-fetch-put.json", tmp_path / "node", log.with_suffix(".2.log"), **parameters)
        try:
            wait_until(lambda: (outputs / "new.txt").exists(), 60, "the new file's copy")
            time.sleep(3)  # a listing more: nothing else may come
        finally:
            stop(node, log.with_suffix(".2.log"))
        assert sorted(p.name for p in outputs.iterdir()) == ["new.txt"]
        assert all((remote / name).exists() for name in files), "files listed before are left alone"
    finally:
        server.stop()
