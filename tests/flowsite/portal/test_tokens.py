"""Managing API tokens from the portal."""

import pytest
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from tests.flowsite.portal.conftest import logged_in

pytestmark = pytest.mark.django_db


def api_status(secret: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client.get("/api/v1/tokens").status_code


def test_a_new_token_secret_is_shown_once(portal_a, admin_a):
    response = portal_a.post("/tokens/", {"name": "deploy", "expiresAt": ""})
    assert response.status_code == 302
    token = ApiToken.objects.get(user=admin_a, name="deploy")
    page = portal_a.get("/tokens/").content.decode()
    secret = page.split('id="new-token-secret">', 1)[1].split("<", 1)[0]
    assert secret.startswith(f"fst_{token.key}_")
    assert "will not be shown again" in page
    assert api_status(secret) == 200
    again = portal_a.get("/tokens/").content.decode()
    assert secret not in again and f"fst_{token.key}_" in again  # listed by its key only


def test_a_token_with_an_expiry(portal_a, admin_a):
    portal_a.post("/tokens/", {"name": "short", "expiresAt": "2999-01-01T12:30"})
    token = ApiToken.objects.get(user=admin_a)
    assert (token.expires_at.year, token.expires_at.hour, token.expires_at.minute) == (2999, 12, 30)


def test_token_form_errors_come_from_the_api_serializer(portal_a):
    response = portal_a.post("/tokens/", {"name": "", "expiresAt": "2001-01-01T00:00"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "This field may not be blank." in page and "the expiry must be in the future" in page
    assert not ApiToken.objects.exists()


def test_revoke_a_token(portal_a, admin_a):
    token, secret = ApiToken.issue(admin_a, "old")
    response = portal_a.post(f"/tokens/{token.pk}/revoke")
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.state == "revoked"
    assert api_status(secret) == 401
    page = portal_a.get("/tokens/").content.decode()
    assert "badge-revoked" in page and f"/tokens/{token.pk}/revoke" not in page


def test_other_users_tokens_are_not_found(portal_a, tenant_a):
    theirs, _ = ApiToken.issue(tenant_a.member("someone"), "theirs")
    assert portal_a.post(f"/tokens/{theirs.pk}/revoke").status_code == 404
    assert b"theirs" not in portal_a.get("/tokens/").content
    assert logged_in(tenant_a.member()).get(f"/tokens/{theirs.pk}/revoke").status_code == 405
