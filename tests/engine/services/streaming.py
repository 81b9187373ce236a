"""Peak memory of reading and writing a large content through record services, measured in a
subprocess (ru_maxrss is the peak of a whole process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_SCRIPT = r"""
import io, json, resource, sys
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
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(spec["input"], "rb") as source, open(spec["output"], "wb") as target:
    count, largest = copy(source, target)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"records": count, "largest_batch": largest, "growth": (after - before) * 1024}))
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
