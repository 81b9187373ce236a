"""The flow history page: changes made in the portal appear with who and what, filtered by
operation and component; another tenant's user sees none of them."""

from __future__ import annotations

from flowsite.flows.models import Processor
from tests.flowsite.portal.conftest import logged_in

HISTORY = "/history/"
GENERATE = "org.apache.nifi.processors.standard.GenerateFlowFile"


def _add_processor(portal_a, tenant_a) -> Processor:
    answer = portal_a.post(f"/groups/{tenant_a.root.pk}/processors/new", {"type": GENERATE, "name": "gen"})
    assert answer.status_code == 302, answer.content[:500]
    processor = Processor.objects.get(parent=tenant_a.root, name="gen")
    return processor


def test_a_change_made_in_the_portal_is_on_the_history_page(portal_a, tenant_a):
    processor = _add_processor(portal_a, tenant_a)
    page = portal_a.get(HISTORY).content.decode()
    assert 'data-operation="Add"' in page and "alice" in page and GENERATE in page
    assert f"/processors/{processor.pk}/" in page  # the component still exists: linked


def test_the_page_filters_by_operation_and_component(portal_a, tenant_a):
    processor = _add_processor(portal_a, tenant_a)
    assert 'data-operation="Add"' not in portal_a.get(HISTORY, {"operation": "Move"}).content.decode()
    by_component = portal_a.get(HISTORY, {"component": str(processor.pk)}).content.decode()
    assert by_component.count("data-operation=") == 1
    assert "is not a component id" in portal_a.get(HISTORY, {"component": "nope"}).content.decode()


def test_another_tenants_user_sees_nothing_of_it(portal_a, tenant_a, tenant_b):
    _add_processor(portal_a, tenant_a)
    page = logged_in(tenant_b.admin("mallory")).get(HISTORY).content.decode()
    assert "data-operation=" not in page and GENERATE not in page
