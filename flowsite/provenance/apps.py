from django.apps import AppConfig


class ProvenanceConfig(AppConfig):
    """Provenance and queues: searches, lineage, replay, queue listings and drops, exports and
    analytics over every node."""

    name = "flowsite.provenance"
    label = "provenance"
    default_auto_field = "django.db.models.BigAutoField"
