"""HTTP-level behaviour of the API: JSON bodies only, the error shape for paths no route matches
and methods a resource lacks, OPTIONS answered without loading anything, and nested objects
that must be whole even in partial updates."""

from __future__ import annotations

import json
import uuid

import pytest

from tests.flowsite.api.support import API, assert_error, problems_by_path


def test_options_describes_a_resource_without_loading_it(api_a, flow_a):
    for pk in (flow_a.conn.pk, uuid.uuid4()):  # an existing id and one that exists nowhere: the same answer
        response = api_a.options(f"{API}connections/{pk}")
        assert response.status_code == 200
        body = response.json()
        assert body["name"] == "Connection Detail" and "actions" not in body
    assert "PUT" in response["Allow"] and "DELETE" in response["Allow"]


@pytest.mark.parametrize("path", ["processors/not-a-uuid", "process-groups/{root}/versions/-1", "no-such-thing",
                                  "tenants/"])
def test_a_path_no_route_matches_is_a_404_in_the_error_shape(api_a, flow_a, path):
    response = api_a.get(API + path.format(root=flow_a.root.pk))
    assert response["Content-Type"] == "application/json"
    assert_error(response, 404, "not_found")


def test_outside_the_api_a_404_is_the_sites_page(client, db):
    response = client.get("/no-such-page")
    assert response.status_code == 404 and not response["Content-Type"].startswith("application/json")


def test_a_method_a_resource_lacks_is_405(api_a, flow_a):
    response = api_a.post(f"{API}processors/{flow_a.gen.pk}", {}, format="json")
    assert_error(response, 405, "method_not_allowed")
    assert "POST" not in response["Allow"]


@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                          "text/plain"])
def test_bodies_are_json_only(api_a, flow_a, content_type):
    response = api_a.generic("POST", f"{API}process-groups/{flow_a.root.pk}/funnels", "name=f",
                             content_type=content_type)
    assert_error(response, 415, "unsupported_media_type")


@pytest.mark.parametrize("method", ["put", "patch"])
def test_a_position_names_both_coordinates(api_a, flow_a, method):
    response = getattr(api_a, method)(f"{API}funnels/{flow_a.funnel.pk}",
                                      {"revision": {"version": 0}, "position": {"x": 5}}, format="json")
    assert problems_by_path(assert_error(response, 400)) == {"$.position.y": "This field is required."}
    assert api_a.put(f"{API}funnels/{flow_a.funnel.pk}", {"revision": {"version": 0}, "position": {"x": 5, "y": 6}},
                     format="json").json()["position"] == {"x": 5.0, "y": 6.0}


@pytest.mark.parametrize("end", ["source", "destination"])
def test_a_connection_end_names_its_id_in_an_update(api_a, flow_a, end):
    response = api_a.patch(f"{API}connections/{flow_a.conn.pk}", {"revision": {"version": 0}, end: {}},
                           format="json")
    assert problems_by_path(assert_error(response, 400)) == {f"$.{end}.id": "This field is required."}


def test_non_finite_numbers_are_refused(api_a, flow_a):
    response = api_a.generic("PUT", f"{API}funnels/{flow_a.funnel.pk}",
                             '{"revision": {"version": 0}, "position": {"x": 1e400, "y": 0}}',
                             content_type="application/json")
    assert "$.position.x" in problems_by_path(assert_error(response, 400))


def test_a_failure_under_the_api_answers_the_error_shape_and_elsewhere_the_site_page():
    from django.test import RequestFactory

    from flowsite.api.errors import server_error

    api = server_error(RequestFactory().get("/api/v1/tenants"))
    assert api.status_code == 500 and json.loads(api.content)["code"] == "server_error"
    page = server_error(RequestFactory().get("/"))
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")
