"""Optimistic locking (NiFi revisions): a change based on a stale version is a 409 carrying the
current revision; a client may chain changes on its own last one by clientId; deletions name
their revision; concurrent changes based on one revision: exactly one applies."""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from flowsite.flows import actions
from flowsite.flows.models import Processor
from tests.flowsite.api.support import API, assert_error, build_flow
from tests.flowsite.conftest import token_client


def put(client, processor, revision, **fields):
    return client.put(f"{API}processors/{processor.pk}", {"revision": revision, **fields}, format="json")


def test_a_stale_version_is_409_with_the_current_revision(api_a, flow_a):
    assert put(api_a, flow_a.gen, {"version": 0}, name="first").status_code == 200
    body = assert_error(put(api_a, flow_a.gen, {"version": 0}, name="second"), 409, "stale_revision")
    assert body["currentRevision"] == {"version": 1, "clientId": "", "lastModifier": "alice"}
    flow_a.gen.refresh_from_db()
    assert flow_a.gen.name == "first" and flow_a.gen.version == 1


def test_every_change_advances_the_version(api_a, flow_a):
    for version in range(3):
        response = put(api_a, flow_a.gen, {"version": version}, comments=f"change {version}")
        assert response.json()["revision"] == {"version": version + 1, "clientId": "", "lastModifier": "alice"}


def test_one_client_chains_changes_without_the_latest_version(api_a, flow_a):
    first = put(api_a, flow_a.gen, {"version": 0, "clientId": "editor-1"}, name="one")
    assert first.json()["revision"]["clientId"] == "editor-1"
    second = put(api_a, flow_a.gen, {"clientId": "editor-1"}, name="two")
    third = put(api_a, flow_a.gen, {"version": 0, "clientId": "editor-1"}, name="three")  # an old version too
    assert second.status_code == third.status_code == 200
    assert third.json()["revision"]["version"] == 3 and third.json()["name"] == "three"
    body = assert_error(put(api_a, flow_a.gen, {"version": 1, "clientId": "editor-2"}, name="other"), 409)
    assert body["currentRevision"]["clientId"] == "editor-1"
    assert put(api_a, flow_a.gen, {"version": 3, "clientId": "editor-2"}, name="other").status_code == 200


@pytest.mark.parametrize("revision, path", [
    (None, "$.revision"),
    ({}, "$.revision"),
    ({"clientId": ""}, "$.revision"),
    ({"version": -1}, "$.revision.version"),
    ({"version": "one"}, "$.revision.version"),
])
def test_an_update_without_a_usable_revision_is_400(api_a, flow_a, revision, path):
    body = {"name": "x"} if revision is None else {"name": "x", "revision": revision}
    refused = assert_error(api_a.put(f"{API}processors/{flow_a.gen.pk}", body, format="json"), 400, "invalid")
    assert [p["path"] for p in refused["problems"]] == [path]
    flow_a.gen.refresh_from_db()
    assert flow_a.gen.name == "gen"


def test_a_deletion_without_a_revision_is_400(api_a, flow_a):
    body = assert_error(api_a.delete(f"{API}funnels/{flow_a.funnel.pk}"), 400, "invalid")
    assert body["problems"][0]["path"] == "$.version"
    assert api_a.get(f"{API}funnels/{flow_a.funnel.pk}").status_code == 200


@pytest.mark.parametrize("query", ["version=x", "version=-1"])
def test_a_deletion_with_a_bad_version_is_400(api_a, flow_a, query):
    assert_error(api_a.delete(f"{API}funnels/{flow_a.funnel.pk}?{query}"), 400, "invalid")


def test_a_deletion_based_on_a_stale_version_is_409(api_a, flow_a):
    url = f"{API}funnels/{flow_a.funnel.pk}"
    api_a.put(url, {"revision": {"version": 0}, "name": "moved"}, format="json")
    body = assert_error(api_a.delete(f"{url}?version=0"), 409, "stale_revision")
    assert body["currentRevision"]["version"] == 1
    assert api_a.delete(f"{url}?version=1").status_code == 204
    assert_error(api_a.get(url), 404)


def test_a_deletion_by_the_last_client_needs_no_version(api_a, flow_a):
    url = f"{API}funnels/{flow_a.funnel.pk}"
    api_a.put(url, {"revision": {"version": 0, "clientId": "tab-1"}, "name": "moved"}, format="json")
    assert_error(api_a.delete(f"{url}?clientId=tab-2"), 409)
    assert api_a.delete(f"{url}?clientId=tab-1").status_code == 204


def test_run_status_checks_the_revision(api_a, flow_a):
    url = f"{API}processors/{flow_a.spare.pk}/run-status"
    assert api_a.put(url, {"revision": {"version": 0}, "state": "DISABLED"}, format="json").status_code == 200
    body = assert_error(api_a.put(url, {"revision": {"version": 0}, "state": "STOPPED"}, format="json"), 409)
    assert body["currentRevision"]["version"] == 1
    flow_a.spare.refresh_from_db()
    assert flow_a.spare.scheduled_state == "DISABLED"


# ------------------------------------------------------------------ concurrency

def _race(requests: list) -> list:
    """Run the callables at once, each in its own thread (and database connection); their results."""
    barrier = threading.Barrier(len(requests))
    results: list = [None] * len(requests)

    def run(index, request):
        try:
            barrier.wait()
            results[index] = request()
        finally:
            connections.close_all()  # the thread's own connections

    threads = [threading.Thread(target=run, args=(i, r)) for i, r in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.django_db(transaction=True)
def test_concurrent_updates_on_one_version_apply_once(tenant_a):
    flow = build_flow(tenant_a)
    clients = [token_client(tenant_a.admin()) for _ in range(4)]
    responses = _race([lambda c=c, i=i: put(c, flow.gen, {"version": 0}, name=f"writer {i}")
                       for i, c in enumerate(clients)])
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, 409, 409, 409]
    winner = next(r for r in responses if r.status_code == 200).json()
    flow.gen.refresh_from_db()
    assert flow.gen.version == 1 and flow.gen.name == winner["name"]
    assert all(r.json()["currentRevision"]["version"] == 1 for r in responses if r.status_code == 409)


@pytest.mark.django_db(transaction=True)
def test_chained_changes_of_one_client_in_flight_together_both_apply(tenant_a, monkeypatch):
    """Two changes of one client sent without waiting: both were read before either is written,
    and neither may undo the other."""
    flow = build_flow(tenant_a)
    client = token_client(tenant_a.admin())
    put(client, flow.gen, {"version": 0, "clientId": "tab"}, comments="start")
    barrier = threading.Barrier(2)
    lock = actions.lock_for_change

    def lock_after_both_read(*args, **kwargs):
        barrier.wait(timeout=10)  # both requests have loaded the processor
        return lock(*args, **kwargs)

    monkeypatch.setattr(actions, "lock_for_change", lock_after_both_read)
    responses = _race([lambda: put(client, flow.gen, {"clientId": "tab"}, name="renamed"),
                       lambda: put(client, flow.gen, {"clientId": "tab"}, properties={"File Size": "2 KB"})])
    assert [r.status_code for r in responses] == [200, 200]
    processor = Processor.objects.get(pk=flow.gen.pk)
    assert processor.version == 3
    assert processor.name == "renamed" and processor.properties == {"File Size": "2 KB"}
    assert processor.comments == "start"


@pytest.mark.django_db(transaction=True)
def test_concurrent_commits_get_consecutive_numbers(tenant_a):
    flow = build_flow(tenant_a)
    clients = [token_client(tenant_a.admin()) for _ in range(3)]
    url = f"{API}process-groups/{flow.child.pk}/versions"
    responses = _race([lambda c=c: c.post(url, {"comment": "concurrent"}, format="json") for c in clients])
    assert sorted(r.status_code for r in responses) == [201, 201, 201]
    assert sorted(r.json()["number"] for r in responses) == [2, 3, 4]  # version 1 is build_flow's
