"""Flow-definition exports and version documents contain only what the caller may view: as in
NiFi's "download flow definition", the view policy is needed on the group and on everything
inside it, and one unviewable descendant makes the whole read a 403 naming it (never its
configuration)."""

from __future__ import annotations

import pytest

from flowsite.flows import access
from flowsite.flows.access import VIEW
from flowsite.flows.definition import Identity, export_group
from flowsite.flows.models import FlowVersion, Processor
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.conftest import token_client

SECRET_DIRECTORY = "/srv/child-only-secret-dir"


def _hidden_child(tenant_a, flow_a):
    """A viewer of the root who may not view ``child`` (a policy on the child held by someone
    else), with a processor configured inside the child, and version 2 of root holding it."""
    Processor.objects.create(tenant=tenant_a.tenant, parent=flow_a.child, name="hidden", type="PutFile",
                             properties={"Directory": SECRET_DIRECTORY})
    access.grant(flow_a.child, VIEW, user=tenant_a.member())
    viewer = tenant_a.member(root_policies=[VIEW])
    FlowVersion.objects.create(group=flow_a.root, number=1, definition=export_group(flow_a.root, Identity.VERSIONED))
    return viewer


@pytest.mark.parametrize("path", ["process-groups/{root}/flow-definition", "process-groups/{root}/versions/1",
                                  "process-groups/{root}/versions/diff?from=1",
                                  "process-groups/{root}/versions/diff?from=1&to=current"])
def test_a_root_with_an_unviewable_child_gives_no_child_config(path, tenant_a, flow_a):
    viewer = _hidden_child(tenant_a, flow_a)
    response = token_client(viewer).get(API + path.format(root=flow_a.root.pk))
    body = assert_error(response, 403, "permission_denied")
    assert str(flow_a.child.pk) in body["message"] or flow_a.child.versioned_id in body["message"]
    assert SECRET_DIRECTORY.encode() not in response.content and b"hidden" not in response.content


def test_the_child_itself_stays_readable_to_whoever_may_view_it(tenant_a, flow_a):
    _hidden_child(tenant_a, flow_a)
    child_viewer = tenant_a.member()
    access.grant(flow_a.child, VIEW, user=child_viewer)
    access.grant(flow_a.root, VIEW, user=child_viewer)
    client = token_client(child_viewer)
    definition = client.get(f"{API}process-groups/{flow_a.root.pk}/flow-definition")
    assert definition.status_code == 200 and SECRET_DIRECTORY in str(definition.json())
    assert client.get(f"{API}process-groups/{flow_a.root.pk}/versions/1").status_code == 200


def test_a_version_judges_deleted_components_by_their_nearest_existing_group(tenant_a, flow_a):
    viewer = _hidden_child(tenant_a, flow_a)
    Processor.objects.filter(name="hidden").delete()  # still in version 1, now decided by the child
    assert_error(token_client(viewer).get(f"{API}process-groups/{flow_a.root.pk}/versions/1"), 403)


@pytest.mark.parametrize("path", ["process-groups/{root}/flow-definition", "process-groups/{child}/versions/1"])
def test_a_member_with_no_policy_reads_nothing_and_a_stranger_finds_nothing(path, tenant_a, tenant_b, flow_a):
    url = API + path.format(root=flow_a.root.pk, child=flow_a.child.pk)
    assert_error(token_client(tenant_a.member()).get(url), 403, "permission_denied")
    assert_error(token_client(tenant_b.admin()).get(url), 404, "not_found")
    assert token_client(tenant_a.admin()).get(url).status_code == 200
