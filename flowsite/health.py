"""The health check of the web tier: ready when PostgreSQL answers."""

from django.db import connection
from django.http import JsonResponse


def healthz(request):
    """200 with ``{"database": "ok"}`` when the database answers, 503 otherwise."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("select 1")
    except Exception as error:  # noqa: BLE001 - any failure means not ready
        return JsonResponse({"database": f"unreachable: {error.__class__.__name__}"}, status=503)
    return JsonResponse({"database": "ok"})
