"""The portal's bulletin board, in a real browser, over real nodes: the bulletins the nodes hold
for the tenant's components are listed newest first with node, time, source, level and message,
filtered by text and level; another tenant's bulletins never appear."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from flowsite.cluster import status as federated
from tests.flowsite.browser import chromium_page, log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.browser
def test_the_bulletin_board_lists_filters_and_hides_other_tenants(cluster, deployed, live_server):
    flow_a, flow_b, _, _ = deployed
    for node in cluster.nodes:
        board = node.node.controller.bulletins
        board.post("WARN", str(flow_a["gen"].pk), "gen", "GenerateFlowFile", str(flow_a["gen"].parent_id),
                   f"slow disk on {node.node_id}")
        board.post("ERROR", str(flow_a["log"].pk), "log", "LogAttribute", str(flow_a["log"].parent_id),
                   f"boom on {node.node_id}")
        board.post("ERROR", str(flow_b["log"].pk), "theirs", "LogAttribute", str(flow_b["log"].parent_id),
                   "another tenant's secret")
    federated.forget_answers()
    with chromium_page() as page:
        page.goto(f"{live_server.url}/")
        log_in(page, "alice", "Acme")
        page.get_by_role("link", name="Bulletins").click()
        expect(page.locator("h1")).to_have_text("Bulletin board")
        rows = page.locator("#bulletins tr.bulletin")
        expect(rows).to_have_count(4)
        expect(rows.first).to_contain_text("boom on n2")  # newest first
        expect(rows.first).to_contain_text("ERROR")
        expect(rows.first).to_contain_text("n2")
        assert "another tenant" not in page.content()

        page.get_by_label("Level").select_option(value="WARNING")
        page.get_by_role("button", name="Filter").click()
        expect(rows).to_have_count(2)
        expect(rows.first).to_contain_text("slow disk")
        page.get_by_label("Search the bulletins").fill("n1")
        page.get_by_role("button", name="Filter").click()
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text("slow disk on n1")
        expect(rows.first).to_contain_text("gen")
