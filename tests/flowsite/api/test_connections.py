"""Connections through the API: which components they may join, which relationships they may
select (naming the ones the source has), and their queue settings."""

from __future__ import annotations

import pytest

from flowsite.flows.models import Connection, Processor
from tests.flowsite.api.support import API, assert_error, problems_by_path


@pytest.fixture
def post(api_a, flow_a):
    """Post a connection to tenant A's root (ids given as Flow attribute names); nothing created on refusal."""
    def send(source, destination, relationships=("success",), group=None, **fields):
        ids = flow_a.ids()
        body = {"source": {"id": ids.get(source, source)}, "destination": {"id": ids.get(destination, destination)},
                **fields}
        if relationships is not None:
            body["selectedRelationships"] = list(relationships)
        count = Connection.objects.count()
        response = api_a.post(f"{API}process-groups/{ids[group or 'root']}/connections", body, format="json")
        if response.status_code >= 400:
            assert Connection.objects.count() == count
        return response
    return send


def test_a_connection_joins_two_components_of_the_group(post):
    created = post("spare", "funnel")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["source"]["name"] == "spare" and body["destination"]["type"] == "FUNNEL"
    assert body["selectedRelationships"] == ["success"] and body["availableRelationships"] == ["success"]
    assert body["backPressureObjectThreshold"] == 10_000 and body["flowFileExpiration"] == "0 sec"


def test_an_unknown_relationship_is_400_naming_the_sources_relationships(post):
    refused = assert_error(post("spare", "funnel", ["success", "bogus", "other"]), 400, "invalid")
    assert problems_by_path(refused) == {"$.selectedRelationships": (
        "'spare' has no relationship 'bogus' (it has: success) | "
        "'spare' has no relationship 'other' (it has: success)")}


def test_a_connection_from_a_processor_selects_a_relationship(post):
    refused = assert_error(post("spare", "funnel", []), 400)
    assert problems_by_path(refused) == {
        "$.selectedRelationships": "a connection from a processor must select at least one relationship"}
    assert_error(post("spare", "funnel", None), 400)


def test_a_connection_from_a_funnel_selects_none(post):
    refused = assert_error(post("funnel", "log", ["success"]), 400)
    assert problems_by_path(refused) == {
        "$.selectedRelationships": "only connections from a processor select relationships"}
    assert post("funnel", "log", []).status_code == 201


@pytest.mark.parametrize("source, destination, group, path", [
    ("out_port", "log", "root", None),          # an output port of a child group may be a source
    ("spare", "in_port", "root", None),         # an input port of a child group may be a destination
    ("child", "log", "root", "$.source"),       # a group is not connectable
    ("spare", "out_port", "root", "$.destination"),
    ("in_port", "log", "root", "$.source"),
    ("spare", "log", "child", "$.source"),      # both ends outside the group the connection is in
])
def test_where_a_connection_may_go(post, source, destination, group, path):
    relationships = ["success"] if source == "spare" else []
    response = post(source, destination, relationships, group=group)
    if path is None:
        assert response.status_code == 201, response.content
    else:
        assert path in problems_by_path(assert_error(response, 400))


def test_an_unknown_component_is_400(post):
    refused = assert_error(post("spare", "00000000-0000-0000-0000-000000000000"), 400)
    assert problems_by_path(refused) == {
        "$.destination.id": "no component with id 00000000-0000-0000-0000-000000000000 in this tenant"}
    assert_error(post("spare", "not-a-uuid"), 400)


def test_dynamic_relationships_may_be_selected(api_a, post, tenant_a):
    route = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/processors",
                       {"type": "RouteOnAttribute", "properties": {"big": "${fileSize:gt(10)}"}}, format="json").json()
    created = post(route["id"], "funnel", ["big", "unmatched"])
    assert created.status_code == 201 and created.json()["availableRelationships"] == ["unmatched", "big"]
    refused = assert_error(post(route["id"], "funnel", ["small"]), 400)
    assert "(it has: big, unmatched)" in refused["message"]


@pytest.mark.parametrize("fields, path", [
    ({"loadBalanceStrategy": "PARTITION_BY_ATTRIBUTE"}, "$.partitioningAttribute"),
    ({"loadBalanceStrategy": "SOMETIMES"}, "$.loadBalanceStrategy"),
    ({"prioritizers": ["com.example.Mine"]}, "$.prioritizers"),
    ({"backPressureDataSizeThreshold": "huge"}, "$.backPressureDataSizeThreshold"),
    ({"backPressureObjectThreshold": -1}, "$.backPressureObjectThreshold"),
    ({"flowFileExpiration": "forever"}, "$.flowFileExpiration"),
])
def test_invalid_queue_settings_are_400(post, fields, path):
    refused = assert_error(post("spare", "funnel", **fields), 400)
    assert list(problems_by_path(refused)) == [path]


@pytest.mark.parametrize("strategy", ["DO_NOT_LOAD_BALANCE", "ROUND_ROBIN", "SINGLE_NODE", "PARTITION_BY_ATTRIBUTE"])
@pytest.mark.parametrize("compression", ["DO_NOT_COMPRESS", "COMPRESS_ATTRIBUTES_ONLY",
                                         "COMPRESS_ATTRIBUTES_AND_CONTENT"])
def test_every_load_balance_strategy_and_compression_is_created_and_updated(api_a, post, strategy, compression):
    created = post("spare", "funnel", loadBalanceStrategy=strategy, partitioningAttribute="customer",
                   loadBalanceCompression=compression)
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["loadBalanceStrategy"], body["partitioningAttribute"], body["loadBalanceCompression"]) == (
        strategy, "customer", compression)
    stored = Connection.objects.get(pk=body["id"])
    assert (stored.load_balance_strategy, stored.load_balance_compression) == (strategy, compression)
    updated = api_a.put(f"{API}connections/{body['id']}", {
        "revision": body["revision"], "loadBalanceStrategy": "ROUND_ROBIN",
        "loadBalanceCompression": "COMPRESS_ATTRIBUTES_AND_CONTENT"}, format="json")
    assert updated.status_code == 200, updated.content
    stored.refresh_from_db()
    assert (stored.load_balance_strategy, stored.load_balance_compression) == (
        "ROUND_ROBIN", "COMPRESS_ATTRIBUTES_AND_CONTENT")


def test_load_balancing_defaults_to_none(post):
    body = post("spare", "funnel").json()
    assert (body["loadBalanceStrategy"], body["partitioningAttribute"], body["loadBalanceCompression"]) == (
        "DO_NOT_LOAD_BALANCE", "", "DO_NOT_COMPRESS")


@pytest.mark.parametrize("fields, path, message", [
    ({"loadBalanceStrategy": "SOMETIMES"}, "$.loadBalanceStrategy",
     "'SOMETIMES' is not one of DO_NOT_LOAD_BALANCE, ROUND_ROBIN, SINGLE_NODE, PARTITION_BY_ATTRIBUTE"),
    ({"loadBalanceCompression": "ZIP"}, "$.loadBalanceCompression",
     "'ZIP' is not one of DO_NOT_COMPRESS, COMPRESS_ATTRIBUTES_ONLY, COMPRESS_ATTRIBUTES_AND_CONTENT"),
    ({"loadBalanceStrategy": "PARTITION_BY_ATTRIBUTE", "partitioningAttribute": "   "}, "$.partitioningAttribute",
     "partitioning by attribute needs the attribute's name (the PARTITION_BY_ATTRIBUTE strategy)"),
])
def test_load_balance_refusals_say_what_is_allowed(post, fields, path, message):
    refused = assert_error(post("spare", "funnel", **fields), 400)
    assert problems_by_path(refused) == {path: message}


def test_switching_to_partition_by_attribute_needs_the_attribute(api_a, flow_a):
    url = f"{API}connections/{flow_a.conn.pk}"
    refused = assert_error(api_a.put(url, {"revision": {"version": 0}, "loadBalanceStrategy": "PARTITION_BY_ATTRIBUTE"},
                                     format="json"), 400)
    assert list(problems_by_path(refused)) == ["$.partitioningAttribute"]
    accepted = api_a.put(url, {"revision": {"version": 0}, "loadBalanceStrategy": "PARTITION_BY_ATTRIBUTE",
                               "partitioningAttribute": "customer"}, format="json")
    assert accepted.status_code == 200, accepted.content
    cleared = assert_error(api_a.put(url, {"revision": accepted.json()["revision"], "partitioningAttribute": ""},
                                     format="json"), 400)
    assert list(problems_by_path(cleared)) == ["$.partitioningAttribute"]


def test_queue_settings_are_kept(post):
    created = post("spare", "funnel", loadBalanceStrategy="PARTITION_BY_ATTRIBUTE", partitioningAttribute="filename",
                   prioritizers=["org.apache.nifi.prioritizer.FirstInFirstOutPrioritizer"],
                   backPressureDataSizeThreshold="10 MB", flowFileExpiration="1 hour").json()
    assert (created["loadBalanceStrategy"], created["partitioningAttribute"], created["prioritizers"],
            created["backPressureDataSizeThreshold"], created["flowFileExpiration"]) == (
        "PARTITION_BY_ATTRIBUTE", "filename", ["org.apache.nifi.prioritizer.FirstInFirstOutPrioritizer"], "10 MB",
        "1 hour")


def test_the_source_cannot_change_but_the_destination_can(api_a, flow_a):
    url = f"{API}connections/{flow_a.conn.pk}"
    refused = assert_error(api_a.put(url, {"revision": {"version": 0}, "source": {"id": str(flow_a.spare.pk)}},
                                     format="json"), 400)
    assert problems_by_path(refused) == {"$.source": "the source of a connection cannot change"}
    moved = api_a.put(url, {"revision": {"version": 0}, "destination": {"id": str(flow_a.funnel.pk)}}, format="json")
    assert moved.status_code == 200 and moved.json()["destination"]["id"] == str(flow_a.funnel.pk)


def test_changing_relationships_checks_them(api_a, flow_a):
    url = f"{API}connections/{flow_a.conn.pk}"
    refused = assert_error(api_a.put(url, {"revision": {"version": 0}, "selectedRelationships": ["failure"]},
                                     format="json"), 400)
    assert problems_by_path(refused) == {
        "$.selectedRelationships": "'gen' has no relationship 'failure' (it has: success)"}


def test_a_connection_makes_its_ends_valid(api_a, flow_a):
    """gen's success is connected to log: both are valid once the connection exists, and gen is
    invalid again when it is deleted."""
    shown = api_a.get(f"{API}processors/{flow_a.gen.pk}").json()
    assert shown["validationStatus"] == "VALID", shown["validationErrors"]
    assert api_a.delete(f"{API}connections/{flow_a.conn.pk}?version=0").status_code == 204
    errors = api_a.get(f"{API}processors/{flow_a.gen.pk}").json()["validationErrors"]
    assert errors == [{"property": None, "message": "relationship 'success' is neither connected nor auto-terminated"}]
    assert Processor.objects.filter(pk=flow_a.gen.pk).exists()


def test_bend_points_are_kept_in_the_flow_definition(api_a, flow_a):
    url = f"{API}connections/{flow_a.conn.pk}"
    assert api_a.get(url).json()["bends"] == []
    bent = api_a.put(url, {"revision": {"version": 0}, "bends": [{"x": 10, "y": 20.5}, {"x": -4, "y": 0}]},
                     format="json")
    assert bent.status_code == 200, bent.content
    assert bent.json()["bends"] == [{"x": 10.0, "y": 20.5}, {"x": -4.0, "y": 0.0}]
    definition = api_a.get(f"{API}process-groups/{flow_a.root.pk}/flow-definition").json()
    (connection,) = [c for c in definition["flowContents"]["connections"] if c["name"] == flow_a.conn.name]
    assert connection["bends"] == [{"x": 10.0, "y": 20.5}, {"x": -4.0, "y": 0.0}]
    refused = assert_error(api_a.put(url, {"revision": {"version": 1}, "bends": [{"x": 1}]}, format="json"), 400)
    assert "$.bends[0].y" in problems_by_path(refused)
