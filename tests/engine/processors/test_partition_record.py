import json

from engine.processors.partition_record import PartitionRecord
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def lines(records):
    return b"".join(json.dumps(record).encode() + b"\n" for record in records)


def records_of(runner, flowfile):
    return [json.loads(line) for line in runner.content(flowfile).splitlines() if line.strip()]


def runner_for(tmp_path, services, **paths):
    return ProcessorTestRunner(PartitionRecord, tmp_path, {"Record Reader": "reader", "Record Writer": "writer",
                                                           **paths}, services=services)


PEOPLE = [
    [{"name": "ann", "age": 31, "home": {"city": "oslo"}}, {"name": "bob", "age": 17, "home": {"city": "rome"}},
     {"name": "cid", "age": 45, "home": {"city": "oslo"}}],
    [{"name": "dan", "age": 31, "home": {"city": None}}, {"name": "eve", "age": 31, "home": {"city": None}}],
]


def test_each_flowfile_is_split_by_the_values_of_its_record_paths(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, city="/home/city") as runner:
        inputs = [runner.enqueue(lines(people), filename=f"people-{n}.json") for n, people in enumerate(PEOPLE)]
        runner.run()
        partitions = runner.output("success")
        assert [records_of(runner, f) for f in partitions] == [
            [PEOPLE[0][0], PEOPLE[0][2]], [PEOPLE[0][1]], PEOPLE[1]]
        assert [f.attributes.get("city") for f in partitions] == ["oslo", "rome", None]
        assert [f.attributes["record.count"] for f in partitions] == ["2", "1", "2"]
        assert [f.attributes["fragment.index"] for f in partitions] == ["0", "1", "0"]
        assert [f.attributes["fragment.count"] for f in partitions] == ["2", "2", "1"]
        assert partitions[0].attributes["fragment.identifier"] == partitions[1].attributes["fragment.identifier"]
        assert partitions[0].attributes["fragment.identifier"] != partitions[2].attributes["fragment.identifier"]
        assert [f.attributes["segment.original.filename"] for f in partitions] == [
            "people-0.json", "people-0.json", "people-1.json"]
        assert {f.attributes["mime.type"] for f in partitions} == {"application/json"}
        assert [f.uuid for f in runner.output("original")] == [f.uuid for f in inputs]
        forks = runner.events(event_type=E.FORK)
        assert sorted((event.parent_uuids, len(event.child_uuids)) for event in forks) == sorted(
            [((inputs[0].uuid,), 2), ((inputs[1].uuid,), 1)])


def test_several_record_paths_partition_by_their_combination(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, city="/home/city", age="/age") as runner:
        runner.enqueue(lines(PEOPLE[0] + [{"name": "fay", "age": 31, "home": {"city": "oslo"}}]))
        runner.run()
        partitions = runner.output("success")
        assert [(f.attributes["city"], f.attributes["age"], [r["name"] for r in records_of(runner, f)])
                for f in partitions] == [("oslo", "31", ["ann", "fay"]), ("rome", "17", ["bob"]),
                                         ("oslo", "45", ["cid"])]


def test_an_unreadable_flowfile_fails_alone(tmp_path, spark_runtime, json_services):
    with runner_for(tmp_path, json_services, name="/name") as runner:
        bad = runner.enqueue(b"{nope\n")
        runner.enqueue(lines(PEOPLE[1]))
        runner.run()
        (failed,) = runner.output("failure")
        assert failed.uuid == bad.uuid and failed.attributes["record.error.message"].startswith("cannot read")
        assert [f.attributes["name"] for f in runner.output("success")] == ["dan", "eve"]


def test_record_paths_are_validated(tmp_path, json_services):
    with runner_for(tmp_path, json_services, broken="/a[") as runner:
        assert any("broken" in problem or "RecordPath" in problem for problem in runner.validate())
    with runner_for(tmp_path, json_services) as runner:
        assert any("at least one RecordPath" in problem for problem in runner.validate())
