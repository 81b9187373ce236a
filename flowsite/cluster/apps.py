from django.apps import AppConfig


class ClusterConfig(AppConfig):
    """The cluster of nodes: its members, their status, commands to them and deployments."""

    name = "flowsite.cluster"
    label = "cluster"
    default_auto_field = "django.db.models.BigAutoField"
