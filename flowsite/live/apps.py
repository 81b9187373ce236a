from django.apps import AppConfig


class LiveConfig(AppConfig):
    """The live WebSocket endpoint (``/ws/``)."""

    name = "flowsite.live"
    label = "live"
