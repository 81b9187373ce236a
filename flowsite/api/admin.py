"""Admin pages for API tokens: list, inspect and revoke (secrets are never stored or shown)."""

from django.contrib import admin
from django.utils import timezone

from flowsite.api.models import ApiToken


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "key", "state", "tenant", "read_only", "created_at", "expires_at", "last_used_at"]
    list_filter = ["revoked_at", "read_only"]
    search_fields = ["name", "key", "user__username"]
    # the scope is fixed at creation (a token's children were checked against it)
    readonly_fields = ["user", "key", "created_at", "revoked_at", "last_used_at", "state", "tenant", "read_only",
                       "parent", "expires_at"]
    exclude = ["secret_hash"]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False  # tokens are issued through the API or the portal, which show the secret once

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{count} token(s) revoked")
