from django.apps import AppConfig


class FlowsConfig(AppConfig):
    """Design-time flows of every tenant."""

    name = "flowsite.flows"
    label = "flows"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from flowsite.flows.tenants import ensure_root_group
        from flowsite.tenancy.models import Tenant

        post_save.connect(ensure_root_group, sender=Tenant, dispatch_uid="flowsite.flows.root_group")
