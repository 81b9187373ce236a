"""Provenance and queues as users reach them, on two real in-process nodes running tenant A's
text flow (a rewrite, a split and a merge) and tenant B's small flow, answering the node commands
over a real Redis; the jobs run in the test process (``inspected``)."""

from __future__ import annotations

import threading
import time

import pytest
from rest_framework.test import APIClient

from engine.cluster.keys import ClusterKeys
from engine.provenance import ProvenanceEventType as E
from flowsite.api.models import ApiToken
from flowsite.flows import access
from flowsite.flows.access import MODIFY_DATA, QUERY_PROVENANCE, VIEW, VIEW_DATA, VIEW_PROVENANCE
from flowsite.provenance import jobs, store
from tests.cluster_nodes import InProcessNode
from tests.flowsite.conftest import TenantWorld, token_client
from tests.flowsite.provenance.conftest import TEXT
from tests.processes import wait_until

QUERIES = "/api/v1/provenance"
EVENTS = "/api/v1/provenance-events"
#: The events of one FlowFile of A's text flow on one node: gen's CREATE, rewrite's
#: CONTENT_MODIFIED, split's FORK and the DROP of its original, merge's JOIN, and for each of the
#: three splits it merged the ATTRIBUTES_MODIFIED (merge.uuid) and DROP of the original.
PER_NODE = 11


def query(api, **request) -> dict:
    answer = api.post(QUERIES, {"provenance": {"request": {"maxResults": 1000, **request}}}, format="json")
    assert answer.status_code == 201, answer.json()
    body = answer.json()["provenance"]
    assert body["finished"], body
    return body


def term(value: str, inverse: bool = False) -> dict:
    return {"value": value, "inverse": inverse}


def test_a_query_merges_both_nodes_newest_first_and_shows_only_the_tenant_s_own(inspected, api_a):
    body = query(api_a)
    results = body["results"]
    found = results["provenanceEvents"]
    assert (body["partial"], body["nodes"]["answered"]) == (False, ["n1", "n2"])
    assert len(found) == 2 * PER_NODE and results["total"] == str(2 * PER_NODE) and results["errors"] == []
    assert {event["clusterNodeId"] for event in found} == {"n1", "n2"}
    assert {event["componentId"] for event in found} <= {inspected.id(name) for name in
                                                        ("gen", "rewrite", "split", "merge")}
    keys = [(event["eventTimestamp"], event["clusterNodeId"], event["eventId"]) for event in found]
    assert keys == sorted(keys, reverse=True), "newest first: time, then node, then event id"
    create = next(event for event in found if event["eventType"] == "CREATE" and event["clusterNodeId"] == "n2")
    engine = inspected.event("n2", E.CREATE, "gen")
    assert create["id"] == f"n2:{engine.event_id}" and create["eventId"] == engine.event_id
    assert (create["componentName"], create["groupId"], create["fileSizeBytes"]) == (
        "gen", str(inspected.a["gen"].parent_id), len(TEXT))
    assert create["eventTime"].endswith(" UTC") and create["flowFileUuid"] == engine.flowfile_uuid

    capped = query(api_a, maxResults=3)["results"]
    assert (len(capped["provenanceEvents"]), capped["total"], capped["totalCount"]) == (3, "3+", 3)
    assert capped["provenanceEvents"] == found[:3]


@pytest.mark.parametrize("terms, expected", [
    ({"ComponentName": term("REW*")}, {("rewrite", "CONTENT_MODIFIED")}),
    ({"ProcessorID": term("{merge}")}, {("merge", "JOIN"), ("merge", "ATTRIBUTES_MODIFIED"), ("merge", "DROP")}),
    ({"EventType": term("JOIN,FORK")}, {("merge", "JOIN"), ("split", "FORK")}),
    ({"EventType": term("DROP", inverse=True), "ComponentName": term("split")}, {("split", "FORK")}),
    ({"filename": term("words.txt"), "ComponentType": term("Generate*")}, {("gen", "CREATE")}),
])
def test_search_terms_narrow_the_events(inspected, api_a, terms, expected):
    resolved = {name: {**value, "value": value["value"].format(merge=inspected.id("merge"))}
                for name, value in terms.items()}
    found = query(api_a, searchTerms=resolved)["results"]["provenanceEvents"]
    names = {value: key for key, value in ((name, inspected.id(name)) for name in ("gen", "rewrite", "split", "merge"))}
    assert {(names[event["componentId"]], event["eventType"]) for event in found} == expected
    assert {event["clusterNodeId"] for event in found} == {"n1", "n2"}


def test_one_node_sizes_and_times_narrow_a_query(inspected, api_a):
    only_n2 = query(api_a, clusterNodeId="n2")
    assert only_n2["nodes"]["asked"] == ["n2"]
    assert {event["clusterNodeId"] for event in only_n2["results"]["provenanceEvents"]} == {"n2"}
    big = query(api_a, minimumFileSize=f"{len(TEXT)} B")["results"]["provenanceEvents"]
    assert big and all(event["fileSizeBytes"] >= len(TEXT) for event in big)
    assert query(api_a, startDate="2999-01-01T00:00:00Z")["results"]["provenanceEvents"] == []


def test_another_tenant_sees_nothing_of_a_and_a_member_sees_what_they_may(inspected, tenant_a, tenant_b):
    b_events = query(token_client(tenant_b.admin()))["results"]["provenanceEvents"]
    assert b_events and {event["componentId"] for event in b_events} == {str(inspected.b["gen"].pk)}
    asking_for_a = query(token_client(tenant_b.admin()), searchTerms={"ProcessorID": term(inspected.id("gen"))})
    assert asking_for_a["results"]["provenanceEvents"] == [], "another tenant's id narrows to nothing"

    member = tenant_a.member(global_policies=[QUERY_PROVENANCE])
    nothing = query(token_client(member))
    assert nothing["results"]["provenanceEvents"] == [] and nothing["nodes"]["asked"] == [], \
        "no component whose provenance the user may view: no node is asked"
    assert nothing["results"]["errors"] == []
    access.grant(inspected.a["rewrite"], VIEW_PROVENANCE, user=member)
    seen = query(token_client(member))["results"]["provenanceEvents"]
    assert {event["componentId"] for event in seen} == {inspected.id("rewrite")}
    assert seen[0]["componentName"] == inspected.id("rewrite"), "without view on the component: its id"
    assert seen[0]["componentType"] == "PROCESSOR"


def test_an_event_shows_every_field_its_viewer_may_see(inspected, api_a, tenant_a, tenant_b):
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    answer = api_a.get(f"{EVENTS}/n1:{modified.event_id}")
    assert answer.status_code == 200, answer.json()
    event = answer.json()["provenanceEvent"]
    assert (event["eventType"], event["componentName"], event["sourceConnectionIdentifier"]) == (
        "CONTENT_MODIFIED", "rewrite", inspected.id("c1"))
    attributes = {attribute["name"]: attribute for attribute in event["attributes"]}
    assert attributes["filename"] == {"name": "filename", "value": "words.txt", "previousValue": "words.txt"}
    assert (event["inputContentClaimFileSizeBytes"], event["outputContentClaimFileSizeBytes"]) == (len(TEXT),
                                                                                                    len(TEXT))
    assert event["inputContentAvailable"] and event["outputContentAvailable"] and event["contentEqual"] is False
    assert event["replayAvailable"] is True and event["replayExplanation"] is None
    numeric = api_a.get(f"{EVENTS}/{modified.event_id}?clusterNodeId=n1")
    assert numeric.json()["provenanceEvent"]["id"] == event["id"]

    prov_only = token_client(tenant_a.member(root_policies=[VIEW, VIEW_PROVENANCE]))
    without_data = prov_only.get(f"{EVENTS}/n1:{modified.event_id}").json()["provenanceEvent"]
    assert without_data["attributes"] is None and without_data["inputContentClaimIdentifier"] is None
    assert without_data["replayAvailable"] is False and "view_data" in without_data["replayExplanation"]
    no_modify = token_client(tenant_a.member(root_policies=[VIEW_PROVENANCE, VIEW_DATA]))
    shown = no_modify.get(f"{EVENTS}/n1:{modified.event_id}").json()["provenanceEvent"]
    assert shown["replayAvailable"] is False and "modify_data" in shown["replayExplanation"]

    refused = token_client(tenant_a.member(root_policies=[VIEW])).get(f"{EVENTS}/n1:{modified.event_id}")
    assert refused.status_code == 403 and "view_provenance" in refused.json()["message"]
    theirs = token_client(tenant_b.admin()).get(f"{EVENTS}/n1:{modified.event_id}")
    unknown = api_a.get(f"{EVENTS}/n1:999999")
    assert theirs.status_code == unknown.status_code == 404
    assert theirs.json()["message"] == unknown.json()["message"] == "no such provenance event"
    assert api_a.get(f"{EVENTS}/n9:1").status_code == 404, "no such node: no such event"
    assert api_a.get(f"{EVENTS}/{modified.event_id}").status_code == 400, "a number needs its node"


def _content(api, path: str, **headers) -> tuple[int, bytes, object]:
    answer = api.get(path, **headers)
    body = b"".join(answer.streaming_content) if answer.streaming else answer.content
    return answer.status_code, body, answer


def test_content_is_as_it_was_at_the_event_with_ranges(inspected, api_a, settings):
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    created = inspected.event("n1", E.CREATE, "gen")
    rewritten = TEXT.replace("o", "0").encode()
    status, body, answer = _content(api_a, f"{EVENTS}/n1:{modified.event_id}/content/input")
    assert (status, body) == (200, TEXT.encode())
    assert answer["Content-Type"] == "text/plain" and answer["Accept-Ranges"] == "bytes"
    assert answer["Content-Disposition"] == 'attachment; filename="words.txt"'
    assert _content(api_a, f"{EVENTS}/n1:{modified.event_id}/content/output")[:2] == (200, rewritten)
    assert _content(api_a, f"{EVENTS}/n1:{created.event_id}/content/output")[:2] == (200, TEXT.encode()), \
        "the content a later event changed is shown as it was"

    path = f"{EVENTS}/n1:{modified.event_id}/content/output"
    status, body, answer = _content(api_a, path, HTTP_RANGE="bytes=4-6")
    assert (status, body, answer["Content-Range"], answer["Content-Length"]) == (
        206, rewritten[4:7], f"bytes 4-6/{len(rewritten)}", "3")
    assert _content(api_a, path, HTTP_RANGE="bytes=-3")[:2] == (206, rewritten[-3:])
    assert _content(api_a, path, HTTP_RANGE="bytes=10-")[:2] == (206, rewritten[10:])
    status, _, answer = _content(api_a, path, HTTP_RANGE=f"bytes={len(rewritten)}-")
    assert status == 416 and answer["Content-Range"] == f"bytes */{len(rewritten)}"
    settings.FLOWSITE_CONTENT_MAX_BYTES = 5
    status, body, _ = _content(api_a, path)
    assert status == 413 and b"Range" in body
    assert _content(api_a, path, HTTP_RANGE="bytes=0-4")[:2] == (206, rewritten[:5])

    created_input = _content(api_a, f"{EVENTS}/n1:{created.event_id}/content/input")
    assert created_input[0] == 404 and b"content no longer available" in created_input[1]


def test_content_under_asgi_is_streamed(inspected, admin_a):
    """Under ASGI (daphne) the chunks are read off the event loop as they are sent, never
    gathered whole first (Django would, given a plain iterator)."""
    import asyncio

    from django.test import AsyncRequestFactory
    from rest_framework.test import force_authenticate

    from flowsite.provenance.api.events import EventContent

    modified = inspected.event("n2", E.CONTENT_MODIFIED, "rewrite")
    request = AsyncRequestFactory().get(f"{EVENTS}/n2:{modified.event_id}/content/input", headers={"Range": "bytes=4-"})
    force_authenticate(request, admin_a)
    answer = EventContent.as_view(direction="input")(request, event_id=f"n2:{modified.event_id}")
    assert answer.status_code == 206 and answer.is_async

    async def chunks() -> bytes:
        return b"".join([chunk async for chunk in answer.streaming_content])

    assert asyncio.run(chunks()) == TEXT.encode()[4:]


def test_content_needs_view_the_data_and_says_when_it_aged_off(inspected, api_a, tenant_a):
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    path = f"{EVENTS}/n1:{modified.event_id}/content/input"
    refused = token_client(tenant_a.member(root_policies=[VIEW_PROVENANCE])).get(path)
    assert refused.status_code == 403 and "view_data" in refused.json()["message"]

    node = inspected.nodes["n1"].node
    node.controller.start_processor(inspected.id("sink"))  # as a run-status change does, once committed
    wait_until(lambda: inspected.queued("n1", inspected.a["c4"].pk) == 0, 20, "the sink took the merged FlowFile")
    node.storage.flowfiles.checkpoint()
    node.storage.content.run_cleanup(now=time.time() + 30 * 24 * 3600)  # a month on: the archive aged off
    gone = api_a.get(path)
    assert gone.status_code == 404, gone.json()
    assert gone.json()["message"].startswith("content no longer available: it was aged off or deleted")
    assert str(inspected.nodes["n1"].data_dir) not in gone.json()["message"], "no node path in the answer"
    event = api_a.get(f"{EVENTS}/n1:{modified.event_id}").json()["provenanceEvent"]
    assert event["inputContentAvailable"] is False and event["replayAvailable"] is False


def test_a_replay_queues_the_old_content_which_flows_downstream(inspected, api_a, tenant_a):
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    data_viewer = token_client(tenant_a.member(root_policies=[VIEW_PROVENANCE, VIEW_DATA]))
    refused = data_viewer.post(f"{EVENTS}/replays", {"eventId": f"n1:{modified.event_id}"}, format="json")
    assert refused.status_code == 403 and "modify_data" in refused.json()["message"]

    answer = api_a.post(f"{EVENTS}/replays", {"eventId": modified.event_id, "clusterNodeId": "n1"}, format="json")
    assert answer.status_code == 201, answer.json()
    replay = answer.json()["provenanceEvent"]
    assert replay["eventType"] == "REPLAY" and replay["clusterNodeId"] == "n1"
    assert replay["parentUuids"] == [modified.flowfile_uuid] and len(replay["childUuids"]) == 1
    assert answer["Location"].endswith(f"{EVENTS}/{replay['id']}")
    attributes = {attribute["name"]: attribute["value"] for attribute in replay["attributes"]}
    assert attributes["flowfile.replay"] == "true"
    # the replayed FlowFile goes through rewrite, split and merge again: a second merged FlowFile
    wait_until(lambda: inspected.queued("n1", inspected.a["c4"].pk) == 2, 20, "the replay reached c4")
    assert inspected.queued("n2", inspected.a["c4"].pk) == 1

    join = inspected.event("n1", E.JOIN, "merge")
    refused = api_a.post(f"{EVENTS}/replays", {"eventId": f"n1:{join.event_id}"}, format="json")
    assert refused.status_code == 409 and "cannot be replayed" in refused.json()["message"]


def _lineage(api, **request) -> dict:
    answer = api.post("/api/v1/provenance/lineage", {"lineage": {"request": request}}, format="json")
    assert answer.status_code == 201, answer.json()
    body = answer.json()["lineage"]
    assert body["finished"] and body["state"] == "done", body
    return body


def test_the_lineage_of_a_flowfile_split_and_merged(inspected, api_a, tenant_a):
    fork = inspected.event("n1", E.FORK, "split")
    join = inspected.event("n1", E.JOIN, "merge")
    root = fork.flowfile_uuid
    body = _lineage(api_a, lineageRequestType="FLOWFILE", uuid=root)
    nodes = {node["id"]: node for node in body["results"]["nodes"]}
    flowfiles = {node_id for node_id, node in nodes.items() if node["type"] == "FLOWFILE"}
    assert flowfiles == {root, *fork.child_uuids, join.flowfile_uuid}
    assert nodes[f"n1:{fork.event_id}"]["eventType"] == "FORK"
    assert sorted(nodes[f"n1:{join.event_id}"]["parentUuids"]) == sorted(fork.child_uuids)
    assert all(node["clusterNodeIdentifier"] == "n1" for node in nodes.values() if node["type"] == "EVENT"), \
        "n2's FlowFiles have uuids of their own"
    links = {(link["sourceId"], link["targetId"]) for link in body["results"]["links"]}
    assert (f"n1:{fork.event_id}", fork.child_uuids[0]) in links
    assert (f"n1:{join.event_id}", join.flowfile_uuid) in links
    by_event = _lineage(api_a, lineageRequestType="FLOWFILE", eventId=f"n1:{fork.event_id}")
    assert {node["id"] for node in by_event["results"]["nodes"]} == set(nodes)

    parents = _lineage(api_a, lineageRequestType="PARENTS", eventId=f"n1:{join.event_id}")
    assert set(fork.child_uuids) <= {node["id"] for node in parents["results"]["nodes"]}
    children = _lineage(api_a, lineageRequestType="CHILDREN", eventId=str(fork.event_id), clusterNodeId="n1")
    assert set(fork.child_uuids) <= {node["id"] for node in children["results"]["nodes"]}

    created = inspected.event("n1", E.CREATE, "gen")
    refused = api_a.post("/api/v1/provenance/lineage", {"lineage": {"request": {
        "lineageRequestType": "CHILDREN", "eventId": f"n1:{created.event_id}"}}}, format="json")
    assert refused.status_code == 400 and "only FORK, JOIN, CLONE and REPLAY" in refused.json()["message"]

    member = tenant_a.member(global_policies=[QUERY_PROVENANCE])
    access.grant(inspected.a["split"], VIEW_PROVENANCE, user=member)
    hidden = _lineage(token_client(member), lineageRequestType="FLOWFILE", uuid=root)
    types = {node["id"]: node["eventType"] for node in hidden["results"]["nodes"] if node["type"] == "EVENT"}
    assert types[f"n1:{fork.event_id}"] == "FORK" and types[f"n1:{join.event_id}"] == "UNKNOWN"


def test_a_queue_is_listed_looked_into_and_dropped_on_every_node(inspected, api_a, tenant_a, tenant_b):
    c4 = inspected.id("c4")
    listing = api_a.post(f"/api/v1/flowfile-queues/{c4}/listing-requests")
    assert listing.status_code == 202, listing.json()
    body = listing.json()["listingRequest"]
    assert body["finished"] and body["queueSize"] == {"objectCount": 2, "byteCount": 2 * len(TEXT)}
    summaries = body["flowFileSummaries"]
    assert [(summary["position"], summary["clusterNodeId"]) for summary in summaries] == [(1, "n1"), (1, "n2")]
    assert (body["sourceRunning"], body["destinationRunning"]) == (True, False)
    assert api_a.get(body["uri"]).json()["listingRequest"]["id"] == body["id"]

    flowfile = api_a.get(summaries[0]["uri"]).json()["flowFile"]
    assert flowfile["uuid"] == summaries[0]["uuid"] and flowfile["attributes"]["filename"] == "words.txt"
    assert flowfile["contentClaimFileSizeBytes"] == len(TEXT) and flowfile["contentAvailable"]
    asked_everywhere = api_a.get(f"/api/v1/flowfile-queues/{c4}/flowfiles/{summaries[1]['uuid']}")
    assert asked_everywhere.json()["flowFile"]["clusterNodeId"] == "n2"
    status, content, answer = _content(api_a, f"/api/v1/flowfile-queues/{c4}/flowfiles/{summaries[0]['uuid']}"
                                              f"/content?clusterNodeId=n1", HTTP_RANGE="bytes=0-2")
    assert (status, content) == (206, TEXT.replace("o", "0").encode()[:3])

    viewer = token_client(tenant_a.member(root_policies=[VIEW]))
    assert viewer.post(f"/api/v1/flowfile-queues/{c4}/listing-requests").status_code == 403
    stranger = token_client(tenant_b.admin())
    assert stranger.post(f"/api/v1/flowfile-queues/{c4}/listing-requests").status_code == 404
    assert stranger.get(summaries[0]["uri"]).status_code == 404
    data_viewer = token_client(tenant_a.member(root_policies=[VIEW_DATA]))
    assert data_viewer.post(f"/api/v1/flowfile-queues/{c4}/drop-requests").status_code == 403

    drop = api_a.post(f"/api/v1/flowfile-queues/{c4}/drop-requests")
    assert drop.status_code == 202, drop.json()
    dropped = drop.json()["dropRequest"]
    assert dropped["finished"] and (dropped["originalCount"], dropped["droppedCount"], dropped["currentCount"]) == (
        2, 2, 0)
    assert dropped["dropped"] == f"2 / {2 * len(TEXT)} B" and len(dropped["nodeResults"]) == 2
    assert inspected.queued("n1", c4) == inspected.queued("n2", c4) == 0
    assert inspected.queued("n1", inspected.b["conn"].pk) == 1, "B's queue is untouched"
    drops = inspected.events("n1", event_type=E.DROP, component_id=c4)
    assert drops and "emptied by alice" in drops[-1].details
    assert api_a.get(summaries[0]["uri"]).status_code == 404


@pytest.mark.parametrize("policies, expected", [
    # query, event, content, replay, listing, queued FlowFile, drop
    ((), (403, 403, 403, 403, 403, 403, 403)),
    (("g:" + QUERY_PROVENANCE,), (201, 403, 403, 403, 403, 403, 403)),
    ((VIEW_PROVENANCE,), (403, 200, 403, 403, 403, 403, 403)),
    ((VIEW_PROVENANCE, VIEW_DATA), (403, 200, 200, 403, 202, 200, 403)),
    ((VIEW_PROVENANCE, MODIFY_DATA), (403, 200, 403, 201, 403, 403, 202)),
])
def test_the_permission_matrix(inspected, tenant_a, policies, expected):
    user = tenant_a.member(global_policies=[p[2:] for p in policies if p.startswith("g:")],
                           root_policies=[p for p in policies if not p.startswith("g:")])
    api = token_client(user)
    modified = inspected.event("n2", E.CONTENT_MODIFIED, "rewrite")
    c4 = inspected.id("c4")
    queued = inspected.nodes["n2"].node.controller.queue(c4)
    uuid = next(iter(queued.peek(1))).uuid
    answers = (
        api.post(QUERIES, {}, format="json"),
        api.get(f"{EVENTS}/n2:{modified.event_id}"),
        api.get(f"{EVENTS}/n2:{modified.event_id}/content/output"),
        api.post(f"{EVENTS}/replays", {"eventId": f"n2:{modified.event_id}"}, format="json"),
        api.post(f"/api/v1/flowfile-queues/{c4}/listing-requests"),
        api.get(f"/api/v1/flowfile-queues/{c4}/flowfiles/{uuid}?clusterNodeId=n2"),
        api.post(f"/api/v1/flowfile-queues/{c4}/drop-requests"),
    )
    assert tuple(answer.status_code for answer in answers) == expected


def test_a_node_that_does_not_answer_makes_the_result_partial_and_is_named(inspected, api_a, tmp_path, redis_server):
    InProcessNode("n3", tmp_path / "n3", redis_server.port, ClusterKeys("default")).register()  # no process answers
    started = time.monotonic()
    body = query(api_a)
    assert body["state"] == "done" and body["partial"]
    assert body["nodes"] == {"asked": ["n1", "n2", "n3"], "answered": ["n1", "n2"],
                             "missing": [{"node": "n3", "reason": "it did not answer within 2 s"}]}
    assert body["results"]["errors"] == ["n3 -- it did not answer within 2 s"]
    assert len(body["results"]["provenanceEvents"]) == 2 * PER_NODE
    assert time.monotonic() - started < 10
    c4 = inspected.id("c4")
    listing = api_a.post(f"/api/v1/flowfile-queues/{c4}/listing-requests").json()["listingRequest"]
    assert listing["partial"] and listing["queueSize"]["objectCount"] == 2


def test_deleting_a_running_request_stops_its_job(inspected, admin_a, tmp_path, redis_server):
    """A job waiting for a node that does not answer stops within half a second once its
    request is deleted, and never writes it back."""
    InProcessNode("n3", tmp_path / "n3", redis_server.port, ClusterKeys("default")).register()
    record = store.new("query", admin_a, request={"maxResults": 10}, tenants=[],
                       search={"query": {}, "scope": [inspected.id("gen")]})
    store.keep(record)
    running = threading.Thread(target=jobs.run, args=(record["id"], "query"))
    running.start()
    wait_until(lambda: (store.load(record["id"]) or {}).get("state") == "running", 5, "the job started")
    store.delete(record)
    running.join(1.5)
    assert not running.is_alive(), "the job stopped before n3's timeout (2 s)"
    assert store.load(record["id"]) is None


def test_a_read_only_token_searches_but_does_not_replay(inspected, admin_a):
    _, secret = ApiToken.issue(admin_a, "reader", read_only=True)
    reader = APIClient()
    reader.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert len(query(reader)["results"]["provenanceEvents"]) == 2 * PER_NODE
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    assert reader.post(f"{EVENTS}/replays", {"eventId": f"n1:{modified.event_id}"}, format="json").status_code == 403


def test_an_export_holds_every_event_of_the_search_newest_first(inspected, api_a):
    answer = api_a.post("/api/v1/provenance-exports", {"provenanceExport": {"format": "CSV"}}, format="json")
    assert answer.status_code == 202, answer.json()
    export = answer.json()["provenanceExport"]
    assert export["state"] == "done" and export["eventCount"] == 2 * PER_NODE and not export["truncated"]
    status, content, response = _content(api_a, export["contentUri"])
    lines = content.decode().splitlines()
    assert status == 200 and response["Content-Type"].startswith("text/csv") and len(lines) == 1 + 2 * PER_NODE
    assert lines[0].startswith("id,eventId,clusterNodeId,eventTime")
    listed = [line.split(",")[0] for line in lines[1:]]
    queried = [event["id"] for event in query(api_a)["results"]["provenanceEvents"]]
    assert listed == queried, "the same events, in the same order, as a query"

    two = api_a.post("/api/v1/provenance-exports", {"provenanceExport": {"format": "JSON", "maxEvents": 2}},
                     format="json").json()["provenanceExport"]
    assert (two["eventCount"], two["truncated"]) == (2, True)
    import json

    events = json.loads(_content(api_a, two["contentUri"])[1])
    assert [event["id"] for event in events] == queried[:2] and events[0]["componentName"]


def test_an_export_larger_than_a_node_answers_at_once_reads_it_window_by_window(inspected, api_a, monkeypatch):
    """With at most 3 events an answer, each node's 11 events are read by halving time windows:
    every event once, newest first, as the query orders them."""
    from flowsite.provenance.jobs import export

    monkeypatch.setattr(export, "PAGE", 3)
    answer = api_a.post("/api/v1/provenance-exports", {"provenanceExport": {"format": "JSON"}}, format="json")
    body = answer.json()["provenanceExport"]
    assert (body["state"], body["eventCount"], body["truncated"]) == ("done", 2 * PER_NODE, False), body
    import json

    exported = [event["id"] for event in json.loads(_content(api_a, body["contentUri"])[1])]
    assert exported == [event["id"] for event in query(api_a)["results"]["provenanceEvents"]]


def test_a_token_narrowed_to_one_tenant_reaches_that_tenant_only(inspected, tenant_a, tenant_b):
    from flowsite.tenancy.models import Membership

    both = tenant_a.admin()
    Membership.objects.create(tenant=tenant_b.tenant, user=both)
    for action in access.GLOBAL_ACTIONS:
        access.grant_global(tenant_b.tenant, action, user=both)
    for action in access.COMPONENT_ACTIONS:
        access.grant(tenant_b.root, action, user=both)
    components = {str(inspected.b["gen"].pk), *(inspected.id(name) for name in ("gen", "rewrite", "split", "merge"))}
    assert {event["componentId"] for event in query(token_client(both))["results"]["provenanceEvents"]} == components

    _, secret = ApiToken.issue(both, "b only", tenant=tenant_b.tenant)
    narrowed = APIClient()
    narrowed.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    seen = query(narrowed)["results"]["provenanceEvents"]
    assert {event["componentId"] for event in seen} == {str(inspected.b["gen"].pk)}
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    assert narrowed.get(f"{EVENTS}/n1:{modified.event_id}").status_code == 404
    assert narrowed.post(f"/api/v1/flowfile-queues/{inspected.id('c4')}/listing-requests").status_code == 404


def test_a_search_may_name_one_of_the_user_s_tenants(inspected, tenant_a, tenant_b):
    from flowsite.tenancy.models import Membership

    both = tenant_a.admin()
    Membership.objects.create(tenant=tenant_b.tenant, user=both)
    access.grant_global(tenant_b.tenant, QUERY_PROVENANCE, user=both)
    access.grant(tenant_b.root, VIEW_PROVENANCE, user=both)
    api = token_client(both)
    seen = query(api, tenant=str(tenant_b.tenant.pk))["results"]["provenanceEvents"]
    assert {event["componentId"] for event in seen} == {str(inspected.b["gen"].pk)}
    in_b = _lineage(api, lineageRequestType="FLOWFILE", uuid=seen[0]["flowFileUuid"], tenant=str(tenant_b.tenant.pk))
    assert [node["type"] for node in in_b["results"]["nodes"]].count("EVENT") == 1
    in_a = _lineage(api, lineageRequestType="FLOWFILE", uuid=seen[0]["flowFileUuid"], tenant=str(tenant_a.tenant.pk))
    assert in_a["request"]["tenant"] == str(tenant_a.tenant.pk)
    assert not [node for node in in_a["results"]["nodes"] if node["type"] == "EVENT"], "B's FlowFile has no event in A"
    stranger = TenantWorld("Initech").tenant
    answer = api.post(QUERIES, {"provenance": {"request": {"tenant": str(stranger.pk)}}}, format="json")
    assert answer.status_code == 404


def test_each_content_request_is_recorded_as_a_download_by_its_requester(inspected, api_a, settings):
    modified = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    path = f"{EVENTS}/n1:{modified.event_id}/content/output"
    settings.FLOWSITE_CONTENT_MAX_BYTES = 1 << 20
    assert _content(api_a, path)[0] == 200
    assert _content(api_a, path, HTTP_RANGE="bytes=4-6")[0] == 206
    downloads = inspected.events("n1", event_type=E.DOWNLOAD)
    assert [(event.component_id, event.flowfile_uuid, event.content_claim) for event in downloads] == [
        (inspected.id("rewrite"), modified.flowfile_uuid, modified.content_claim)] * 2, "one event a request"
    assert downloads[0].details == (f"Download of Output Content requested by alice for Provenance Event "
                                    f"{modified.event_id}")
    assert downloads[0].transit_uri == f"http://testserver{path}"

    c4 = inspected.id("c4")
    [queued] = inspected.nodes["n2"].node.controller.queue(c4).peek(1)
    answer = api_a.get(f"/api/v1/flowfile-queues/{c4}/flowfiles/{queued.uuid}/content?clusterNodeId=n2")
    assert answer.status_code == 200 and b"".join(answer.streaming_content) == TEXT.replace("o", "0").encode()
    [download] = inspected.events("n2", event_type=E.DOWNLOAD)
    assert (download.component_id, download.flowfile_uuid, download.details) == (
        c4, queued.uuid, f"Download of Content requested by alice for FlowFile {queued.uuid} in connection {c4}")
