"""The user's API tokens: list them, create one (its secret shown once) and revoke one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from flowsite.api.models import ApiToken
from flowsite.api.serializers.tokens import TokenSerializer
from flowsite.portal.editing import messages as error_messages

#: Where a new token's secret waits (in the session) to be shown, once, after the redirect.
NEW_SECRET_KEY = "flowsite.new-token"


@login_required
def index(request):
    """The user's tokens, the form to create one, and a new token's secret (once)."""
    new = request.session.pop(NEW_SECRET_KEY, None)
    status, form = 200, {"name": "", "expiresAt": "", "errors": {}}
    if request.method == "POST":
        form = {"name": request.POST.get("name", ""), "expiresAt": request.POST.get("expiresAt", "")}
        serializer = TokenSerializer(data={"name": form["name"], "expiresAt": form["expiresAt"] or None})
        if serializer.is_valid():
            token, secret = ApiToken.issue(request.user, serializer.validated_data["name"],
                                           serializer.validated_data.get("expires_at"))
            request.session[NEW_SECRET_KEY] = {"id": str(token.pk), "name": token.name, "secret": secret}
            return redirect("portal:tokens")
        form["errors"] = {name: error_messages(detail) for name, detail in serializer.errors.items()}
        status = 400
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "portal/tokens.html", {"tokens": tokens, "new": new, "form": form}, status=status)


@login_required
@require_POST
def revoke(request, pk):
    """Revoke one of the user's tokens (it stays listed, revoked)."""
    token = ApiToken.objects.filter(pk=pk, user=request.user).first()
    if token is None:
        raise Http404("no such token")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    messages.success(request, f"Revoked the token {token.name}; it no longer works.")
    return redirect("portal:tokens")
