"""Process groups, funnels and ports through the API: what a new group takes from its parent,
parameter contexts, and when a group, a port or a funnel may be deleted (with everything in it,
never while something inside runs or something outside leads to it)."""

from __future__ import annotations

import pytest

from flowsite.flows import access
from flowsite.flows.models import Component, Connection, ParameterContext, Processor
from tests.flowsite.api.support import API, assert_error, problems_by_path
from tests.flowsite.conftest import token_client


def test_a_new_group_takes_its_parents_defaults(api_a, flow_a):
    api_a.put(f"{API}process-groups/{flow_a.root.pk}", {"revision": {"version": 0},
                                                        "defaultFlowFileExpiration": "1 hour",
                                                        "defaultBackPressureDataSizeThreshold": "5 MB"},
              format="json")
    created = api_a.post(f"{API}process-groups/{flow_a.root.pk}/process-groups", {}, format="json").json()
    assert created["name"] == "Process Group" and created["parentGroupId"] == str(flow_a.root.pk)
    assert (created["defaultFlowFileExpiration"], created["defaultBackPressureDataSizeThreshold"]) == ("1 hour",
                                                                                                      "5 MB")
    funnel = api_a.post(f"{API}process-groups/{created['id']}/funnels", {}, format="json")
    assert funnel.status_code == 201 and funnel.json()["parentGroupId"] == created["id"]


def test_a_group_uses_one_of_its_tenants_parameter_contexts(api_a, flow_a, tenant_a):
    ParameterContext.objects.create(tenant=tenant_a.tenant, name="params")
    url = f"{API}process-groups/{flow_a.child.pk}"
    assert api_a.put(url, {"revision": {"version": 0}, "parameterContext": "params"},
                     format="json").json()["parameterContext"] == "params"
    assert api_a.put(url, {"revision": {"version": 1}, "parameterContext": None},
                     format="json").json()["parameterContext"] is None


def test_a_group_and_everything_in_it_is_deleted(api_a, flow_a):
    inner = api_a.post(f"{API}process-groups/{flow_a.child.pk}/process-groups", {"name": "inner"},
                       format="json").json()
    gen = api_a.post(f"{API}process-groups/{inner['id']}/processors", {"type": "GenerateFlowFile"},
                     format="json").json()
    joined = api_a.post(f"{API}process-groups/{flow_a.child.pk}/connections",
                        {"source": {"id": str(flow_a.in_port.pk)}, "destination": {"id": str(flow_a.out_port.pk)}},
                        format="json")
    assert joined.status_code == 201, joined.content
    assert api_a.delete(f"{API}process-groups/{flow_a.child.pk}?version=0").status_code == 204
    gone = (flow_a.child.pk, inner["id"], gen["id"], flow_a.in_port.pk, flow_a.out_port.pk, joined.json()["id"])
    assert not Component.objects.filter(pk__in=gone).exists()
    assert Processor.objects.filter(pk=flow_a.gen.pk).exists()


def test_the_root_group_cannot_be_deleted(api_a, flow_a):
    refused = assert_error(api_a.delete(f"{API}process-groups/{flow_a.root.pk}?version=0"), 409, "conflict")
    assert refused["message"] == "the root group of a tenant cannot be deleted"


def test_a_group_with_a_running_processor_inside_is_not_deleted(api_a, flow_a):
    Processor.objects.create(tenant=flow_a.root.tenant, parent=flow_a.child, type="GenerateFlowFile",
                             scheduled_state="RUNNING")
    refused = assert_error(api_a.delete(f"{API}process-groups/{flow_a.child.pk}?version=0"), 409, "conflict")
    assert "running" in refused["message"]
    assert Component.objects.filter(pk=flow_a.child.pk).exists()


def test_a_group_that_connections_outside_lead_to_is_not_deleted(api_a, flow_a):
    outside = Connection.objects.create(tenant=flow_a.root.tenant, parent=flow_a.root, source=flow_a.spare,
                                        destination=flow_a.in_port, selected_relationships=["success"])
    refused = assert_error(api_a.delete(f"{API}process-groups/{flow_a.child.pk}?version=0"), 409, "conflict")
    assert str(outside.pk) in refused["message"]
    refused = assert_error(api_a.delete(f"{API}input-ports/{flow_a.in_port.pk}?version=0"), 409, "conflict")
    assert str(outside.pk) in refused["message"]
    assert api_a.delete(f"{API}connections/{outside.pk}?version=0").status_code == 204
    assert api_a.delete(f"{API}process-groups/{flow_a.child.pk}?version=0").status_code == 204


def test_a_port_is_found_only_as_its_own_kind(api_a, flow_a):
    assert_error(api_a.get(f"{API}output-ports/{flow_a.in_port.pk}"), 404, "not_found")
    assert_error(api_a.get(f"{API}input-ports/{flow_a.out_port.pk}"), 404, "not_found")
    assert_error(api_a.get(f"{API}funnels/{flow_a.gen.pk}"), 404, "not_found")
    assert api_a.get(f"{API}input-ports/{flow_a.in_port.pk}").json()["type"] == "INPUT_PORT"


@pytest.mark.parametrize("count", [0, 1001])
def test_a_ports_task_count_is_bounded(api_a, flow_a, count):
    refused = assert_error(api_a.put(f"{API}input-ports/{flow_a.in_port.pk}",
                                     {"revision": {"version": 0}, "concurrentlySchedulableTaskCount": count},
                                     format="json"), 400)
    assert list(problems_by_path(refused)) == ["$.concurrentlySchedulableTaskCount"]


def test_deleting_needs_modify_on_the_parent_group_too(tenant_a, flow_a):
    user = tenant_a.member(root_policies=(access.VIEW,))
    tenant_a.member("owner", root_policies=access.COMPONENT_ACTIONS)
    access.grant(flow_a.funnel, access.MODIFY, user=user)
    client = token_client(user)
    assert client.put(f"{API}funnels/{flow_a.funnel.pk}", {"revision": {"version": 0}, "name": "mine"},
                      format="json").status_code == 200
    refused = assert_error(client.delete(f"{API}funnels/{flow_a.funnel.pk}?version=1"), 403, "permission_denied")
    assert refused["message"] == "you may not modify the group this component is in"
    assert Component.objects.filter(pk=flow_a.funnel.pk).exists()
