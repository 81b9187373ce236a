"""Long work shown in place, in a real browser, on real node processes: a deployment's panel
fills in as each node reports, an import shows its upload and then the new group (or every
problem of a malformed definition), and emptying a queue shows what each node dropped — all
without the page reloading."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from flowsite import celery_app
from tests.flowsite.browser import chromium_page, log_in
from tests.flowsite.cluster.conftest import small_flow

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "list-fetch-put.json"


def mark_page(page: Page) -> None:
    """Mark the loaded document; ``still_marked`` is False once the page has reloaded."""
    page.evaluate("window.__notReloaded = true")


def still_marked(page: Page) -> bool:
    return page.evaluate("window.__notReloaded === true")


@pytest.fixture
def jobs_in_process():
    """The drop request's job runs in the web process as it is asked (no Celery worker here)."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.mark.browser
def test_deploy_import_and_queue_drop_show_progress_without_a_reload(live_server, transactional_db, start_nodes,
                                                                      tenant_a, admin_a, jobs_in_process):
    flow = small_flow(tenant_a)
    start_nodes(n1="", n2="")
    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")

        page.get_by_role("link", name="Cluster", exact=True).click()
        mark_page(page)
        page.get_by_role("button", name="Deploy").click()
        panel = page.locator("#deploy-progress")
        expect(panel).to_contain_text("every node (2) applied it", timeout=60_000)
        expect(panel.locator("li", has_text="n1: applied")).to_have_count(1)
        expect(panel.locator("li", has_text="n2: applied")).to_have_count(1)
        assert still_marked(page)

        page.goto(f"{live_server.url}/groups/{tenant_a.root.pk}/")
        mark_page(page)
        page.set_input_files("#import-file", files=[{"name": "flow.json", "mimeType": "application/json",
                                                     "buffer": EXAMPLE.read_bytes()}])
        page.get_by_label("Name of the new group (optional)").fill("imported")
        page.get_by_role("button", name="Import", exact=True).click()
        imported = page.locator("#import-progress")
        expect(imported).to_contain_text("Imported flow.json as “imported”")
        expect(imported.get_by_role("link", name="Open imported")).to_be_visible()
        broken = json.dumps({"flowContents": {"processors": [{"name": "no type"}]}}).encode()
        page.set_input_files("#import-file", files=[{"name": "broken.json", "mimeType": "application/json",
                                                     "buffer": broken}])
        page.get_by_role("button", name="Import", exact=True).click()
        expect(imported).to_contain_text("Nothing was imported")
        expect(imported.locator("li", has_text="$.flowContents.processors[0]").first).to_be_visible()
        assert still_marked(page)

        page.goto(f"{live_server.url}/connections/{flow['conn'].pk}/")
        mark_page(page)
        page.get_by_role("button", name="Empty the queue on every node").click()
        emptied = page.locator("#empty-progress")
        expect(emptied).to_contain_text("Dropped 0 FlowFile(s).", timeout=20_000)
        expect(emptied.locator("li", has_text="n1: dropped 0")).to_have_count(1)
        expect(emptied.locator("li", has_text="n2: dropped 0")).to_have_count(1)
        assert still_marked(page)
