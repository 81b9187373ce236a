"""Bounds and shapes of requests and lists: oversized bodies are 413 before anything reads them,
lists page with limit/offset (count, next, previous), and filter by name, type and state."""

from __future__ import annotations

import json

import pytest
from django.conf import settings as django_settings

from flowsite.flows.models import Component, Processor
from tests.flowsite.api.support import API, assert_error

# ------------------------------------------------------------------ request size


@pytest.fixture
def import_url(tenant_a):
    return f"{API}process-groups/{tenant_a.root.pk}/process-groups/import"


def _document_of(size: int) -> str:
    """A valid flow definition of exactly ``size`` bytes (padded with an unmodelled field)."""
    document = {"flowContents": {"identifier": "g", "name": "g"}, "padding": ""}
    document["padding"] = "x" * (size - len(json.dumps(document)))
    text = json.dumps(document)
    assert len(text) == size
    return text


def test_a_body_over_the_limit_is_413(api_a, import_url, settings):
    settings.MAX_REQUEST_BYTES = 2000
    count = Component.objects.count()
    response = api_a.generic("POST", import_url, _document_of(2001), content_type="application/json")
    body = assert_error(response, 413, "request_too_large")
    assert body["message"] == "the request body has 2001 bytes; at most 2000 are accepted"
    assert Component.objects.count() == count
    assert api_a.generic("POST", import_url, _document_of(2000), content_type="application/json").status_code == 201


def test_the_limit_is_the_setting(api_a, import_url):
    limit = django_settings.MAX_REQUEST_BYTES  # FLOWSITE_MAX_REQUEST_BYTES, 16 MiB by default
    response = api_a.generic("POST", import_url, b" " * (limit + 1), content_type="application/json")
    assert_error(response, 413, "request_too_large")


def test_the_limit_holds_for_every_endpoint_and_method(api_a, flow_a, settings):
    settings.MAX_REQUEST_BYTES = 100
    padding = {"revision": {"version": 0}, "comments": "x" * 200}
    for method, url in (("PUT", f"processors/{flow_a.gen.pk}"), ("PATCH", f"funnels/{flow_a.funnel.pk}"),
                        ("POST", f"process-groups/{flow_a.root.pk}/funnels"), ("POST", "tokens")):
        response = api_a.generic(method, API + url, json.dumps(padding), content_type="application/json")
        assert_error(response, 413, "request_too_large")
    flow_a.gen.refresh_from_db()
    assert flow_a.gen.comments == ""


def test_a_content_length_that_is_not_a_number_is_400(api_a, import_url):
    response = api_a.generic("POST", import_url, "{}", content_type="application/json", CONTENT_LENGTH="lots")
    assert_error(response, 400, "bad_request")


# ------------------------------------------------------------------ paging


@pytest.fixture
def many(api_a, tenant_a):
    """Five processors in tenant A's root: p0..p4 (p0 and p1 LogAttribute, p2 disabled)."""
    for index in range(5):
        Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name=f"p{index}",
                                 type="LogAttribute" if index < 2 else "GenerateFlowFile",
                                 scheduled_state="DISABLED" if index == 2 else "STOPPED")
    return f"{API}process-groups/{tenant_a.root.pk}/processors"


def test_pages_by_limit_and_offset(api_a, many):
    first = api_a.get(f"{many}?limit=2").json()
    assert first["count"] == 5 and [p["name"] for p in first["results"]] == ["p0", "p1"]
    assert first["previous"] is None and first["next"].endswith("processors?limit=2&offset=2")
    second = api_a.get(first["next"]).json()
    assert [p["name"] for p in second["results"]] == ["p2", "p3"]
    last = api_a.get(f"{many}?limit=2&offset=4").json()
    assert [p["name"] for p in last["results"]] == ["p4"] and last["next"] is None and last["previous"]
    beyond = api_a.get(f"{many}?limit=2&offset=99999999999999999999").json()
    assert beyond["count"] == 5 and beyond["results"] == []


def test_a_page_is_at_most_1000_and_100_by_default(api_a, tenant_a):
    for index in range(101):
        Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name=f"p{index:03}",
                                 type="GenerateFlowFile")
    url = f"{API}process-groups/{tenant_a.root.pk}/processors"
    assert len(api_a.get(url).json()["results"]) == 100
    assert len(api_a.get(f"{url}?limit=100000").json()["results"]) == 101
    assert len(api_a.get(f"{url}?limit=abc").json()["results"]) == 100  # not a number: the default


@pytest.mark.parametrize("path", ["tenants", "tokens", "processor-types", "controller-service-types"])
def test_every_list_pages(api_a, path):
    whole = api_a.get(f"{API}{path}").json()
    page = api_a.get(f"{API}{path}?limit=1").json()
    assert page["count"] == whole["count"] and len(page["results"]) == min(1, whole["count"])
    assert set(page) == {"count", "next", "previous", "results"}


# ------------------------------------------------------------------ filters


@pytest.mark.parametrize("query, names", [
    ("name=P1", ["p1"]),
    ("name=p", ["p0", "p1", "p2", "p3", "p4"]),
    ("type=logattr", ["p0", "p1"]),
    ("state=DISABLED", ["p2"]),
    ("state=RUNNING", []),
    ("type=GenerateFlowFile&state=STOPPED", ["p3", "p4"]),
])
def test_processors_filter_by_name_type_and_state(api_a, many, query, names):
    assert [p["name"] for p in api_a.get(f"{many}?{query}").json()["results"]] == names


@pytest.mark.parametrize("query, path", [("state=ASLEEP", "$.state"), ("name=%00", "$.name")])
def test_an_invalid_filter_is_400(api_a, many, query, path):
    refused = assert_error(api_a.get(f"{many}?{query}"), 400, "invalid")
    assert [p["path"] for p in refused["problems"]] == [path]


def test_connections_filter_by_their_ends(api_a, flow_a):
    url = f"{API}process-groups/{flow_a.root.pk}/connections"
    assert [c["id"] for c in api_a.get(f"{url}?source={flow_a.gen.pk}").json()["results"]] == [str(flow_a.conn.pk)]
    assert api_a.get(f"{url}?destination={flow_a.gen.pk}").json()["count"] == 0
    assert_error(api_a.get(f"{url}?source=not-a-uuid"), 400)


@pytest.mark.parametrize("path, query, names", [
    ("process-groups", "name=CHI", ["child"]),
    ("funnels", "name=funn", ["funnel"]),
    ("funnels", "name=nothing", []),
])
def test_groups_and_funnels_filter_by_name(api_a, flow_a, path, query, names):
    listed = api_a.get(f"{API}process-groups/{flow_a.root.pk}/{path}?{query}").json()
    assert [item["name"] for item in listed["results"]] == names


def test_ports_filter_by_name(api_a, flow_a):
    url = f"{API}process-groups/{flow_a.child.pk}/input-ports"
    assert [p["name"] for p in api_a.get(f"{url}?name=IN").json()["results"]] == ["in"]
    assert api_a.get(f"{API}process-groups/{flow_a.child.pk}/output-ports?name=in").json()["count"] == 0


def test_the_catalogue_searches_names_descriptions_and_tags(api_a):
    found = [t["type"] for t in api_a.get(f"{API}processor-types?q=http").json()["results"]]
    assert "InvokeHTTP" in found and "ListenHTTP" in found and "PutFile" not in found
    everything = api_a.get(f"{API}processor-types").json()["count"]
    assert api_a.get(f"{API}processor-types?q=").json()["count"] == everything
    assert api_a.get(f"{API}processor-types/org.apache.nifi.processors.standard.PutFile").json()["type"] == "PutFile"
    assert_error(api_a.get(f"{API}processor-types/NoSuch"), 404, "not_found")
    assert_error(api_a.get(f"{API}controller-service-types/PutFile"), 404, "not_found")
