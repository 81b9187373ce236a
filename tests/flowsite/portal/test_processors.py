"""Adding and configuring processors: the API's validation, engine validation, sensitive and
dynamic properties, revisions, restricted types and running processors."""

import html

import pytest

from flowsite.flows import access
from flowsite.flows.models import Processor
from tests.flowsite.conftest import token_client
from tests.flowsite.portal.conftest import add_processor, logged_in

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return html.unescape(response.content.decode())


def form(processor: Processor, **changes) -> dict:
    """What the processor page posts when nothing is changed, with ``changes``."""
    data = {"version": processor.version, "name": processor.name, "comments": processor.comments,
            "schedulingStrategy": processor.scheduling_strategy, "schedulingPeriod": processor.scheduling_period,
            "concurrentlySchedulableTaskCount": processor.concurrent_tasks, "executionNode": processor.execution_node,
            "penaltyDuration": processor.penalty_duration, "yieldDuration": processor.yield_duration,
            "bulletinLevel": processor.bulletin_level, "runDurationMillis": processor.run_duration_millis,
            "autoTerminatedRelationships": processor.auto_terminated}
    data.update({f"properties[{name}]": value for name, value in processor.properties.items()})
    data.update(changes)
    return data


def test_the_type_list_comes_from_the_catalogue(portal_a, tenant_a):
    page = text(portal_a.get(f"/groups/{tenant_a.root.pk}/processors/new"))
    for name in ("GenerateFlowFile", "PutFile", "UpdateAttribute"):
        assert f'value="{name}"' in page
    found = text(portal_a.get(f"/groups/{tenant_a.root.pk}/processors/new?q=attributes routing"))
    assert 'value="RouteOnAttribute"' in found and 'value="PutFile"' not in found


def test_add_a_processor_then_see_its_validation_errors(portal_a, tenant_a):
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/processors/new", {"type": "PutFile", "name": "put"})
    processor = Processor.objects.get(parent=tenant_a.root)
    assert response["Location"] == f"/processors/{processor.pk}/"
    page = text(portal_a.get(response["Location"]))
    assert "This processor is invalid" in page
    assert "'Directory' is required" in page
    assert 'id="validation-status">INVALID' in page
    assert 'name="properties[Directory]"' in page
    assert '<span class="required" title="required">*</span>' in page


def test_a_processor_without_a_name_is_named_after_its_type(portal_a, tenant_a):
    portal_a.post(f"/groups/{tenant_a.root.pk}/processors/new", {"type": "GenerateFlowFile", "name": " "})
    assert Processor.objects.get(parent=tenant_a.root).name == "GenerateFlowFile"


def test_an_unknown_type_is_refused_with_the_api_message(portal_a, tenant_a):
    response = portal_a.post(f"/groups/{tenant_a.root.pk}/processors/new", {"type": "NoSuchThing"})
    assert response.status_code == 400
    assert "unknown processor type 'NoSuchThing'" in text(response)
    assert not Processor.objects.exists()


def test_configure_a_processor_until_it_is_valid(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    response = portal_a.post(f"/processors/{processor.pk}/", form(
        processor, **{"properties[File Size]": "2 KB", "autoTerminatedRelationships": ["success"],
                      "schedulingPeriod": "5 sec", "concurrentlySchedulableTaskCount": "2"}))
    assert response.status_code == 302
    processor.refresh_from_db()
    assert processor.properties["File Size"] == "2 KB"
    assert processor.auto_terminated == ["success"]
    assert (processor.scheduling_period, processor.concurrent_tasks, processor.version) == ("5 sec", 2, 1)
    assert processor.last_modifier == "alice"
    page = text(portal_a.get(response["Location"]))
    assert "Saved gen." in page and 'id="validation-status">VALID' in page


def test_an_empty_property_is_unset_so_its_default_applies(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen", properties={"File Size": "2 KB"})
    portal_a.post(f"/processors/{processor.pk}/", form(processor, **{"properties[File Size]": ""}))
    processor.refresh_from_db()
    assert "File Size" not in processor.properties


def test_serializer_errors_are_shown_next_to_their_fields(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    response = portal_a.post(f"/processors/{processor.pk}/", form(
        processor, schedulingPeriod="soon", concurrentlySchedulableTaskCount="0", penaltyDuration="forever"))
    assert response.status_code == 400
    page = text(response)
    assert "Your changes were not saved" in page
    assert "Ensure this value is greater than or equal to 1." in page
    assert "not a duration: 'forever'" in page
    assert 'value="soon"' in page  # what was typed is kept
    processor.refresh_from_db()
    assert processor.version == 0 and processor.scheduling_period == "0 sec"


def test_object_level_errors_of_the_serializer_are_shown(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    response = portal_a.post(f"/processors/{processor.pk}/", form(processor, schedulingPeriod="later"))
    assert response.status_code == 400
    assert "not a duration" in text(response)
    response = portal_a.post(f"/processors/{processor.pk}/", form(processor, autoTerminatedRelationships=["nope"]))
    assert "GenerateFlowFile has no relationship 'nope'" in text(response)


def test_a_stale_revision_is_refused_with_a_clear_message(portal_a, admin_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    opened = form(processor, name="mine")
    other = token_client(tenant_a.admin("bob"))
    assert other.put(f"/api/v1/processors/{processor.pk}", {"name": "theirs", "revision": {"version": 0}},
                     format="json").status_code == 200
    response = portal_a.post(f"/processors/{processor.pk}/", opened)
    assert response.status_code == 409
    page = text(response)
    assert "theirs was changed by bob since you opened this page (it is now at version 1)" in page
    assert "Your change was not saved" in page
    processor.refresh_from_db()
    assert processor.name == "theirs"


def test_sensitive_values_are_never_shown(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "InvokeHTTP", "call")
    portal_a.post(f"/processors/{processor.pk}/", form(processor, **{"properties[Request Password]": "s3cr3t!"}))
    processor.refresh_from_db()
    assert "Request Password" in processor.sensitive_properties
    page = text(portal_a.get(f"/processors/{processor.pk}/"))
    assert "s3cr3t!" not in page
    assert "value set" in page and 'type="password"' in page
    portal_a.post(f"/processors/{processor.pk}/", form(processor))  # left empty: kept
    processor.refresh_from_db()
    assert "Request Password" in processor.sensitive_properties
    portal_a.post(f"/processors/{processor.pk}/", form(processor, **{"clear[Request Password]": "1"}))
    processor.refresh_from_db()
    assert "Request Password" not in processor.sensitive_properties


def test_dynamic_properties_are_added_and_removed(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "UpdateAttribute", "tag")
    assert 'name="new-name-0"' in text(portal_a.get(f"/processors/{processor.pk}/"))
    portal_a.post(f"/processors/{processor.pk}/", form(processor, **{"new-name-0": "owner", "new-value-0": "ops"}))
    processor.refresh_from_db()
    assert processor.properties["owner"] == "ops"
    page = text(portal_a.get(f"/processors/{processor.pk}/"))
    assert 'name="properties[owner]" value="ops"' in page and 'name="remove[owner]"' in page
    portal_a.post(f"/processors/{processor.pk}/", form(processor, **{"remove[owner]": "1"}))
    processor.refresh_from_db()
    assert "owner" not in processor.properties


def test_restricted_types_need_the_policy(tenant_a):
    user = tenant_a.member(global_policies=[access.VIEW_FLOW, access.MODIFY_FLOW])
    client = logged_in(user)
    page = text(client.get(f"/groups/{tenant_a.root.pk}/processors/new"))
    assert 'value="PutFile" disabled' in page
    response = client.post(f"/groups/{tenant_a.root.pk}/processors/new", {"type": "PutFile"})
    assert response.status_code == 409
    assert ("PutFile is a restricted component requiring 'write-filesystem': you do not hold the tenant's "
            "'restricted_write_filesystem' (or 'use_restricted') policy") in text(response)
    existing = add_processor(tenant_a.root, "PutFile", "put")
    response = client.post(f"/processors/{existing.pk}/", form(existing, name="renamed"))
    assert response.status_code == 409 and "restricted component" in text(response)


def test_a_running_processor_cannot_be_changed(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen", scheduled_state="RUNNING",
                              auto_terminated=["success"])
    page = text(portal_a.get(f"/processors/{processor.pk}/"))
    assert "stop it before changing its configuration" in page and 'id="processor-form"' not in page
    response = portal_a.post(f"/processors/{processor.pk}/", form(processor, name="renamed"))
    assert response.status_code == 409
    assert "is running: stop it before changing it" in text(response)


def test_a_viewer_sees_the_configuration_without_a_form(tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    client = logged_in(tenant_a.member(global_policies=[access.VIEW_FLOW]))
    page = text(client.get(f"/processors/{processor.pk}/"))
    assert "You may view this processor but not change it" in page
    assert 'id="processor-form"' not in page and "<fieldset disabled>" in page
    assert client.post(f"/processors/{processor.pk}/", form(processor, name="x")).status_code == 403


def test_a_processor_of_another_tenant_is_not_found(portal_a, tenant_b):
    processor = add_processor(tenant_b.root, "GenerateFlowFile", "theirs")
    assert portal_a.get(f"/processors/{processor.pk}/").status_code == 404
    assert portal_a.post(f"/processors/{processor.pk}/delete", {"version": 0}).status_code == 404


def test_delete_a_processor(portal_a, tenant_a):
    processor = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    response = portal_a.post(f"/processors/{processor.pk}/delete", {"version": processor.version})
    assert response["Location"] == f"/groups/{tenant_a.root.pk}/"
    assert not Processor.objects.filter(pk=processor.pk).exists()


def test_a_connected_processor_is_not_deleted(portal_a, api_a, tenant_a):
    gen = add_processor(tenant_a.root, "GenerateFlowFile", "gen")
    log = add_processor(tenant_a.root, "LogAttribute", "log")
    api_a.post(f"/api/v1/process-groups/{tenant_a.root.pk}/connections",
               {"source": {"id": str(gen.pk)}, "destination": {"id": str(log.pk)},
                "selectedRelationships": ["success"]}, format="json")
    response = portal_a.post(f"/processors/{gen.pk}/delete", {"version": gen.version}, follow=True)
    assert "delete its connections first" in text(response)
    assert Processor.objects.filter(pk=gen.pk).exists()

