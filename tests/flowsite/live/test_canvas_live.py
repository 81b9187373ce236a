"""The canvas live, in real browsers, served by a real daphne, on real nodes running the flow:
started from the canvas, a processor's Out and its connection's queue move without a reload, and
a node's bulletin shows on its component;
a second user's canvas shows the first one's edit; another tenant's user is refused the socket
(closed with 4404) and the page (404); after the web process restarts the canvas reconnects by
itself and goes on updating."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from playwright.sync_api import Page, expect

from flowsite.flows.models import Processor
from tests.flowsite.browser import PASSWORD, canvas_names, canvas_settled, chromium_page, chromium_pages, click_node, drop_from_palette, log_in
from tests.flowsite.live.conftest import web_process
from tests.processes import wait_until


def _label(page: Page, component_id) -> str:
    return page.evaluate("(id) => window.flowsiteCanvas.cy.getElementById(id).data('label') || ''",
                         str(component_id))


def _figure(page: Page, component_id, prefix: str) -> int:
    """The count of the label's line starting with ``prefix`` ("Out", "Queued"), 0 when it shows none."""
    for line in _label(page, component_id).splitlines():
        for part in line.split("  "):
            if part.startswith(prefix + " ") and part[len(prefix) + 1:][:1].isdigit():
                return int(part[len(prefix) + 1:].split(" ")[0].replace(",", ""))
    return 0


def _state(page: Page, port: int, processor_id) -> str:
    """The processor's design state, read through the REST API with the page's session (the ORM
    cannot be used inside Playwright's event loop)."""
    answer = page.request.get(f"http://127.0.0.1:{port}/api/v1/processors/{processor_id}")
    assert answer.ok, answer.text()
    return answer.json()["state"]


def _loggable(*users) -> None:
    """Let ``users`` log in to the web process: the tests hash passwords with MD5, which a web
    process with the project's settings does not accept."""
    hasher = PBKDF2PasswordHasher()
    for user in users:
        user.password = hasher.encode(PASSWORD, hasher.salt())
        user.save(update_fields=["password"])


def _open_canvas(page: Page, port: int, group_id) -> None:
    page.goto(f"http://127.0.0.1:{port}/groups/{group_id}/canvas")
    canvas_settled(page)
    expect(page.locator("#canvas-app")).to_have_attribute("data-live", "open", timeout=20_000)
    page.evaluate("window.__notReloaded = true")


def _not_reloaded(page: Page) -> bool:
    return page.evaluate("window.__notReloaded === true")


@pytest.mark.browser
def test_the_canvas_goes_live_across_users_tenants_and_a_web_restart(redis_url, cluster, deployed, tenant_a,
                                                                      tenant_b):
    flow_a, _, _, _ = deployed
    gen, conn = flow_a["gen"], flow_a["conn"]
    Processor.objects.filter(pk=flow_a["log"].pk).update(position_x=500.0, position_y=300.0)  # not on top of gen
    _loggable(get_user_model().objects.get(username="alice"), tenant_a.admin("carol"),
              get_user_model().objects.get(username="bob"))
    with web_process(redis_url) as web, chromium_pages(3) as (alice, carol, bob):
        port = web.port
        for page, name, tenant in ((alice, "alice", "Acme"), (carol, "carol", "Acme"), (bob, "bob", "Globex")):
            page.goto(f"http://127.0.0.1:{port}/login/")
            log_in(page, name, tenant)
        _open_canvas(alice, port, tenant_a.root.pk)
        _open_canvas(carol, port, tenant_a.root.pk)

        # Started from the canvas: the nodes' figures reach the canvas without a reload.
        click_node(alice, "gen")
        alice.locator("[data-action=start]").click()
        wait_until(lambda: _figure(alice, gen.pk, "Out") > 0 and _figure(alice, conn.pk, "Queued") > 0, 20,
                   "gen's Out and the queue move on alice's canvas")
        queued = _figure(alice, conn.pk, "Queued")
        wait_until(lambda: _figure(alice, conn.pk, "Queued") > queued, 10, "the queue grows on")
        wait_until(lambda: _figure(carol, conn.pk, "Queued") > 0, 10, "carol's canvas moves too")
        cluster.nodes[0].node.controller.bulletins.post("ERROR", str(gen.pk), "gen", "Processor",
                                                        str(tenant_a.root.pk), "disk full on purpose")
        wait_until(lambda: "⚑ ERROR: disk full on purpose" in _label(alice, gen.pk), 10, "the node's bulletin shown")
        alice.locator("[data-action=stop]").click()
        wait_until(lambda: _state(alice, port, gen.pk) == "STOPPED", 10, "gen stopped")
        alice.get_by_role("button", name="Terminate all").click()  # the nodes end any task still running
        expect(alice.locator("#canvas-notice")).to_have_text("Terminated the tasks of 2 processors.")

        # Alice's edit appears on carol's canvas by itself.
        drop_from_palette(alice, "Funnel", 420, 420)
        canvas_settled(alice)
        wait_until(lambda: len(canvas_names(carol)) == 3, 10, "alice's funnel on carol's canvas")
        assert _not_reloaded(alice) and _not_reloaded(carol)

        # Another tenant's user: the socket closes with 4404 and the page is a 404.
        code = bob.evaluate("""(url) => new Promise((resolve) => {
            const socket = new WebSocket(url);
            socket.onclose = (event) => resolve(event.code);
        })""", f"ws://127.0.0.1:{port}/ws/process-groups/{tenant_a.root.pk}")
        assert code == 4404
        assert bob.goto(f"http://127.0.0.1:{port}/groups/{tenant_a.root.pk}/canvas").status == 404

    # The web process restarts on the same port: the open canvas reconnects and updates again.
    with web_process(redis_url) as first, chromium_page() as alice:
        alice.goto(f"http://127.0.0.1:{first.port}/login/")
        log_in(alice, "alice", "Acme")
        _open_canvas(alice, first.port, tenant_a.root.pk)
        port = first.port
        first.server.terminate()
        expect(alice.locator("#canvas-app")).to_have_attribute("data-live", "retrying", timeout=10_000)
        with web_process(redis_url, port):
            expect(alice.locator("#canvas-app")).to_have_attribute("data-live", "open", timeout=30_000)
            before = _figure(alice, conn.pk, "Queued")
            click_node(alice, "gen")
            alice.locator("[data-action=start]").click()
            wait_until(lambda: _figure(alice, conn.pk, "Queued") > before, 20, "figures after the restart")
            assert _not_reloaded(alice)
