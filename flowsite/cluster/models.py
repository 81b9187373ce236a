"""What the control plane keeps of the cluster: its tenants' deployments."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from flowsite.flows.models import ProcessGroup
from flowsite.tenancy.models import Tenant


class Deployment(models.Model):
    """A tenant's flow as it was deployed: the tenant's root group exported with instance
    identifiers, its parameter contexts prefixed with the tenant's slug and its sensitive values
    sealed (``document``), and the fingerprint of the cluster flow the deployment published."""

    deploy_id = models.CharField(max_length=32, unique=True)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="deployments")
    group = models.ForeignKey(ProcessGroup, on_delete=models.CASCADE, related_name="deployments")
    #: The version of the root group deployed; None for the design as it was.
    version = models.PositiveIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    #: The fingerprint of the cluster flow (every tenant's latest deployment) this one published.
    fingerprint = models.CharField(max_length=64)
    #: The cluster flow's version label, e.g. ``acme:v3,globex:design``.
    cluster_version = models.TextField(blank=True)
    document = models.JSONField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["tenant", "-created_at"], name="deployment_tenant_latest")]

    def __str__(self) -> str:
        return f"{self.tenant.slug} {self.label}"

    @property
    def label(self) -> str:
        """``v<N>`` or ``design``."""
        return f"v{self.version}" if self.version is not None else "design"
