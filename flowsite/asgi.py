"""The ASGI application served by daphne: Django over HTTP, routed through Channels, behind the
streamed request-body limit (``flowsite.limits.RequestBodyLimit``); the live WebSocket endpoint
(``/ws/``, ``flowsite.live``) behind its origin check and authentication. The process is warmed
up before it serves (``flowsite.warm``)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "flowsite.settings")
django_application = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402  (Django must be set up first)

from flowsite.limits import RequestBodyLimit  # noqa: E402
from flowsite.live.auth import live_auth  # noqa: E402
from flowsite.live.routing import websocket_urlpatterns  # noqa: E402
from flowsite.warm import warm_up  # noqa: E402

warm_up()
application = ProtocolTypeRouter({
    "http": RequestBodyLimit(django_application),
    "websocket": live_auth(URLRouter(websocket_urlpatterns)),
})
