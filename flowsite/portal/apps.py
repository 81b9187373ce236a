from django.apps import AppConfig


class PortalConfig(AppConfig):
    """Server-rendered pages."""

    name = "flowsite.portal"
    label = "portal"
    default_auto_field = "django.db.models.BigAutoField"
