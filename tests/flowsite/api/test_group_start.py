"""Starting a whole process group through the API (NiFi's start of a group) on a flow NiFi wrote:
its stopped, valid processors become RUNNING and are recorded as started, its DISABLED one and
an invalid one stay as they were; the nodes are told with ``group.start``."""

from __future__ import annotations

import json
from pathlib import Path

from flowsite.flows.models import FlowAction, Processor
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.api.test_flow_roundtrip import import_

NIFI_FLOW = Path(__file__).parents[2] / "engine" / "flow" / "data" / "nifi-orders.json"


def _nifi_flow_with_an_invalid_processor() -> dict:
    document = json.loads(NIFI_FLOW.read_text())
    document["flowContents"]["processors"].append(
        {"identifier": "broken-put", "name": "Broken", "type": "org.apache.nifi.processors.standard.PutFile",
         "properties": {}, "autoTerminatedRelationships": ["success", "failure"], "scheduledState": "ENABLED"})
    return document


def _states(group_id) -> dict[str, str]:
    return {p.name: p.scheduled_state for p in Processor.objects.filter(parent_id=group_id)}


def test_starting_a_group_starts_its_stopped_valid_processors(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, _nifi_flow_with_an_invalid_processor())

    response = api_a.put(f"{API}process-groups/{group['id']}/run-status", {"state": "RUNNING"}, format="json")

    assert response.status_code == 200, response.content
    answer = response.json()
    assert _states(group["id"]) == {"Generate orders": "RUNNING", "Backfill (disabled)": "DISABLED",
                                    "CSV to JSON": "RUNNING", "Write orders": "RUNNING", "Broken": "STOPPED"}
    assert len(answer["started"]) == 3
    (broken,) = answer["not_started"]
    assert broken["name"] == "Broken" and any("Directory" in problem for problem in broken["problems"])
    assert answer["cluster"]["reached"] is False
    assert FlowAction.objects.filter(operation="Start", component_id__in=answer["started"]).count() == 3

    again = api_a.put(f"{API}process-groups/{group['id']}/run-status", {"state": "RUNNING"}, format="json").json()
    assert again["started"] == [] and len(again["not_started"]) == 1


def test_only_running_is_a_group_run_state(api_a, tenant_a):
    group = import_(api_a, tenant_a.root, json.loads(NIFI_FLOW.read_text()))
    assert_error(api_a.put(f"{API}process-groups/{group['id']}/run-status", {"state": "STOPPED"}, format="json"), 400)
    assert set(_states(group["id"]).values()) == {"STOPPED", "DISABLED"}
