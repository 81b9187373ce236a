"""The WebSocket routes (``flowsite.asgi`` serves them under the origin check and authentication)."""

from django.urls import path

from flowsite.live.consumers import ProcessGroupConsumer

websocket_urlpatterns = [
    path("ws/process-groups/<uuid:group_id>", ProcessGroupConsumer.as_asgi()),
]
