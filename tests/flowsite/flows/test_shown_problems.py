"""Problems kept for showing are those of the design as it is: any change to a component, a
parameter context or the tenant's grants makes them checked again."""

from __future__ import annotations

from flowsite.flows.actions import do_create_component, do_delete_component, do_update_component
from flowsite.flows.models import Processor
from flowsite.flows.validation import shown_problems

GET_FILE = "GetFile"


def test_shown_problems_follow_every_change(tenant_a):
    alice = tenant_a.admin("alice")
    processor = do_create_component(Processor(parent=tenant_a.root, tenant=tenant_a.tenant, type=GET_FILE,
                                              name="get", auto_terminated=["success"]), acting_user=alice)
    assert shown_problems(tenant_a.tenant).get(processor.pk), "GetFile needs its Input Directory"
    assert shown_problems(tenant_a.tenant) is shown_problems(tenant_a.tenant)  # reused while nothing changes

    do_update_component(processor, lambda p: setattr(p, "properties", {"Input Directory": "/data/in"}),
                        version=0, client_id="", acting_user=alice)
    assert not shown_problems(tenant_a.tenant).get(processor.pk)

    other = do_create_component(Processor(parent=tenant_a.root, tenant=tenant_a.tenant, type=GET_FILE, name="x"),
                                acting_user=alice)
    assert shown_problems(tenant_a.tenant).get(other.pk)
    pk = other.pk
    do_delete_component(other, version=0, client_id="", acting_user=alice)
    assert pk not in shown_problems(tenant_a.tenant)

    tenant_a.tenant.capabilities = []
    tenant_a.tenant.save()
    assert any("restricted" in p.message for p in shown_problems(tenant_a.tenant).get(processor.pk, []))
