"""Sensitive values are sealed at rest with their tenant's key (derived from
FLOWSITE_SENSITIVE_KEY), values of the former format are re-sealed by a migration, and
rotate_sensitive_key re-seals them all under a new key (or changes nothing)."""

import base64
import importlib

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection

from engine.secrets import LEGACY_PREFIX, PREFIX, MasterKey, SensitiveValueError, _LegacyKey
from flowsite.flows.definition import Identity, export_group, parameter_context_binding, property_context
from flowsite.flows.models import ParameterContext, Processor
from flowsite.flows.secrets import Binding, TenantKeys, current_key

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
                           "value": current_key().seal("parameter-secret",
                                                       parameter_context_binding(context, "token"))}]
    context.save()
    tenant_a.root.parameter_context = context
    tenant_a.root.save()
    return Processor.objects.get(pk=created.json()["id"])


def test_sensitive_values_are_not_stored_in_plain_text(sealed_flow):
    with connection.cursor() as cursor:
        cursor.execute("select sensitive_properties::text, properties::text from flows_processor")
        rows = cursor.fetchall()
    assert rows and all(SERVER_PASSWORD not in text for row in rows for text in row)
    assert sealed_flow.sensitive_properties["SMTP Password"].startswith(PREFIX)


def test_a_sealed_value_moved_to_another_component_does_not_open(sealed_flow):
    key = current_key()
    sealed = sealed_flow.sensitive_properties["SMTP Password"]
    binding = property_context(sealed_flow, "SMTP Password")
    assert key.open(sealed, binding) == SERVER_PASSWORD
    with pytest.raises(SensitiveValueError):
        key.open(sealed, Binding(binding.tenant_id, "another-component/SMTP Password"))


def test_a_tenants_value_does_not_open_with_another_tenants_key(sealed_flow, tenant_b):
    sealed = sealed_flow.sensitive_properties["SMTP Password"]
    binding = property_context(sealed_flow, "SMTP Password")
    with pytest.raises(SensitiveValueError):
        current_key().open(sealed, Binding(str(tenant_b.tenant.id), binding.place))
    with pytest.raises(SensitiveValueError):
        current_key().master.platform().open(sealed, binding.place)


def test_the_migration_reseals_values_of_the_former_format_with_the_tenants_key(sealed_flow, settings):
    legacy = _LegacyKey(settings.FLOWSITE_SENSITIVE_KEY)
    binding = property_context(sealed_flow, "SMTP Password")
    raw = legacy.aead.encrypt(b"n" * 12, SERVER_PASSWORD.encode(), binding.place.encode())
    old = f"{LEGACY_PREFIX}{legacy.key_id}:{base64.b64encode(b'n' * 12 + raw).decode()}"
    Processor.objects.filter(pk=sealed_flow.pk).update(sensitive_properties={"SMTP Password": old})
    sealed_flow.refresh_from_db()
    assert current_key().open(old, binding) == SERVER_PASSWORD, "the former format still opens"

    importlib.import_module("flowsite.flows.migrations.0003_reseal_sensitive_values").reseal(apps, None)
    sealed_flow.refresh_from_db()
    resealed = sealed_flow.sensitive_properties["SMTP Password"]
    assert resealed.startswith(PREFIX) and legacy.key_id not in resealed
    assert current_key().open(resealed, binding) == SERVER_PASSWORD


def test_rotation_reseals_everything_under_the_new_key(sealed_flow, tenant_a, settings, monkeypatch):
    monkeypatch.setenv("FLOWSITE_NEW_SENSITIVE_KEY", "the next key")
    call_command("rotate_sensitive_key")
    sealed_flow.refresh_from_db()
    new = TenantKeys(MasterKey("the next key"))
    sealed = sealed_flow.sensitive_properties["SMTP Password"]
    assert new.open(sealed, property_context(sealed_flow, "SMTP Password")) == SERVER_PASSWORD
    with pytest.raises(SensitiveValueError):
        current_key().open(sealed, property_context(sealed_flow, "SMTP Password"))
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
