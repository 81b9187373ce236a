from django.apps import AppConfig


class TenancyConfig(AppConfig):
    """Tenants, memberships, tenant groups and global policies."""

    name = "flowsite.tenancy"
    label = "tenancy"
    default_auto_field = "django.db.models.BigAutoField"
