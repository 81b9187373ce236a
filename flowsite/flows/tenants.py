"""Creating a tenant with the root process group its flow lives in."""

from __future__ import annotations

from django.db import transaction

from flowsite.flows.models import ProcessGroup
from flowsite.tenancy.models import Tenant


@transaction.atomic
def create_tenant(name: str, slug: str) -> Tenant:
    """A new tenant and its (empty) root process group, named after it."""
    tenant = Tenant.objects.create(name=name, slug=slug)
    ProcessGroup.objects.create(tenant=tenant, name=name)
    return tenant


def root_group(tenant: Tenant) -> ProcessGroup:
    """The root process group of ``tenant``."""
    return ProcessGroup.objects.get(tenant=tenant, parent__isnull=True)
