"""The provenance and queue pages' scripts in a real browser against a stand-in API (Playwright
answers /api/v1/… itself): what the scripts send, and what they show of every answer the
contract allows — progress, pages of results, a partial result, failures, the content viewer's
views. The same pages against real nodes: test_provenance_browser.py."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from playwright.sync_api import Route, expect

from tests.flowsite.browser import chromium_page, log_in

pytestmark = pytest.mark.browser


def events(count: int) -> list[dict]:
    return [{"id": f"n1:{count - i}", "eventId": count - i, "eventTime": f"08/22/2026 10:{i // 60:02d}:{i % 60:02d}.000 UTC",
             "eventType": "DROP" if i % 2 else "CREATE", "flowFileUuid": f"ff-{i}", "fileSize": "10 bytes",
             "componentId": "c-1", "componentName": "gen", "componentType": "GenerateFlowFile", "clusterNodeId": "n1"}
            for i in range(count)]


def request_resource(kind: str, id_: str, *, finished: bool, percent: int, partial: bool = False, **extra) -> dict:
    nodes = {"asked": ["n1", "n2"], "answered": ["n1"] + ([] if partial or not finished else ["n2"]),
             "missing": [{"node": "n2", "reason": "did not answer within 10 s"}] if partial else []}
    return {"id": id_, "uri": f"/api/v1/{kind}/{id_}", "percentCompleted": percent, "finished": finished,
            "state": "done" if finished else "running", "failureReason": None, "partial": partial, "nodes": nodes,
            **extra}


class FakeApi:
    """Answers the page's API calls from ``answers``: {(method, path regex): callable(route, body)}."""

    def __init__(self, page, answers):
        self.calls: list[tuple[str, str, object]] = []
        self.answers = answers
        page.route(re.compile(r".*/api/v1/.*"), self.handle)

    def handle(self, route: Route) -> None:
        request = route.request
        path = re.sub(r"^https?://[^/]+", "", request.url)
        body = json.loads(request.post_data) if request.post_data else None
        self.calls.append((request.method, path, body))
        for (method, pattern), answer in self.answers.items():
            if method == request.method and re.fullmatch(pattern, path):
                return answer(route, body)
        route.fulfill(status=404, json={"status": 404, "message": f"nothing at {path}"})


def answer(status: int, body) -> callable:
    return lambda route, _: route.fulfill(status=status, json=body)


def test_a_search_shows_its_progress_then_pages_of_events_and_says_what_is_missing(live_server, transactional_db, admin_a):
    finished = request_resource("provenance", "q1", finished=True, percent=100, partial=True,
                                results={"provenanceEvents": events(120), "total": "120", "totalCount": 120,
                                         "oldestEvent": "08/21/2026 00:00:00.000 UTC"})
    polls = itertools.chain([request_resource("provenance", "q1", finished=False, percent=50)], itertools.repeat(finished))
    exported = iter([request_resource("provenance-exports", "x1", finished=False, percent=0),
                     request_resource("provenance-exports", "x1", finished=True, percent=100, eventCount=120,
                                      contentUri="http://testserver/api/v1/provenance-exports/x1/content")])
    with chromium_page() as page:
        api = FakeApi(page, {
            ("POST", "/api/v1/provenance"): answer(201, {"provenance": request_resource("provenance", "q1", finished=False, percent=0)}),
            ("GET", "/api/v1/provenance/q1"): lambda route, _: route.fulfill(json={"provenance": next(polls)}),
            ("DELETE", "/api/v1/provenance/q1"): answer(200, {}),
            ("POST", "/api/v1/provenance-exports"): answer(202, {"provenanceExport": next(exported)}),
            ("GET", "/api/v1/provenance-exports/x1"): lambda route, _: route.fulfill(json={"provenanceExport": next(exported)}),
            ("DELETE", "/api/v1/provenance-exports/x1"): answer(200, {}),
        })
        page.goto(f"{live_server.url}/provenance/?componentId=c-1&exclude=componentId&attributeName=filename&attributeValue=a*")
        log_in_if_asked(page)
        expect(page.locator("#results-total")).to_have_text("120")
        posted = next(body for method, path, body in api.calls if (method, path) == ("POST", "/api/v1/provenance"))
        assert posted == {"provenance": {"request": {"maxResults": 1000, "incrementalResults": False, "searchTerms": {
            "ProcessorID": {"value": "c-1", "inverse": True}, "filename": {"value": "a*", "inverse": False}}}}}
        expect(page.locator("#search-progress")).to_contain_text("n2: did not answer — did not answer within 10 s")
        expect(page.locator("#partial-note")).to_contain_text("Partial result: n2 (did not answer within 10 s)")
        rows = page.locator("#events-table tbody tr")
        expect(rows).to_have_count(50)
        expect(rows.first).to_contain_text("ff-0")
        expect(page.locator("[data-showing]")).to_have_text("Showing 1–50 of 120")
        page.get_by_role("button", name="Next").click()
        page.get_by_role("button", name="Next").click()
        expect(rows).to_have_count(20)
        expect(page.locator("[data-showing]")).to_have_text("Showing 101–120 of 120")
        expect(rows.first.get_by_role("link", name="Details")).to_have_attribute("href", "/provenance/events/n1%3A20/")
        page.locator("th[data-sort-key=flowFileUuid] button").click()
        expect(page.locator("th[aria-sort=ascending]")).to_have_attribute("data-sort-key", "flowFileUuid")
        expect(rows.first).to_contain_text("ff-0")
        expect(page.locator("[data-showing]")).to_have_text("Showing 1–50 of 120")
        page.locator("th[data-sort-key=flowFileUuid] button").click()
        expect(rows.first).to_contain_text("ff-119")

        page.get_by_role("button", name="CSV").click()
        expect(page.get_by_role("link", name="Download CSV")).to_have_attribute(
            "href", "http://testserver/api/v1/provenance-exports/x1/content")
        expect(page.locator("#export-progress")).to_contain_text("The CSV export of 120 event(s) is ready")
        posted = next(body for method, path, body in api.calls if (method, path) == ("POST", "/api/v1/provenance-exports"))
        assert posted == {"provenanceExport": {"format": "CSV", "maxEvents": 1000, "request": {"searchTerms": {
            "ProcessorID": {"value": "c-1", "inverse": True}, "filename": {"value": "a*", "inverse": False}}}}}

        page.get_by_label("Event type", exact=True).fill("DROP")
        page.get_by_role("button", name="Search").click()
        expect(page).to_have_url(re.compile(r"eventType=DROP"))
        assert ("DELETE", "/api/v1/provenance/q1", None) in api.calls, "a new search forgets the previous request"
        expect(page.locator("#search-progress")).to_contain_text("Found 120 event(s).")


def log_in_if_asked(page) -> None:
    if "/login/" in page.url:
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill("correct horse battery staple")
        page.get_by_role("button", name="Log in").click()


def content(body: bytes, *, mime: str = "application/octet-stream", size: int | None = None):
    """A content endpoint's answer to the viewer's Range request (206 with the total size)."""
    def fulfill(route, _):
        wanted = re.match(r"bytes=(\d+)-(\d+)", route.request.headers.get("range", ""))
        assert wanted, "the viewer asks for its first chunk by an HTTP range"
        first, last = int(wanted[1]), int(wanted[2])
        chunk = body[first:last + 1]
        route.fulfill(status=206, body=chunk, headers={
            "Content-Type": mime, "Content-Range": f"bytes {first}-{first + len(chunk) - 1}/{size or len(body)}"})
    return fulfill


def test_a_queue_listing_opens_a_flowfile_with_its_content(live_server, transactional_db, admin_a, tenant_a):
    from flowsite.flows.models import Connection
    from tests.flowsite.portal.conftest import add_processor
    gen, log = add_processor(tenant_a.root, "GenerateFlowFile", "gen"), add_processor(tenant_a.root, "LogAttribute", "log")
    conn = Connection.objects.create(parent=tenant_a.root, tenant=tenant_a.tenant, source=gen, destination=log,
                                     selected_relationships=["success"])
    base = f"/api/v1/flowfile-queues/{conn.pk}"
    summaries = [{"uuid": f"u-{i}", "filename": f"f{i}.json", "position": i + 1, "size": 2048, "queuedDuration": 61_000,
                  "lineageDuration": 3_723_004, "penaltyExpiresIn": 0, "penalized": i == 1, "clusterNodeId": "n1"}
                 for i in range(3)]
    listing = request_resource(f"flowfile-queues/{conn.pk}/listing-requests", "l1", finished=True, percent=100,
                               queueSize={"objectCount": 7, "byteCount": 14_336}, flowFileSummaries=summaries,
                               sourceRunning=True, destinationRunning=False)
    document = json.dumps({"name": "x", "list": [1, 2]}).encode()
    flowfile = {**summaries[0], "attributes": {"filename": "f0.json", "mime.type": "application/json", "uuid": "u-0"},
                "contentClaimContainer": "default", "contentClaimSection": "1", "contentClaimIdentifier": "1-1",
                "contentClaimOffset": 0, "contentClaimFileSize": "20 bytes"}
    with chromium_page() as page:
        FakeApi(page, {
            ("POST", f"{base}/listing-requests"): answer(202, {"listingRequest": listing}),
            ("DELETE", f"{base}/listing-requests/l1"): answer(200, {}),
            ("GET", f"{base}/flowfiles/u-0\\?clusterNodeId=n1"): answer(200, {"flowFile": flowfile}),
            ("GET", f"{base}/flowfiles/u-0/content\\?clusterNodeId=n1"): content(document, mime="application/json"),
        })
        page.goto(f"{live_server.url}/connections/{conn.pk}/queue/")
        log_in_if_asked(page)
        expect(page.locator("#queue-totals")).to_have_text("7 FlowFile(s), 14 KB, queued on every node; 3 listed.")
        expect(page.locator("#listing-note")).to_contain_text("The source is running")
        rows = page.locator("#flowfiles-table tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.nth(0)).to_contain_text("00:01:01.000")
        expect(rows.nth(0)).to_contain_text("01:02:03.004")
        expect(rows.nth(1)).to_contain_text("penalized")

        rows.nth(0).get_by_role("button", name="Details").click()
        dialog = page.get_by_role("dialog")
        expect(dialog).to_contain_text("mime.type")
        viewer = dialog.locator(".content-viewer")
        expect(viewer).to_have_attribute("data-view", "json")
        expect(viewer.locator("pre")).to_have_text(json.dumps({"name": "x", "list": [1, 2]}, indent=2))
        viewer.get_by_role("button", name="Hex").click()
        expect(viewer.locator("pre")).to_contain_text('00000000  7b 22 6e 61 6d 65 22 3a  20 22 78 22 2c 20 22 6c  |{"name": "x", "l|')
        expect(viewer.get_by_role("link", name="Download")).to_have_attribute(
            "href", f"{base}/flowfiles/u-0/content?clusterNodeId=n1")
        dialog.get_by_role("button", name="Close").click()
        expect(dialog).to_be_hidden()


def lineage_node(id_: str, kind: str, uuid: str, millis: int, event_type: str | None = None, **extra) -> dict:
    return {"id": id_, "type": kind, "flowFileUuid": uuid, "parentUuids": [], "childUuids": [], "eventType": event_type,
            "millis": millis, "timestamp": f"08/22/2026 10:00:0{millis % 10}.000 UTC", "clusterNodeIdentifier": "n1",
            **extra}


def test_a_lineage_graph_in_time_order_whose_events_open_and_expand(live_server, transactional_db, admin_a):
    first = {"nodes": [lineage_node("ff-1", "FLOWFILE", "ff-1", 1),
                       lineage_node("n1:1", "EVENT", "ff-1", 1, "CREATE"),
                       lineage_node("n1:2", "EVENT", "ff-1", 2, "FORK", childUuids=["ff-2"]),
                       lineage_node("n1:3", "EVENT", "ff-1", 3, "UNKNOWN")],
             "links": [{"sourceId": "ff-1", "targetId": "n1:1", "flowFileUuid": "ff-1"},
                       {"sourceId": "n1:1", "targetId": "n1:2", "flowFileUuid": "ff-1"},
                       {"sourceId": "n1:2", "targetId": "n1:3", "flowFileUuid": "ff-1"}]}
    children = {"nodes": [lineage_node("n1:2", "EVENT", "ff-1", 2, "FORK", childUuids=["ff-2"]),
                          lineage_node("ff-2", "FLOWFILE", "ff-2", 2),
                          lineage_node("n1:4", "EVENT", "ff-2", 4, "DROP")],
                "links": [{"sourceId": "n1:2", "targetId": "ff-2", "flowFileUuid": "ff-2"},
                          {"sourceId": "ff-2", "targetId": "n1:4", "flowFileUuid": "ff-2"}]}
    answers = iter([first, children])
    with chromium_page() as page:
        api = FakeApi(page, {
            ("POST", "/api/v1/provenance/lineage"): lambda route, _: route.fulfill(status=201, json={"lineage": request_resource(
                "provenance/lineage", "g1", finished=True, percent=100, results=next(answers))}),
            ("DELETE", "/api/v1/provenance/lineage/g1"): answer(200, {}),
            ("GET", "/api/v1/provenance-events/n1%3A2"): answer(200, {"provenanceEvent": {
                "id": "n1:2", "eventType": "FORK", "eventTime": "08/22/2026 10:00:02.000 UTC", "componentName": "split",
                "componentType": "SplitText", "fileSize": "10 bytes"}}),
        })
        page.goto(f"{live_server.url}/provenance/flowfiles/ff-1/lineage/")
        log_in_if_asked(page)
        expect(page.locator("#lineage-app")).to_have_attribute("data-loaded", "true")
        assert api.calls[0][2] == {"lineage": {"request": {"lineageRequestType": "FLOWFILE", "uuid": "ff-1"}}}
        heights = page.evaluate("""() => Object.fromEntries(window.flowsiteLineage.cy.nodes().map((n) => [n.id(), n.position().y]))""")
        assert heights["ff-1"] < heights["n1:1"] < heights["n1:2"] < heights["n1:3"], "oldest at the top"
        expect(page.locator("#lineage-count")).to_have_text("3")

        page.locator("#lineage-list summary").click()
        page.get_by_role("button", name=re.compile("Select the UNKNOWN event")).click()
        expect(page.locator("#lineage-panel")).to_contain_text("its details are hidden")
        page.get_by_role("button", name=re.compile("Select the FORK event")).click()
        panel = page.locator("#lineage-panel")
        expect(panel).to_contain_text("SplitText")
        expect(panel.get_by_role("link", name="Details")).to_have_attribute("href", "/provenance/events/n1%3A2/")
        panel.get_by_role("button", name="Expand children (1)").click()
        expect(page.locator("#lineage-count")).to_have_text("4")
        assert api.calls[-1][2] == {"lineage": {"request": {"lineageRequestType": "CHILDREN", "eventId": "n1:2",
                                                            "clusterNodeId": "n1"}}}
        heights = page.evaluate("""() => Object.fromEntries(window.flowsiteLineage.cy.nodes().map((n) => [n.id(), n.position().y]))""")
        assert heights["n1:2"] < heights["ff-2"] < heights["n1:4"]
        assert ("DELETE", "/api/v1/provenance/lineage/g1", None) in api.calls


def full_event(**changes) -> dict:
    event = {"id": "n1:7", "eventId": 7, "eventTime": "08/22/2026 10:00:07.000 UTC", "eventDuration": 3,
             "lineageDuration": 1200, "eventType": "CONTENT_MODIFIED", "flowFileUuid": "ff-7", "fileSize": "2 MB",
             "fileSizeBytes": 2 << 20, "clusterNodeId": "n1", "groupId": None, "componentId": "c-1",
             "componentType": "ReplaceText", "componentName": "replace", "sourceSystemFlowFileId": None,
             "alternateIdentifierUri": None, "relationship": "success", "details": None, "transitUri": None,
             "parentUuids": [], "childUuids": [], "contentEqual": False,
             "attributes": [{"name": "filename", "value": "a.xml", "previousValue": "a.xml"},
                            {"name": "mime.type", "value": "application/xml", "previousValue": None},
                            {"name": "stage", "value": "2", "previousValue": "1"}],
             "inputContentAvailable": False, "inputContentClaimContainer": "default", "inputContentClaimSection": "1",
             "inputContentClaimIdentifier": "1-1", "inputContentClaimOffset": 0, "inputContentClaimFileSize": "5 bytes",
             "outputContentAvailable": True, "outputContentClaimContainer": "default", "outputContentClaimSection": "1",
             "outputContentClaimIdentifier": "1-2", "outputContentClaimOffset": 5, "outputContentClaimFileSize": "2 MB",
             "replayAvailable": True, "replayExplanation": None, "sourceConnectionIdentifier": "conn-1"}
    return {**event, **changes}


def test_an_event_s_content_views_and_replay(live_server, transactional_db, admin_a, monkeypatch):
    from flowsite.portal.views import events as event_pages
    shown = {"n1:7": full_event()}
    monkeypatch.setattr(event_pages, "_event_or_404", lambda request, event_id: shown[event_id])
    document = b"<?xml version='1.0'?><root><item id=\"1\">one</item><item/></root>" + b" " * (2 << 20)
    replays = iter([answer(201, {"provenanceEvent": full_event(id="n1:9", eventType="REPLAY", parentUuids=["ff-7"],
                                                             childUuids=["ff-9"])}),
                    answer(409, {"status": 409, "message": "the source connection conn-1 is no longer in the flow"})])
    with chromium_page() as page:
        api = FakeApi(page, {
            ("GET", "/api/v1/provenance-events/n1:7/content/input"): answer(404, {
                "status": 404, "message": "content no longer available: it was removed from the content repository"}),
            ("GET", "/api/v1/provenance-events/n1:7/content/output"): content(document, mime="application/xml"),
            ("POST", "/api/v1/provenance-events/replays"): lambda route, body: next(replays)(route, body),
        })
        page.goto(f"{live_server.url}/provenance/events/n1:7/")
        log_in_if_asked(page)
        expect(page.locator("h1")).to_have_text("CONTENT_MODIFIED event")
        attributes = page.locator("table.attributes tbody tr")
        expect(attributes).to_have_count(3)
        page.get_by_label("Only show the modified ones").check()
        expect(page.locator("table.attributes tbody tr:visible")).to_have_count(2)
        expect(page.locator("tr[data-change=modified]")).to_contain_text("1")

        expect(page.locator("#claim-input .content-viewer")).to_have_attribute("data-state", "unavailable")
        expect(page.locator("#claim-input")).to_contain_text(
            "content no longer available: it was removed from the content repository")
        page.locator("#claim-output").get_by_role("button", name="View").click()
        viewer = page.locator("#claim-output .content-viewer")
        expect(viewer).to_have_attribute("data-view", "xml")
        expect(viewer.locator(".viewer-status")).to_have_text(
            "Showing the first 1 MB of 2 MB: download it for the rest.")
        expect(viewer.locator("pre")).to_contain_text('<root>\n  <item id="1">one</item>\n  <item/>\n</root>')
        viewer.get_by_role("button", name="Text").click()
        expect(viewer).to_have_attribute("data-view", "text")

        page.get_by_role("button", name="Replay").click()
        expect(page.locator("#replay-done")).to_contain_text("ff-9")
        expect(page.get_by_role("link", name="Open the REPLAY event n1:9")).to_have_attribute(
            "href", "/provenance/events/n1%3A9/")
        assert api.calls[-1][2] == {"eventId": "n1:7"}
        page.get_by_role("button", name="Replay").click()
        expect(page.locator("#replay-refused")).to_have_text(
            "The node refused the replay: the source connection conn-1 is no longer in the flow")

        shown["n1:8"] = full_event(id="n1:8", attributes=None, replayAvailable=False,
                                   replayExplanation="you may not view the data of this component (the 'view_data' policy)")
        page.goto(f"{live_server.url}/provenance/events/n1:8/")
        expect(page.locator("#no-data-note")).to_be_visible()
        expect(page.locator("#event-content")).to_have_count(0)
        expect(page.locator("#replay-explanation")).to_contain_text("the 'view_data' policy")
        expect(page.get_by_role("button", name="Replay")).to_have_count(0)


def test_refusals_and_failures_are_said_where_the_work_was_asked(live_server, transactional_db, admin_a, tenant_a):
    from flowsite.flows.models import Connection
    from tests.flowsite.portal.conftest import add_processor
    gen, log = add_processor(tenant_a.root, "GenerateFlowFile", "gen"), add_processor(tenant_a.root, "LogAttribute", "log")
    conn = Connection.objects.create(parent=tenant_a.root, tenant=tenant_a.tenant, source=gen, destination=log,
                                     selected_relationships=["success"])
    failed = {**request_resource("l", "l1", finished=True, percent=100), "state": "failed",
              "failureReason": "the jobs' worker stopped"}
    with chromium_page() as page:
        FakeApi(page, {
            ("POST", "/api/v1/provenance"): answer(503, {"status": 503, "message": "the cluster's Redis cannot be reached"}),
            ("POST", f"/api/v1/flowfile-queues/{conn.pk}/listing-requests"): answer(202, {"listingRequest": failed}),
            ("POST", "/api/v1/provenance/lineage"): answer(403, {
                "status": 403, "message": "you may not query provenance (the 'query_provenance' policy of this tenant)"}),
        })
        page.goto(f"{live_server.url}/provenance/")
        log_in_if_asked(page)
        searched = page.locator("#search-progress")
        expect(searched).to_have_text(re.compile("Searching the nodes failed: the cluster's Redis cannot be reached"))
        expect(searched).to_have_attribute("role", "alert")
        expect(page.locator("#search-results")).to_be_hidden()
        page.get_by_label("From").fill("2026-08-22T10:00:00")
        page.get_by_label("To").fill("2026-08-21T10:00:00")
        page.get_by_role("button", name="Search").click()
        expect(page).to_have_url(re.compile(r"startDate=2026-08-22T10%3A00&endDate=2026-08-21T10%3A00"))

        page.goto(f"{live_server.url}/connections/{conn.pk}/queue/")
        expect(page.locator("#listing-progress")).to_contain_text("Listing the queue failed: the jobs' worker stopped")

        page.goto(f"{live_server.url}/provenance/flowfiles/ff-1/lineage/")
        expect(page.locator("#lineage-progress")).to_contain_text(
            "Computing the lineage failed: you may not query provenance (the 'query_provenance' policy of this tenant)")


def test_the_canvas_s_panels_link_a_processor_s_provenance_and_a_connection_s_queue(live_server, transactional_db,
                                                                                    admin_a, tenant_a):
    from flowsite.flows.models import Connection
    from tests.flowsite.browser import canvas_settled, click_node
    from tests.flowsite.portal.conftest import add_processor
    gen = add_processor(tenant_a.root, "GenerateFlowFile", "gen", position_x=100, position_y=100)
    log = add_processor(tenant_a.root, "LogAttribute", "log", position_x=100, position_y=400)
    conn = Connection.objects.create(parent=tenant_a.root, tenant=tenant_a.tenant, source=gen, destination=log,
                                     selected_relationships=["success"])
    with chromium_page() as page:
        page.goto(f"{live_server.url}/groups/{tenant_a.root.pk}/canvas")
        log_in_if_asked(page)
        canvas_settled(page)
        click_node(page, "gen")
        expect(page.locator("#side-panel").get_by_role("link", name="Provenance")).to_have_attribute(
            "href", f"/provenance/?componentId={gen.pk}")
        page.evaluate("(id) => { const {cy} = window.flowsiteCanvas; cy.$(':selected').unselect(); cy.getElementById(id).select(); }",
                      str(conn.pk))
        expect(page.locator("#side-panel").get_by_role("link", name="List queue")).to_have_attribute(
            "href", f"/connections/{conn.pk}/queue/")
