import json

from engine.processors.merge_record import MergeRecord
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def lines(*values, field="n"):
    return b"".join(json.dumps({field: value}).encode() + b"\n" for value in values)


def records_of(runner, flowfile):
    return [json.loads(line) for line in runner.content(flowfile).splitlines() if line.strip()]


def runner_for(tmp_path, services, **properties):
    return ProcessorTestRunner(MergeRecord, tmp_path, {"Record Reader": "reader", "Record Writer": "writer",
                                                       **properties}, services=services)


def test_bins_are_merged_once_they_hold_the_maximum_number_of_records(tmp_path, json_services):
    with runner_for(tmp_path, json_services, **{"Maximum Number of Records": "4"}) as runner:
        for values in ([1, 2], [3], [4, 5, 6], [7]):
            runner.enqueue(lines(*values), shared="yes")
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert records_of(runner, merged) == [{"n": value} for value in range(1, 7)], "a soft limit: 6 records"
        assert merged.attributes["record.count"] == "6"
        assert merged.attributes["merge.count"] == "3"
        assert merged.attributes["merge.completion.reason"] == "Bin is completely full"
        assert merged.attributes["mime.type"] == "application/json"
        assert merged.attributes["shared"] == "yes"
        assert [f.attributes["merge.uuid"] for f in runner.output("original")] == [merged.uuid] * 3

        runner.run(1, stop=False)
        assert records_of(runner, runner.output("merged")[1]) == [{"n": 7}]
        assert runner.output("merged")[1].attributes["merge.completion.reason"] == "Bin is full enough"


def test_a_bin_waits_for_the_minimum_records_until_max_bin_age(tmp_path, json_services):
    properties = {"Minimum Number of Records": "10", "Max Bin Age": "5 sec"}
    with runner_for(tmp_path, json_services, **properties) as runner:
        runner.enqueue(lines(1, 2))
        runner.enqueue(lines(3))
        runner.run(2, stop=False)
        assert runner.output("merged") == []
        runner.clock.advance(6)
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert records_of(runner, merged) == [{"n": 1}, {"n": 2}, {"n": 3}]
        assert merged.attributes["merge.completion.reason"] == "Bin has reached Max Bin Age"
        assert int(merged.attributes["merge.bin.age"]) >= 5000


def test_bins_are_merged_once_their_content_reaches_the_maximum_bin_size(tmp_path, json_services):
    properties = {"Maximum Bin Size": "20 B", "Minimum Number of Records": "100", "Maximum Number of Records": "100"}
    with runner_for(tmp_path, json_services, **properties) as runner:
        for value in range(10, 15):
            runner.enqueue(lines(value))  # 10 bytes each
        runner.run(1, stop=False)
        assert [records_of(runner, f) for f in runner.output("merged")] == [
            [{"n": 10}, {"n": 11}], [{"n": 12}, {"n": 13}]]


def test_flowfiles_of_other_schemas_or_correlation_values_are_merged_apart(tmp_path, json_services):
    with runner_for(tmp_path, json_services, **{"Correlation Attribute Name": "team"}) as runner:
        runner.enqueue(lines(1), team="red")
        runner.enqueue(lines(2), team="blue")
        runner.enqueue(lines("x", field="s"), team="red")
        runner.enqueue(lines(3), team="red")
        runner.run(2, stop=False)
        merged = {(f.attributes.get("team"), f.attributes["record.count"]): records_of(runner, f)
                  for f in runner.output("merged")}
        assert merged == {("red", "2"): [{"n": 1}, {"n": 3}], ("blue", "1"): [{"n": 2}], ("red", "1"): [{"s": "x"}]}


def test_defragment_puts_the_fragments_back_together(tmp_path, json_services):
    with runner_for(tmp_path, json_services, **{"Merge Strategy": "Defragment", "Max Bin Age": "5 sec"}) as runner:
        runner.enqueue(lines(3), **{"fragment.identifier": "a", "fragment.index": "2", "fragment.count": "3"})
        runner.enqueue(lines(1), **{"fragment.identifier": "a", "fragment.index": "0", "fragment.count": "3"})
        runner.enqueue(lines(9), **{"fragment.identifier": "b", "fragment.index": "0", "fragment.count": "2"})
        runner.enqueue(lines(2), **{"fragment.identifier": "a", "fragment.index": "1", "fragment.count": "3"})
        runner.run(2, stop=False)
        (merged,) = runner.output("merged")
        assert records_of(runner, merged) == [{"n": 1}, {"n": 2}, {"n": 3}]
        runner.clock.advance(6)
        runner.run(1, stop=False)
        (failed,) = runner.output("failure")
        assert failed.attributes["fragment.identifier"] == "b"
        assert "2 are expected but 1 arrived" in failed.attributes["record.error.message"]


def test_an_unreadable_flowfile_fails_alone_and_the_merge_joins_its_parents(tmp_path, json_services):
    with runner_for(tmp_path, json_services) as runner:
        first = runner.enqueue(lines(1))
        bad = runner.enqueue(b"{oops\n")
        second = runner.enqueue(lines(2))
        runner.run(2, stop=False)
        (failed,) = runner.output("failure")
        assert failed.uuid == bad.uuid and failed.attributes["record.error.message"].startswith("cannot read")
        (merged,) = runner.output("merged")
        (join,) = runner.events(event_type=E.JOIN)
        assert set(join.parent_uuids) == {first.uuid, second.uuid}
        assert join.child_uuids == (merged.uuid,)


def test_stopping_returns_the_binned_flowfiles_to_the_queue(tmp_path, json_services):
    with runner_for(tmp_path, json_services, **{"Minimum Number of Records": "50"}) as runner:
        inputs = [runner.enqueue(lines(value)) for value in range(3)]
        runner.run(2)
        assert runner.output("merged") == []
        assert sorted(f.uuid for f in runner.input_flowfiles()) == sorted(f.uuid for f in inputs)
