"""Admin pages for the cluster: deployments (read-only; they are made by deploying)."""

from django.contrib import admin

from flowsite.cluster.models import Deployment


@admin.register(Deployment)
class DeploymentAdmin(admin.ModelAdmin):
    list_display = ["deploy_id", "tenant", "version", "created_by", "created_at", "fingerprint"]
    list_filter = ["tenant"]
    readonly_fields = ["deploy_id", "tenant", "group", "version", "created_by", "created_at", "fingerprint",
                       "cluster_version", "document"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
