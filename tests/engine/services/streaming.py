"""Record services on real content streams: a content repository's unbuffered claim readers and
write-only content writers, and the peak memory of copying a large content (measured in a
subprocess, as its own VmHWM)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

def copy_through_repository(directory: Path, reader_factory, writer_factory, data: bytes,
                            attributes: dict[str, str] | None = None) -> tuple[bytes, object]:
    """Store ``data`` in a content repository, read it through its claim reader and write the
    records through a content writer, as a session hands them to services; (bytes, WriteResult)."""
    from engine.content.claims import ResourceClaimManager
    from engine.content.config import ContentConfig
    from engine.content.repository import ContentRepository

    repository = ContentRepository({"c": directory}, ResourceClaimManager(), ContentConfig(sections=2))
    try:
        attributes = attributes or {}
        with repository.open_reader(repository.write_bytes(data)) as source:
            reader = reader_factory.create_reader(source, attributes)
            target = repository.open_writer()
            writer = writer_factory.create_writer(target, writer_factory.get_schema(attributes, reader.schema),
                                                  attributes)
            for batch in reader.batches():
                writer.write_batch(batch)
            result = writer.finish()
            claim = target.close()
        return repository.read_bytes(claim), result
    finally:
        repository.close()


_SCRIPT = r"""
import io, json, sys
from engine.components import ConfigurationContext
from engine.components.validation import component_descriptors
from engine.components.registry import default_registry

spec = json.loads(sys.argv[1])

def enabled(type_name, properties):
    cls = default_registry().service(type_name)
    descriptors, _ = component_descriptors(cls, properties)
    service = cls()
    service.on_enabled(ConfigurationContext(descriptors, properties), None)
    return service

reader_factory = enabled(spec["reader"], spec["reader_properties"])
writer_factory = enabled(spec["writer"], spec["writer_properties"])

def copy(source, target):
    reader = reader_factory.create_reader(source, {})
    writer = writer_factory.create_writer(target, writer_factory.get_schema({}, reader.schema), {})
    largest = 0
    for batch in reader.batches():
        largest = max(largest, batch.num_rows)
        writer.write_batch(batch)
    return writer.finish().record_count, largest

# Arrow's thread pools and compute kernels allocate once, whatever the content: warm them up first.
with open(spec["warmup"], "rb") as source:
    copy(source, io.BytesIO())

def peak_rss():
    # VmHWM is this process's own peak: ru_maxrss may carry the forking parent's peak over exec.
    with open("/proc/self/status") as status:
        return int(status.read().split("VmHWM:")[1].split()[0]) * 1024


before = peak_rss()
with open(spec["input"], "rb") as source, open(spec["output"], "wb") as target:
    count, largest = copy(source, target)
print(json.dumps({"records": count, "largest_batch": largest, "growth": peak_rss() - before}))
"""


def copy_peak_growth(reader: str, reader_properties: dict, writer: str, writer_properties: dict, source: Path,
                     warmup: Path, output: Path) -> dict:
    """Copy ``source`` to ``output`` through a reader and a writer service in a new process;
    returns the record count, the largest batch and the growth of peak RSS in bytes."""
    spec = {"reader": reader, "reader_properties": reader_properties, "writer": writer,
            "writer_properties": writer_properties, "input": str(source), "warmup": str(warmup),
            "output": str(output)}
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(spec)], capture_output=True, text=True,
                          env=env, cwd=root, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
