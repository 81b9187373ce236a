"""Provenance and queues in the portal, in a real browser, against two real in-process nodes and
a real Redis (``tests.flowsite.provenance.conftest.inspected``: tenant A's text flow, split and
merged, has run once on each node). What issue 15 asks of the portal: search, open an event,
view its content, open its lineage and expand it, replay it and reach the REPLAY event; list a
queue, open a queued FlowFile's content, and empty the queue with a drop request."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from flowsite.cluster import redis as cluster_redis
from flowsite.provenance import store
from tests.flowsite.browser import chromium_page, log_in
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
        inspected.nodes[node].node.storage.provenance.rollover()  # as the node does every 30 s
        done.get_by_role("link").click()
        expect(page.locator("h1")).to_have_text("REPLAY event")
        expect(page.locator("#event-attributes")).to_contain_text("flowfile.replay")
        wait_until(lambda: inspected.queued(node, inspected.a["c4"].pk) == 2, 20, "the replay reached c4")
        wait_until(lambda: kept_requests(admin_a) == 0, 10, "each page left forgot its requests")


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
