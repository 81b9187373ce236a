"""``manage.py create_tenant NAME``: a new tenant with its root group, and optionally an
administrator holding every policy."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from flowsite.flows.tenants import create_tenant, make_administrator
from flowsite.tenancy.models import Tenant


class Command(BaseCommand):
    help = "Create a tenant (and its root process group); --admin USER makes USER its administrator."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--slug", help="Short unique name (default: from the name).")
        parser.add_argument("--admin", metavar="USERNAME", help="An existing user to make the tenant's administrator.")

    @transaction.atomic
    def handle(self, name, slug=None, admin=None, **options):
        slug = slug or slugify(name)
        if not slug:
            raise CommandError("the tenant needs a slug (give --slug)")
        if Tenant.objects.filter(slug=slug).exists():
            raise CommandError(f"a tenant with slug {slug!r} exists already")
        tenant = create_tenant(name, slug)
        if admin:
            user = get_user_model().objects.filter(username=admin).first()
            if user is None:
                raise CommandError(f"no user {admin!r} (create it with manage.py createsuperuser or the admin site)")
            make_administrator(tenant, user)
        self.stdout.write(f"tenant {tenant.name} ({tenant.slug}) created, id {tenant.pk}")
