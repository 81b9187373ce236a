"""Process group pages: what they show, to whom, and creating and deleting groups."""

import pytest

from flowsite.flows import access
from flowsite.flows.models import FlowAction, Label, ProcessGroup
from tests.flowsite.portal.conftest import add_processor, logged_in

pytestmark = pytest.mark.django_db


def _child(parent: ProcessGroup, name: str) -> ProcessGroup:
    return ProcessGroup.objects.create(parent=parent, tenant=parent.tenant, name=name)


def test_group_page_lists_components_with_their_validation_status(portal_a, tenant_a):
    inner = _child(tenant_a.root, "Ingest")
    add_processor(tenant_a.root, "GenerateFlowFile", "gen", auto_terminated=["success"])
    add_processor(tenant_a.root, "PutFile", "put")
    page = portal_a.get(f"/groups/{tenant_a.root.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'href="/groups/{inner.pk}/"' in html and "Ingest" in html
    assert "gen" in html and "put" in html
    assert html.count('class="badge badge-valid"') == 1
    assert html.count('class="badge badge-invalid"') == 1
    assert "&#x27;Directory&#x27; is required" in html


def test_breadcrumb_leads_back_up(portal_a, tenant_a):
    middle = _child(tenant_a.root, "Middle")
    leaf = _child(middle, "Leaf")
    html = portal_a.get(f"/groups/{leaf.pk}/").content.decode()
    assert html.index(f'href="/groups/{tenant_a.root.pk}/"') < html.index(f'href="/groups/{middle.pk}/"')


def test_group_of_another_tenant_is_not_found(portal_a, tenant_b):
    assert portal_a.get(f"/groups/{tenant_b.root.pk}/").status_code == 404
    assert portal_a.post(f"/groups/{tenant_b.root.pk}/groups", {"name": "x"}).status_code == 404


def test_member_without_view_policy_is_forbidden(tenant_a):
    client = logged_in(tenant_a.member())
    response = client.get(f"/groups/{tenant_a.root.pk}/")
    assert response.status_code == 403
    assert b"you may not view this process group" in response.content


def test_viewer_sees_no_edit_forms(tenant_a):
    client = logged_in(tenant_a.member(global_policies=[access.VIEW_FLOW]))
    html = client.get(f"/groups/{tenant_a.root.pk}/").content.decode()
    assert f"/groups/{tenant_a.root.pk}/groups" not in html
    assert "Add processor" not in html
    assert client.post(f"/groups/{tenant_a.root.pk}/groups", {"name": "x"}).status_code == 403


def test_component_policies_are_inherited_from_the_group(tenant_a):
    private = _child(tenant_a.root, "Private")
    user = tenant_a.member(global_policies=[access.VIEW_FLOW, access.MODIFY_FLOW])
    access.grant(private, access.VIEW, user=tenant_a.admin())  # someone else's policy: not this user's
    client = logged_in(user)
    assert client.get(f"/groups/{private.pk}/").status_code == 403
    assert b"Private" not in client.get(f"/groups/{tenant_a.root.pk}/").content


def test_create_a_group_inside_a_group(portal_a, tenant_a):
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/groups", {"name": "Ingest"})
    assert response.status_code == 302
    created = ProcessGroup.objects.get(parent=tenant_a.root, name="Ingest")
    assert created.last_modifier == "alice"
    page = portal_a.get(response["Location"])
    assert b"Created the process group Ingest" in page.content
    assert f'href="/groups/{created.pk}/"'.encode() in page.content


def test_create_a_group_shows_the_api_validation_error(portal_a, tenant_a):
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/groups", {"name": "x" * 501})
    assert response.status_code == 400
    assert b"Ensure this field has no more than 500 characters" in response.content
    assert not ProcessGroup.objects.filter(parent=tenant_a.root).exists()


def test_delete_a_group_with_its_revision(portal_a, tenant_a):
    group = _child(tenant_a.root, "Old")
    add_processor(group, "GenerateFlowFile", "inside")
    stale = portal_a.post(f"/groups/{group.pk}/delete", {"version": group.version + 5}, follow=True)
    assert b"was changed" in stale.content and ProcessGroup.objects.filter(pk=group.pk).exists()
    response = portal_a.post(f"/groups/{group.pk}/delete", {"version": group.version})
    assert response["Location"] == f"/groups/{tenant_a.root.pk}/"
    assert not ProcessGroup.objects.filter(pk=group.pk).exists()


def test_the_root_group_cannot_be_deleted(portal_a, tenant_a):
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/delete", {"version": tenant_a.root.version}, follow=True)
    assert b"the root group of a tenant cannot be deleted" in response.content


def test_funnels_and_ports_are_added_and_deleted(portal_a, tenant_a):
    root = tenant_a.root.pk
    assert portal_a.post(f"/groups/{root}/funnels").status_code == 302
    assert portal_a.post(f"/groups/{root}/ports", {"name": "in", "kind": "input"}).status_code == 302
    assert portal_a.post(f"/groups/{root}/ports", {"name": "x", "kind": "sideways"}).status_code == 404
    funnel = tenant_a.root.contents.get(kind="FUNNEL")
    port = tenant_a.root.contents.get(kind="INPUT_PORT")
    html = portal_a.get(f"/groups/{root}/").content.decode()
    assert f"/funnels/{funnel.pk}/delete" in html and f"/ports/{port.pk}/delete" in html
    portal_a.post(f"/funnels/{funnel.pk}/delete", {"version": 0})
    portal_a.post(f"/ports/{port.pk}/delete", {"version": 0})
    assert not tenant_a.root.contents.exists()


def test_add_and_delete_a_label(portal_a, tenant_a):
    added = portal_a.post(f"/groups/{tenant_a.root.pk}/labels", {"text": "Ingest starts here"}, follow=True)
    assert "Added a label" in added.content.decode() and "Ingest starts here" in added.content.decode()
    label = Label.objects.get(parent=tenant_a.root)
    assert label.text == "Ingest starts here"
    assert FlowAction.objects.get(component_id=label.pk).operation == "Add"
    stale = portal_a.post(f"/labels/{label.pk}/delete", {"version": "3"}, follow=True)
    assert "was changed" in stale.content.decode() and Label.objects.filter(pk=label.pk).exists()
    deleted = portal_a.post(f"/labels/{label.pk}/delete", {"version": "0"}, follow=True)
    assert "Deleted the label" in deleted.content.decode() and not Label.objects.filter(pk=label.pk).exists()
