"""UpdateAttribute: expressions, deletions, state, ASSOCIATE, failures."""

from __future__ import annotations

from engine.components import Scope
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


def test_sets_attributes_from_expressions_and_records_attributes_modified(tmp_path):
    properties = {"upper": "${filename:toUpper()}", "size.kind": "${fileSize:gt(3):ifElse('big', 'small')}"}
    with ProcessorTestRunner("UpdateAttribute", tmp_path, properties) as runner:
        original = runner.enqueue(b"hello", filename="a.txt")
        runner.run()
        (out,) = runner.output("success")
        assert out.attributes["upper"] == "A.TXT" and out.attributes["size.kind"] == "big"
        (event,) = runner.events(event_type=E.ATTRIBUTES_MODIFIED)
        assert event.flowfile_uuid == original.uuid
        assert event.updated_attributes == {"upper": "A.TXT", "size.kind": "big"}


def test_delete_attributes_expression_removes_matching_names_but_not_uuid(tmp_path):
    properties = {"Delete Attributes Expression": "tmp\\..*|uuid", "kept": "yes"}
    with ProcessorTestRunner("UpdateAttribute", tmp_path, properties) as runner:
        runner.enqueue(b"", **{"tmp.a": "1", "tmp.b": "2", "other": "3"})
        runner.run()
        (out,) = runner.output("success")
        assert "tmp.a" not in out.attributes and "tmp.b" not in out.attributes
        assert out.attributes["other"] == "3" and out.attributes["kept"] == "yes" and out.attributes["uuid"]


def test_setting_alternate_identifier_records_associate(tmp_path):
    with ProcessorTestRunner("UpdateAttribute", tmp_path, {"alternate.identifier": "orders:${filename}"}) as runner:
        runner.enqueue(b"", filename="42.json")
        runner.run()
        (event,) = runner.events(event_type=E.ASSOCIATE)
        assert event.alternate_identifier == "orders:42.json"


def test_stored_state_counts_across_flowfiles_and_runs(tmp_path):
    properties = {"Store State": "Store state locally", "Stateful Variables Initial Value": "0",
                  "count": "${count:plus(1)}"}
    with ProcessorTestRunner("UpdateAttribute", tmp_path, properties) as runner:
        for _ in range(3):
            runner.enqueue(b"")
        runner.run()
        runner.enqueue(b"")
        runner.run()
        assert [f.attributes["count"] for f in runner.output("success")] == ["1", "2", "3", "4"]
        assert runner.state(Scope.LOCAL).values == {"count": "4"}


def test_get_state_value_reads_the_stored_state(tmp_path):
    properties = {"Store State": "Store state locally", "Stateful Variables Initial Value": "10",
                  "count": "${getStateValue('count'):plus(1)}", "seen": "${getStateValue('count')}"}
    with ProcessorTestRunner("UpdateAttribute", tmp_path, properties) as runner:
        runner.enqueue(b"", count="attribute, not state")
        runner.enqueue(b"")
        runner.run()
        assert [(f.attributes["count"], f.attributes["seen"]) for f in runner.output("success")] == \
            [("11", "10"), ("12", "11")]
        assert runner.state(Scope.LOCAL).values == {"count": "12", "seen": "11"}


def test_stored_state_needs_an_initial_value_and_its_relationship(tmp_path):
    with ProcessorTestRunner("UpdateAttribute", tmp_path, {"Store State": "Store state locally", "n": "1"}) as r:
        assert r.validate() == ["'Stateful Variables Initial Value' is required when Store State is on"]


def test_an_expression_failing_for_a_flowfile_rolls_back_and_penalizes(tmp_path):
    with ProcessorTestRunner("UpdateAttribute", tmp_path, {"n": "${value:format('yyyy')}"}) as runner:
        runner.enqueue(b"", value="not a number")
        runner.run()
        assert runner.output("success") == []
        (back,) = runner.input_flowfiles()
        assert back.penalty_expiration > 0
        assert any("cannot convert" in message for message in runner.bulletins)


def test_malformed_expression_is_reported_with_its_position(tmp_path):
    with ProcessorTestRunner("UpdateAttribute", tmp_path, {"n": "${filename:toUpper(}"}) as runner:
        (problem,) = runner.validate()
        assert problem.startswith("'n' holds an invalid expression:") and "position" in problem
