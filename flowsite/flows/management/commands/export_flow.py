"""``manage.py export_flow``: write a tenant's flow (or one group of it) as a flow definition,
e.g. for ``python -m engine run --flow``."""

from __future__ import annotations

import json
import os
import sys

from django.core.management.base import BaseCommand, CommandError

from flowsite.flows.definition import Identity, export_group
from flowsite.flows.models import ProcessGroup
from flowsite.tenancy.models import Tenant


class Command(BaseCommand):
    help = ("Write the flow definition of a tenant's root group (or of --group). With --for-node, identifiers "
            "are instance ids and sensitive values are included, as a node needs them.")

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="The tenant's slug.")
        parser.add_argument("--group", help="Id of a process group of the tenant (default: the root group).")
        parser.add_argument("--output", help="File to write (default: standard output).")
        parser.add_argument("--for-node", action="store_true",
                            help="Instance identifiers and decrypted sensitive values (keep the file private).")

    def handle(self, tenant, group=None, output=None, for_node=False, **options):
        owner = Tenant.objects.filter(slug=tenant).first()
        if owner is None:
            raise CommandError(f"no tenant with slug {tenant!r}")
        groups = ProcessGroup.objects.filter(tenant=owner)
        found = groups.filter(pk=group).first() if group else groups.filter(parent__isnull=True).first()
        if found is None:
            raise CommandError(f"tenant {tenant!r} has no process group {group}")
        document = export_group(found, Identity.INSTANCE if for_node else Identity.VERSIONED)
        text = json.dumps(document, indent=2) + "\n"
        if output:
            descriptor = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if for_node else 0o644)
            with open(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
        else:
            sys.stdout.write(text)
