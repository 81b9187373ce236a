"""How component policies are inherited, seen through the API: the nearest policy up the group
tree decides, a child group's policy overrides its parent's, the global view_flow/modify_flow
decide above the root, operating falls back to modifying, and policies held by a user group
count for its members."""

from __future__ import annotations

import pytest

from flowsite.flows import access
from flowsite.flows.access import MODIFY, OPERATE, VIEW
from flowsite.flows.models import ComponentUserPermission, ProcessGroup, Processor
from flowsite.tenancy.models import TenantGroup, TenantUserPermission
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.conftest import token_client


@pytest.fixture
def tree(tenant_a):
    """root > outer > inner, a processor in each of outer and inner."""
    tenant, root = tenant_a.tenant, tenant_a.root
    outer = ProcessGroup.objects.create(tenant=tenant, parent=root, name="outer")
    inner = ProcessGroup.objects.create(tenant=tenant, parent=outer, name="inner")
    in_outer = Processor.objects.create(tenant=tenant, parent=outer, name="p-outer", type="GenerateFlowFile")
    in_inner = Processor.objects.create(tenant=tenant, parent=inner, name="p-inner", type="GenerateFlowFile")
    return {"root": root, "outer": outer, "inner": inner, "p-outer": in_outer, "p-inner": in_inner}


_URLS = {"root": "process-groups", "outer": "process-groups", "inner": "process-groups",
         "p-outer": "processors", "p-inner": "processors"}


def visible(client, tree) -> set[str]:
    """The components of ``tree`` that ``client`` may read (GET answers 200; otherwise 403)."""
    seen = set()
    for name, component in tree.items():
        response = client.get(f"{API}{_URLS[name]}/{component.pk}")
        assert response.status_code in (200, 403), response.content
        if response.status_code == 200:
            seen.add(name)
    return seen


def test_a_child_groups_policy_overrides_its_parents(tenant_a, tree):
    on_root = tenant_a.member(root_policies=(VIEW,))
    on_outer = tenant_a.member()
    access.grant(tree["outer"], VIEW, user=on_outer)
    assert visible(token_client(on_root), tree) == {"root"}
    assert visible(token_client(on_outer), tree) == {"outer", "inner", "p-outer", "p-inner"}


def test_a_component_without_a_policy_inherits_the_nearest_ancestors(tenant_a, tree):
    user = tenant_a.member(root_policies=(VIEW,))
    other = tenant_a.member()
    access.grant(tree["outer"], VIEW, user=other)  # outer decides for itself and everything below it
    client = token_client(user)
    assert visible(client, tree) == {"root"}
    access.grant(tree["inner"], VIEW, user=user)  # now inner is nearer for inner and p-inner
    client = token_client(user)
    assert visible(client, tree) == {"root", "inner", "p-inner"}


def test_a_components_own_policy_decides_for_it_alone(tenant_a, tree):
    user = tenant_a.member(root_policies=(VIEW,))
    tenant_a.member("owner", root_policies=access.COMPONENT_ACTIONS)
    access.grant(tree["p-inner"], MODIFY, user=user)
    client = token_client(user)
    renamed = client.put(f"{API}processors/{tree['p-inner'].pk}", {"revision": {"version": 0}, "name": "mine"},
                         format="json")
    assert renamed.status_code == 200 and renamed.json()["name"] == "mine"
    assert renamed.json()["permissions"] == {"canRead": True, "canWrite": True, "canOperate": False}
    assert_error(client.put(f"{API}processors/{tree['p-outer'].pk}", {"revision": {"version": 0}, "name": "x"},
                            format="json"), 403)


@pytest.mark.parametrize("policies, readable, writable, operable", [
    ((), False, False, False),
    ((access.VIEW_FLOW,), True, False, False),
    ((access.MODIFY_FLOW,), False, True, True),
    ((access.VIEW_FLOW, access.MODIFY_FLOW), True, True, True),
])
def test_global_policies_decide_where_the_tree_has_no_policy(tenant_a, tree, policies, readable, writable,
                                                              operable):
    client = token_client(tenant_a.member(global_policies=policies))
    pk = tree["p-inner"].pk
    assert client.get(f"{API}processors/{pk}").status_code == (200 if readable else 403)
    changed = client.put(f"{API}processors/{pk}", {"revision": {"version": 0}, "comments": "c"}, format="json")
    assert changed.status_code == (200 if writable else 403)
    stopped = client.put(f"{API}processors/{pk}/run-status",
                         {"revision": {"version": 1 if writable else 0}, "state": "STOPPED"}, format="json")
    assert stopped.status_code == (200 if operable else 403)


def test_a_policy_in_the_tree_overrides_the_global_fallback(tenant_a, tree):
    user = tenant_a.member(global_policies=(access.VIEW_FLOW, access.MODIFY_FLOW))
    access.grant(tree["outer"], VIEW, user=tenant_a.member())
    assert visible(token_client(user), tree) == {"root"}


def test_operating_falls_back_to_modifying_unless_an_operate_policy_exists(tenant_a, tree):
    user = tenant_a.member(root_policies=(VIEW, MODIFY))
    client = token_client(user)
    url = f"{API}processors/{tree['p-outer'].pk}/run-status"
    assert client.put(url, {"revision": {"version": 0}, "state": "DISABLED"}, format="json").status_code == 200
    access.grant(tree["outer"], OPERATE, user=tenant_a.member())
    client = token_client(user)
    assert_error(client.put(url, {"revision": {"version": 1}, "state": "STOPPED"}, format="json"), 403)
    access.grant(tree["p-outer"], OPERATE, user=user)
    client = token_client(user)
    assert client.put(url, {"revision": {"version": 1}, "state": "STOPPED"}, format="json").status_code == 200


def test_policies_held_by_a_user_group_count_for_its_members(tenant_a, tree):
    operators = TenantGroup.create(tenant_a.tenant, "operators")
    user = tenant_a.member()
    user.groups.add(operators.group)
    access.grant(tree["outer"], VIEW, group=operators.group)
    access.grant_global(tenant_a.tenant, access.VIEW_FLOW, group=operators.group)
    assert visible(token_client(user), tree) == set(tree)
    outsider = tenant_a.member()
    assert visible(token_client(outsider), tree) == set()


def test_permissions_in_answers_follow_the_inherited_policies(tenant_a, tree):
    user = tenant_a.member(root_policies=(VIEW, MODIFY))
    access.grant(tree["inner"], MODIFY, user=tenant_a.member())
    client = token_client(user)
    listed = client.get(f"{API}process-groups/{tree['outer'].pk}/process-groups").json()["results"]
    assert [(g["name"], g["permissions"]) for g in listed] == [
        ("inner", {"canRead": True, "canWrite": False, "canOperate": False})]
    outer = client.get(f"{API}process-groups/{tree['outer'].pk}").json()
    assert outer["permissions"] == {"canRead": True, "canWrite": True, "canOperate": True}


def test_granting_several_policies_at_once_keeps_those_already_held_and_refuses_unknown_ones(tenant_a, tree):
    user = tenant_a.member(root_policies=(VIEW,))
    access.grant(tree["root"], VIEW, MODIFY, OPERATE, user=user)
    access.grant_global(tenant_a.tenant, access.VIEW_FLOW, access.VIEW_FLOW, user=user)
    held = access.TenantAccess(user, tenant_a.tenant)
    assert {a for a in (VIEW, MODIFY, OPERATE, access.VIEW_DATA) if held.can(tree["root"], a)} == {VIEW, MODIFY, OPERATE}
    assert ComponentUserPermission.objects.filter(user=user).count() == 3
    assert TenantUserPermission.objects.filter(user=user).count() == 1
    with pytest.raises(ValueError, match="unknown component action 'view_flow'"):
        access.grant(tree["root"], MODIFY, access.VIEW_FLOW, user=user)
    with pytest.raises(ValueError, match="unknown global action 'view_component'"):
        access.grant_global(tenant_a.tenant, access.VIEW_FLOW, VIEW, user=user)
    assert ComponentUserPermission.objects.filter(user=user).count() == 3
    assert TenantUserPermission.objects.filter(user=user).count() == 1
