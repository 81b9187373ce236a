"""``GET /process-groups/{id}/flow``: everything directly inside a group in one answer, as the
list endpoints give each kind; only what the caller may view; another tenant's group is a 404."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from flowsite.flows import access
from flowsite.flows.models import Connection, Funnel, Label, ProcessGroup, Processor
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


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def _add_components(flow, tenant, count: int) -> None:
    """``count`` times: a processor, its connections to a processor and to a port of a child
    group, a funnel, a label and a process group."""
    for _ in range(count):
        source = Processor.objects.create(tenant=tenant, parent=flow.root, name="p", type="GenerateFlowFile")
        Connection.objects.create(tenant=tenant, parent=flow.root, source=source, destination=flow.log,
                                  selected_relationships=["success"])
        Connection.objects.create(tenant=tenant, parent=flow.root, source=source, destination=flow.in_port,
                                  selected_relationships=["success"])
        Funnel.objects.create(tenant=tenant, parent=flow.root, name="f")
        Label.objects.create(tenant=tenant, parent=flow.root, text="l")
        ProcessGroup.objects.create(tenant=tenant, parent=flow.root, name="g")


def test_its_queries_do_not_grow_with_the_components(api_a, flow_a, tenant_a):
    """Each kind is read in one query with what its answer names (ends, their groups, contents,
    versions), and so is the flow validated for the processors' problems: a group of a hundred
    components costs what a group of ten does."""
    url = f"{API}process-groups/{flow_a.root.pk}/flow"
    api_a.get(url)  # what the first request of a process reads once
    _add_components(flow_a, tenant_a.tenant, 1)  # each answer below follows a change: no cached validation
    few = _queries(api_a, url)
    _add_components(flow_a, tenant_a.tenant, 20)
    assert _queries(api_a, url) == few
