"""Controller services in the portal, in a real browser: add one to a group from the type list,
configure it (validation messages), enable it (configuration locked), see the processor that
references it, be refused disabling it while that processor runs, disable and delete it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from flowsite.flows.models import FlowAction, Processor
from tests.flowsite.browser import chromium_page, log_in, off_the_loop
from tests.flowsite.conftest import TenantWorld


@pytest.mark.browser
def test_add_configure_enable_and_delete_a_service_in_the_browser(live_server, transactional_db):
    world = TenantWorld("Acme")
    world.admin("alice")
    with chromium_page() as page:
        page.goto(f"{live_server.url}/")
        log_in(page, "alice", "Acme")
        page.get_by_role("link", name="Controller services (0)").click()
        expect(page.locator("h1")).to_have_text("Controller services")
        page.get_by_label("Type").select_option(value="CSVReader")
        page.get_by_label("Name").fill("reader")
        page.get_by_role("button", name="Add service").click()
        expect(page.locator(".flash")).to_contain_text("Added reader")
        expect(page.locator("#service-state")).to_have_text("DISABLED")

        page.locator("select[name='properties[CSV Format]']").select_option(value="custom")
        page.locator("input[name='properties[Value Separator]']").fill(";;")
        page.get_by_role("button", name="Save").click()
        expect(page.locator("#validation-status")).to_have_text("INVALID")
        expect(page.locator("#validation-errors")).to_contain_text("Value Separator")
        page.get_by_role("button", name="Enable").click()
        expect(page.locator(".flash")).to_contain_text("invalid and cannot be enabled")

        page.locator("input[name='properties[Value Separator]']").fill(";")
        page.get_by_role("button", name="Save").click()
        expect(page.locator("#validation-status")).to_have_text("VALID")
        service_id = page.url.rstrip("/").rsplit("/", 1)[1]
        convert = off_the_loop(lambda: Processor.objects.create(
            tenant=world.tenant, parent=world.root, name="convert", type="ConvertRecord",
            properties={"Record Reader": service_id}))
        page.reload()
        expect(page.locator("#references tbody tr")).to_contain_text("convert")
        expect(page.locator("#references tbody tr")).to_contain_text("Record Reader")

        page.get_by_role("button", name="Enable").click()
        expect(page.locator("#service-state")).to_have_text("ENABLED")
        expect(page.locator(".flash")).to_contain_text("next deployment")
        expect(page.locator("#service-form")).to_have_count(0)  # an enabled service is not edited
        off_the_loop(lambda: Processor.objects.filter(pk=convert.pk).update(scheduled_state="RUNNING"))
        page.get_by_role("button", name="Disable").click()
        expect(page.locator(".flash")).to_contain_text("stop them before disabling it")
        off_the_loop(lambda: Processor.objects.filter(pk=convert.pk).update(scheduled_state="STOPPED"))
        page.get_by_role("button", name="Disable").click()
        expect(page.locator("#service-state")).to_have_text("DISABLED")

        page.locator("summary", has_text="Delete reader").click()
        page.get_by_role("button", name="Delete the service").click()
        expect(page.locator(".flash")).to_contain_text("referenced by")
        off_the_loop(convert.delete)
        page.locator("summary", has_text="Delete reader").click()
        page.get_by_role("button", name="Delete the service").click()
        expect(page.locator(".flash")).to_contain_text("Deleted reader")
        expect(page.locator("#services .empty")).to_be_visible()
    assert [a.operation for a in FlowAction.objects.filter(component_id=service_id).order_by("id")] == [
        "Add", "Configure", "Configure", "Enable", "Disable", "Remove"]
