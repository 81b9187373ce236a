"""Request resources as such, on a real Redis with jobs run in the test process and no node
connected: NiFi's envelopes and status codes, a request its submitter's alone (404 to anyone
else, a guessed id and an id of another kind alike), what is refused before any job runs (bad
input, missing policies, read-only tokens, too many requests kept) and a deleted request that
stays deleted."""

from __future__ import annotations

import uuid

import pytest
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from flowsite.flows.access import QUERY_PROVENANCE, VIEW_FLOW, VIEW_PROVENANCE
from flowsite.provenance import jobs, store
from flowsite.provenance.jobs.query import NO_NODE
from tests.flowsite.conftest import token_client

QUERIES = "/api/v1/provenance"
LINEAGE = "/api/v1/provenance/lineage"
EXPORTS = "/api/v1/provenance-exports"


def problems(answer) -> dict[str, str]:
    return {problem["path"]: problem["message"] for problem in answer.json()["problems"]}


def query(api, **request):
    return api.post(QUERIES, {"provenance": {"request": request}}, format="json")


def test_a_query_comes_back_finished_in_nifi_s_envelope(cluster_settings, api_a):
    answer = query(api_a, maxResults=50, searchTerms={"Filename": {"value": "a*.csv"}},
                   startDate="2024-05-01T12:00:00Z", minimumFileSize="1 KB")
    assert answer.status_code == 201, answer.json()
    body = answer.json()["provenance"]
    assert answer["Location"] == body["uri"] and body["uri"].endswith(f"/api/v1/provenance/{body['id']}")
    assert (body["finished"], body["state"], body["percentCompleted"], body["partial"]) == (True, "done", 100, False)
    assert body["request"]["searchTerms"] == {"Filename": {"value": "a*.csv", "inverse": False}}
    assert (body["request"]["startDate"], body["request"]["minimumFileSize"], body["request"]["maxResults"]) == (
        "05/01/2024 12:00:00 UTC", "1 KB", 50)
    results = body["results"]
    assert (results["provenanceEvents"], results["total"], results["totalCount"]) == ([], "0", 0)
    assert results["errors"] == [NO_NODE] and body["nodes"] == {"asked": [], "answered": [], "missing": []}
    assert body["submissionTime"].endswith(" UTC") and body["expiration"].endswith(" UTC")

    assert api_a.get(body["uri"]).json()["provenance"]["id"] == body["id"]
    deleted = api_a.delete(body["uri"])
    assert deleted.status_code == 200 and deleted.json()["provenance"]["id"] == body["id"]
    assert api_a.get(body["uri"]).status_code == 404


def test_an_empty_submission_is_nifi_s_default_query(cluster_settings, api_a):
    for body in ({}, {"provenance": {}}):
        answer = api_a.post(QUERIES, body, format="json")
        assert answer.status_code == 201 and answer.json()["provenance"]["request"]["maxResults"] == 1000


def test_a_request_is_its_submitter_s_alone(cluster_settings, api_a, tenant_a, tenant_b):
    mine = query(api_a).json()["provenance"]
    lineage = api_a.post(LINEAGE, {"lineage": {"request": {"lineageRequestType": "FLOWFILE", "uuid": "u-1"}}},
                         format="json").json()["lineage"]
    colleague = token_client(tenant_a.admin())
    stranger = token_client(tenant_b.admin())
    for client in (colleague, stranger):
        for method in ("get", "delete"):
            answer = getattr(client, method)(f"{QUERIES}/{mine['id']}")
            assert answer.status_code == 404 and answer.json()["message"] == "no such provenance query"
    guessed = api_a.get(f"{QUERIES}/{uuid.uuid4()}")
    assert guessed.status_code == 404 and guessed.json()["message"] == "no such provenance query"
    assert api_a.get(f"{QUERIES}/not-an-id").status_code == 404
    assert api_a.get(f"{QUERIES}/{lineage['id']}").status_code == 404, "a lineage request is no query"
    assert api_a.get(f"{LINEAGE}/{mine['id']}").status_code == 404
    assert api_a.get(f"{QUERIES}/{uuid.UUID(mine['id']).hex}").status_code == 200, "either form of the id"


@pytest.mark.parametrize("body, path, words", [
    ({"provenance": {"request": {"maxResults": 0}}}, "$.provenance.request.maxResults", "greater than or equal to 1"),
    ({"provenance": {"request": {"maxResults": 10001}}}, "$.provenance.request.maxResults", "less than or equal"),
    ({"provenance": {"request": {"startDate": "yesterday"}}}, "$.provenance.request.startDate", "is not a time"),
    ({"provenance": {"request": {"startDate": "2024-05-02T00:00:00Z", "endDate": "2024-05-01T00:00:00Z"}}},
     "$.provenance.request.endDate", "before the start date"),
    ({"provenance": {"request": {"minimumFileSize": "lots"}}}, "$.provenance.request.minimumFileSize",
     "not a data size"),
    ({"provenance": {"request": {"maxResult": 5}}}, "$.provenance.request.maxResult", "no such field"),
    ({"provenance": {"query": {}}}, "$.provenance.query", "no such field"),
    ({"provenance": {"request": {"searchTerms": {"EventType": {"value": "DROPPED"}}}}},
     "$.provenance.request.searchTerms.EventType", "no event type 'DROPPED'"),
    ({"provenance": {"request": {"searchTerms": {"Filename": {"value": "x" * 1001}}}}},
     "$.provenance.request.searchTerms.Filename.value", "no more than 1000"),
    ({"provenance": {"request": {"searchTerms": {"Filename": {"value": "x", "invert": True}}}}},
     "$.provenance.request.searchTerms.Filename.invert", "no such field"),
    ({"provenance": {"request": {"clusterNodeId": "nowhere"}}}, "$.provenance.request.clusterNodeId",
     "no node 'nowhere'"),
])
def test_bad_queries_are_400_naming_the_problem(cluster_settings, api_a, body, path, words):
    answer = api_a.post(QUERIES, body, format="json")
    assert answer.status_code == 400, answer.json()
    assert words in problems(answer).get(path, ""), answer.json()


def test_malformed_json_is_400(cluster_settings, api_a):
    answer = api_a.post(QUERIES, "{not json", content_type="application/json")
    assert answer.status_code == 400 and "JSON parse error" in answer.json()["message"]


@pytest.mark.parametrize("request_body, path", [
    ({"lineageRequestType": "PARENTS"}, "$.lineage.request.eventId"),
    ({"lineageRequestType": "FLOWFILE"}, "$.lineage.request.uuid"),
    ({"lineageRequestType": "SIBLINGS", "uuid": "u"}, "$.lineage.request.lineageRequestType"),
    ({"lineageRequestType": "CHILDREN", "eventId": "not an id"}, "$.lineage.request.eventId"),
    ({"lineageRequestType": "CHILDREN", "eventId": 42}, "$.lineage.request.eventId"),
])
def test_bad_lineage_requests_are_400(cluster_settings, api_a, request_body, path):
    answer = api_a.post(LINEAGE, {"lineage": {"request": request_body}}, format="json")
    assert answer.status_code == 400 and path in problems(answer), answer.json()


def test_searching_needs_query_provenance_in_one_s_tenant(cluster_settings, tenant_a):
    viewer = token_client(tenant_a.member(global_policies=[VIEW_FLOW], root_policies=[VIEW_PROVENANCE]))
    for method, path, body in (("post", QUERIES, {}), ("post", EXPORTS, {}), ("get", f"{QUERIES}/search-options", None),
                               ("post", LINEAGE, {"lineage": {"request": {"lineageRequestType": "FLOWFILE",
                                                                          "uuid": "u"}}})):
        answer = getattr(viewer, method)(path, body, format="json") if body is not None else viewer.get(path)
        assert answer.status_code == 403 and "query_provenance" in answer.json()["message"], (path, answer.json())
    searcher = token_client(tenant_a.member(global_policies=[QUERY_PROVENANCE]))
    fields = searcher.get(f"{QUERIES}/search-options").json()["provenanceOptions"]["searchableFields"]
    assert {field["id"] for field in fields} >= {"FlowFileUUID", "Filename", "ProcessorID", "ComponentName",
                                                 "EventType", "Relationship", "TransitURI", "Details",
                                                 "AlternateIdentifierURI", "SourceQueueIdentifier", "ComponentType"}
    assert query(searcher).status_code == 201, "query provenance alone: a search that may show nothing"


def _read_only(user) -> APIClient:
    _, secret = ApiToken.issue(user, "reader", read_only=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


def test_a_read_only_token_may_search_and_forget_but_not_replay_or_drop(cluster_settings, admin_a, tenant_a):
    reader = _read_only(admin_a)
    submitted = query(reader)
    assert submitted.status_code == 201
    assert reader.delete(submitted.json()["provenance"]["uri"]).status_code == 200
    assert reader.post(EXPORTS, {}, format="json").status_code == 202
    replay = reader.post("/api/v1/provenance-events/replays", {"eventId": "n1:1"}, format="json")
    assert replay.status_code == 403 and "read-only" in replay.json()["message"]
    connection = uuid.uuid4()
    assert reader.post(f"/api/v1/flowfile-queues/{connection}/drop-requests").status_code == 403
    assert reader.post(f"/api/v1/connections/{connection}/empty").status_code == 403


def test_without_the_cluster_s_redis_it_is_503(db, api_a):
    for method, path in (("post", QUERIES), ("post", EXPORTS), ("get", f"{QUERIES}/{uuid.uuid4()}"),
                         ("get", "/api/v1/provenance-events/n1:1")):
        answer = getattr(api_a, method)(path, {}, format="json")
        assert answer.status_code == 503 and "Redis" in answer.json()["message"], (path, answer.json())


def test_a_user_keeps_a_bounded_number_of_requests(cluster_settings, api_a):
    cluster_settings.FLOWSITE_REQUESTS_PER_USER = 3
    kept = [query(api_a).json()["provenance"] for _ in range(3)]
    refused = query(api_a)
    assert refused.status_code == 409 and "you keep 3 requests already" in refused.json()["message"]
    api_a.delete(kept[0]["uri"])
    assert query(api_a).status_code == 201, "deleting one makes room"


def test_a_deleted_request_stays_deleted(cluster_settings, api_a):
    body = query(api_a).json()["provenance"]
    record = store.load(body["id"])
    api_a.delete(body["uri"])
    jobs.run(body["id"], "query")  # a task delivered again finds nothing to do
    assert store.load(body["id"]) is None
    assert store.update(record, percent=50) is False, "a job never writes a deleted request back"
    assert store.load(body["id"]) is None


def test_an_export_without_nodes_is_a_file_with_no_events(cluster_settings, api_a):
    for form, expected in (("CSV", "id,eventId,clusterNodeId,eventTime"), ("JSON", "[\n]")):
        answer = api_a.post(EXPORTS, {"provenanceExport": {"format": form}}, format="json")
        assert answer.status_code == 202, answer.json()
        export = answer.json()["provenanceExport"]
        assert (export["state"], export["eventCount"], export["truncated"]) == ("done", 0, False)
        content = api_a.get(export["contentUri"])
        assert content.status_code == 200 and b"".join(content.streaming_content).decode().startswith(expected)
        assert f'provenance-{export["id"]}.{form.lower()}' in content["Content-Disposition"]
    too_many = api_a.post(EXPORTS, {"provenanceExport": {"maxEvents": 100_001}}, format="json")
    assert too_many.status_code == 400 and "FLOWSITE_PROVENANCE_EXPORT_MAX_EVENTS" in too_many.json()["message"]
