"""Controller services through the API: create, configure, enable, disable and delete with NiFi's
rules (an enabled service is neither changed nor deleted, a referenced one is not deleted, one a
running processor references is not disabled), property validation by the engine's descriptors,
write-only sensitive values, referencing components, history rows, and another tenant's
services answered exactly like missing ones."""

from __future__ import annotations

import uuid

import pytest

from flowsite.flows.models import ControllerService, FlowAction, Processor
from tests.flowsite.api.support import API


@pytest.fixture
def reader(api_a, tenant_a) -> dict:
    """A CSVReader created in tenant A's root group through the API."""
    answer = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/controller-services",
                        {"type": "CSVReader", "name": "reader"}, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()


def _state(api, body: dict, state: str):
    return api.put(f"{API}controller-services/{body['id']}/run-status",
                   {"state": state, "revision": {"version": body["revision"]["version"]}}, format="json")


def test_a_service_is_created_disabled_listed_and_recorded(api_a, tenant_a, reader):
    assert reader["state"] == "DISABLED" and reader["type"] == "CSVReader"
    assert reader["uri"] == f"/api/v1/controller-services/{reader['id']}"
    assert reader["validationStatus"] == "VALID" and reader["referencingComponents"] == []
    listed = api_a.get(f"{API}process-groups/{tenant_a.root.pk}/controller-services").json()
    assert [s["id"] for s in listed["results"]] == [reader["id"]]
    assert FlowAction.objects.get(component_id=reader["id"]).operation == "Add"


def test_an_unknown_type_is_refused(api_a, tenant_a):
    answer = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/controller-services", {"type": "NoSuchService"},
                        format="json")
    assert answer.status_code == 400
    assert "controller-service-types" in str(answer.json())


def test_invalid_properties_are_reported_and_the_service_cannot_be_enabled(api_a, reader):
    changed = api_a.put(f"{API}controller-services/{reader['id']}",
                        {"revision": {"version": 0}, "properties": {"CSV Format": "nonsense"}}, format="json").json()
    assert changed["validationStatus"] == "INVALID"
    assert [e["property"] for e in changed["validationErrors"]] == ["CSV Format"]
    refused = _state(api_a, changed, "ENABLED")
    assert refused.status_code == 409 and "invalid" in refused.json()["message"]


def test_enable_then_edit_and_delete_are_refused_until_disabled(api_a, reader):
    enabled = _state(api_a, reader, "ENABLED")
    assert enabled.status_code == 200, enabled.json()
    body = enabled.json()
    assert body["state"] == "ENABLED" and body["cluster"]["reached"] is False
    assert "next deployment" in body["cluster"]["message"]
    edit = api_a.put(f"{API}controller-services/{reader['id']}", {"revision": {"version": 1}, "name": "x"},
                     format="json")
    assert edit.status_code == 409 and "disable it" in edit.json()["message"]
    delete = api_a.delete(f"{API}controller-services/{reader['id']}?version=1")
    assert delete.status_code == 409
    disabled = _state(api_a, body, "DISABLED")
    assert disabled.status_code == 200 and disabled.json()["state"] == "DISABLED"
    assert api_a.delete(f"{API}controller-services/{reader['id']}?version=2").status_code == 204
    assert [a.operation for a in FlowAction.objects.filter(component_id=reader["id"]).order_by("id")] == [
        "Add", "Enable", "Disable", "Remove"]


def test_referencing_components_block_delete_and_running_ones_block_disable(api_a, tenant_a, reader):
    convert = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="convert",
                                       type="ConvertRecord", properties={"Record Reader": reader["id"]})
    detail = api_a.get(f"{API}controller-services/{reader['id']}").json()
    assert detail["referencingComponents"] == [{"id": str(convert.pk), "kind": "PROCESSOR", "name": "convert",
                                                "property": "Record Reader", "state": "STOPPED"}]
    refused = api_a.delete(f"{API}controller-services/{reader['id']}?version=0")
    assert refused.status_code == 409 and "convert" in refused.json()["message"]
    enabled = _state(api_a, reader, "ENABLED").json()
    Processor.objects.filter(pk=convert.pk).update(scheduled_state="RUNNING")
    refused = _state(api_a, enabled, "DISABLED")
    assert refused.status_code == 409 and str(convert.pk) in refused.json()["message"]
    assert ControllerService.objects.get(pk=reader["id"]).scheduled_state == "ENABLED"


def test_sensitive_properties_are_write_only(api_a, tenant_a):
    created = api_a.post(f"{API}process-groups/{tenant_a.root.pk}/controller-services",
                         {"type": "StandardSSLContextService", "properties": {"Keystore Password": "s3cret"}},
                         format="json").json()
    assert created["sensitivePropertiesSet"] == ["Keystore Password"]
    assert "s3cret" not in str(created) and "Keystore Password" not in created["properties"]
    stored = ControllerService.objects.get(pk=created["id"])
    assert "s3cret" not in str(stored.sensitive_properties)
    added = FlowAction.objects.get(component_id=created["id"])
    assert "s3cret" not in str(added.changes)


def test_a_stale_revision_is_a_conflict(api_a, reader):
    api_a.put(f"{API}controller-services/{reader['id']}", {"revision": {"version": 0}, "name": "a"}, format="json")
    stale = api_a.put(f"{API}controller-services/{reader['id']}", {"revision": {"version": 0}, "name": "b"},
                      format="json")
    assert stale.status_code == 409


def test_another_tenants_service_is_not_found(api_a, tenant_b):
    theirs = ControllerService.objects.create(tenant=tenant_b.tenant, parent=tenant_b.root, type="CSVReader")
    missing = api_a.get(f"{API}controller-services/{uuid.uuid4()}")
    for answer in (api_a.get(f"{API}controller-services/{theirs.pk}"),
                   api_a.put(f"{API}controller-services/{theirs.pk}/run-status",
                             {"state": "ENABLED", "revision": {"version": 0}}, format="json"),
                   api_a.delete(f"{API}controller-services/{theirs.pk}?version=0"),
                   api_a.get(f"{API}process-groups/{tenant_b.root.pk}/controller-services")):
        assert answer.status_code == 404
    assert missing.json()["message"] == api_a.get(f"{API}controller-services/{theirs.pk}").json()["message"]


def test_a_processor_referencing_a_disabled_service_is_invalid_until_it_is_enabled(api_a, tenant_a, reader):
    convert = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="convert",
                                       type="ConvertRecord", properties={"Record Reader": reader["id"]})
    errors = api_a.get(f"{API}processors/{convert.pk}").json()["validationErrors"]
    assert any("not enabled" in e["message"] for e in errors if e["property"] == "Record Reader")
    _state(api_a, reader, "ENABLED")
    errors = api_a.get(f"{API}processors/{convert.pk}").json()["validationErrors"]
    assert not [e for e in errors if e["property"] == "Record Reader"]
