"""``manage.py rotate_sensitive_key``: re-seal every sensitive value under a new key.

Every sensitive property of processors and controller services and every sensitive parameter
is opened with the old key and sealed with the new one, in one transaction: if any value does
not open, nothing changes; each tenant's values stay sealed with that tenant's key (derived
from the new master key). Afterwards set ``FLOWSITE_SENSITIVE_KEY`` to the new key (and
``FLOWSITE_PREVIOUS_SENSITIVE_KEY`` to the old one until every tenant has deployed again, so
that nodes still open what they run) and restart the web, job and node processes.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from flowsite.flows.definition import parameter_context_binding, property_context
from flowsite.flows.models import ControllerService, ParameterContext, Processor
from engine.secrets import MasterKey, SensitiveValueError, key_strength_problem
from flowsite.flows.secrets import TenantKeys

NEW_KEY_VARIABLE = "FLOWSITE_NEW_SENSITIVE_KEY"


class Command(BaseCommand):
    help = ("Re-encrypt every sensitive property and parameter under a new key (read from the "
            f"{NEW_KEY_VARIABLE} environment variable, so it stays out of the shell history).")

    def add_arguments(self, parser):
        parser.add_argument("--old-key-variable", default=None,
                            help="Environment variable holding the old key (default: the current "
                                 "FLOWSITE_SENSITIVE_KEY setting).")

    def handle(self, *args, old_key_variable=None, **options):
        new_passphrase = os.environ.get(NEW_KEY_VARIABLE, "")
        if not new_passphrase:
            raise CommandError(f"set {NEW_KEY_VARIABLE} to the new key")
        old_passphrase = settings.FLOWSITE_SENSITIVE_KEY
        if old_key_variable:
            old_passphrase = os.environ.get(old_key_variable, "")
            if not old_passphrase:
                raise CommandError(f"{old_key_variable} is not set")
        if settings.REQUIRE_STRONG_KEYS and (problem := key_strength_problem(new_passphrase, NEW_KEY_VARIABLE)):
            raise CommandError(problem)
        if old_passphrase == new_passphrase:
            raise CommandError("the new key is the key in use")
        old, new = TenantKeys(MasterKey(old_passphrase)), TenantKeys(MasterKey(new_passphrase))
        try:
            with transaction.atomic():
                properties = self._rotate_properties(old, new)
                parameters = self._rotate_parameters(old, new)
        except SensitiveValueError as error:
            raise CommandError(f"nothing was changed: {error}") from None
        self.stdout.write(f"re-encrypted {properties} sensitive propert{'y' if properties == 1 else 'ies'} and "
                          f"{parameters} sensitive parameter{'' if parameters == 1 else 's'} under the new key; "
                          "now set FLOWSITE_SENSITIVE_KEY to the new key and restart the web, job and node processes")

    @staticmethod
    def _rotate_properties(old: TenantKeys, new: TenantKeys) -> int:
        count = 0
        for model in (Processor, ControllerService):
            for component in model.objects.select_for_update().exclude(sensitive_properties={}):
                resealed = {}
                for name, sealed in component.sensitive_properties.items():
                    binding = property_context(component, name)
                    try:
                        value = old.open(sealed, binding)
                    except SensitiveValueError as error:
                        raise SensitiveValueError(f"{component} property {name!r}: {error}") from None
                    resealed[name] = new.seal(value, binding)
                    count += 1
                component.sensitive_properties = resealed
                component.save(update_fields=["sensitive_properties"])
        return count

    @staticmethod
    def _rotate_parameters(old: TenantKeys, new: TenantKeys) -> int:
        count = 0
        for context in ParameterContext.objects.select_for_update():
            changed = False
            for parameter in context.parameters:
                if parameter.get("sensitive") and parameter.get("value") is not None:
                    binding = parameter_context_binding(context, parameter["name"])
                    try:
                        value = old.open(parameter["value"], binding)
                    except SensitiveValueError as error:
                        raise SensitiveValueError(f"parameter context {context.name!r} parameter "
                                                  f"{parameter['name']!r}: {error}") from None
                    parameter["value"] = new.seal(value, binding)
                    changed = True
                    count += 1
            if changed:
                context.save(update_fields=["parameters"])
        return count
