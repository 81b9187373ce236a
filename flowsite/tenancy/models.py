"""Tenants own a flow (a root process group); users belong to tenants, possibly several; groups
of users belong to one tenant. Tenant-wide policies are object permissions on the tenant."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.postgres.fields import ArrayField
from django.db import models
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

#: The global policies of a tenant, NiFi's global access policies: (codename, label).
GLOBAL_POLICIES = [
    ("view_flow", "view the flow"),
    ("modify_flow", "modify the flow"),
    ("manage_policies", "access users and policies"),
    ("query_provenance", "query provenance"),
    ("view_cluster", "view the cluster"),
    ("use_restricted", "use restricted components regardless of restrictions"),
    ("restricted_read_filesystem", "use restricted components requiring 'read filesystem'"),
    ("restricted_write_filesystem", "use restricted components requiring 'write filesystem'"),
    ("restricted_execute_code", "use restricted components requiring 'execute code'"),
    ("restricted_access_environment_credentials",
     "use restricted components requiring 'access environment credentials'"),
    ("restricted_reference_remote_resources", "use restricted components requiring 'reference remote resources'"),
    ("restricted_export_nifi_details", "use restricted components requiring 'export nifi details'"),
]


#: The model-level permission of platform operators, who run the shared cluster.
OPERATE_PLATFORM = "operate_platform"
#: The same, as ``user.has_perm`` names it.
OPERATE_PLATFORM_PERMISSION = f"tenancy.{OPERATE_PLATFORM}"


def is_platform_operator(user) -> bool:
    """True when ``user`` runs the shared platform (holds ``tenancy.operate_platform``; superusers do)."""
    return bool(user and user.is_authenticated and user.is_active and user.has_perm(OPERATE_PLATFORM_PERMISSION))


class Tenant(models.Model):
    """An organisation sharing the platform: its flow, users, groups and policies are its own."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="tenants")
    # What an operator granted the tenant on the shared nodes (see docs/security.md).
    capabilities = ArrayField(models.CharField(max_length=64), default=list, blank=True,
                              help_text="Restricted-component capabilities granted (NiFi's names, e.g. read-filesystem).")
    file_roots = ArrayField(models.CharField(max_length=1024), default=list, blank=True,
                            help_text="Absolute directories the tenant's flow may use on the nodes "
                                      "(empty: <files root>/<tenant slug>).")
    network_allow = ArrayField(models.CharField(max_length=255), default=list, blank=True,
                               help_text="Outbound destinations opened for the tenant: CIDR, host, or host:port.")
    listen_port_low = models.PositiveIntegerField(null=True, blank=True,
                                                  help_text="First port the tenant's listeners may bind.")
    listen_port_high = models.PositiveIntegerField(null=True, blank=True,
                                                   help_text="Last port the tenant's listeners may bind.")
    pool = models.SlugField(max_length=64, blank=True, default="",
                            help_text="The node pool (a runnode label) the tenant's flow runs on; empty: the shared pool.")

    class Meta:
        ordering = ["name"]
        default_permissions = ()
        permissions = GLOBAL_POLICIES + [(OPERATE_PLATFORM, "operate the shared platform (nodes, grants, placement)")]

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
