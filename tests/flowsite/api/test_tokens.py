"""API tokens: created with the secret shown once and stored hashed, used as bearer
credentials, refused with a 401 that says why once expired, revoked, wrong or malformed; and
the portal's session login, with CSRF checked on unsafe requests."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.conftest import token_client

PASSWORD = "correct horse battery staple"  # what TenantWorld.member gives every user


def bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture
def user(tenant_a):
    return tenant_a.member("tokenuser")


@pytest.fixture
def new_token(user):
    """(response body of POST /tokens, the client that made it)."""
    client = token_client(user)
    response = client.post(f"{API}tokens", {"name": "ci", "expiresAt": None}, format="json")
    assert response.status_code == 201, response.content
    return response.json(), client


def test_the_secret_is_shown_once_and_never_again(new_token):
    created, client = new_token
    assert created["secret"].startswith(f"fst_{created['key']}_") and created["state"] == "active"
    detail = client.get(f"{API}tokens/{created['id']}")
    listing = client.get(f"{API}tokens")
    assert detail.status_code == 200 and "secret" not in detail.json()
    assert [t["id"] for t in listing.json()["results"]][0] == created["id"]
    assert all("secret" not in t for t in listing.json()["results"])
    assert created["secret"] not in detail.content.decode() + listing.content.decode()


def test_the_secret_is_stored_hashed_only(new_token):
    created, _ = new_token
    secret = created["secret"]
    token = ApiToken.objects.get(pk=created["id"])
    assert token.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute("select * from api_apitoken")
        stored = repr(cursor.fetchall())
    # The random part is URL-safe base64 and may hold "_" itself: cut after the key only.
    random_part = secret.removeprefix(f"fst_{created['key']}_")
    assert len(random_part) >= 32
    assert secret not in stored and random_part not in stored


def test_a_token_authenticates_and_records_its_use(new_token, user):
    created, _ = new_token
    client = bearer(created["secret"])
    response = client.get(f"{API}tenants")
    assert response.status_code == 200 and response.json()["count"] == 1
    assert ApiToken.objects.get(pk=created["id"]).last_used_at is not None
    assert client.get(f"{API}tokens/{created['id']}").json()["lastUsedAt"] is not None


def test_an_expired_token_is_401_saying_so(new_token):
    created, _ = new_token
    ApiToken.objects.filter(pk=created["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    body = assert_error(bearer(created["secret"]).get(f"{API}tenants"), 401, "authentication_failed")
    assert body["message"] == "the API token is expired"


def test_a_token_with_a_future_expiry_works_until_then(user):
    client = token_client(user)
    soon = timezone.now() + timedelta(hours=1)
    created = client.post(f"{API}tokens", {"name": "short", "expiresAt": soon.isoformat()}, format="json").json()
    assert created["state"] == "active"
    assert bearer(created["secret"]).get(f"{API}tenants").status_code == 200


def test_an_expiry_in_the_past_is_refused_at_creation(user):
    body = assert_error(token_client(user).post(f"{API}tokens", {"name": "old", "expiresAt": "2001-01-01T00:00:00Z"},
                                                format="json"), 400, "invalid")
    assert body["problems"] == [{"path": "$.expiresAt", "message": "the expiry must be in the future"}]


def test_a_revoked_token_is_401_saying_so(new_token):
    created, client = new_token
    revoked = client.delete(f"{API}tokens/{created['id']}")
    assert revoked.status_code == 200 and revoked.json()["state"] == "revoked"
    assert revoked.json()["revokedAt"] is not None
    body = assert_error(bearer(created["secret"]).get(f"{API}tenants"), 401, "authentication_failed")
    assert body["message"] == "the API token is revoked"
    again = client.delete(f"{API}tokens/{created['id']}")  # revoking twice keeps the first time
    assert again.json()["revokedAt"] == revoked.json()["revokedAt"]


def test_a_token_revoking_itself_stops_working(user):
    _, secret = ApiToken.issue(user, "self")
    client = bearer(secret)
    token = ApiToken.objects.get(user=user, name="self")
    assert client.delete(f"{API}tokens/{token.pk}").status_code == 200
    assert_error(client.get(f"{API}tokens"), 401)


@pytest.mark.parametrize("secret, message", [
    ("fst_000000000000_wrong", "unknown API token"),
    ("not-even-a-flowsite-token", "unknown API token"),
    ("fst_", "unknown API token"),
])
def test_an_unknown_token_is_401(user, secret, message):
    assert assert_error(bearer(secret).get(f"{API}tenants"), 401)["message"] == message


def test_a_wrong_secret_for_a_real_key_is_401(new_token):
    created, _ = new_token
    forged = created["secret"][:-4] + ("AAAA" if not created["secret"].endswith("AAAA") else "BBBB")
    assert assert_error(bearer(forged).get(f"{API}tenants"), 401)["message"] == "unknown API token"


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Bearer  ", "bearer fst_x y"])
def test_a_malformed_authorization_header_is_401(user, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    body = assert_error(client.get(f"{API}tenants"), 401, "authentication_failed")
    assert body["message"] == "the Authorization header must read 'Bearer <token>'"


def test_a_token_that_is_not_text_is_401(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=b"Bearer \xff\xfe".decode("latin-1"))
    assert assert_error(client.get(f"{API}tenants"), 401)["message"] == "the token is not valid text"


def test_another_scheme_is_not_authenticated(user):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Basic dXNlcjpwYXNz")
    response = client.get(f"{API}tenants")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_the_token_of_an_inactive_user_is_401(new_token, user):
    created, _ = new_token
    user.is_active = False
    user.save()
    assert assert_error(bearer(created["secret"]).get(f"{API}tenants"), 401)["message"] == \
        "the token's user is inactive"


# ------------------------------------------------------------------ sessions (the portal)

def test_a_logged_in_session_reads_the_api(user, tenant_a):
    client = APIClient()
    assert client.login(username="tokenuser", password=PASSWORD)
    response = client.get(f"{API}tenants")
    assert response.status_code == 200 and response.json()["results"][0]["id"] == str(tenant_a.tenant.pk)


def test_unsafe_session_requests_need_the_csrf_token(user, tenant_a):
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="tokenuser", password=PASSWORD)
    refused = client.post(f"{API}tokens", {"name": "from-portal"}, format="json")
    body = assert_error(refused, 403, "permission_denied")
    assert "CSRF" in body["message"]
    assert not ApiToken.objects.filter(name="from-portal").exists()

    csrf = "a" * 32
    client.cookies["csrftoken"] = csrf
    accepted = client.post(f"{API}tokens", {"name": "from-portal"}, format="json", HTTP_X_CSRFTOKEN=csrf)
    assert accepted.status_code == 201, accepted.content


def test_bearer_requests_need_no_csrf_token(user):
    _, secret = ApiToken.issue(user, "script")
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert client.post(f"{API}tokens", {"name": "from-script"}, format="json").status_code == 201


def test_a_logged_out_session_is_401(user):
    client = APIClient()
    client.login(username="tokenuser", password=PASSWORD)
    client.logout()
    assert_error(client.get(f"{API}tenants"), 401)
