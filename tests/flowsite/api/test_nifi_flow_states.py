"""A flow NiFi 2 wrote, imported through the API, keeps NiFi's run states: its ENABLED processors
are stopped (STOPPED) and startable, its DISABLED one disabled, its services enabled; the
export writes them back as NiFi does, with the parameter in the scheduling period kept."""

from __future__ import annotations

import json
from pathlib import Path

from flowsite.flows.models import ControllerService, Processor
from tests.flowsite.api.support import API
from tests.flowsite.api.test_flow_roundtrip import export, import_

NIFI_FLOW = Path(__file__).parents[2] / "engine" / "flow" / "data" / "nifi-orders.json"
BACKFILL = "0a1b2c3d-0002-3000-8000-000000000002"


def test_an_imported_nifi_flow_keeps_its_run_states(api_a, tenant_a):
    document = json.loads(NIFI_FLOW.read_text())
    group = import_(api_a, tenant_a.root, document)

    processors = {p["name"]: p for p in api_a.get(f"{API}process-groups/{group['id']}/processors").json()["results"]}
    assert {name: p["state"] for name, p in processors.items()} == {
        "Generate orders": "STOPPED", "Backfill (disabled)": "DISABLED", "CSV to JSON": "STOPPED",
        "Write orders": "STOPPED"}
    assert processors["Generate orders"]["validationStatus"] == "VALID", processors["Generate orders"]
    assert {s.name: s.scheduled_state for s in ControllerService.objects.filter(parent_id=group["id"])} == {
        "CSV orders": "ENABLED", "JSON orders": "ENABLED"}

    exported = export(api_a, group["id"])
    states = {p["identifier"]: p["scheduledState"] for p in exported["flowContents"]["processors"]}
    assert states[BACKFILL] == "DISABLED" and set(states.values()) == {"ENABLED", "DISABLED"}
    assert {s["scheduledState"] for s in exported["flowContents"]["controllerServices"]} == {"ENABLED"}
    generate = next(p for p in exported["flowContents"]["processors"] if p["name"] == "Generate orders")
    assert generate["schedulingPeriod"] == "#{Trigger Schedule}"


def test_a_disabled_processor_of_a_nifi_flow_must_be_enabled_before_it_starts(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, json.loads(NIFI_FLOW.read_text()))
    backfill = Processor.objects.get(parent_id=group["id"], versioned_id=BACKFILL)
    shown = api_a.get(f"{API}processors/{backfill.pk}").json()
    response = api_a.put(f"{API}processors/{backfill.pk}/run-status",
                         {"state": "RUNNING", "revision": shown["revision"]}, format="json")
    assert response.status_code == 409 and "enable it" in json.dumps(response.json())


def test_service_references_of_a_nifi_flow_point_at_the_imported_services_and_export_as_nifi_wrote_them(
        api_a, tenant_a):
    document = json.loads(NIFI_FLOW.read_text())
    group = import_(api_a, tenant_a.root, document)
    convert = Processor.objects.get(parent_id=group["id"], name="CSV to JSON")
    reader = ControllerService.objects.get(parent_id=group["id"], name="CSV orders")
    writer = ControllerService.objects.get(parent_id=group["id"], name="JSON orders")
    assert convert.properties["Record Reader"] == str(reader.pk)
    assert convert.properties["Record Writer"] == str(writer.pk)
    shown = api_a.get(f"{API}processors/{convert.pk}").json()
    assert shown["validationStatus"] == "VALID", shown["validationErrors"]

    exported = export(api_a, group["id"])
    (exported_convert,) = [p for p in exported["flowContents"]["processors"] if p["name"] == "CSV to JSON"]
    assert exported_convert["properties"]["Record Reader"] == "0a1b2c3d-0101-3000-8000-000000000101"
    assert exported_convert["properties"]["Record Writer"] == "0a1b2c3d-0102-3000-8000-000000000102"
    again = import_(api_a, tenant_a.root, exported)
    assert export(api_a, again["id"]) == exported
