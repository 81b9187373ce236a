"""Restricted components as NiFi 2 has them: a type needs every capability it declares granted
to the tenant by an operator, and the user needs ``use_restricted`` or ``restricted_<capability>``
for each. Refusals (API, import, portal) name the capability and who lacks it; deployment
refuses a design holding a component whose capability the tenant lacks."""

from __future__ import annotations

import html

import pytest

from flowsite.cluster.models import Deployment
from flowsite.flows import access
from flowsite.flows.models import Connection, Processor
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.conftest import TenantWorld, token_client
from tests.flowsite.portal.conftest import logged_in

PUT = {"type": "PutFile", "properties": {"Directory": "/tmp/out"}}
GET = {"type": "GetFile", "properties": {"Input Directory": "/tmp/in"}}
DESIGNER = {"root_policies": (access.VIEW, access.MODIFY)}


@pytest.fixture
def bare(db) -> TenantWorld:
    """A tenant as create_tenant makes it: no capability granted."""
    return TenantWorld("Initech")


def _processors(world) -> str:
    return f"{API}process-groups/{world.root.pk}/processors"


def _grant(world, *capabilities: str) -> None:
    world.tenant.capabilities = list(capabilities)
    world.tenant.save(update_fields=["capabilities"])


def test_a_tenant_without_the_capability_cannot_use_the_component_whatever_the_users_policies(bare):
    admin = token_client(bare.admin())  # every policy, use_restricted included
    refused = assert_error(admin.post(_processors(bare), PUT, format="json"), 403, "permission_denied")
    assert refused["message"] == ("PutFile is a restricted component requiring 'write-filesystem': the tenant has "
                                  "not been granted 'write-filesystem' (a platform operator grants capabilities)")
    _grant(bare, "write-filesystem")
    refused = assert_error(admin.post(_processors(bare), GET, format="json"), 403, "permission_denied")
    assert "requiring 'read-filesystem', 'write-filesystem'" in refused["message"]
    assert "the tenant has not been granted 'read-filesystem' (" in refused["message"]
    assert not Processor.objects.filter(tenant=bare.tenant).exists()
    assert admin.post(_processors(bare), PUT, format="json").status_code == 201


def test_a_user_needs_the_policy_of_each_capability_or_use_restricted(bare):
    _grant(bare, "read-filesystem", "write-filesystem")
    writer = token_client(bare.member(**DESIGNER, global_policies=(access.restricted_policy("write-filesystem"),)))
    assert writer.post(_processors(bare), PUT, format="json").status_code == 201
    refused = assert_error(writer.post(_processors(bare), GET, format="json"), 403, "permission_denied")
    assert refused["message"] == ("GetFile is a restricted component requiring 'read-filesystem', 'write-filesystem': "
                                  "you do not hold the tenant's 'restricted_read_filesystem' (or 'use_restricted') "
                                  "policy")
    nobody = token_client(bare.member(**DESIGNER))
    assert "'restricted_write_filesystem' (or 'use_restricted')" in assert_error(
        nobody.post(_processors(bare), PUT, format="json"), 403)["message"]
    put = Processor.objects.get(tenant=bare.tenant, type="PutFile")
    refused = assert_error(nobody.patch(f"{API}processors/{put.pk}", {"name": "x", "revision": {"version": 0}},
                                        format="json"), 403)
    assert "'restricted_write_filesystem'" in refused["message"], "changing one is refused too"
    trusted = token_client(bare.member(**DESIGNER, global_policies=(access.USE_RESTRICTED,)))
    assert trusted.post(_processors(bare), GET, format="json").status_code == 201


def test_importing_a_flow_with_a_restricted_component_is_checked_the_same_way(bare):
    definition = {"flowContents": {"identifier": "g", "name": "imported", "processors": [
        {"identifier": "p", "name": "p", "type": "FetchFile", "properties": {}}]}}
    admin = token_client(bare.admin())
    url = f"{API}process-groups/{bare.root.pk}/process-groups/import"
    refused = assert_error(admin.post(url, definition, format="json"), 403, "permission_denied")
    assert "FetchFile is a restricted component" in refused["message"]
    assert "the tenant has not been granted 'read-filesystem', 'write-filesystem'" in refused["message"]


def test_the_catalogue_names_capabilities_as_nifi_2_does(api_a):
    assert api_a.get(f"{API}processor-types/PutFile").json()["restricted"] == ["write-filesystem"]
    assert api_a.get(f"{API}processor-types/GetFile").json()["restricted"] == ["read-filesystem",
                                                                              "write-filesystem"]


def test_deploying_a_design_whose_restricted_component_lost_its_capability_is_refused(tenant_a, api_a):
    gen = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="gen", type="GenerateFlowFile")
    put = Processor.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, name="put", type="PutFile",
                                   properties={"Directory": "/tmp/out"}, auto_terminated=["success", "failure"])
    Connection.objects.create(tenant=tenant_a.tenant, parent=tenant_a.root, source=gen, destination=put,
                              selected_relationships=["success"])
    assert api_a.get(f"{API}processors/{put.pk}").json()["validationStatus"] == "VALID"
    _grant(tenant_a, "read-filesystem")  # an operator revoked write-filesystem
    shown = api_a.get(f"{API}processors/{put.pk}").json()
    assert shown["validationStatus"] == "INVALID"
    assert any("'write-filesystem'" in e["message"] for e in shown["validationErrors"])
    body = assert_error(api_a.post(f"{API}cluster/deployments", {}, format="json"), 400, "invalid_design")
    assert [p["message"] for p in body["problems"]] == [
        "put: PutFile is a restricted component requiring 'write-filesystem', and the tenant has not been granted "
        "'write-filesystem'"]
    assert not Deployment.objects.exists()


def test_the_portal_offers_a_restricted_type_only_when_it_may_be_used(bare):
    _grant(bare, "write-filesystem")
    client = logged_in(bare.admin())
    page = html.unescape(client.get(f"/groups/{bare.root.pk}/processors/new").content.decode())
    assert 'value="PutFile" disabled' not in page and 'value="PutFile"' in page
    assert 'value="GetFile" disabled' in page
    assert "the tenant has not been granted 'read-filesystem'" in page
    response = client.post(f"/groups/{bare.root.pk}/processors/new", {"type": "GetFile"})
    assert response.status_code == 409
    assert "the tenant has not been granted 'read-filesystem'" in html.unescape(response.content.decode())
