from django.apps import AppConfig


class WorkersConfig(AppConfig):
    """Node processes: the engine run inside the control plane's environment."""

    name = "workers"
    label = "workers"
