"""Provenance and queues in the portal, in a real browser, against two real in-process nodes and
a real Redis (``tests.flowsite.provenance.conftest.inspected``: tenant A's text flow, split and
merged, has run once on each node). What issue 15 asks of the portal: search, open an event,
view its content, open its lineage and expand it, replay it and reach the REPLAY event; list a
queue, open a queued FlowFile's content, and empty the queue with a drop request. Then what a
user meets less often: a partial result naming the node that did not answer, an export
downloaded, JSON content formatted, an event that cannot be replayed saying why, and the
canvas's links to a processor's provenance and a connection's queue."""

from __future__ import annotations

import csv
import io
import time

import pytest
from playwright.sync_api import Page, expect

from engine.cluster.keys import ClusterKeys
from engine.provenance import ProvenanceEvent, ProvenanceEventType as E
from flowsite.cluster import redis as cluster_redis
from flowsite.provenance import store
from tests.cluster_nodes import InProcessNode
from tests.flowsite.browser import canvas_settled, chromium_page, log_in
from tests.flowsite.provenance.conftest import TEXT, cluster_settings, eager_tasks, inspected  # noqa: F401 (fixtures)
from tests.processes import wait_until

pytestmark = pytest.mark.browser

REWRITTEN = TEXT.replace("o", "0")


def kept_requests(user) -> int:
    """How many request resources ``user`` keeps (``flowsite.provenance.store``)."""
    return cluster_redis.client().zcard(store._owner_key(user.pk))


def lineage_click(page: Page, node_id: str) -> None:
    """Click the lineage graph's node ``node_id`` where it is drawn."""
    x, y = page.evaluate("""(id) => {
        const {cy} = window.flowsiteLineage, node = cy.getElementById(id), box = cy.container().getBoundingClientRect();
        const point = node.renderedPosition();
        return [box.left + point.x, box.top + point.y];
    }""", node_id)
    page.mouse.move(x, y)
    page.mouse.click(x, y)


def test_search_an_event_its_content_lineage_and_replay(live_server, transactional_db, inspected, admin_a):
    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")
        page.get_by_role("link", name="Provenance", exact=True).click()
        expect(page.locator("#results-total")).not_to_be_empty()  # opening the page searched already

        page.get_by_label("Component name", exact=True).fill("rewrite")
        page.get_by_role("button", name="Search").click()
        rows = page.locator("#events-table tbody tr")
        expect(rows).to_have_count(2)  # one FlowFile rewritten on each node
        expect(page.locator("#search-progress")).to_have_text("Found 2 event(s). Every node asked answered (n1, n2).")
        expect(rows.first).to_contain_text("CONTENT_MODIFIED")

        rows.first.get_by_role("link", name="Details").click()
        expect(page.locator("h1")).to_have_text("CONTENT_MODIFIED event")
        expect(page.locator("#event-details")).to_contain_text("ReplaceText")
        expect(page.locator("#event-attributes")).to_contain_text("words.txt")
        page.locator("#claim-input").get_by_role("button", name="View").click()
        expect(page.locator("#claim-input pre")).to_have_text(TEXT)
        page.locator("#claim-output").get_by_role("button", name="View").click()
        output = page.locator("#claim-output .content-viewer")
        expect(output).to_have_attribute("data-view", "text")
        expect(output.locator("pre")).to_have_text(REWRITTEN)
        output.get_by_role("button", name="Hex").click()
        expect(output.locator("pre")).to_contain_text("00000000  30 6e 65 0a 74 77 30 0a  74 68 72 65 65 0a")
        event_page = page.url

        page.get_by_role("link", name="Lineage", exact=True).click()
        app = page.locator("#lineage-app")
        expect(app).to_have_attribute("data-loaded", "true")
        expect(page.locator("#lineage-progress")).to_contain_text("node(s) added")
        fork = page.evaluate("window.flowsiteLineage.cy.nodes('[eventType = \"FORK\"]')[0].id()")
        lineage_click(page, fork)
        panel = page.locator("#lineage-panel")
        expect(panel.locator("h2")).to_have_text("FORK event")
        expect(panel).to_contain_text("SplitText")
        panel.get_by_role("button", name="Expand children (3)").click()
        expect(page.locator("#lineage-progress")).to_contain_text("Finding the children: 0 node(s) added")
        expect(panel.get_by_role("link", name="Details")).to_have_attribute("href", f"/provenance/events/{fork.replace(':', '%3A')}/")

        page.goto(event_page)
        page.get_by_role("button", name="Replay").click()
        done = page.locator("#replay-done")
        expect(done).to_contain_text("was queued on the source connection")
        node = done.get_by_role("link").get_attribute("href").split("/events/")[1].split("%3A")[0]
        done.get_by_role("link").click()  # opens at once, before the node's rollover
        expect(page.locator("h1")).to_have_text("REPLAY event")
        expect(page.locator("#event-attributes")).to_contain_text("flowfile.replay")
        wait_until(lambda: inspected.queued(node, inspected.a["c4"].pk) == 2, 20, "the replay reached c4")
        wait_until(lambda: kept_requests(admin_a) == 0, 10, "each page left forgot its requests")


def test_a_lineage_whose_layout_moves_an_event_down_is_drawn(live_server, transactional_db, inspected, admin_a):
    """An event reached from the root both directly and through another event is moved a depth
    down by the layout (edges point down, in time order): the graph is drawn, not failed."""
    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")
        page.goto(f"{live_server.url}/provenance/flowfiles/no-such-flowfile/lineage/")
        expect(page.locator("#lineage-app")).to_have_attribute("data-loaded", "true")
        rows = page.evaluate("""() => {
            const graph = window.flowsiteLineage, event = (id, millis) => ({id, type: "EVENT", eventType: "ROUTE", millis});
            const added = graph.merge({nodes: [event("r", 1), event("a", 2), event("b", 3), event("c", 4)],
                                       links: [{sourceId: "r", targetId: "a"}, {sourceId: "r", targetId: "b"},
                                               {sourceId: "r", targetId: "c"}, {sourceId: "a", targetId: "b"}]});
            return [added, ...["r", "a", "b"].map((id) => graph.node(id).position("y"))];
        }""")
    added, root, first, moved = rows
    assert added == 4 and root < first < moved, rows


def test_list_a_queue_open_a_flowfile_s_content_and_empty_it(live_server, transactional_db, inspected, admin_a):
    c4 = inspected.a["c4"]
    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")
        page.goto(f"{live_server.url}/connections/{c4.pk}/")
        page.get_by_role("link", name="List queue").click()
        expect(page.locator("#queue-totals")).to_contain_text("2 FlowFile(s)")
        rows = page.locator("#flowfiles-table tbody tr")
        expect(rows).to_have_count(2)  # the merged FlowFile waiting on each node
        expect(rows.first).to_contain_text("words.txt")

        rows.first.get_by_role("button", name="Details").click()
        dialog = page.get_by_role("dialog")
        expect(dialog).to_contain_text("mime.type")
        viewer = dialog.locator(".content-viewer")
        expect(viewer.locator("pre")).to_have_text(REWRITTEN)
        expect(viewer.get_by_role("link", name="Download")).to_have_attribute(
            "href", f"/api/v1/flowfile-queues/{c4.pk}/flowfiles/{rows.first.get_attribute('data-flowfile')}/content"
                    f"?clusterNodeId={rows.first.locator('td').nth(7).inner_text()}")
        dialog.get_by_role("button", name="Close").click()

        page.get_by_role("link", name="The connection").click()
        wait_until(lambda: kept_requests(admin_a) == 0, 10, "leaving the queue's page forgets its listing")
        page.get_by_role("button", name="Empty the queue on every node").click()
        emptied = page.locator("#empty-progress")
        expect(emptied).to_contain_text("Dropped 2 FlowFile(s).")
        expect(emptied.locator("li", has_text="n1: dropped 1")).to_have_count(1)
        assert inspected.queued("n1", c4.pk) == inspected.queued("n2", c4.pk) == 0


def json_event(inspected, node: str) -> int:
    """A CONTENT_MODIFIED event of A's ``rewrite`` on ``node`` whose output is a JSON document kept
    in the node's content repository; its id."""
    storage = inspected.nodes[node].node.storage
    claim = storage.content.write_bytes(b'{"name": "words", "lines": [1, 2, 3]}')
    now = int(time.time() * 1000)
    [event] = storage.provenance.register_events([ProvenanceEvent(
        E.CONTENT_MODIFIED, now, "json-ff", inspected.id("rewrite"), "ReplaceText", now, now,
        previous_attributes={"filename": "doc.json", "mime.type": "application/json"}, content_claim=claim)])
    storage.provenance.rollover()
    return event.event_id


def test_a_partial_result_an_export_formatted_json_and_an_event_that_cannot_be_replayed(
        live_server, transactional_db, inspected, admin_a, redis_server, tmp_path):
    event_id = json_event(inspected, "n1")
    join = inspected.event("n2", E.JOIN, "merge")
    silent = InProcessNode("n3", tmp_path / "n3", redis_server.port, ClusterKeys("default"))
    silent.register()  # connected, but nothing answers its commands
    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")
        page.goto(f"{live_server.url}/provenance/?componentName=rewrite")
        expect(page.locator("#events-table tbody tr")).to_have_count(3)
        expect(page.locator("#partial-note")).to_contain_text("Partial result: n3 (")
        expect(page.locator("#search-progress")).to_contain_text("n3: did not answer")

        page.get_by_role("button", name="CSV").click()
        download = page.get_by_role("link", name="Download CSV")
        expect(download).to_be_visible()
        exported = page.request.get(download.get_attribute("href"))
        assert exported.status == 200
        rows = list(csv.DictReader(io.StringIO(exported.text())))
        assert len(rows) == 3 and {row["eventType"] for row in rows} == {"CONTENT_MODIFIED"}, rows

        page.goto(f"{live_server.url}/provenance/events/n1:{event_id}/")
        page.locator("#claim-output").get_by_role("button", name="View").click()
        viewer = page.locator("#claim-output .content-viewer")
        expect(viewer).to_have_attribute("data-view", "json")
        expect(viewer.locator("pre")).to_contain_text('"lines": [\n    1,\n    2,\n    3\n  ]')
        viewer.get_by_role("button", name="Text").click()
        expect(viewer.locator("pre")).to_have_text('{"name": "words", "lines": [1, 2, 3]}')

        page.goto(f"{live_server.url}/provenance/events/n2:{join.event_id}/")
        expect(page.locator("h1")).to_have_text("JOIN event")
        expect(page.locator("#replay-explanation")).to_contain_text("created from multiple parents")
        expect(page.get_by_role("button", name="Replay")).to_have_count(0)


def test_the_canvas_panels_link_a_processor_s_provenance_and_a_connection_s_queue(live_server, transactional_db,
                                                                                  inspected, admin_a):
    rewrite, c2 = inspected.a["rewrite"], inspected.a["c2"]
    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")
        page.goto(f"{live_server.url}/groups/{rewrite.parent_id}/canvas")
        canvas_settled(page)
        panel = page.locator("#side-panel")
        select(page, rewrite.pk)  # the flow's components all stand at one place: picked by id, not by a click
        expect(panel.get_by_role("link", name="Provenance")).to_have_attribute("href",
                                                                                f"/provenance/?componentId={rewrite.pk}")
        select(page, c2.pk)
        expect(panel.get_by_role("link", name="List queue")).to_have_attribute("href", f"/connections/{c2.pk}/queue/")


def select(page: Page, component_id) -> None:
    """Select the canvas element of ``component_id`` alone, as a click on it does."""
    page.evaluate("(id) => { const {cy} = window.flowsiteCanvas; cy.$(':selected').unselect(); "
                  "cy.getElementById(id).select(); }", str(component_id))
