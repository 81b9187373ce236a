"""The admin site shows every model of the control plane to a superuser, and revokes tokens."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from flowsite.api.models import ApiToken
from flowsite.cluster.models import Deployment
from flowsite.flows.models import Connection, FlowVersion, ParameterContext, ProcessGroup, Processor
from flowsite.tenancy.models import Tenant, TenantGroup


@pytest.fixture
def staff_client(client, db):
    from django.core.management import call_command

    call_command("create_demo", "--password", "a long demo password")
    client.login(username="admin", password="a long demo password")
    return client


@pytest.mark.parametrize("model", [Tenant, TenantGroup, ProcessGroup, Processor, Connection, ParameterContext,
                                   FlowVersion, ApiToken, Deployment])
def test_changelists_and_change_pages_load(staff_client, model):
    opts = model._meta
    listing = staff_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    assert listing.status_code == 200
    instance = model.objects.first()
    if instance is not None:
        page = staff_client.get(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[instance.pk]))
        assert page.status_code == 200


def test_admin_revokes_tokens(staff_client):
    token, _ = ApiToken.issue(get_user_model().objects.get(username="admin"), "ci")
    response = staff_client.post(reverse("admin:api_apitoken_changelist"),
                                 {"action": "revoke", "_selected_action": [str(token.pk)]})
    assert response.status_code == 302
    token.refresh_from_db()
    assert token.state == "revoked"


def test_a_tenant_added_in_the_admin_gets_its_root_group(staff_client):
    response = staff_client.post(reverse("admin:tenancy_tenant_add"), {
        "name": "Hooli", "slug": "hooli",
        "memberships-TOTAL_FORMS": 0, "memberships-INITIAL_FORMS": 0,
        "tenantuserpermission_set-TOTAL_FORMS": 0, "tenantuserpermission_set-INITIAL_FORMS": 0,
        "tenantgrouppermission_set-TOTAL_FORMS": 0, "tenantgrouppermission_set-INITIAL_FORMS": 0,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    tenant = Tenant.objects.get(slug="hooli")
    assert ProcessGroup.objects.get(tenant=tenant, parent__isnull=True).name == "Hooli"
