"""On the way to the nodes each tenant's sensitive values are sealed with that tenant's key: the
cluster flow names each tenant's id, a node holding the master key opens every tenant's values,
and no tenant's value opens with another tenant's key."""

from __future__ import annotations

import pytest

from engine.cluster.cluster_flow import read_flow
from engine.flow.sealed import open_flow, property_binding
from engine.secrets import PREFIX, SensitiveValueError
from flowsite.flows.secrets import master_key
from tests.flowsite.cluster.conftest import small_flow
from tests.flowsite.cluster.test_deploy import DEPLOYMENTS, _with_secrets
from tests.flowsite.conftest import token_client


def _password(flow: dict, group: str, processor: str) -> str:
    (found,) = [p for g in flow["flowContents"]["processGroups"] if g["identifier"] == group
                for p in g["processors"] if p["identifier"] == processor]
    return found["properties"]["Request Password"]


def test_each_tenants_values_open_only_with_its_own_key(cluster, tenant_a, tenant_b, api_a):
    small_flow(tenant_a)
    small_flow(tenant_b)
    http_a, http_b = _with_secrets(tenant_a), _with_secrets(tenant_b)
    assert api_a.post(DEPLOYMENTS, {}, format="json").status_code == 202
    assert token_client(tenant_b.admin()).post(DEPLOYMENTS, {}, format="json").status_code == 202
    flow = read_flow(cluster.client, cluster.keys).bundle.flow
    ids = {slug: entry["id"] for slug, entry in flow["tenants"].items()}
    assert ids == {tenant_a.tenant.slug: str(tenant_a.tenant.id), tenant_b.tenant.slug: str(tenant_b.tenant.id)}

    sealed_a = _password(flow, str(tenant_a.root.pk), str(http_a.pk))
    assert sealed_a.startswith(PREFIX)
    place = property_binding(str(http_a.pk), "Request Password")
    master = master_key()
    assert master.tenant(str(tenant_a.tenant.id)).open(sealed_a, place) == "pw-in-clear"
    for other in (master.tenant(str(tenant_b.tenant.id)), master.platform()):
        with pytest.raises(SensitiveValueError):
            other.open(sealed_a, place)

    opened = open_flow(flow, master)
    assert _password(opened, str(tenant_a.root.pk), str(http_a.pk)) == "pw-in-clear"
    assert _password(opened, str(tenant_b.root.pk), str(http_b.pk)) == "pw-in-clear"
    for slug in (tenant_a.tenant.slug, tenant_b.tenant.slug):
        assert opened["parameterContexts"][f"{slug}/paths"]["parameters"][1]["value"] == "param-in-clear"
