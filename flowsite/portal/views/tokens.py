"""The user's API tokens: list them, create one (its secret shown once) and revoke one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from flowsite.api.lookup import tenants_of
from flowsite.api.models import ApiToken
from flowsite.api.serializers.tokens import TokenSerializer
from flowsite.api.views.tokens import TokenCreationThrottle, TokenList, issue_for
from flowsite.portal.editing import messages as error_messages

#: Where a new token's secret waits (in the session) to be shown, once, after the redirect.
NEW_SECRET_KEY = "flowsite.new-token"


@login_required
def index(request):
    """The user's tokens, the form to create one, and a new token's secret (once)."""
    new = request.session.pop(NEW_SECRET_KEY, None)
    status, form = 200, {"name": "", "expiresAt": "", "tenant": "", "readOnly": False, "errors": {}}
    if request.method == "POST":
        form = {"name": request.POST.get("name", ""), "expiresAt": request.POST.get("expiresAt", ""),
                "tenant": request.POST.get("tenant", ""), "readOnly": request.POST.get("readOnly") == "true"}
        serializer = TokenSerializer(data={"name": form["name"], "expiresAt": form["expiresAt"] or None,
                                           "tenant": form["tenant"] or None, "readOnly": form["readOnly"]})
        throttle = TokenCreationThrottle()
        if not throttle.allow_request(request, TokenList):
            form["errors"] = {"name": [f"you have created too many tokens lately: try again in "
                                       f"{int(throttle.wait() or 60)} seconds"]}
            status = 429
        elif serializer.is_valid():
            problems, issued = issue_for(request, serializer.validated_data)
            if not problems:
                token, secret = issued
                request.session[NEW_SECRET_KEY] = {"id": str(token.pk), "name": token.name, "secret": secret}
                return redirect("portal:tokens")
            form["errors"] = {name: [message] for name, message in problems.items()}
            status = 400
        else:
            form["errors"] = {name: error_messages(detail) for name, detail in serializer.errors.items()}
            status = 400
    tokens = ApiToken.objects.filter(user=request.user).select_related("tenant")
    return render(request, "portal/tokens.html", {"tokens": tokens, "new": new, "form": form,
                                                  "tenants": tenants_of(request).order_by("name")}, status=status)


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
