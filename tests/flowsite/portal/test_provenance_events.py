"""An event's page and its lineage page as each user sees them, on two real in-process nodes
(``tests.flowsite.provenance.conftest.inspected``): every field; attributes and content only
with *view the data*; Replay only where the API offers it; a 403 naming *view provenance*; the
portal's 404 for another tenant's event, an id that never was and one that is no id; a 503 page
when the event's node is not connected."""

from __future__ import annotations

import html
import re

import pytest

from engine.cluster.records import NodeState
from engine.provenance import ProvenanceEventType as E
from flowsite.cluster.status import forget_answers
from flowsite.flows.access import GLOBAL_ACTIONS, MODIFY_DATA, QUERY_PROVENANCE, VIEW, VIEW_DATA, VIEW_PROVENANCE
from tests.flowsite.portal.conftest import logged_in
from tests.flowsite.provenance.conftest import cluster_settings, eager_tasks, inspected  # noqa: F401 (fixtures)


def text(response) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", response.content.decode())))


@pytest.fixture
def modified(inspected) -> str:
    """The page of rewrite's CONTENT_MODIFIED event on n1."""
    return f"/provenance/events/n1:{inspected.event('n1', E.CONTENT_MODIFIED, 'rewrite').event_id}/"


def test_an_administrator_sees_every_field_the_attributes_the_content_and_replay(inspected, admin_a, modified):
    page = logged_in(admin_a).get(modified)
    assert page.status_code == 200
    body, shown = page.content.decode(), text(page)
    event = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    for fact in ("CONTENT_MODIFIED event", "ReplaceText", "rewrite", event.flowfile_uuid, str(inspected.a["c1"].pk),
                 "Event duration", "Lineage duration", "Source connection"):
        assert fact in shown, fact
    assert "words.txt" in shown and 'id="event-attributes"' in body
    assert f'data-url="/api/v1/provenance-events/n1:{event.event_id}/content/input"' in body
    assert f'data-url="/api/v1/provenance-events/n1:{event.event_id}/content/output"' in body
    assert 'data-mime="text/plain"' in body and body.count('data-available="true"') == 2
    assert 'id="replay-button"' in body
    assert f'href="/provenance/events/n1:{event.event_id}/lineage/"' in body
    fork = inspected.event("n1", E.FORK, "split")
    fork_page = logged_in(admin_a).get(f"/provenance/events/n1:{fork.event_id}/").content.decode()
    for child in fork.child_uuids:
        assert f'href="/provenance/flowfiles/{child}/lineage/"' in fork_page, "children link to their lineage"


def test_what_each_policy_shows_of_an_event(inspected, tenant_a, modified):
    provenance_only = logged_in(tenant_a.member(global_policies=[QUERY_PROVENANCE], root_policies=[VIEW, VIEW_PROVENANCE]))
    page = provenance_only.get(modified)
    assert page.status_code == 200
    shown = text(page)
    assert "its attributes and content are hidden" in shown and "words.txt" not in shown
    assert 'id="event-content"' not in page.content.decode() and 'id="replay-button"' not in page.content.decode()
    assert "the 'view_data' policy" in shown

    data_viewer = logged_in(tenant_a.member(root_policies=[VIEW, VIEW_PROVENANCE, VIEW_DATA]))
    page = data_viewer.get(modified)
    assert "words.txt" in text(page) and 'id="replay-button"' not in page.content.decode()
    assert "the 'modify_data' policy" in text(page), "why replay is not offered"

    no_provenance = logged_in(tenant_a.member(root_policies=[VIEW, VIEW_DATA, MODIFY_DATA]))
    refused = no_provenance.get(modified)
    assert refused.status_code == 403 and "view_provenance" in text(refused)


def test_another_tenant_s_event_and_ids_that_are_none_are_the_portal_s_404(inspected, tenant_b, admin_a, modified):
    bob = logged_in(tenant_b.member(global_policies=GLOBAL_ACTIONS, root_policies=[VIEW, VIEW_PROVENANCE, VIEW_DATA]))
    for url in (modified, modified + "lineage/"):
        page = bob.get(url)
        assert page.status_code == 404 and "Not found" in text(page), url
    portal = logged_in(admin_a)
    for missing in ("n1:999999", "n9:1", "nonsense", "n1:12345678901234567890123"):
        assert portal.get(f"/provenance/events/{missing}/").status_code == 404, missing
    b_event = inspected.events("n1", component_id=str(inspected.b["gen"].pk))[0]
    assert portal.get(f"/provenance/events/n1:{b_event.event_id}/").status_code == 404


def test_an_event_s_lineage_page(admin_a, modified, inspected):
    page = logged_in(admin_a).get(modified + "lineage/")
    assert page.status_code == 200
    event = inspected.event("n1", E.CONTENT_MODIFIED, "rewrite")
    assert f'data-event-id="n1:{event.event_id}"' in page.content.decode()
    assert "Lineage of the CONTENT_MODIFIED event's FlowFile" in text(page)


def test_an_event_whose_node_is_away_is_a_503_page(inspected, admin_a, modified):
    inspected.nodes["n1"].register(NodeState.DISCONNECTED)
    forget_answers()
    page = logged_in(admin_a).get(modified)
    assert page.status_code == 503 and "node n1 is not connected" in text(page)
