import json

from engine.processors.update_record import UpdateRecord
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def lines(records):
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def records_of(runner, flowfile):
    return [json.loads(line) for line in runner.content(flowfile).splitlines() if line.strip()]


def runner_for(tmp_path, services, strategy="literal-value", **updates):
    return ProcessorTestRunner(UpdateRecord, tmp_path, {"Record Reader": "reader", "Record Writer": "writer",
                                                        "Replacement Value Strategy": strategy, **updates},
                               services=services)


PEOPLE = [{"first": "ann", "last": "lee", "home": {"city": "oslo"}},
          {"first": "bob", "last": "kim", "home": {"city": "rome"}}]


def test_literal_values_replace_and_add_fields(tmp_path, spark_runtime, json_services):
    updates = {"/home/city": "paris", "/source": "${filename}"}
    with runner_for(tmp_path, json_services, **updates) as runner:
        first = runner.enqueue(lines(PEOPLE), filename="a.json")
        runner.enqueue(lines(PEOPLE[:1]), filename="b.json")
        runner.run()
        updated = runner.output("success")
        assert [records_of(runner, f) for f in updated] == [
            [{"first": "ann", "last": "lee", "home": {"city": "paris"}, "source": "a.json"},
             {"first": "bob", "last": "kim", "home": {"city": "paris"}, "source": "a.json"}],
            [{"first": "ann", "last": "lee", "home": {"city": "paris"}, "source": "b.json"}]]
        assert updated[0].uuid == first.uuid
        assert [f.attributes["record.count"] for f in updated] == ["2", "1"]
        assert {event.flowfile_uuid for event in runner.events(event_type=E.CONTENT_MODIFIED)} == {
            f.uuid for f in updated}


def test_record_path_values_compute_from_the_record(tmp_path, spark_runtime, json_services):
    updates = {"/first": "toUpperCase(/first)", "/full": "concat(/first, ' ', /last)"}
    with runner_for(tmp_path, json_services, "record-path-value", **updates) as runner:
        runner.enqueue(lines(PEOPLE))
        runner.run()
        (updated,) = runner.output("success")
        assert [(r["first"], r["full"]) for r in records_of(runner, updated)] == [("ANN", "ANN lee"), ("BOB", "BOB kim")]


def test_nifi_per_field_variables_are_refused(tmp_path, json_services):
    with runner_for(tmp_path, json_services, **{"/first": "${field.value:toUpper()}"}) as runner:
        assert any("per-field variables" in problem for problem in runner.validate())
    with runner_for(tmp_path, json_services, "record-path-value", **{"/first": "concat("}) as runner:
        assert any("not a RecordPath" in problem for problem in runner.validate())


def test_a_literal_takes_the_type_of_the_field_it_replaces(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, **{"/age": "42", "/tags[0]": "x", "/note": "7"}) as runner:
        runner.enqueue(lines([{"age": 3, "tags": ["a", "b"]}, {"age": 5, "tags": []}]))
        runner.enqueue(lines([{"age": 3, "tags": ["a"]}]), filename="other")
        runner.run()
        assert [records_of(runner, f) for f in runner.output("success")] == [
            [{"age": 42, "tags": ["x", "b"], "note": "7"}, {"age": 42, "tags": [], "note": "7"}],
            [{"age": 42, "tags": ["x"], "note": "7"}]]


def test_a_literal_the_field_cannot_take_fails_its_flowfiles(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, **{"/age": "${age}"}) as runner:
        bad = runner.enqueue(lines([{"age": 3}]), age="old")
        runner.enqueue(lines([{"name": "x"}]), age="old")
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.uuid == bad.uuid and "old" in failed.attributes["record.error.message"]
        assert [records_of(runner, f) for f in runner.output("success")] == [[{"name": "x", "age": "old"}]]
