"""Parameter contexts in the portal, in a real browser: create one, add a plain and a sensitive
parameter (the sensitive value is never shown, only "sensitive value set"), change one while
the sensitive value stays, bind the root group to the context from the group's page, and be
refused deleting it while bound."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from flowsite.flows.models import ParameterContext, ProcessGroup
from tests.flowsite.browser import chromium_page, log_in, off_the_loop
from tests.flowsite.conftest import TenantWorld


@pytest.mark.browser
def test_create_edit_and_bind_a_parameter_context_in_the_browser(live_server, transactional_db):
    world = TenantWorld("Acme")
    world.admin("alice")
    with chromium_page() as page:
        page.goto(f"{live_server.url}/")
        log_in(page, "alice", "Acme")
        page.get_by_role("link", name="Parameters", exact=True).click()
        expect(page.locator("h1")).to_have_text("Parameter contexts")
        page.get_by_placeholder("Name of a new context").fill("env")
        page.get_by_role("button", name="Create context").click()
        expect(page.locator(".flash")).to_contain_text("Created the parameter context env")

        page.get_by_label("Name of new parameter 1").fill("dir")
        page.get_by_label("Value of new parameter 1").fill("/tmp/in")
        page.get_by_label("Name of new parameter 2").fill("password")
        page.get_by_label("Value of new parameter 2").fill("hunter2")
        page.locator("input[name=new-sensitive-1]").check()
        page.get_by_role("button", name="Save").click()
        expect(page.locator(".flash")).to_contain_text("Saved env")
        password = page.locator("tr.parameter-row[data-name=password]")
        expect(password).to_contain_text("sensitive value set")
        assert "hunter2" not in page.content()

        page.get_by_label("Value of dir").fill("/tmp/other")
        page.get_by_role("button", name="Save").click()
        expect(page.get_by_label("Value of dir")).to_have_value("/tmp/other")
        expect(page.locator("tr.parameter-row[data-name=password]")).to_contain_text("sensitive value set")
        stored = {p["name"]: p for p in off_the_loop(lambda: ParameterContext.objects.get(name="env").parameters)}
        assert stored["password"]["value"] and stored["password"]["value"] != "hunter2"

        page.get_by_role("link", name="Flow", exact=True).click()
        page.get_by_label("Parameter context").select_option(label="env")
        page.get_by_role("button", name="Bind").click()
        expect(page.locator(".flash")).to_contain_text("uses the parameter context env")
        assert off_the_loop(lambda: ProcessGroup.objects.get(pk=world.root.pk).parameter_context.name) == "env"

        page.get_by_role("link", name="Parameters", exact=True).click()
        expect(page.locator("#contexts tbody tr")).to_contain_text("Acme")
        page.get_by_role("link", name="env").click()
        page.locator("summary", has_text="Delete env").click()
        page.get_by_role("button", name="Delete the context").click()
        expect(page.locator(".flash")).to_contain_text("is bound to process group")
