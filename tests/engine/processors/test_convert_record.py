import json

from engine.processors.convert_record import ConvertRecord
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def lines(records):
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def runner_for(tmp_path, services, **properties):
    return ProcessorTestRunner(ConvertRecord, tmp_path, {"Record Reader": "reader", "Record Writer": "writer",
                                                         **properties}, services=services)


def test_records_are_rewritten_by_the_writer(tmp_path, json_services):
    with runner_for(tmp_path, json_services) as runner:
        original = runner.enqueue(b'{"a": 1, "b": "x"}\n{"a": 2, "b": null}\n', filename="in.json")
        runner.run()
        (converted,) = runner.output("success")
        assert converted.uuid == original.uuid
        assert [json.loads(line) for line in runner.content(converted).splitlines()] == [
            {"a": 1, "b": "x"}, {"a": 2, "b": None}]
        assert converted.attributes["record.count"] == "2"
        assert converted.attributes["mime.type"] == "application/json"
        (event,) = runner.events(event_type=E.CONTENT_MODIFIED)
        assert event.flowfile_uuid == original.uuid


def test_unconvertible_content_goes_to_failure_unchanged(tmp_path, json_services):
    with runner_for(tmp_path, json_services) as runner:
        runner.enqueue(b'{"a": 1}\n')
        bad = runner.enqueue(b'{"a": \n')
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.uuid == bad.uuid and runner.content(failed) == b'{"a": \n'
        assert failed.attributes["record.error.message"]
        assert len(runner.output("success")) == 1


def test_zero_record_flowfiles_are_dropped_when_asked(tmp_path, json_services):
    schema = json.dumps({"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]})
    services = dict(json_services, reader=("JsonTreeReader", {"Schema Access Strategy": "schema-text-property", "Schema Text": schema}))
    with runner_for(tmp_path, services, **{"Include Zero Record FlowFiles": "false"}) as runner:
        runner.enqueue(b"")
        runner.enqueue(b'{"a": 5}\n')
        runner.run()
        assert [runner.content(f).strip() for f in runner.output("success")] == [b'{"a":5}']
        assert len(runner.events(event_type=E.DROP)) == 1
    with runner_for(tmp_path, services) as runner:
        runner.enqueue(b"")
        runner.run()
        (empty,) = runner.output("success")
        assert empty.attributes["record.count"] == "0" and runner.content(empty) == b""


def test_many_small_csv_flowfiles_are_converted_together_each_as_its_own(tmp_path, monkeypatch):
    """A thousand small CSV FlowFiles in one session (one parse, one rendering): each keeps its
    own inferred schema and record count, a malformed one fails alone, and a FlowFile above the
    small size is streamed in the same session."""
    import engine.processors.convert_record as convert_record

    monkeypatch.setattr(convert_record, "SMALL_CONTENT", 64)
    services = {"reader": ("CSVReader", {}), "writer": ("CSVRecordSetWriter", {})}
    with ProcessorTestRunner(ConvertRecord, tmp_path, {"Record Reader": "reader", "Record Writer": "writer"},
                             services=services) as runner:
        contents = [f"n,v\n{i},{'x' if i % 3 else i / 2}\n".encode() for i in range(300)]
        contents[7] = b"n,v\n1,2,3\n"  # a field too many
        large = b"n,v\n" + b"".join(f"{i},{i}\n".encode() for i in range(20))
        flowfiles = [runner.enqueue(content) for content in contents] + [runner.enqueue(large)]
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.uuid == flowfiles[7].uuid and "expected 2 fields" in failed.attributes["record.error.message"]
        converted = {flowfile.uuid: flowfile for flowfile in runner.output("success")}
        assert len(converted) == 300
        for number, flowfile in enumerate(flowfiles[:300]):
            if number == 7:
                continue
            out = converted[flowfile.uuid]
            value = "x" if number % 3 else str(float(number / 2))
            assert runner.content(out) == f"n,v\n{number},{value}\n".encode()
            assert out.attributes["record.count"] == "1" and out.attributes["mime.type"] == "text/csv"
        assert runner.content(converted[flowfiles[-1].uuid]) == large
        assert len(runner.events(event_type=E.CONTENT_MODIFIED)) == 300
