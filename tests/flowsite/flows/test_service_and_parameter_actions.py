"""The actions of controller-service state and parameter contexts: each writes its history row
(never a sensitive value), a service state change tells the canvases only once committed, and a
refused or rolled-back change records and sends nothing."""

from __future__ import annotations

import pytest
from django.db import transaction

from flowsite.cluster.actions import do_set_service_state
from flowsite.flows.actions import do_create_component
from flowsite.flows.models import ControllerService, FlowAction, ParameterContext
from flowsite.flows.parameter_actions import (
    KEEP,
    do_create_parameter_context,
    do_delete_parameter_context,
    do_update_parameter_context,
)
from flowsite.flows.revisions import StaleRevisionError
from tests.flowsite.flows.test_actions import Listener


@pytest.fixture
def alice(tenant_a):
    return tenant_a.admin("alice")


@pytest.mark.django_db(transaction=True)
def test_a_service_state_change_is_recorded_and_sent_after_the_commit(tenant_a, alice):
    service = do_create_component(ControllerService(parent=tenant_a.root, tenant=tenant_a.tenant, type="CSVReader",
                                                    name="reader"), acting_user=alice)
    listener = Listener(tenant_a.root.pk)
    with transaction.atomic():
        outcome = do_set_service_state(service, "ENABLED", version=0, client_id="", acting_user=alice)
        assert listener.next(timeout=0.5) is None, "an event was sent before the transaction committed"
    assert outcome["reached"] is False and "next deployment" in outcome["message"]
    assert listener.next(timeout=5)["operation"] == "Enable"
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            do_set_service_state(service, "DISABLED", version=1, client_id="", acting_user=alice)
            raise RuntimeError("the enclosing transaction fails")
    assert listener.next(timeout=1.0) is None
    assert ControllerService.objects.get(pk=service.pk).scheduled_state == "ENABLED"
    rows = FlowAction.objects.filter(component_id=service.pk)
    assert [(r.operation, r.changes) for r in rows] == [
        ("Enable", [{"field": "scheduled_state", "before": "DISABLED", "after": "ENABLED"}]), ("Add", rows[1].changes)]


def test_a_context_change_is_recorded_without_sensitive_values(tenant_a, alice):
    context = do_create_parameter_context(
        ParameterContext(tenant=tenant_a.tenant, name="env"),
        [{"name": "key", "value": "secret-one", "sensitive": True, "description": ""},
         {"name": "dir", "value": "/in", "sensitive": False, "description": ""}], acting_user=alice)
    assert "secret-one" not in str(ParameterContext.objects.get(pk=context.pk).parameters)
    do_update_parameter_context(context, lambda c: setattr(c, "description", "d"),
                                [{"name": "key", "value": "secret-two"}, {"name": "dir", "value": KEEP}],
                                version=0, client_id="", acting_user=alice)
    change = FlowAction.objects.filter(component_id=context.pk).first()
    assert change.operation == "Configure" and change.component_kind == "PARAMETER_CONTEXT"
    assert change.changes == [{"field": "description", "before": "", "after": "d"},
                              {"field": "parameters.key", "before": "********", "after": "********", "sensitive": True}]
    assert "secret" not in repr(list(FlowAction.objects.values_list("changes", flat=True)))
    assert {p["name"]: p["value"] for p in ParameterContext.objects.get(pk=context.pk).parameters}["dir"] == "/in"


def test_a_refused_context_change_records_nothing(tenant_a, alice):
    context = do_create_parameter_context(ParameterContext(tenant=tenant_a.tenant, name="env"), [], acting_user=alice)
    before = FlowAction.objects.count()
    with pytest.raises(StaleRevisionError):
        do_update_parameter_context(context, lambda c: setattr(c, "name", "late"), None, version=3, client_id="",
                                    acting_user=alice)

    def refuse(c):
        raise ValueError("bound to a group")

    with pytest.raises(ValueError):
        do_delete_parameter_context(context, version=0, client_id="", acting_user=alice, check=refuse)
    assert FlowAction.objects.count() == before
    assert ParameterContext.objects.get(pk=context.pk).name == "env"
