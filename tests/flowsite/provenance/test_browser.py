"""The provenance analytics page in a real browser (``tests.flowsite.browser``): a question asked,
its request followed to its table, then ad-hoc SQL run by an administrator who is also a platform
operator — against two in-process nodes, a real Redis and a local Spark."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import expect

from engine.spark.provenance_query import jobs_runtime, run_query
from flowsite.provenance.jobs.analytics import spark_settings
from flowsite.tenancy.models import OPERATE_PLATFORM
from tests.flowsite.browser import chromium_page, log_in
from tests.flowsite.provenance.conftest import events_of

#: How long a job may take behind a click (the Spark session is warmed up first).
JOB_MS = 120_000


@pytest.mark.browser
def test_ask_a_question_and_run_sql_in_the_browser(live_server, transactional_db, world, admin_a):
    admin_a.user_permissions.add(Permission.objects.get(content_type__app_label="tenancy", codename=OPERATE_PLATFORM))
    a = world.ids(world.flow_a)
    world.record("n1", *events_of(a, "a-1", 10))
    world.record("n2", *events_of(a, "a-2", 20))
    run_query(jobs_runtime(spark_settings()), [], "SELECT 1", components=None, max_rows=1, timeout=300)

    with chromium_page() as page:
        page.goto(f"{live_server.url}/login/")
        log_in(page, "alice", "Acme")
        page.get_by_role("link", name="Provenance", exact=True).click()
        page.get_by_role("link", name="Provenance analytics").click()
        expect(page.locator("h1")).to_have_text("Provenance analytics")

        drops = page.locator("#question-drops")
        drops.get_by_label("Hours back").fill("3")
        drops.get_by_role("button", name="Ask").click()
        expect(page.locator("#analytics-state")).to_have_text("done", timeout=JOB_MS)
        result = page.locator("#analytics-result")
        expect(result).to_contain_text("Auto-Terminated by success Relationship")
        expect(result).to_contain_text("nodes n1, n2")
        expect(page.locator("pre.sql")).to_contain_text("INTERVAL 3 HOURS")

        page.get_by_role("link", name="Provenance analytics").click()
        page.get_by_label("One read-only query").fill(
            "SELECT component_name, count(*) AS events FROM provenance GROUP BY component_name ORDER BY 1")
        page.get_by_role("button", name="Run").click()
        expect(page.locator("#analytics-state")).to_have_text("done", timeout=JOB_MS)
        expect(page.locator("#analytics-result tbody tr")).to_have_count(2)
        expect(page.locator("#analytics-result tbody tr").first).to_contain_text("gen")

        page.get_by_role("button", name="Delete").click()
        expect(page.locator(".flash")).to_contain_text("The analytics request was deleted.")
