"""The portal in a real browser (``tests.flowsite.browser``) against a live server."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from flowsite.flows.models import ProcessGroup, Processor
from tests.flowsite.browser import chromium_page, log_in
from tests.flowsite.conftest import FILE_CAPABILITIES, TenantWorld


def _processor_row(page, name: str):
    return page.locator("#processors tbody tr", has=page.get_by_role("link", name=name, exact=True))


@pytest.mark.browser
def test_build_and_configure_a_flow_in_the_browser(live_server, transactional_db):
    world = TenantWorld("Acme", FILE_CAPABILITIES)
    world.admin("alice")
    with chromium_page() as page:
        page.goto(f"{live_server.url}/")
        expect(page).to_have_url(f"{live_server.url}/login/?next=/")
        log_in(page, "alice", "Acme")
        # the stylesheet is served (locally) and applied
        assert page.evaluate("getComputedStyle(document.querySelector('.topbar')).backgroundColor") \
            == "rgb(17, 24, 39)"

        page.get_by_placeholder("Name of a new process group").fill("Ingest")
        page.get_by_role("button", name="Create process group").click()
        expect(page.locator(".flash")).to_contain_text("Created the process group Ingest")
        page.locator("a.tile", has_text="Ingest").click()
        expect(page.locator("h1")).to_have_text("Ingest")

        page.get_by_role("link", name="+ Add processor").click()
        page.locator("label.type-card:has(input[value='GenerateFlowFile'])").click()
        page.get_by_placeholder("Name (the type's name if empty)").fill("gen")
        page.get_by_role("button", name="Add processor").click()
        expect(page.locator("#validation-status")).to_have_text("INVALID")
        page.get_by_role("link", name="Ingest", exact=True).click()

        page.get_by_role("link", name="+ Add processor").click()
        page.locator("label.type-card:has(input[value='PutFile'])").click()
        page.get_by_placeholder("Name (the type's name if empty)").fill("put")
        page.get_by_role("button", name="Add processor").click()
        expect(page.locator("#validation-errors")).to_contain_text("'Directory' is required")
        expect(page.locator(".prop-row", has_text="Directory").locator(".field-errors")) \
            .to_contain_text("'Directory' is required")
        page.get_by_role("link", name="Ingest", exact=True).click()
        expect(_processor_row(page, "put").locator(".badge-invalid")).to_have_text("INVALID")

        _processor_row(page, "gen").get_by_role("link", name="Connect").click()
        page.get_by_label("Destination").select_option(label="put — PutFile")
        page.get_by_role("button", name="Add connection").click()
        expect(page.locator(".field-errors")).to_contain_text("must select at least one relationship")
        page.locator("input[name=selectedRelationships][value=success]").check()
        page.get_by_role("button", name="Add connection").click()
        expect(page.locator(".flash")).to_contain_text("Connected gen to put")
        expect(page.locator("#connections tbody tr")).to_contain_text("success")
        expect(_processor_row(page, "gen").locator(".badge-valid")).to_have_text("VALID")

        _processor_row(page, "put").get_by_role("link", name="Configure").click()
        page.locator("input[name='properties[Directory]']").fill("/tmp/flowsite-out")
        page.locator("input[name=autoTerminatedRelationships][value=success]").check()
        page.locator("input[name=autoTerminatedRelationships][value=failure]").check()
        page.get_by_role("button", name="Save").click()
        expect(page.locator(".flash")).to_contain_text("Saved put.")
        expect(page.locator("#validation-status")).to_have_text("VALID")
        expect(page.locator("input[name='properties[Directory]']")).to_have_value("/tmp/flowsite-out")

        page.get_by_role("link", name="Ingest", exact=True).click()
        expect(_processor_row(page, "put").locator(".badge-valid")).to_have_text("VALID")
        expect(page.locator("#processors .badge-invalid")).to_have_count(0)
    ingest = ProcessGroup.objects.get(tenant=world.tenant, name="Ingest")
    put = Processor.objects.get(parent=ingest, name="put")
    assert put.properties["Directory"] == "/tmp/flowsite-out"
    assert put.auto_terminated == ["failure", "success"]
