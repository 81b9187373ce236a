"""GenerateFlowFile: sizes, batches, text or binary, unique or shared content, custom text, attributes."""

from __future__ import annotations

import pytest

from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def generate(tmp_path, properties, runs=1):
    runner = ProcessorTestRunner("GenerateFlowFile", tmp_path, properties, input=False)
    runner.run(runs)
    return runner


def test_batches_of_the_configured_size_with_a_create_event_each(tmp_path):
    with generate(tmp_path, {"File Size": "2 KB", "Batch Size": "5"}, runs=2) as runner:
        out = runner.output("success")
        assert len(out) == 10
        assert all(f.size == 2048 for f in out)
        created = runner.events(event_type=E.CREATE)
        assert sorted(e.flowfile_uuid for e in created) == sorted(f.uuid for f in out)


def test_text_content_is_printable_and_shared_unless_unique(tmp_path):
    with generate(tmp_path, {"File Size": "300 B", "Batch Size": "3"}) as runner:
        contents = [runner.content(f) for f in runner.output("success")]
        assert len(set(contents)) == 1 and all(32 <= b < 127 or b in b"\n\t" for b in contents[0])
    with generate(tmp_path, {"File Size": "300 B", "Batch Size": "3", "Unique FlowFiles": "true",
                             "Data Format": "Binary"}) as runner:
        contents = [runner.content(f) for f in runner.output("success")]
        assert len(set(contents)) == 3 and all(len(c) == 300 for c in contents)


def test_custom_text_with_environment_expressions_and_character_set(tmp_path, monkeypatch):
    monkeypatch.setenv("GREETING", "grüß")
    properties = {"Custom Text": "${GREETING} dich", "Character Set": "ISO-8859-1", "Mime Type": "text/plain"}
    with generate(tmp_path, properties) as runner:
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == "grüß dich".encode("iso-8859-1")
        assert flowfile.attributes["mime.type"] == "text/plain"


def test_user_added_properties_become_attributes(tmp_path, monkeypatch):
    monkeypatch.setenv("REGION", "north")
    with generate(tmp_path, {"source": "sensor-${REGION}", "kind": "reading"}) as runner:
        (flowfile,) = runner.output("success")
        assert flowfile.attributes["source"] == "sensor-north" and flowfile.attributes["kind"] == "reading"
        assert runner.content(flowfile) == b""


def test_custom_text_requires_text_and_shared_content(tmp_path):
    runner = ProcessorTestRunner("GenerateFlowFile", tmp_path, {"Custom Text": "x", "Unique FlowFiles": "true"},
                                 input=False)
    with runner:
        assert runner.validate() == ["'Custom Text' requires Data Format 'Text' and Unique FlowFiles 'false'"]


@pytest.mark.parametrize("properties, problem", [
    ({"File Size": "big"}, "'File Size' 'big' is not a data size (expected e.g. '1 GB', '50 KB')"),
    ({"Batch Size": "0"}, "'Batch Size' 0 is below the minimum of 1"),
    ({"Data Format": "Hex"}, "'Data Format' is 'Hex', which is not one of the allowed values: Binary, Text"),
    ({"Character Set": "klingon"}, "'Character Set' 'klingon' is not a known character set"),
])
def test_invalid_properties_are_reported(tmp_path, properties, problem):
    with ProcessorTestRunner("GenerateFlowFile", tmp_path, properties, input=False) as runner:
        assert problem in runner.validate()


def test_nifi_1x_property_names_are_read(tmp_path):
    with generate(tmp_path, {"generate-ff-custom-text": "old name", "mime-type": "text/csv"}) as runner:
        (flowfile,) = runner.output("success")
        assert runner.content(flowfile) == b"old name" and flowfile.attributes["mime.type"] == "text/csv"
