"""Tokens never create a wider or longer-lived token; tokens narrowed to one tenant and to
reading; login and token failures lock out; token creation is throttled; schema and docs need
a user in production; a Content-Security-Policy on every answer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from flowsite.api.views.tokens import TokenCreationThrottle
from flowsite.flows import access
from flowsite.tenancy.models import Membership
from tests.flowsite.api.support import API, assert_error, build_flow

PASSWORD = "correct horse battery staple"  # what TenantWorld.member gives every user


def bearer(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


# ------------------------------------------------------------------ tokens made with tokens

def test_a_five_minute_token_cannot_mint_a_token_that_never_expires(tenant_a):
    user = tenant_a.member()
    parent, secret = ApiToken.issue(user, "short", timezone.now() + timedelta(minutes=5))
    client = bearer(secret)
    made = client.post(f"{API}tokens", {"name": "forever", "expiresAt": None}, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["expiresAt"] is not None
    assert ApiToken.objects.get(pk=made.json()["id"]).expires_at == parent.expires_at
    later = (timezone.now() + timedelta(days=30)).isoformat()
    body = assert_error(client.post(f"{API}tokens", {"name": "long", "expiresAt": later}, format="json"), 400)
    assert "outlives" in body["problems"][0]["message"] and body["problems"][0]["path"] == "$.expiresAt"
    sooner = (timezone.now() + timedelta(minutes=1)).isoformat()
    assert client.post(f"{API}tokens", {"name": "sooner", "expiresAt": sooner}, format="json").status_code == 201


def test_a_token_cannot_make_a_token_that_holds_more(tenant_a, tenant_b):
    user = tenant_a.member()  # a member of both tenants, holding a token scoped to A
    Membership.objects.create(tenant=tenant_b.tenant, user=user)
    _, secret = ApiToken.issue(user, "a-only", tenant=tenant_a.tenant)
    client = bearer(secret)
    wider = client.post(f"{API}tokens", {"name": "b", "tenant": str(tenant_b.tenant.pk)}, format="json")
    assert assert_error(wider, 400)["problems"][0]["path"] == "$.tenant"
    child = client.post(f"{API}tokens", {"name": "child"}, format="json").json()
    assert child["tenant"] == str(tenant_a.tenant.pk) and child["readOnly"] is False


def test_a_read_only_token_only_reads(tenant_a):
    flow = build_flow(tenant_a)
    _, secret = ApiToken.issue(tenant_a.admin(), "reader", read_only=True)
    client = bearer(secret)
    assert client.get(f"{API}processors/{flow.gen.pk}").status_code == 200
    body = assert_error(client.patch(f"{API}processors/{flow.gen.pk}", {"revision": {"version": 0}, "name": "x"},
                                     format="json"), 403, "permission_denied")
    assert "read-only" in body["message"]
    assert_error(client.post(f"{API}tokens", {"name": "more"}, format="json"), 403)
    assert_error(client.delete(f"{API}connections/{flow.conn.pk}?version=0"), 403)


def test_a_tenant_scoped_token_sees_only_its_tenant(tenant_a, tenant_b):
    user = tenant_a.admin()
    Membership.objects.create(tenant=tenant_b.tenant, user=user)
    flow_b = build_flow(tenant_b)
    for action in access.GLOBAL_ACTIONS:
        access.grant_global(tenant_b.tenant, action, user=user)
    _, secret = ApiToken.issue(user, "a-only", tenant=tenant_a.tenant)
    scoped, unscoped = bearer(secret), bearer(ApiToken.issue(user, "all")[1])
    assert [t["id"] for t in scoped.get(f"{API}tenants").json()["results"]] == [str(tenant_a.tenant.pk)]
    assert len(unscoped.get(f"{API}tenants").json()["results"]) == 2
    for path in (f"tenants/{tenant_b.tenant.pk}", f"process-groups/{flow_b.root.pk}", f"processors/{flow_b.gen.pk}"):
        assert unscoped.get(API + path).status_code == 200
        assert_error(scoped.get(API + path), 404, "not_found")
    assert scoped.get(f"{API}process-groups/{tenant_a.root.pk}").status_code == 200


def test_token_creation_is_throttled_in_the_api_and_the_portal(tenant_a, monkeypatch):
    monkeypatch.setattr(TokenCreationThrottle, "THROTTLE_RATES", {"tokens": "3/hour"})
    user = tenant_a.member()
    client = bearer(ApiToken.issue(user, "maker")[1])
    answers = [client.post(f"{API}tokens", {"name": f"t{n}"}, format="json").status_code for n in range(4)]
    assert answers == [201, 201, 201, 429]
    assert client.get(f"{API}tokens").status_code == 200  # reading is not throttled
    portal = APIClient()
    portal.force_login(user)
    refused = portal.post("/tokens/", {"name": "one more"})
    assert refused.status_code == 429 and b"too many tokens" in refused.content


# ------------------------------------------------------------------ lockout

def test_twenty_five_wrong_portal_passwords_lock_the_login(tenant_a, client):
    user = tenant_a.member()
    answers = [client.post("/login/", {"username": user.username, "password": f"wrong {n}"}).status_code
               for n in range(25)]
    assert answers[:4] == [200] * 4 and set(answers[5:]) == {429}, answers
    locked = client.post("/login/", {"username": user.username, "password": PASSWORD})
    assert locked.status_code == 429 and b"too many failed logins" in locked.content
    assert "_auth_user_id" not in client.session


def test_a_good_password_before_the_limit_resets_the_count(tenant_a, client):
    user = tenant_a.member()
    for n in range(4):
        client.post("/login/", {"username": user.username, "password": f"wrong {n}"})
    assert client.post("/login/", {"username": user.username, "password": PASSWORD}).status_code == 302


def test_wrong_tokens_from_one_address_lock_out_token_authentication(tenant_a):
    _, good = ApiToken.issue(tenant_a.member(), "good")
    answers = [bearer(f"fst_{n:012x}_guess").get(f"{API}tenants").status_code for n in range(8)]
    assert answers[:4] == [401] * 4 and set(answers[5:]) == {429}, answers
    locked = bearer(good).get(f"{API}tenants")
    body = assert_error(locked, 429, "locked_out")
    assert "too many failed logins" in body["message"] and int(locked["Retry-After"]) > 0


# ------------------------------------------------------------------ schema, docs and CSP

@pytest.mark.parametrize("path", ["schema/", "docs/", "redoc/"])
def test_production_refuses_the_schema_and_docs_without_authentication(path, settings):
    settings.DEBUG = False
    assert APIClient().get(API + path).status_code in (401, 403)


@pytest.mark.parametrize("path", ["/login/", "/api/v1/tenants", "/api/v1/no-such-thing", "/healthz",
                                  "/api/v1/docs/"])
def test_every_answer_carries_a_content_security_policy(path, tenant_a):
    client = APIClient()
    client.force_login(tenant_a.member())
    policy = client.get(path, HTTP_ACCEPT="text/html")["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy and "object-src 'none'" in policy


def test_the_portal_makes_a_read_only_token_for_one_tenant(tenant_a, tenant_b):
    user = tenant_a.member()
    Membership.objects.create(tenant=tenant_b.tenant, user=user)
    portal = APIClient()
    portal.force_login(user)
    page = portal.get("/tokens/")
    assert b"Acme only" in page.content and b"Globex only" in page.content
    made = portal.post("/tokens/", {"name": "reader", "tenant": str(tenant_a.tenant.pk), "readOnly": "true"})
    assert made.status_code == 302
    token = ApiToken.objects.get(user=user, name="reader")
    assert token.tenant_id == tenant_a.tenant.pk and token.read_only and token.expires_at is None
    assert b"Acme, read-only" in portal.get("/tokens/").content
