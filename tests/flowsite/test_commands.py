"""Management commands of the control plane: create_demo, create_tenant, export_flow."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from engine.flow.validation import load_and_check
from flowsite.flows import access
from flowsite.flows.models import ProcessGroup, Processor
from flowsite.flows.tenants import root_group
from flowsite.tenancy.models import Tenant


def test_create_demo_makes_a_usable_tenant_once(db, capsys):
    call_command("create_demo")
    first = capsys.readouterr().out
    password = first.split("password: ")[1].split()[0]
    tenant = Tenant.objects.get(slug="demo")
    admin = get_user_model().objects.get(username="admin")
    assert admin.check_password(password)
    group = ProcessGroup.objects.get(parent=root_group(tenant))
    assert Processor.objects.filter(parent=group).count() == 4
    assert access.TenantAccess(admin, tenant).can(group, access.MODIFY)
    call_command("create_demo")
    assert "password unchanged" in capsys.readouterr().out
    assert Tenant.objects.filter(slug="demo").count() == 1
    assert ProcessGroup.objects.filter(parent=root_group(tenant)).count() == 1


def test_create_tenant_with_an_administrator(db):
    user = get_user_model().objects.create_user("olga")
    call_command("create_tenant", "Initech", "--admin", "olga")
    tenant = Tenant.objects.get(slug="initech")
    assert root_group(tenant).name == "Initech"
    assert access.TenantAccess(user, tenant).has_global(access.MANAGE_POLICIES)
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_tenant", "Initech")
    with pytest.raises(CommandError, match="no user"):
        call_command("create_tenant", "Umbrella", "--admin", "nobody")


def test_export_flow_for_a_node_loads_in_the_engine(db, tmp_path):
    call_command("create_demo")
    target = tmp_path / "flow.json"
    call_command("export_flow", "--tenant", "demo", "--for-node", "--output", str(target))
    assert target.stat().st_mode & 0o777 == 0o600
    flow, problems = load_and_check(json.loads(target.read_text()))
    assert len(list(flow.processors())) == 4
    assert not [p for p in problems if p.fatal]
