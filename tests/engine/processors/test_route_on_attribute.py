"""RouteOnAttribute: the three strategies, clones for several matches, ROUTE events."""

from __future__ import annotations

from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner

CONDITIONS = {"small": "${size:lt(10)}", "even": "${size:mod(2):equals(0)}"}


def sizes(runner, relationship):
    return sorted(int(f.attributes["size"]) for f in runner.output(relationship))


def test_route_to_property_name_clones_for_each_match(tmp_path):
    with ProcessorTestRunner("RouteOnAttribute", tmp_path, CONDITIONS) as runner:
        for size in (4, 7, 12, 15):
            runner.enqueue(b"", size=str(size))
        runner.run()
        assert sizes(runner, "small") == [4, 7]
        assert sizes(runner, "even") == [4, 12]
        assert sizes(runner, "unmatched") == [15]
        assert {f.attributes["RouteOnAttribute.Route"] for f in runner.output("even")} == {"even"}
        routes = runner.events(event_type=E.ROUTE)
        assert sorted(e.relationship for e in routes) == ["even", "even", "small", "small", "unmatched"]
        assert len(runner.events(event_type=E.CLONE)) == 1, "the FlowFile matching twice was cloned once"


def test_matched_if_all_match(tmp_path):
    with ProcessorTestRunner("RouteOnAttribute", tmp_path,
                             {"Routing Strategy": "Route to 'matched' if all match", **CONDITIONS}) as runner:
        for size in (4, 7, 12):
            runner.enqueue(b"", size=str(size))
        runner.run()
        assert sizes(runner, "matched") == [4] and sizes(runner, "unmatched") == [7, 12]


def test_matched_if_any_matches(tmp_path):
    with ProcessorTestRunner("RouteOnAttribute", tmp_path,
                             {"Routing Strategy": "Route to 'matched' if any matches", **CONDITIONS}) as runner:
        for size in (4, 7, 13):
            runner.enqueue(b"", size=str(size))
        runner.run()
        assert sizes(runner, "matched") == [4, 7] and sizes(runner, "unmatched") == [13]


def test_a_condition_is_needed_and_a_failing_one_rolls_back(tmp_path):
    with ProcessorTestRunner("RouteOnAttribute", tmp_path, {}) as runner:
        assert runner.validate() == ["at least one user-added property (a condition) is needed"]
    with ProcessorTestRunner("RouteOnAttribute", tmp_path, {"big": "${size:toDate():gt(1)}"}) as runner:
        runner.enqueue(b"", size="many")
        runner.run()
        assert runner.output("big") == [] and runner.output("unmatched") == []
        assert len(runner.input_flowfiles()) == 1
        assert any("condition 'big' failed" in message for message in runner.bulletins)
