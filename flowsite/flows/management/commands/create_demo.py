"""``manage.py create_demo``: the demo tenant of a fresh installation — a tenant, an
administrator (printed credentials) and the list-fetch-put example flow. Running it again
changes nothing unless ``--reset-password`` or ``--files-root`` is given. With ``--files-root
DIR`` the example's directories become ``DIR/demo/{input,processed,output}`` (the demo tenant's
own directory under the nodes' files root) and the tenant is granted the file capabilities the
example's processors need."""

from __future__ import annotations

import secrets
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from flowsite.flows.definition import import_group
from flowsite.flows.models import ParameterContext, ProcessGroup
from flowsite.flows.tenants import create_tenant, make_administrator, root_group
from flowsite.tenancy.actions import do_change_tenant_grants
from flowsite.tenancy.grants import Grants
from flowsite.tenancy.models import Tenant

EXAMPLE_FLOW = Path(settings.BASE_DIR) / "examples" / "list-fetch-put.json"
#: The example's parameter context and its directory parameters → the directory under the tenant's own.
EXAMPLE_CONTEXT = "list-fetch-put"
EXAMPLE_DIRECTORIES = {"input.directory": "input", "processed.directory": "processed", "output.directory": "output"}
#: What ListFile, FetchFile and PutFile need (NiFi's required permissions).
EXAMPLE_CAPABILITIES = ("read-filesystem", "write-filesystem")


class Command(BaseCommand):
    help = "Create the demo tenant, its administrator and an example flow (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", help="The administrator's password (default: a random one, printed).")
        parser.add_argument("--reset-password", action="store_true",
                            help="Set a new password for an administrator that exists already.")
        parser.add_argument("--files-root", type=Path, metavar="DIR",
                            help="The nodes' files root (runnode --files-root): the example reads and writes in "
                                 "DIR/demo/input, processed and output.")

    @transaction.atomic
    def handle(self, username, password=None, reset_password=False, files_root=None, **options):
        tenant = Tenant.objects.filter(slug="demo").first() or create_tenant("Demo", "demo")
        users = get_user_model().objects
        user = users.filter(username=username).first()
        shown_password = None
        if user is None:
            shown_password = password or secrets.token_urlsafe(12)
            user = users.create_user(username, password=shown_password, is_staff=True, is_superuser=True)
        elif reset_password:
            shown_password = password or secrets.token_urlsafe(12)
            user.set_password(shown_password)
            user.save(update_fields=["password"])
        make_administrator(tenant, user)
        # The example flow lists, fetches and puts files: its operator grants the demo tenant that.
        do_change_tenant_grants(tenant, replace(Grants.of(tenant), capabilities=sorted(
            set(tenant.capabilities) | {"read-filesystem", "write-filesystem"})), acting_user=user)
        root = root_group(tenant)
        group = ProcessGroup.objects.filter(parent=root).first()
        if group is None:
            group = import_group(root, EXAMPLE_FLOW.read_bytes(), modifier=username)
        if files_root is not None:
            self._use_files_root(tenant, files_root.resolve() / tenant.slug)
        self.stdout.write(f"tenant: {tenant.name} (root group {root.pk})")
        self.stdout.write(f"example flow: {group.name} (group {group.pk})")
        if shown_password is not None:
            self.stdout.write(f"administrator: {username} / password: {shown_password}")
        else:
            self.stdout.write(f"administrator: {username} (password unchanged; --reset-password sets a new one)")

    def _use_files_root(self, tenant: Tenant, directory: Path) -> None:
        """Point the example's directories into ``directory`` and grant the file capabilities."""
        tenant.capabilities = sorted(set(tenant.capabilities) | set(EXAMPLE_CAPABILITIES))
        tenant.save(update_fields=["capabilities"])
        context = ParameterContext.objects.filter(tenant=tenant, name=EXAMPLE_CONTEXT).first()
        if context is None:
            return
        for parameter in context.parameters:
            if parameter.get("name") in EXAMPLE_DIRECTORIES:
                parameter["value"] = str(directory / EXAMPLE_DIRECTORIES[parameter["name"]])
        context.save(update_fields=["parameters"])
        self.stdout.write(f"example directories: {directory}/{{input,processed,output}}")
