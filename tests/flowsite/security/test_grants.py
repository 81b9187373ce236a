"""Operators' grants of a tenant: the operator API (403 without tenant data to anyone else),
the checks every grant passes, the admin site and the grant_tenant / create_operator commands.
Every change is audited."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from flowsite.tenancy.models import is_platform_operator
from flowsite.tenancy.models import Tenant
from tests.flowsite.api.support import API, assert_error, problems_by_path
from tests.flowsite.conftest import token_client

TENANTS = f"{API}platform/tenants"


@pytest.fixture
def operator(db):
    call_command("create_operator", "olga", "--password", "operator password")
    return get_user_model().objects.get(username="olga")


@pytest.fixture
def api_operator(operator) -> APIClient:
    return token_client(operator)


def test_only_platform_operators_reach_the_operator_api(tenant_a, tenant_b, api_a, api_operator):
    url = f"{TENANTS}/{tenant_b.tenant.pk}"
    for response in (api_a.get(TENANTS), api_a.get(url),
                     api_a.patch(url, {"capabilities": ["read-filesystem"]}, format="json")):
        body = assert_error(response, 403, "permission_denied")
        assert body["message"] == "platform operators only"
        assert tenant_b.tenant.slug.encode() not in response.content and b"Globex" not in response.content
    assert_error(APIClient().get(TENANTS), 401, "not_authenticated")
    listed = api_operator.get(TENANTS).json()["results"]
    assert {t["slug"] for t in listed} == {tenant_a.tenant.slug, tenant_b.tenant.slug}
    detail = api_operator.get(url).json()
    assert detail == {**detail, "capabilities": ["read-filesystem", "write-filesystem"], "fileRoots": [],
                      "networkAllow": [], "listenPorts": None, "pool": ""}
    tenant_b.tenant.refresh_from_db()
    assert tenant_b.tenant.capabilities == ["read-filesystem", "write-filesystem"], "the refused PATCH changed nothing"


def test_an_operator_changes_a_tenants_grants_normalised_and_audited(tenant_a, api_operator, operator, tmp_path):
    url = f"{TENANTS}/{tenant_a.tenant.pk}"
    answer = api_operator.patch(url, {"capabilities": ["execute-code", "read-filesystem", "read-filesystem"],
                                      "fileRoots": [f"{tmp_path}//in/../files/"],
                                      "networkAllow": ["10.1.2.3/24", "API.example.com:443", "[::1]:8080"],
                                      "listenPorts": [20000, 20099], "pool": "eu-west"}, format="json")
    assert answer.status_code == 200, answer.json()
    expected = {"capabilities": ["read-filesystem", "execute-code"], "fileRoots": [f"{tmp_path}/files"],
                "networkAllow": ["10.1.2.0/24", "api.example.com:443", "[::1]:8080"],
                "listenPorts": [20000, 20099], "pool": "eu-west"}
    assert answer.json() == {**answer.json(), **expected}
    assert api_operator.get(url).json() == answer.json()
    tenant = Tenant.objects.get(pk=tenant_a.tenant.pk)
    assert (tenant.listen_port_low, tenant.listen_port_high, tenant.pool) == (20000, 20099, "eu-west")
    entry = LogEntry.objects.get(object_id=str(tenant.pk))
    assert entry.user == operator and "tenant grants changed" in entry.change_message
    assert "eu-west" in entry.change_message

    answer = api_operator.patch(url, {"listenPorts": None, "pool": ""}, format="json")
    assert (answer.json()["listenPorts"], answer.json()["pool"]) == (None, "")
    assert answer.json()["capabilities"] == ["read-filesystem", "execute-code"], "fields not named are kept"
    assert_error(api_operator.get(f"{TENANTS}/00000000-0000-0000-0000-000000000000"), 404, "not_found")


@pytest.mark.parametrize("body, path, words", [
    ({"capabilities": ["read filesystem"]}, "$.capabilities[0]", "not a valid choice"),
    ({"fileRoots": ["relative/dir"]}, "$.fileRoots", "not an absolute path"),
    ({"fileRoots": ["/proc/self"]}, "$.fileRoots", "inside /proc"),
    ({"fileRoots": ["/sys"]}, "$.fileRoots", "inside /sys"),
    ({"fileRoots": ["/dev/shm"]}, "$.fileRoots", "inside /dev"),
    ({"fileRoots": ["/tmp/../"]}, "$.fileRoots", "file system's root"),
    ({"fileRoots": [str(settings.BASE_DIR / ".local" / "secrets")]}, "$.fileRoots", "no tenant may use"),
    ({"networkAllow": ["not a host"]}, "$.networkAllow", "not a CIDR range, a host name or host:port"),
    ({"networkAllow": ["10.0.0.0/40"]}, "$.networkAllow", "not a CIDR range"),
    ({"networkAllow": ["example.com:0"]}, "$.networkAllow", "port is a number"),
    ({"listenPorts": [80, 90]}, "$.listenPorts[0]", "greater than or equal to 1024"),
    ({"listenPorts": [30000, 20000]}, "$.listenPorts", "is after the last"),
    ({"listenPorts": [20000]}, "$.listenPorts", "at least 2 elements"),
    ({"pool": "eu west"}, "$.pool", "not a pool name"),
])
def test_grants_an_operator_may_not_give(tenant_a, api_operator, body, path, words):
    before = Tenant.objects.filter(pk=tenant_a.tenant.pk).values().get()
    refused = assert_error(api_operator.patch(f"{TENANTS}/{tenant_a.tenant.pk}", body, format="json"), 400, "invalid")
    assert words in problems_by_path(refused)[path], refused
    assert Tenant.objects.filter(pk=tenant_a.tenant.pk).values().get() == before
    assert not LogEntry.objects.exists()


def test_the_schema_documents_the_operator_api(api_a):
    paths = api_a.get(f"{API}schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert set(paths["/api/v1/platform/tenants"]) == {"get"}
    detail = paths["/api/v1/platform/tenants/{id}"]
    assert {"get", "patch", "put"} <= set(detail) and "403" in detail["patch"]["responses"]


def test_grant_tenant_and_create_operator_commands(tenant_a, tmp_path, capsys, operator):
    slug = tenant_a.tenant.slug
    call_command("grant_tenant", slug, "--revoke-all")
    call_command("grant_tenant", slug, "--capability", "read-filesystem", "--file-root", str(tmp_path / "in"),
                 "--allow", "127.0.0.1:8080", "--listen-ports", "20000-20099", "--pool", "gpu", "--by", "olga")
    tenant = Tenant.objects.get(slug=slug)
    assert (tenant.capabilities, tenant.file_roots, tenant.network_allow) == (
        ["read-filesystem"], [str(tmp_path / "in")], ["127.0.0.1:8080"])
    assert (tenant.listen_port_low, tenant.listen_port_high, tenant.pool) == (20000, 20099, "gpu")
    assert LogEntry.objects.filter(object_id=str(tenant.pk), user=operator).count() == 1, "--by names the operator"
    call_command("grant_tenant", slug, "--revoke-capability", "read-filesystem", "--disallow", "127.0.0.1:8080",
                 "--no-listen", "--pool", "")
    tenant.refresh_from_db()
    assert (tenant.capabilities, tenant.network_allow, tenant.listen_port_low, tenant.pool) == ([], [], None, "")
    assert "listen ports none; pool shared" in capsys.readouterr().out
    with pytest.raises(CommandError, match="inside /proc"):
        call_command("grant_tenant", slug, "--file-root", "/proc/1/root")
    with pytest.raises(CommandError, match="listen_ports"):
        call_command("grant_tenant", slug, "--listen-ports", "80-90")
    with pytest.raises(CommandError, match="no tenant"):
        call_command("grant_tenant", "no-such-tenant")

    call_command("create_operator", "olga", "--revoke")
    assert not is_platform_operator(get_user_model().objects.get(username="olga"))
    user = get_user_model().objects.create_user("tess", password="x")
    call_command("create_operator", "tess")
    assert is_platform_operator(get_user_model().objects.get(username="tess"))


def _admin_post(client, tenant: Tenant, **changes):
    """Post the tenant's admin change form with ``changes`` (inline formsets left as they are)."""
    url = reverse("admin:tenancy_tenant_change", args=[tenant.pk])
    page = client.get(url)
    assert page.status_code == 200
    data = {"name": tenant.name, "slug": tenant.slug}
    for formset in page.context["inline_admin_formsets"]:
        prefix = formset.formset.prefix
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0"})
    data.update(changes)
    return client.post(url, data)


def test_the_admin_site_lets_operators_change_grants(client, tenant_a, tmp_path):
    staff = get_user_model().objects.create_user("sam", password="pw", is_staff=True)
    client.force_login(staff)
    assert client.get(reverse("admin:tenancy_tenant_change", args=[tenant_a.tenant.pk])).status_code == 403

    call_command("create_operator", "sam")
    grants = {"capabilities": "read-filesystem", "file_roots": str(tmp_path), "network_allow": "10.0.0.0/8",
              "listen_port_low": "20000", "listen_port_high": "20010", "pool": ""}
    refused = _admin_post(client, tenant_a.tenant, **{**grants, "file_roots": "/proc/self"})
    assert refused.status_code == 200 and "inside /proc, which no tenant may use" in refused.content.decode()
    response = _admin_post(client, tenant_a.tenant, **grants)
    assert response.status_code == 302, response.content.decode()[-3000:]
    tenant = Tenant.objects.get(pk=tenant_a.tenant.pk)
    assert (tenant.capabilities, tenant.file_roots, tenant.listen_port_high) == (["read-filesystem"],
                                                                               [str(tmp_path)], 20010)
    assert LogEntry.objects.filter(object_id=str(tenant.pk), change_message__contains="tenant grants changed",
                                   user=staff).exists()
