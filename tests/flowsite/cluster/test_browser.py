"""The Cluster page in a real browser (``tests.flowsite.browser``):
a node listed, a deployment made, the indicator on the group page, a node disconnected by a
tenant administrator who is also a platform operator."""

from __future__ import annotations

import time

import pytest
import redis
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from engine.cluster.keys import ClusterKeys
from engine.cluster.records import Heartbeat, NodeRecord, NodeState
from flowsite.cluster.models import Deployment
from flowsite.tenancy.models import OPERATE_PLATFORM
from tests.flowsite.browser import chromium_page, log_in
from tests.flowsite.conftest import TenantWorld


@pytest.mark.browser
def test_deploy_and_disconnect_in_the_browser(live_server, transactional_db, redis_server, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    keys = ClusterKeys(settings.FLOWSITE_CLUSTER)
    client = redis.Redis(host="127.0.0.1", port=redis_server.port)
    client.set(keys.heartbeat("n1"), Heartbeat("n1", address="10.0.0.1:8443", sent_at=time.time()).encode(), ex=300)
    client.hset(keys.nodes, "n1", NodeRecord("n1", NodeState.CONNECTED).encode())
    world = TenantWorld("Acme")
    alice = world.admin("alice")
    alice.user_permissions.add(Permission.objects.get(content_type__app_label="tenancy", codename=OPERATE_PLATFORM))
    try:
        with chromium_page() as page:
            page.goto(f"{live_server.url}/login/")
            log_in(page, "alice", "Acme")

            page.get_by_role("link", name="Cluster", exact=True).click()
            expect(page.locator("h1")).to_have_text("Cluster")
            row = page.locator("#nodes tbody tr", has_text="n1")
            expect(row).to_contain_text("CONNECTED")
            expect(row).to_contain_text("10.0.0.1:8443")

            page.get_by_label("What to deploy").select_option(label="The design as it is now")
            page.get_by_role("button", name="Deploy").click()
            progress = page.locator("#deploy-progress")
            expect(progress).to_contain_text("0 of 1 node(s) reported")
            expect(progress).to_contain_text("n1: applying…")
            page.reload()
            expect(page.locator("#reports")).to_contain_text("pending")

            page.goto(f"{live_server.url}/groups/{world.root.pk}/")
            expect(page.locator(".cluster-indicator")).to_contain_text("node n1 does not run the latest deployment")

            page.get_by_role("link", name="Cluster", exact=True).click()
            row.get_by_role("button", name="Disconnect").click()
            expect(page.locator(".flash")).to_contain_text("Node n1: disconnection requested.")
            expect(page.locator("#nodes tbody tr", has_text="n1")).to_contain_text("DISCONNECTING")
    finally:
        client.close()
    assert Deployment.objects.filter(tenant=world.tenant).count() == 1  # (the ORM is not for Playwright's loop)
