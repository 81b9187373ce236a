"""Tenants own a flow (a root process group); users belong to tenants, possibly several; groups
of users belong to one tenant. Tenant-wide policies are object permissions on the tenant."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

#: The global policies of a tenant, NiFi's global access policies: (codename, label).
GLOBAL_POLICIES = [
    ("view_flow", "view the flow"),
    ("modify_flow", "modify the flow"),
    ("manage_policies", "access users and policies"),
    ("query_provenance", "query provenance"),
    ("view_cluster", "view the cluster"),
    ("use_restricted", "use restricted components"),
]


class Tenant(models.Model):
    """An organisation sharing the platform: its flow, users, groups and policies are its own."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="tenants")

    class Meta:
        ordering = ["name"]
        default_permissions = ()
        permissions = GLOBAL_POLICIES

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user's membership of a tenant."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "user"], name="one_membership_per_tenant")]

    def __str__(self) -> str:
        return f"{self.user} in {self.tenant}"


class TenantGroup(models.Model):
    """A group of users of one tenant. It wraps a Django group (named ``<tenant slug>/<name>``
    so names never clash across tenants), which is what policies are granted to."""

    group = models.OneToOneField(Group, on_delete=models.CASCADE, related_name="tenant_group")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="groups")
    name = models.CharField(max_length=100)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="group_name_unique_in_tenant")]

    def __str__(self) -> str:
        return f"{self.name} ({self.tenant})"

    @classmethod
    def create(cls, tenant: Tenant, name: str) -> TenantGroup:
        """A new group of ``tenant`` called ``name``."""
        group = Group.objects.create(name=f"{tenant.slug}/{name}")
        return cls.objects.create(group=group, tenant=tenant, name=name)


class TenantUserPermission(UserObjectPermissionBase):
    """A global policy of a tenant held by a user."""

    content_object = models.ForeignKey(Tenant, on_delete=models.CASCADE)


class TenantGroupPermission(GroupObjectPermissionBase):
    """A global policy of a tenant held by a group."""

    content_object = models.ForeignKey(Tenant, on_delete=models.CASCADE)
