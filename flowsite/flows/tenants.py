"""Creating a tenant with the root process group its flow lives in, and its administrators."""

from __future__ import annotations

from django.db import transaction

from flowsite.flows import access
from flowsite.flows.models import ProcessGroup
from flowsite.tenancy.models import Membership, Tenant


@transaction.atomic
def create_tenant(name: str, slug: str) -> Tenant:
    """A new tenant; ``ensure_root_group`` gives it its root process group as it is saved."""
    return Tenant.objects.create(name=name, slug=slug)


def ensure_root_group(sender, instance: Tenant, created: bool, **kwargs) -> None:
    """Signal receiver: every new tenant gets an (empty) root process group named after it,
    however it is created (API, admin site, command)."""
    if created:
        ProcessGroup.objects.create(tenant=instance, name=instance.name)


def root_group(tenant: Tenant) -> ProcessGroup:
    """The root process group of ``tenant``."""
    return ProcessGroup.objects.get(tenant=tenant, parent__isnull=True)


def make_administrator(tenant: Tenant, user) -> None:
    """Make ``user`` a member of ``tenant`` holding every global policy and every policy on the
    root group (and so, by inheritance, on the whole flow)."""
    Membership.objects.get_or_create(tenant=tenant, user=user)
    access.grant_global(tenant, *access.GLOBAL_ACTIONS, user=user)
    access.grant(root_group(tenant), *access.COMPONENT_ACTIONS, user=user)
