"""The list-fetch-put and merge-and-compress examples, run as the README runs them."""

from __future__ import annotations

import gzip
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"


def run_example(name: str, data_dir: Path, log: Path, **parameters: str) -> subprocess.Popen:
    arguments = [sys.executable, "-m", "engine", "run", "--flow", str(EXAMPLES / name), "--data-dir", str(data_dir)]
    for key, value in parameters.items():
        arguments += ["--parameter", f"{key.replace('_', '.')}={value}"]
    return subprocess.Popen(arguments, cwd=REPO_ROOT, stdout=open(log, "w"), stderr=subprocess.STDOUT)


def stop(node: subprocess.Popen, log: Path) -> None:
    node.send_signal(signal.SIGTERM)
    assert node.wait(timeout=60) == 0, log.read_text()[-3000:]


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_list_fetch_put_copies_every_file_and_moves_the_originals(tmp_path):
    inputs, processed, outputs = tmp_path / "in", tmp_path / "processed", tmp_path / "out"
    files = {"a.txt": b"alpha\n", "nested/b.csv": b"1,2,3\n", "nested/deeper/c.bin": bytes(range(256)) * 300}
    for name, data in files.items():
        (inputs / name).parent.mkdir(parents=True, exist_ok=True)
        (inputs / name).write_bytes(data)
    (inputs / ".hidden").write_bytes(b"not listed")
    log = tmp_path / "node.log"
    node = run_example("list-fetch-put.json", tmp_path / "node", log, input_directory=inputs,
                       processed_directory=processed, output_directory=outputs)
    try:
        wait_until(lambda: all((outputs / n).exists() for n in files), 60, "the copies")
        wait_until(lambda: all((processed / n).exists() for n in files), 30, "the moved originals")
    finally:
        stop(node, log)
    for name, data in files.items():
        assert (outputs / name).read_bytes() == data
        assert (processed / name).read_bytes() == data
        assert not (inputs / name).exists()
    assert (inputs / ".hidden").exists() and not (outputs / ".hidden").exists()


def test_merge_and_compress_bundles_every_file_once(tmp_path):
    inputs, outputs = tmp_path / "incoming", tmp_path / "bundles"
    inputs.mkdir()
    lines = {f"line {index} of the example" for index in range(35)}
    for index, line in enumerate(sorted(lines)):
        (inputs / f"part-{index:03d}.txt").write_text(line)
    log = tmp_path / "node.log"
    node = run_example("merge-and-compress.json", tmp_path / "node", log, input_directory=inputs,
                       output_directory=outputs)

    def bundled() -> list[str]:
        found = []
        for bundle in sorted(outputs.glob("bundle-*.txt.gz")) if outputs.is_dir() else []:
            found += gzip.decompress(bundle.read_bytes()).decode().split("\n")
        return found

    try:
        wait_until(lambda: sorted(bundled()) == sorted(lines), 60, "every line in a bundle")
    finally:
        stop(node, log)
    assert sorted(bundled()) == sorted(lines), "each file is in exactly one bundle"
    assert not any(inputs.iterdir()), "picked-up files are deleted"
    names = [p.name for p in outputs.iterdir()]
    assert all(n.startswith("bundle-") and n.endswith(".txt.gz") for n in names)
