"""The actions layer: every change writes its history row (who, what, each field before and
after, never a sensitive value), and tells the open canvases only once it has committed —
nothing on a rollback. Events are read from the real channel layer (Redis)."""

from __future__ import annotations

import asyncio

import pytest
import redis
from channels import DEFAULT_CHANNEL_LAYER
from channels.layers import channel_layers
from django.db import transaction

from flowsite.cluster.actions import do_deploy, do_set_run_state
from flowsite.cluster.models import Deployment
from flowsite.flows.actions import (
    RunningProcessors,
    do_commit_version,
    do_create_component,
    do_delete_component,
    do_import_group,
    do_revert_to_version,
    do_update_component,
)
from flowsite.flows.definition import Identity, export_group, parse_definition
from flowsite.flows.models import FlowAction, Funnel, Processor
from flowsite.flows.publish import group_name
from flowsite.flows.revisions import StaleRevisionError

GENERATE = "org.apache.nifi.processors.standard.GenerateFlowFile"


class Listener:
    """A channel of the real channel layer subscribed to a process group's events. It runs every
    layer call through a layer and an event loop of its own: a receiving layer is bound to its loop."""

    def __init__(self, group_id) -> None:
        self.loop = asyncio.new_event_loop()
        self.layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
        self.channel = self.loop.run_until_complete(self.layer.new_channel())
        self.loop.run_until_complete(self.layer.group_add(group_name(group_id), self.channel))

    def next(self, timeout: float = 1.0) -> dict | None:
        """The next event, or None when none comes within ``timeout`` seconds."""
        try:
            return self.loop.run_until_complete(asyncio.wait_for(self.layer.receive(self.channel), timeout))
        except asyncio.TimeoutError:
            return None

    def close(self) -> None:
        """Let the layer's pending clean-ups finish, close its connections and the loop."""
        async def finish():
            await asyncio.gather(*self.layer.receive_cleaners, return_exceptions=True)
            await self.layer.close_pools()
        self.loop.run_until_complete(finish())
        self.loop.close()


@pytest.fixture
def listen():
    """``listen(group_id)``: a Listener, closed after the test."""
    opened: list[Listener] = []
    yield lambda group_id: opened.append(Listener(group_id)) or opened[-1]
    for listener in opened:
        listener.close()


@pytest.fixture
def alice(tenant_a):
    return tenant_a.admin("alice")


def new_processor(tenant_a, alice, **fields) -> Processor:
    processor = Processor(parent=tenant_a.root, tenant=tenant_a.tenant, type=GENERATE, name="gen", **fields)
    return do_create_component(processor, acting_user=alice)


def test_a_creation_is_recorded_with_its_fields_and_who_made_it(tenant_a, alice):
    processor = new_processor(tenant_a, alice)
    action = FlowAction.objects.get(component_id=processor.pk)
    changed = {c["field"]: c for c in action.changes}
    assert (action.operation, action.user, action.user_name, action.tenant_id, action.group_id) == (
        "Add", alice, "alice", tenant_a.tenant.pk, tenant_a.root.pk)
    assert changed["type"] == {"field": "type", "before": None, "after": GENERATE}
    assert processor.last_modifier == "alice" and processor.version == 0


def test_an_update_records_each_changed_field_before_and_after(tenant_a, alice):
    processor = new_processor(tenant_a, alice, properties={"File Size": "1 KB"})

    def change(p):
        p.name = "generate"
        p.properties = {"File Size": "2 KB", "Batch Size": "5"}

    do_update_component(processor, change, version=0, client_id="", acting_user=alice)
    action = FlowAction.objects.filter(component_id=processor.pk).first()
    assert action.operation == "Configure"
    assert sorted(action.changes, key=lambda c: c["field"]) == [
        {"field": "name", "before": "gen", "after": "generate"},
        {"field": "properties.Batch Size", "before": None, "after": "5"},
        {"field": "properties.File Size", "before": "1 KB", "after": "2 KB"}]
    assert Processor.objects.get(pk=processor.pk).version == 1


def test_a_change_of_position_only_is_a_move(tenant_a, alice):
    funnel = do_create_component(Funnel(parent=tenant_a.root, tenant=tenant_a.tenant), acting_user=alice)

    def move(f):
        f.position_x, f.position_y = 120.0, 40.0

    do_update_component(funnel, move, version=0, client_id="", acting_user=alice)
    action = FlowAction.objects.filter(component_id=funnel.pk).first()
    assert action.operation == "Move"
    assert {c["field"]: c["after"] for c in action.changes} == {"position_x": 120.0, "position_y": 40.0}


def test_a_sensitive_value_is_recorded_as_changed_but_never_stored(tenant_a, alice):
    processor = new_processor(tenant_a, alice)

    def seal(p):
        p.sensitive_properties = {"Password": "sealed-v1:secret-value"}

    do_update_component(processor, seal, version=0, client_id="", acting_user=alice)
    action = FlowAction.objects.filter(component_id=processor.pk).first()
    assert action.changes == [{"field": "properties.Password", "before": None, "after": "********", "sensitive": True}]
    assert "secret-value" not in repr(list(FlowAction.objects.values_list("changes", flat=True)))


def test_a_deletion_is_recorded_and_the_history_outlives_the_component(tenant_a, alice):
    processor = new_processor(tenant_a, alice)
    pk = processor.pk
    do_delete_component(processor, version=0, client_id="", acting_user=alice)
    assert not Processor.objects.filter(pk=pk).exists()
    assert list(FlowAction.objects.filter(component_id=pk).values_list("operation", flat=True)) == [
        "Remove", "Add"]


@pytest.mark.django_db(transaction=True)
def test_the_canvas_event_is_sent_only_after_the_commit(tenant_a, alice, listen):
    processor = new_processor(tenant_a, alice)
    listener = listen(tenant_a.root.pk)
    with transaction.atomic():
        do_update_component(processor, lambda p: setattr(p, "name", "renamed"), version=0, client_id="",
                            acting_user=alice)
        assert listener.next(timeout=0.5) is None, "an event was sent before the transaction committed"
    event = listener.next(timeout=5)
    assert event == {"type": "design.changed", "component": str(processor.pk), "kind": "PROCESSOR",
                     "operation": "Configure", "parent": str(tenant_a.root.pk)}


@pytest.mark.django_db(transaction=True)
def test_nothing_is_recorded_or_sent_when_the_change_rolls_back(tenant_a, alice, listen):
    processor = new_processor(tenant_a, alice)
    listener = listen(tenant_a.root.pk)
    before = FlowAction.objects.count()
    with pytest.raises(StaleRevisionError):
        do_update_component(processor, lambda p: setattr(p, "name", "late"), version=7, client_id="",
                            acting_user=alice)

    def refuse(p):
        raise ValueError("refused by the caller's rule")

    with pytest.raises(ValueError):
        do_delete_component(processor, version=0, client_id="", acting_user=alice, check=refuse)
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            do_update_component(processor, lambda p: setattr(p, "name", "undone"), version=0, client_id="",
                                acting_user=alice)
            raise RuntimeError("the enclosing transaction fails")
    assert FlowAction.objects.count() == before
    assert Processor.objects.get(pk=processor.pk).name == "gen"
    assert listener.next(timeout=1.0) is None


@pytest.mark.django_db(transaction=True)
def test_a_run_state_change_is_recorded_and_carried_after_the_commit(tenant_a, alice, listen):
    processor = new_processor(tenant_a, alice)
    listener = listen(tenant_a.root.pk)
    outcome = do_set_run_state(processor, "DISABLED", version=0, client_id="", acting_user=alice)
    assert outcome["reached"] is False  # the tests' cluster is away: the design changed all the same
    assert "message" in outcome and outcome["message"] != "the change is carried to the nodes when the enclosing " \
                                                          "transaction commits"
    do_set_run_state(processor, "STOPPED", version=1, client_id="", acting_user=alice)
    operations = list(FlowAction.objects.filter(component_id=processor.pk).values_list("operation", flat=True))
    assert operations == ["Enable", "Disable", "Add"]
    assert [listener.next(timeout=5)["operation"], listener.next(timeout=5)["operation"]] == ["Disable", "Enable"]



def test_commits_reverts_and_imports_are_recorded(tenant_a, alice):
    processor = new_processor(tenant_a, alice)
    root = tenant_a.root
    version = do_commit_version(root, "first", acting_user=alice)
    do_update_component(processor, lambda p: setattr(p, "name", "changed"), version=0, client_id="",
                        acting_user=alice)
    root.refresh_from_db()
    do_revert_to_version(root, version, revision=root.version, client_id="", acting_user=alice)
    assert Processor.objects.get(pk=processor.pk).name == "gen"
    imported = do_import_group(root, parse_definition(export_group(root, Identity.VERSIONED)), acting_user=alice,
                               name="copy")
    rows = list(FlowAction.objects.filter(component_id__in=[root.pk, imported.pk]).order_by("id"))
    assert [(row.operation, row.component_id) for row in rows] == [
        ("CommitLocalChanges", root.pk), ("RevertLocalChanges", root.pk), ("Import", imported.pk)]
    assert {c["field"]: c["after"] for c in rows[0].changes} == {"version": 1, "comment": "first"}
    assert {c["field"]: c["after"] for c in rows[2].changes} == {"components.PROCESSOR": 1}


def test_a_revert_refused_because_processors_run_records_nothing(tenant_a, alice):
    processor = new_processor(tenant_a, alice, scheduled_state="RUNNING")
    version = do_commit_version(tenant_a.root, "", acting_user=alice)
    before = FlowAction.objects.count()
    with pytest.raises(RunningProcessors):
        do_revert_to_version(tenant_a.root, version, revision=tenant_a.root.version, client_id="",
                             acting_user=alice)
    assert FlowAction.objects.count() == before and Processor.objects.get(pk=processor.pk).scheduled_state == "RUNNING"


@pytest.mark.django_db(transaction=True)
def test_a_deployment_the_cluster_cannot_take_keeps_nothing(tenant_a, alice):
    """No cluster Redis answers in this test: the deployment commits, cannot be published, and is
    taken back with its history row."""
    with pytest.raises(redis.RedisError):
        do_deploy(tenant_a.tenant, alice)
    assert not Deployment.objects.filter(tenant=tenant_a.tenant).exists()
    assert not FlowAction.objects.filter(operation="Deploy").exists()
