"""``manage.py create_demo``: the demo tenant of a fresh installation — a tenant, an
administrator (printed credentials) and the list-fetch-put example flow. Running it again
changes nothing unless ``--reset-password`` is given."""

from __future__ import annotations

import secrets
from dataclasses import replace
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from flowsite.flows.definition import import_group
from flowsite.flows.models import ProcessGroup
from flowsite.flows.tenants import create_tenant, make_administrator, root_group
from flowsite.tenancy.actions import do_change_tenant_grants
from flowsite.tenancy.grants import Grants
from flowsite.tenancy.models import Tenant

EXAMPLE_FLOW = Path(settings.BASE_DIR) / "examples" / "list-fetch-put.json"


class Command(BaseCommand):
    help = "Create the demo tenant, its administrator and an example flow (idempotent)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--password", help="The administrator's password (default: a random one, printed).")
        parser.add_argument("--reset-password", action="store_true",
                            help="Set a new password for an administrator that exists already.")

    @transaction.atomic
    def handle(self, username, password=None, reset_password=False, **options):
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
        self.stdout.write(f"tenant: {tenant.name} (root group {root.pk})")
        self.stdout.write(f"example flow: {group.name} (group {group.pk})")
        if shown_password is not None:
            self.stdout.write(f"administrator: {username} / password: {shown_password}")
        else:
            self.stdout.write(f"administrator: {username} (password unchanged; --reset-password sets a new one)")
