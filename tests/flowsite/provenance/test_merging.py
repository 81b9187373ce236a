"""How the nodes' answers become one (NiFi's cluster mergers), how a lineage graph is drawn from
the events of several nodes, and how a NiFi search becomes the nodes' criteria. The inputs are
answers in the nodes' own shape (``workers/inspection.py``)."""

from __future__ import annotations

import pytest

from flowsite.provenance import criteria, formats, merge
from flowsite.provenance.lineage import graph, related


def event(number: int, time: int, uuid: str = "u", *, kind: str = "ROUTE", component: str = "c",
          parents=(), children=()) -> dict:
    return {"id": number, "type": kind, "time": time, "flowfile_uuid": uuid, "component_id": component,
            "component_type": "Processor", "parent_uuids": list(parents), "child_uuids": list(children)}


def test_a_query_merges_newest_first_by_time_then_node_then_event_and_counts_nifi_s_way():
    answers = {"n1": {"events": [event(7, 300), event(6, 200), event(5, 200)], "more": False, "oldest_event_time": 50},
               "n2": {"events": [event(9, 300), event(3, 100)], "more": False, "oldest_event_time": 20}}
    merged = merge.query(answers, max_results=10)
    assert [(node, e["id"]) for node, e in merged["events"]] == [("n2", 9), ("n1", 7), ("n1", 6), ("n1", 5), ("n2", 3)]
    assert (merged["total_count"], merged["capped"], merged["oldest_event_time"]) == (5, False, 20)

    cut = merge.query(answers, max_results=3)
    assert [(node, e["id"]) for node, e in cut["events"]] == [("n2", 9), ("n1", 7), ("n1", 6)]
    assert (cut["total_count"], cut["capped"]) == (3, True), "NiFi's '3+'"
    more = merge.query({"n1": {"events": [event(1, 10)], "more": True}}, max_results=5)
    assert (more["total_count"], more["capped"]) == (5, True), "a node that had more than asked caps the count"


def test_a_listing_merges_by_position_then_node_and_sums_the_queue():
    answers = {"n2": {"count": 5, "bytes": 50, "swapped_count": 2, "source_running": False,
                      "flowfiles": [{"uuid": "b1", "position": 1}, {"uuid": "b2", "position": 2}]},
               "n1": {"count": 3, "bytes": 30, "swapped_count": 0, "source_running": True, "destination_running": False,
                      "flowfiles": [{"uuid": "a1", "position": 1}, {"uuid": "a2", "position": 2}]}}
    merged = merge.listing(answers, max_results=3)
    assert [(node, f["uuid"]) for node, f in merged["flowfiles"]] == [("n1", "a1"), ("n2", "b1"), ("n1", "a2")]
    assert (merged["count"], merged["bytes"], merged["swapped_count"]) == (8, 80, 2)
    assert (merged["source_running"], merged["destination_running"]) == (True, False)


def test_a_drop_sums_each_stage_and_keeps_each_node_s_figures():
    original = {"n1": {"count": 4, "bytes": 40}, "n2": {"count": 1, "bytes": 10}}
    dropped = {"n1": {"dropped": 4, "dropped_bytes": 40}}
    merged = merge.drop(original, dropped, {})
    assert (merged["original_count"], merged["original_size"], merged["dropped_count"]) == (5, 50, 4)
    assert merged["current_count"] is None, "no answer yet for the last stage"
    assert merged["nodes"]["n1"] == {"original_count": 4, "original_size": 40, "dropped_count": 4, "dropped_size": 40}


def test_lineage_of_a_split_and_merge_across_two_nodes():
    """n1 splits ``root`` into a and b; a moved to n2 (same uuid); n2 joins a and b into m. Event
    numbers collide between the nodes and still make one graph; an event of a component the user
    may not view is NiFi's UNKNOWN placeholder."""
    found = [("n1", event(1, 100, "root", kind="CREATE")),
             ("n1", event(2, 110, "root", kind="FORK", children=("a", "b"))),
             ("n2", event(1, 120, "a", kind="RECEIVE")),
             ("n2", event(2, 130, "m", kind="JOIN", parents=("a", "b"), children=("m",), component="hidden")),
             ("n2", event(3, 140, "m", kind="DROP"))]
    drawn = graph(found, ["root"], visible={"c"}, max_nodes=1000)
    ids = {node["id"]: node for node in drawn["nodes"]}
    assert {"root", "a", "b", "m", "n1:1", "n1:2", "n2:1", "n2:2", "n2:3"} == set(ids)
    assert ids["n2:2"]["eventType"] == "UNKNOWN" and ids["n2:2"]["componentType"] is None
    assert ids["n2:2"]["parentUuids"] == ["a", "b"] and ids["n1:2"]["childUuids"] == ["a", "b"]
    assert ids["a"]["type"] == "FLOWFILE" and ids["n1:2"]["clusterNodeIdentifier"] == "n1"
    links = {(link["sourceId"], link["targetId"]) for link in drawn["links"]}
    assert {("root", "n1:1"), ("n1:1", "n1:2"), ("n1:2", "a"), ("n1:2", "b"), ("a", "n2:1"), ("n2:1", "n2:2"),
            ("n2:2", "m"), ("m", "n2:3")} <= links
    assert ids["n1:2"]["timestamp"] == formats.timestamp(110) and not drawn["truncated"]


def test_lineage_is_cut_at_its_node_limit():
    found = [("n1", event(1, 1, "root", kind="FORK", children=[f"c{i}" for i in range(20)]))]
    drawn = graph(found, ["root"], visible={"c"}, max_nodes=8)
    assert drawn["truncated"] and len(drawn["nodes"]) <= 8


def test_an_event_s_parents_are_what_it_acted_on_and_its_children_what_it_made():
    join = event(4, 10, "m", kind="JOIN", parents=("a", "b"), children=("m",))
    assert related(join, children=False) == ["a", "b"] and related(join, children=True) == ["m"]
    fork = event(5, 10, "root", kind="FORK", children=("x", "y"))
    assert related(fork, children=False) == ["root"] and related(fork, children=True) == ["x", "y"]


def test_search_terms_become_node_criteria_with_wildcards_inverse_and_attributes():
    terms = {"FlowFileUUID": {"value": "abc*", "inverse": False}, "EventType": {"value": "drop, CREATE",
                                                                                  "inverse": True},
             "ComponentType": {"value": "Log*", "inverse": False}, "filename": {"value": "x.csv", "inverse": True},
             "Details": {"value": "*auto*", "inverse": False}}
    found = criteria.search({"searchTerms": terms, "startDate": 5, "maximumFileSize": 1024}, frozenset({"p1"}))
    assert found.query == {"flowfile_uuid": "abc*", "event_types": ["DROP", "CREATE"], "component_types": ["Log*"],
                           "attributes": {"filename": "x.csv"}, "details": "*auto*",
                           "inverse": ["attributes.filename", "event_types"], "start_time": 5, "max_size": 1024}
    assert found.scope == {"p1"}
    with pytest.raises(ValueError, match="no event type 'DROPPED'"):
        criteria.event_types("DROP, DROPPED")


@pytest.mark.parametrize("value, text, matched", [
    ("Gen*", "GenerateFlowFile", True), ("gen?rate", "Generate", True), ("log", "LogAttribute", False),
    ("LOGATTRIBUTE", "LogAttribute", True), ("a[b]", "a[b]", True), ("*", None, False)])
def test_values_match_whole_fields_ignoring_case_with_wildcards(value, text, matched):
    assert criteria.matcher(value)(text) is matched


@pytest.mark.parametrize("text, ms", [
    ("2024-05-01T12:00:00Z", 1714564800000), ("2024-05-01T12:00:00", 1714564800000),
    ("2024-05-01T14:00:00+02:00", 1714564800000), ("05/01/2024 12:00:00 UTC", 1714564800000),
    ("05/01/2024 14:00:00 Europe/Paris", 1714564800000), ("05/01/2024 12:00:00", 1714564800000)])
def test_times_are_iso_8601_or_nifi_s(text, ms):
    assert formats.parse_time(text) == ms


@pytest.mark.parametrize("text", ["yesterday", "13/45/2024 12:00:00 UTC", "05/01/2024 12:00:00 Mars/Olympus"])
def test_what_is_no_time_is_refused_saying_what_is_expected(text):
    with pytest.raises(ValueError, match="ISO 8601"):
        formats.parse_time(text)


def test_answers_use_nifi_s_text_forms():
    ms = 1714564800123
    assert formats.timestamp(ms) == "05/01/2024 12:00:00.123 UTC"
    assert formats.date_time(ms) == "05/01/2024 12:00:00 UTC"
    assert formats.time_of_day(ms) == "12:00:00 UTC"
    assert formats.instant(ms) == "2024-05-01T12:00:00.123Z"
    assert formats.count(12345) == "12,345"
