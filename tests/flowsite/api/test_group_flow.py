"""``GET /process-groups/{id}/flow``: everything directly inside a group in one answer, as the
list endpoints give each kind; only what the caller may view; another tenant's group is a 404."""

from __future__ import annotations

from flowsite.flows import access
from flowsite.flows.models import Label
from tests.flowsite.api.support import API
from tests.flowsite.conftest import token_client


def _ids(items) -> set[str]:
    return {item["id"] for item in items}


def test_the_flow_of_a_group_holds_each_kind_as_its_list_gives_it(api_a, flow_a, tenant_a):
    Label.objects.create(tenant=tenant_a.tenant, parent=flow_a.root, text="note")
    answer = api_a.get(f"{API}process-groups/{flow_a.root.pk}/flow")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    for part, collection in (("processors", "processors"), ("connections", "connections"), ("funnels", "funnels"),
                             ("processGroups", "process-groups"), ("labels", "labels")):
        listed = api_a.get(f"{API}process-groups/{flow_a.root.pk}/{collection}", {"limit": 1000}).json()["results"]
        assert body[part] == listed, part
    assert _ids(body["processors"]) == {str(p.pk) for p in (flow_a.gen, flow_a.log, flow_a.spare, flow_a.put)}
    child = api_a.get(f"{API}process-groups/{flow_a.child.pk}/flow").json()
    assert (_ids(child["inputPorts"]), _ids(child["outputPorts"])) == ({str(flow_a.in_port.pk)},
                                                                       {str(flow_a.out_port.pk)})


def test_a_member_gets_only_what_it_may_view(flow_a, tenant_a):
    viewer = tenant_a.member("bob", root_policies=[access.VIEW])
    access.grant(flow_a.spare, access.VIEW, user=tenant_a.member("carol"))  # a policy of its own that bob lacks
    body = token_client(viewer).get(f"{API}process-groups/{flow_a.root.pk}/flow").json()
    assert _ids(body["processors"]) == {str(p.pk) for p in (flow_a.gen, flow_a.log, flow_a.put)}


def test_another_tenants_group_is_a_404_like_a_missing_one(flow_a, tenant_b):
    outsider = token_client(tenant_b.admin("mallory"))
    assert outsider.get(f"{API}process-groups/{flow_a.root.pk}/flow").status_code == 404
    assert outsider.get(f"{API}process-groups/00000000-0000-0000-0000-000000000000/flow").status_code == 404
