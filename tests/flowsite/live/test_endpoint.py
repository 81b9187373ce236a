"""/ws/process-groups/<uuid> on a real daphne: who is admitted (a session with a same-site
Origin, an API token without one), who is refused and how (a wrong token 4401; a foreign Origin at
the handshake; a missing group, another tenant's, one without the view policy and an anonymous
user all alike, 4404), wrong tokens counted toward the login lockout (4429), and design changes
reaching the subscribers."""

from __future__ import annotations

import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone
from websockets.exceptions import InvalidStatus

from flowsite.api.models import ApiToken
from flowsite.flows import access
from flowsite.flows.models import Component
from flowsite.flows.publish import group_name
from tests.flowsite.conftest import token_client
from tests.flowsite.live.conftest import collect, receive, until_closed

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_session_user_is_admitted_and_greeted(web, tenant_a, admin_a):
    with web.socket(tenant_a.root.pk, user=admin_a) as socket:
        assert receive(socket) == {"type": "hello", "group": str(tenant_a.root.pk)}


def test_a_program_is_admitted_by_its_api_token_without_an_origin(web, tenant_a, admin_a):
    _, secret = ApiToken.issue(admin_a, "program")
    with web.socket(tenant_a.root.pk, token=secret, origin=None) as socket:
        assert receive(socket) == {"type": "hello", "group": str(tenant_a.root.pk)}


def test_a_wrong_expired_or_revoked_token_is_refused_with_4401(web, tenant_a, admin_a):
    _, secret = ApiToken.issue(admin_a, "program")
    expired, expired_secret = ApiToken.issue(admin_a, "expired", expires_at=timezone.now())
    revoked, revoked_secret = ApiToken.issue(admin_a, "revoked")
    ApiToken.objects.filter(pk=revoked.pk).update(revoked_at=timezone.now())
    for wrong in (secret[:-4] + "abcd", "fst_nothing_here", expired_secret, revoked_secret):
        with web.socket(tenant_a.root.pk, token=wrong, origin=None) as socket:
            messages, code, _ = until_closed(socket)
        assert (messages, code) == ([], 4401), wrong


def test_wrong_tokens_lock_the_address_out_as_on_the_rest_api(web, tenant_a, admin_a, settings):
    _, secret = ApiToken.issue(admin_a, "program")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        with web.socket(tenant_a.root.pk, token="fst_guess_x", origin=None) as socket:
            assert until_closed(socket)[:2] == ([], 4401)
    with web.socket(tenant_a.root.pk, token=secret, origin=None) as socket:
        assert until_closed(socket)[:2] == ([], 4429)
    assert token_client(admin_a).get("/api/v1/tokens").status_code == 429  # one count: the API's (same address)


def test_a_browser_of_another_origin_or_of_none_is_refused_at_the_handshake(web, tenant_a, admin_a):
    for origin in ("http://evil.example", None):
        with pytest.raises(InvalidStatus) as refused:
            web.socket(tenant_a.root.pk, user=admin_a, origin=origin)
        assert refused.value.response.status_code == 403


def test_a_token_sent_with_a_foreign_origin_is_held_to_it(web, tenant_a, admin_a):
    _, secret = ApiToken.issue(admin_a, "program")
    with pytest.raises(InvalidStatus) as refused:
        web.socket(tenant_a.root.pk, token=secret, origin="http://evil.example")
    assert refused.value.response.status_code == 403


def test_missing_foreign_hidden_and_anonymous_are_refused_alike(web, tenant_a, tenant_b, admin_a):
    hidden_from = tenant_a.member()  # a member without the view policy on the root group
    attempts = {
        "missing group": web.socket(uuid.uuid4(), user=admin_a),
        "another tenant's group": web.socket(tenant_b.root.pk, user=admin_a),
        "no view policy": web.socket(tenant_a.root.pk, user=hidden_from),
        "anonymous": web.socket(tenant_a.root.pk),
    }
    outcomes = {}
    for case, socket in attempts.items():
        with socket:
            outcomes[case] = until_closed(socket)
    assert {case: (messages, code) for case, (messages, code, _) in outcomes.items()} == {
        case: ([], 4404) for case in attempts}
    seconds = [elapsed for *_, elapsed in outcomes.values()]
    assert max(seconds) < 2 and max(seconds) - min(seconds) < 1, outcomes


def test_a_token_scoped_to_another_tenant_is_refused_like_a_missing_group(web, tenant_a, tenant_b, admin_a):
    tenant_b_membership = tenant_b.admin()
    _, secret = ApiToken.issue(tenant_b_membership, "scoped", tenant=tenant_b.tenant)
    access.grant(tenant_a.root, access.VIEW, user=tenant_b_membership)  # not a member of A: no effect
    with web.socket(tenant_a.root.pk, token=secret, origin=None) as socket:
        assert until_closed(socket)[:2] == ([], 4404)


def test_a_design_change_reaches_every_subscriber_of_the_group(web, tenant_a, admin_a):
    other_user = tenant_a.admin()
    _, secret = ApiToken.issue(other_user, "program")
    root = tenant_a.root
    with web.socket(root.pk, user=admin_a) as editor, web.socket(root.pk, token=secret, origin=None) as watcher:
        for socket in (editor, watcher):
            assert receive(socket)["type"] == "hello"
        answer = token_client(admin_a).post(f"/api/v1/process-groups/{root.pk}/processors",
                                            {"name": "gen", "type": "GenerateFlowFile"}, format="json")
        assert answer.status_code == 201, answer.json()
        processor_id = answer.json()["id"]
        for socket in (editor, watcher):
            design = collect(socket, 10, until=lambda got: any(m["type"] == "design" for m in got))
            assert {"type": "design", "component": processor_id, "kind": "PROCESSOR", "operation": "Add",
                    "parent": str(root.pk)} in design


def test_a_design_change_of_a_component_the_user_may_not_view_is_not_sent(web, tenant_a, admin_a):
    member = tenant_a.member()
    access.grant(tenant_a.root, access.VIEW, user=member)
    answer = token_client(admin_a).post(f"/api/v1/process-groups/{tenant_a.root.pk}/processors",
                                        {"name": "secret", "type": "GenerateFlowFile"}, format="json")
    hidden_id = answer.json()["id"]
    access.grant(Component.objects.get(pk=hidden_id), access.VIEW, user=admin_a)  # a policy the member lacks
    with web.socket(tenant_a.root.pk, user=member) as socket:
        assert receive(socket)["type"] == "hello"
        async_to_sync(get_channel_layer().group_send)(group_name(tenant_a.root.pk), {
            "type": "design.changed", "component": hidden_id, "kind": "PROCESSOR", "operation": "Configure",
            "parent": str(tenant_a.root.pk)})
        assert [m for m in collect(socket, 3) if m["type"] == "design"] == []


def test_an_idle_socket_stays_open_past_the_channel_layers_blocking_read(web, tenant_a, admin_a):
    with web.socket(tenant_a.root.pk, user=admin_a) as socket:
        assert receive(socket)["type"] == "hello"
        assert [m for m in collect(socket, 7) if m["type"] in ("design", "stats")] == []  # no node: nothing moves
        async_to_sync(get_channel_layer().group_send)(group_name(tenant_a.root.pk), {
            "type": "design.changed", "component": str(tenant_a.root.pk), "kind": "PROCESS_GROUP",
            "operation": "Configure", "parent": None})
        design = collect(socket, 10, until=lambda got: any(m["type"] == "design" for m in got))
        assert design[-1]["component"] == str(tenant_a.root.pk)
