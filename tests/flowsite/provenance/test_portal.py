"""The portal's provenance analytics page: tenant users ask the ready questions about their own
components, platform operators also run SQL; the request's page refreshes itself while the job
runs, then shows the table; another user's request does not exist."""

from __future__ import annotations

import html
import re

from flowsite.provenance import analytics, store
from tests.flowsite.portal.conftest import logged_in
from tests.flowsite.provenance.conftest import events_of, operator

PAGE = "/provenance/analytics/"


def text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def test_a_tenant_user_gets_the_questions_and_an_operator_the_sql_box_too(analytics_settings, admin_a):
    page = logged_in(admin_a).get(PAGE)
    assert page.status_code == 200
    shown = text(page)
    for title in ("FlowFiles and bytes per component per hour", "Slowest components", "Where FlowFiles were dropped"):
        assert title in shown
    assert 'name="sql"' not in page.content.decode() and "Ad-hoc SQL" not in shown
    assert 'name="sql"' in logged_in(operator()).get(PAGE).content.decode()


def test_asking_a_question_leads_to_its_table(world, admin_a, tenant_a):
    a, b = world.ids(world.flow_a), world.ids(world.flow_b)
    world.record("n1", *events_of(a, "a-1", 10), *events_of(b, "b-1", 10))
    portal = logged_in(admin_a)
    answer = portal.post(PAGE, {"question": "drops", "hours": "2"})
    assert answer.status_code == 302
    request_page = answer["Location"]
    page = portal.get(request_page)
    assert page.status_code == 200
    shown = text(page)
    assert "done" in shown and "Auto-Terminated by success Relationship" in shown and a["log"] in shown
    assert b["log"] not in shown and "http-equiv" not in page.content.decode()

    assert logged_in(tenant_a.admin()).get(request_page).status_code == 404, "another user's request"
    assert portal.post(f"{request_page}delete").status_code == 302
    assert portal.get(request_page).status_code == 404


def test_what_is_refused_is_said_on_the_page(analytics_settings, admin_a):
    portal = logged_in(admin_a)
    refused = portal.post(PAGE, {"question": "slowest", "hours": "0", "limit": "5"})
    assert refused.status_code == 400 and "hours must be from 1" in text(refused)
    assert 'value="5"' in refused.content.decode(), "the values given are kept"
    sql = portal.post(PAGE, {"sql": "SELECT * FROM provenance"})
    assert sql.status_code == 403 and "only platform operators may" in text(sql)
    bad_sql = logged_in(operator()).post(PAGE, {"sql": "DROP VIEW provenance"})
    assert bad_sql.status_code == 400 and "DROP is refused" in text(bad_sql)


def test_a_running_request_s_page_refreshes_itself(analytics_settings, admin_a):
    record = analytics.prepare(admin_a, analytics.Scope(frozenset(), False), question="throughput")
    record.update(state="exporting", percent=35)
    store.keep(record)  # as the jobs process leaves it while the nodes export
    page = logged_in(admin_a).get(f"{PAGE}{record['id']}/")
    assert page.status_code == 200
    assert '<meta http-equiv="refresh" content="2">' in page.content.decode()
    assert 'value="35"' in page.content.decode() and "the nodes export their provenance" in text(page)


def test_without_a_tenant_only_an_operator_has_the_page(db, django_user_model):
    user = django_user_model.objects.create_user("loner", password="correct horse battery staple")
    assert "not a member of any tenant" in text(logged_in(user).get(PAGE))
