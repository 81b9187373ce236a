"""Logging in and out, and switching tenants."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from flowsite.flows.access import grant_global
from flowsite.tenancy.models import Membership
from tests.flowsite.conftest import TenantWorld
from tests.flowsite.portal.conftest import logged_in

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/", "/tokens/", "/groups/{root}/", "/groups/{root}/processors/new"])
def test_pages_require_login(tenant_a, path):
    response = Client().get(path.format(root=tenant_a.root.pk))
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


def test_switching_tenant_requires_login(tenant_a):
    response = Client().post("/tenant", {"tenant": str(tenant_a.tenant.pk)})
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_log_in_lands_on_the_root_group_and_log_out_ends_the_session(tenant_a):
    tenant_a.member("ann", global_policies=["view_flow"])
    client = Client()
    page = client.get("/login/")
    assert page.status_code == 200 and b"csrfmiddlewaretoken" in page.content
    wrong = client.post("/login/", {"username": "ann", "password": "nope"})
    assert wrong.status_code == 200 and b"Please enter a correct username and password" in wrong.content
    response = client.post("/login/", {"username": "ann", "password": "correct horse battery staple"}, follow=True)
    assert response.redirect_chain[-1][0] == f"/groups/{tenant_a.root.pk}/"
    assert b"Acme" in response.content
    assert client.post("/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_forms_carry_a_csrf_token_and_posts_without_one_are_refused(admin_a, tenant_a):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_a)
    page = client.get(f"/groups/{tenant_a.root.pk}/").content.decode()
    assert page.count('method="post"') == page.count('name="csrfmiddlewaretoken"') > 0
    assert client.post(f"/groups/{tenant_a.root.pk}/groups", {"name": "x"}).status_code == 403


def test_logging_out_needs_a_post(admin_a):
    client = logged_in(admin_a)
    assert client.get("/logout/").status_code == 405


def test_a_user_without_tenants_is_told_so(db):
    user = get_user_model().objects.create_user("loner", password="x")
    response = logged_in(user).get("/")
    assert response.status_code == 200
    assert b"not a member of any tenant" in response.content


def test_switch_to_an_own_tenant(tenant_a, tenant_b):
    user = tenant_a.member("both", global_policies=["view_flow"])
    Membership.objects.create(tenant=tenant_b.tenant, user=user)
    grant_global(tenant_b.tenant, "view_flow", user=user)
    client = logged_in(user)
    assert client.get("/")["Location"] == f"/groups/{tenant_a.root.pk}/"
    page = client.get(f"/groups/{tenant_a.root.pk}/")
    assert b'name="tenant"' in page.content  # the selector shows when there is a choice
    response = client.post("/tenant", {"tenant": str(tenant_b.tenant.pk)})
    assert response.status_code == 302
    assert client.get("/")["Location"] == f"/groups/{tenant_b.root.pk}/"
    page = client.get(f"/groups/{tenant_b.root.pk}/")
    assert f'<option value="{tenant_b.tenant.pk}" selected>'.encode() in page.content


def test_switching_to_another_tenant_is_not_found(tenant_a, tenant_b):
    client = logged_in(tenant_a.member(global_policies=["view_flow"]))
    assert client.post("/tenant", {"tenant": str(tenant_b.tenant.pk)}).status_code == 404
    assert client.post("/tenant", {"tenant": "not-a-uuid"}).status_code == 404
    assert client.get("/")["Location"] == f"/groups/{tenant_a.root.pk}/"


def test_switching_needs_a_post(admin_a, tenant_a):
    assert logged_in(admin_a).get("/tenant").status_code == 405


def test_opening_a_group_of_another_own_tenant_makes_it_current(tenant_a):
    other = TenantWorld("Initech")
    user = tenant_a.member(global_policies=["view_flow"])
    Membership.objects.create(tenant=other.tenant, user=user)
    grant_global(other.tenant, "view_flow", user=user)
    client = logged_in(user)
    assert client.get(f"/groups/{other.root.pk}/").status_code == 200
    assert client.get("/")["Location"] == f"/groups/{other.root.pk}/"
