"""Logging in and out (Django's authentication views, with the portal's page)."""

from django.contrib.auth import views as auth_views


class LoginView(auth_views.LoginView):
    """The login page; a logged-in user goes straight on."""

    template_name = "portal/login.html"
    redirect_authenticated_user = True


class LogoutView(auth_views.LogoutView):
    """Logging out (POST), back to the login page."""
