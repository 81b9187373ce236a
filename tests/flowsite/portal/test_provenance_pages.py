"""The portal's provenance and queue pages as the server renders them: the search form filled
from a deep link, the nav's Provenance, the queue page of a connection, and who may open what
(the session tenant's query-provenance policy, a connection's view-the-data policy; another
tenant's connection is the portal's 404)."""

from __future__ import annotations

import html
import re

import pytest

from flowsite.flows import access as policies
from flowsite.flows.models import Connection
from tests.flowsite.portal.conftest import add_processor, logged_in

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


def connect(group, source, destination) -> Connection:
    return Connection.objects.create(parent=group, tenant=group.tenant, source=source, destination=destination,
                                     selected_relationships=["success"])


@pytest.fixture
def flow_a(tenant_a):
    gen = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    log = add_processor(tenant_a.root, "LogAttribute", "log")
    return {"gen": gen, "log": log, "conn": connect(tenant_a.root, gen, log)}


def test_the_nav_s_provenance_is_the_search_page_and_analytics_is_reached_from_it(portal_a):
    page = portal_a.get("/provenance/")
    assert page.status_code == 200
    body = page.content.decode()
    assert '<a href="/provenance/" class="active">Provenance</a>' in body
    assert 'href="/provenance/analytics/"' in body and "provenance-search.js" in body
    for label in ("FlowFile UUID", "Filename", "Component ID", "Component name", "Component type", "Event type",
                  "Relationship", "Transit URI", "Alternate identifier", "Details", "Source queue",
                  "Attribute name", "From", "To", "Minimum size", "Maximum size", "Maximum results", "Only node"):
        assert f">{label}</label>" in body, label
    assert body.count('name="exclude"') == 12, "every search term and the attribute row can be excluded"
    assert '<a href="/provenance/" class="active">Provenance</a>' in portal_a.get("/provenance/analytics/").content.decode()


def test_a_deep_link_fills_the_form(portal_a):
    body = portal_a.get("/provenance/?componentId=abc&flowFileUuid=f-1&exclude=flowFileUuid"
                        "&attributeName=filename&attributeValue=*.csv&attributeName=kind&attributeValue=x"
                        "&exclude=attribute-1&maxResults=50&startDate=2026-08-01T10:00").content.decode()
    assert 'name="componentId" value="abc" data-term="ProcessorID"' in body
    assert 'name="flowFileUuid" value="f-1" data-term="FlowFileUUID"' in body
    assert 'value="flowFileUuid" checked' in body and 'value="componentId" checked' not in body
    assert 'name="attributeName" value="filename"' in body and 'name="attributeValue" value="*.csv"' in body
    assert 'value="attribute-1" checked' in body and 'value="attribute-0" checked' not in body
    assert 'name="maxResults" min="1" max="10000" value="50"' in body
    assert 'name="startDate" value="2026-08-01T10:00"' in body


def test_searching_needs_the_tenant_s_query_provenance_policy(tenant_a):
    viewer = tenant_a.member(global_policies=[policies.VIEW_FLOW])
    refused = logged_in(viewer).get("/provenance/")
    assert refused.status_code == 403 and "you may not query provenance (the 'query_provenance' policy" in text(refused)
    assert logged_in(viewer).get("/provenance/flowfiles/f-1/lineage/").status_code == 403


def test_searches_keep_to_the_session_tenant(tenant_a, tenant_b):
    from flowsite.tenancy.models import Membership

    both = tenant_a.admin()
    Membership.objects.create(tenant=tenant_b.tenant, user=both)
    portal = logged_in(both)
    assert portal.post("/tenant", {"tenant": str(tenant_b.tenant.pk)}).status_code == 302
    assert portal.get("/provenance/").status_code == 403, "no query provenance in B"
    policies.grant_global(tenant_b.tenant, policies.QUERY_PROVENANCE, user=both)
    for page in ("/provenance/", "/provenance/flowfiles/f-1/lineage/"):
        assert f'data-tenant="{tenant_b.tenant.pk}"' in portal.get(page).content.decode()


def test_a_flowfile_s_lineage_page(portal_a):
    page = portal_a.get("/provenance/flowfiles/f-1/lineage/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-flow-file="f-1"' in body and "lineage.js" in body and "Lineage of FlowFile" in text(page)


def test_a_connection_s_queue_page_and_its_links(portal_a, flow_a):
    conn = flow_a["conn"]
    page = portal_a.get(f"/connections/{conn.pk}/queue/")
    assert page.status_code == 200
    assert f'data-connection="{conn.pk}"' in page.content.decode() and "queue-listing.js" in page.content.decode()
    assert "From gen — GenerateFlowFile → log — LogAttribute" in text(page)
    assert f'href="/connections/{conn.pk}/queue/">List queue</a>' in portal_a.get(f"/connections/{conn.pk}/").content.decode()
    processor = portal_a.get(f"/processors/{flow_a['gen'].pk}/").content.decode()
    assert f'href="/provenance/?componentId={flow_a["gen"].pk}">Provenance</a>' in processor
    canvas = portal_a.get(f"/groups/{conn.parent_id}/canvas").content.decode()
    assert 'data-provenance-url="/provenance/"' in canvas, "the canvas's processor panel links its provenance"
    assert 'data-queue-url="/connections/00000000-0000-0000-0000-000000000000/queue/"' in canvas


def test_listing_a_queue_needs_its_view_the_data_policy(tenant_a, flow_a):
    viewer = tenant_a.member(global_policies=[policies.VIEW_FLOW])
    portal = logged_in(viewer)
    conn = flow_a["conn"]
    refused = portal.get(f"/connections/{conn.pk}/queue/")
    assert refused.status_code == 403 and "view the data of this connection" in text(refused)
    assert "List queue" not in text(portal.get(f"/connections/{conn.pk}/"))
    policies.grant(conn, policies.VIEW_DATA, user=viewer)
    assert portal.get(f"/connections/{conn.pk}/queue/").status_code == 200


def test_another_tenant_s_queue_is_the_portal_s_404(portal_a, tenant_b):
    gen = add_processor(tenant_b.root, "GenerateFlowFile", "gen")
    log = add_processor(tenant_b.root, "LogAttribute", "log")
    conn = connect(tenant_b.root, gen, log)
    page = portal_a.get(f"/connections/{conn.pk}/queue/")
    assert page.status_code == 404 and "Not found" in text(page)
