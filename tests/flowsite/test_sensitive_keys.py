"""Sensitive values are sealed at rest under FLOWSITE_SENSITIVE_KEY, and rotate_sensitive_key
re-seals them all under a new key (or changes nothing)."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from flowsite.flows.definition import Identity, export_group, property_context
from flowsite.flows.models import ParameterContext, Processor
from engine.secrets import SensitiveKey, SensitiveValueError

SERVER_PASSWORD = "s3cret-password-for-smtp"


@pytest.fixture
def sealed_flow(api_a, tenant_a):
    created = api_a.post(f"/api/v1/process-groups/{tenant_a.root.pk}/processors",
                         {"type": "PutEmail", "name": "mail",
                          "properties": {"SMTP Password": SERVER_PASSWORD, "SMTP Hostname": "localhost"}},
                         format="json")
    assert created.status_code == 201, created.json()
    context = ParameterContext.objects.create(tenant=tenant_a.tenant, name="secrets")
    context.parameters = [{"name": "token", "sensitive": True, "description": "",
                           "value": SensitiveKey("development-only-sensitive-properties-key").seal(
                               "parameter-secret", f"parameter-context:{context.id}/token")}]
    context.save()
    tenant_a.root.parameter_context = context
    tenant_a.root.save()
    return Processor.objects.get(pk=created.json()["id"])


def test_sensitive_values_are_not_stored_in_plain_text(sealed_flow):
    with connection.cursor() as cursor:
        cursor.execute("select sensitive_properties::text, properties::text from flows_processor")
        rows = cursor.fetchall()
    assert rows and all(SERVER_PASSWORD not in text for row in rows for text in row)
    assert sealed_flow.sensitive_properties["SMTP Password"].startswith("enc:v1:")


def test_a_sealed_value_moved_to_another_component_does_not_open(sealed_flow, settings):
    key = SensitiveKey(settings.FLOWSITE_SENSITIVE_KEY)
    sealed = sealed_flow.sensitive_properties["SMTP Password"]
    assert key.open(sealed, property_context(sealed_flow, "SMTP Password")) == SERVER_PASSWORD
    with pytest.raises(SensitiveValueError):
        key.open(sealed, "another-component/SMTP Password")


def test_rotation_reseals_everything_under_the_new_key(sealed_flow, tenant_a, settings, monkeypatch):
    monkeypatch.setenv("FLOWSITE_NEW_SENSITIVE_KEY", "the next key")
    call_command("rotate_sensitive_key")
    sealed_flow.refresh_from_db()
    new = SensitiveKey("the next key")
    assert sealed_flow.sensitive_properties["SMTP Password"].split(":")[2] == new.key_id
    settings.FLOWSITE_SENSITIVE_KEY = "the next key"
    document = export_group(tenant_a.root, Identity.INSTANCE)
    processor = document["flowContents"]["processors"][0]
    assert processor["properties"]["SMTP Password"] == SERVER_PASSWORD
    assert document["parameterContexts"]["secrets"]["parameters"][0]["value"] == "parameter-secret"


def test_rotation_with_a_wrong_old_key_changes_nothing(sealed_flow, monkeypatch):
    before = dict(sealed_flow.sensitive_properties)
    monkeypatch.setenv("FLOWSITE_NEW_SENSITIVE_KEY", "the next key")
    monkeypatch.setenv("WRONG_KEY", "not the key in use")
    with pytest.raises(CommandError, match="nothing was changed"):
        call_command("rotate_sensitive_key", "--old-key-variable", "WRONG_KEY")
    sealed_flow.refresh_from_db()
    assert sealed_flow.sensitive_properties == before


def test_rotation_needs_a_new_key(db, monkeypatch):
    monkeypatch.delenv("FLOWSITE_NEW_SENSITIVE_KEY", raising=False)
    with pytest.raises(CommandError, match="FLOWSITE_NEW_SENSITIVE_KEY"):
        call_command("rotate_sensitive_key")
