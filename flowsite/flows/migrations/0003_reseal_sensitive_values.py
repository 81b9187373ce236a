"""Sensitive values sealed in the former format (``enc:v1:<key id>:…``, one key for every tenant)
are re-sealed with their tenant's own key in the current format (``enc:v2:…``, no key id).

Values that do not open with ``FLOWSITE_SENSITIVE_KEY`` are left as they are (they could not be
used either). Deployment documents keep their former values until the tenant deploys again;
nodes still open them.
"""

from django.conf import settings
from django.db import migrations

from engine.secrets import LEGACY_PREFIX, MasterKey, SensitiveValueError


def _reseal(key, sealed, place):
    if not isinstance(sealed, str) or not sealed.startswith(LEGACY_PREFIX):
        return sealed
    try:
        return key.seal(key.open(sealed, place), place)
    except SensitiveValueError:
        return sealed


def reseal(apps, schema_editor):
    master = MasterKey(settings.FLOWSITE_SENSITIVE_KEY)
    for name in ("Processor", "ControllerService"):
        for component in apps.get_model("flows", name).objects.exclude(sensitive_properties={}):
            key = master.tenant(str(component.tenant_id))
            resealed = {prop: _reseal(key, sealed, f"{component.id}/{prop}")
                        for prop, sealed in component.sensitive_properties.items()}
            if resealed != component.sensitive_properties:
                component.sensitive_properties = resealed
                component.save(update_fields=["sensitive_properties"])
    for context in apps.get_model("flows", "ParameterContext").objects.all():
        key = master.tenant(str(context.tenant_id))
        changed = False
        for parameter in context.parameters:
            if parameter.get("sensitive"):
                value = _reseal(key, parameter.get("value"), f"parameter-context:{context.id}/{parameter['name']}")
                changed |= value != parameter.get("value")
                parameter["value"] = value
        if changed:
            context.save(update_fields=["parameters"])


class Migration(migrations.Migration):

    dependencies = [("flows", "0002_initial")]

    operations = [migrations.RunPython(reseal, migrations.RunPython.noop)]
