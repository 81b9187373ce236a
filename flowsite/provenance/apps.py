from django.apps import AppConfig


class ProvenanceConfig(AppConfig):
    """Provenance: analytics jobs over the events every node exports, on Spark."""

    name = "flowsite.provenance"
    label = "provenance"
    default_auto_field = "django.db.models.BigAutoField"
