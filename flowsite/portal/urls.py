"""Routes of the portal."""

from django.urls import path

from flowsite.portal import views

app_name = "portal"

urlpatterns = [
    path("", views.home, name="home"),
]
