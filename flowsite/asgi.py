"""The ASGI application served by daphne: Django over HTTP, routed through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flowsite.settings")
django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402  (Django must be set up first)

application = ProtocolTypeRouter({"http": django_application})
