from django.apps import AppConfig


class FlowsConfig(AppConfig):
    """Design-time flows of every tenant."""

    name = "flowsite.flows"
    label = "flows"
    default_auto_field = "django.db.models.BigAutoField"
