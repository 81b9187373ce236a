"""``manage.py deploy``: the demo tenant, its directories under the files root, deployed as the
portal deploys it; refusals say why and deploy nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from engine.cluster.cluster_flow import read_flow
from flowsite.cluster.models import Deployment
from flowsite.flows.models import ParameterContext
from flowsite.tenancy.models import Tenant


def test_the_demo_deployed_from_the_command_line_uses_its_own_directories(db, cluster, tmp_path, capsys):
    call_command("create_demo", "--files-root", str(tmp_path / "files"))
    demo = Tenant.objects.get(slug="demo")
    assert {"read-filesystem", "write-filesystem"} <= set(demo.capabilities)
    context = ParameterContext.objects.get(tenant=demo, name="list-fetch-put")
    values = {p["name"]: p["value"] for p in context.parameters}
    assert values == {name: str(tmp_path / "files" / "demo" / kind) for name, kind in
                      (("input.directory", "input"), ("processed.directory", "processed"),
                       ("output.directory", "output"))}

    call_command("deploy", "--tenant", "demo", "--user", "admin")
    deployment = Deployment.objects.get(tenant=demo)
    assert deployment.created_by.username == "admin" and deployment.label == "design"
    assert f"deployed demo (design): deploy id {deployment.deploy_id}" in capsys.readouterr().out
    published = read_flow(cluster.client, cluster.keys)
    assert published.fingerprint == deployment.fingerprint and "demo" in published.bundle.flow["tenants"]
    assert str(tmp_path / "files" / "demo" / "input") in str(published.bundle.flow["parameterContexts"])


def test_refusals_deploy_nothing(cluster, tenant_a):
    with pytest.raises(CommandError, match="no tenant with slug 'nobody'"):
        call_command("deploy", "--tenant", "nobody")
    with pytest.raises(CommandError, match="no user 'ghost'"):
        call_command("deploy", "--tenant", tenant_a.tenant.slug, "--user", "ghost")
    with pytest.raises(CommandError, match="has no version 4"):
        call_command("deploy", "--tenant", tenant_a.tenant.slug, "--flow-version", "4")
    assert not Deployment.objects.exists() and read_flow(cluster.client, cluster.keys) is None
