from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The REST API and its tokens."""

    name = "flowsite.api"
    label = "api"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from flowsite.api import schema  # noqa: F401  (registers the schema extensions)
