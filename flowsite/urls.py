"""URL routes of the web tier: the API, the admin site, the portal and a health check."""

from django.contrib import admin
from django.urls import include, path

from flowsite.health import healthz

urlpatterns = [
    path("api/v1/", include("flowsite.api.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path("", include("flowsite.portal.urls")),
]

handler404 = "flowsite.api.errors.not_found"
handler500 = "flowsite.api.errors.server_error"
