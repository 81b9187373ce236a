"""The answer to a locked-out login (django-axes calls ``lockout_response``): the API's error
shape (429) for the API, the portal's login page with the reason (429) elsewhere."""

from __future__ import annotations

from math import ceil

from axes.backends import AxesStandaloneBackend
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.http import JsonResponse
from django.shortcuts import render


def lockout_message() -> str:
    """What a locked-out client is told."""
    minutes = ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return (f"too many failed logins ({settings.AXES_FAILURE_LIMIT}) from this address: logging in is locked "
            f"for {minutes} minute{'s' if minutes != 1 else ''}, then try again")


def lockout_response(request, original_response=None, credentials=None):
    """429 saying that, and for how long, logging in is locked."""
    from flowsite.api.errors import error_body  # the API's modules import this one

    message = lockout_message()
    if request.path.startswith("/api/"):
        response = JsonResponse(error_body(429, "locked_out", message), status=429)
    else:
        response = render(request, "portal/login.html", {"form": AuthenticationForm(request), "lockout": message},
                          status=429)
    response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    return response


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' check before every password login made by a request: a locked-out user
    name and address are refused. A login with no request (a shell, a management command, the
    test client's ``login``) is nobody guessing over the network, and is not checked."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username, password, **kwargs)
