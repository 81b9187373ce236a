"""The permission matrix: every endpoint and method of the API against the policies it needs.

Each row names a request on tenant A's flow and the policies it needs. For each row, with the
policies held either as component policies on the root group or as the tenant's global
fallback (view_flow / modify_flow), three users try it in turn:

- an administrator of tenant B gets 404 (tenant A's objects do not exist for them) and changes nothing;
- for each needed policy, a member of tenant A holding every policy but that one gets 403 and
  changes nothing;
- a member holding exactly the needed policies succeeds.

An anonymous client gets 401 everywhere.
"""

from __future__ import annotations

import uuid
from typing import NamedTuple

import pytest
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from flowsite.flows import access
from flowsite.flows.access import MODIFY, OPERATE, USE_RESTRICTED, VIEW
from flowsite.flows.models import ParameterContext
from tests.flowsite.api.support import API, assert_error, build_flow, fill, snapshot
from tests.flowsite.conftest import token_client

REVISION = {"revision": {"version": 0}}
SMALL_FLOW = {"flowEncodingVersion": "1.0", "flowContents": {
    "identifier": "imported", "name": "imported",
    "processors": [{"identifier": "g", "name": "g", "type": "GenerateFlowFile",
                    "autoTerminatedRelationships": ["success"]}]}}
RESTRICTED_FLOW = {"flowEncodingVersion": "1.0", "flowContents": {
    "identifier": "imported", "name": "imported",
    "processors": [{"identifier": "p", "name": "p", "type": "PutFile", "properties": {"Directory": "/tmp/x"}}]}}


class Row(NamedTuple):
    method: str
    path: str
    body: dict | None
    needs: tuple[str, ...]
    status: int

    def __str__(self) -> str:
        return f"{self.method} {self.path}" + ("" if self.needs[-1:] != (USE_RESTRICTED,) else " (restricted)")


def _component_rows(kind: str, pk: str, delete_pk: str | None = None) -> list[Row]:
    return [
        Row("GET", f"{kind}/{{{pk}}}", None, (VIEW,), 200),
        Row("PUT", f"{kind}/{{{pk}}}", {**REVISION, "name": "renamed"}, (MODIFY,), 200),
        Row("PATCH", f"{kind}/{{{pk}}}", {**REVISION, "comments": "patched"}, (MODIFY,), 200),
        Row("DELETE", f"{kind}/{{{delete_pk or pk}}}?version=0", None, (MODIFY,), 204),
    ]


ROWS = [
    *_component_rows("process-groups", "child"),
    Row("GET", "process-groups/{root}/process-groups", None, (VIEW,), 200),
    Row("POST", "process-groups/{root}/process-groups", {"name": "new"}, (MODIFY,), 201),
    Row("POST", "process-groups/{root}/process-groups/import", SMALL_FLOW, (MODIFY,), 201),
    Row("POST", "process-groups/{root}/process-groups/import", RESTRICTED_FLOW, (MODIFY, USE_RESTRICTED), 201),
    Row("GET", "process-groups/{root}/processors", None, (VIEW,), 200),
    Row("POST", "process-groups/{root}/processors", {"type": "GenerateFlowFile"}, (MODIFY,), 201),
    Row("POST", "process-groups/{root}/processors", {"type": "PutFile"}, (MODIFY, USE_RESTRICTED), 201),
    Row("GET", "process-groups/{root}/connections", None, (VIEW,), 200),
    Row("POST", "process-groups/{root}/connections",
        {"source": {"id": "{spare}"}, "destination": {"id": "{funnel}"}, "selectedRelationships": ["success"]},
        (MODIFY,), 201),
    Row("GET", "process-groups/{root}/funnels", None, (VIEW,), 200),
    Row("POST", "process-groups/{root}/funnels", {"name": "f"}, (MODIFY,), 201),
    Row("GET", "process-groups/{child}/input-ports", None, (VIEW,), 200),
    Row("POST", "process-groups/{child}/input-ports", {"name": "in2"}, (MODIFY,), 201),
    Row("GET", "process-groups/{child}/output-ports", None, (VIEW,), 200),
    Row("POST", "process-groups/{child}/output-ports", {"name": "out2"}, (MODIFY,), 201),
    Row("GET", "process-groups/{root}/flow-definition", None, (VIEW,), 200),
    Row("PUT", "process-groups/{child}/run-status", {"state": "RUNNING"}, (OPERATE,), 200),
    Row("GET", "process-groups/{child}/versions", None, (VIEW,), 200),
    Row("POST", "process-groups/{child}/versions", {"comment": "second"}, (MODIFY,), 201),
    Row("GET", "process-groups/{child}/versions/1", None, (VIEW,), 200),
    Row("GET", "process-groups/{child}/versions/diff?from=1", None, (VIEW,), 200),
    Row("POST", "process-groups/{child}/versions/1/revert", REVISION, (MODIFY,), 200),
    *_component_rows("processors", "gen", delete_pk="spare"),
    Row("PUT", "processors/{put}", {**REVISION, "name": "renamed"}, (MODIFY, USE_RESTRICTED), 200),
    Row("PUT", "processors/{gen}/run-status", {**REVISION, "state": "DISABLED"}, (OPERATE,), 200),
    *_component_rows("connections", "conn"),
    *_component_rows("funnels", "funnel"),
    *_component_rows("input-ports", "in_port"),
    *_component_rows("output-ports", "out_port"),
]

#: How each component policy is held when it comes from the tenant's global policies instead.
_GLOBAL_EQUIVALENT = {VIEW: access.VIEW_FLOW, MODIFY: access.MODIFY_FLOW, OPERATE: access.MODIFY_FLOW}


def _policies(needs: tuple[str, ...], mode: str) -> tuple[set[str], set[str]]:
    """(component policies on the root, global policies) that hold ``needs`` in ``mode``."""
    component = {need for need in needs if need in access.COMPONENT_ACTIONS}
    global_ = {need for need in needs if need in access.GLOBAL_ACTIONS}
    if mode == "global":
        return set(), global_ | {_GLOBAL_EQUIVALENT[need] for need in component}
    return component, global_


def _everything_but(need: str, mode: str) -> tuple[set[str], set[str]]:
    """(component, global) policies of a member who holds everything ``mode`` grants except ``need``."""
    fallbacks = {access.VIEW_FLOW, access.MODIFY_FLOW}
    # use_restricted is needed unless restricted_<capability> is held for each capability: withhold those too
    alternatives = set(access.RESTRICTED_POLICIES) if need == USE_RESTRICTED else set()
    if mode == "global":
        missing = _GLOBAL_EQUIVALENT.get(need, need)
        return set(), set(access.GLOBAL_ACTIONS) - {missing} - alternatives
    return set(access.COMPONENT_ACTIONS) - {need}, set(access.GLOBAL_ACTIONS) - fallbacks - {need} - alternatives


def _send(client: APIClient, row: Row, ids: dict[str, str]):
    body = fill(row.body, ids) if row.body is not None else None
    return getattr(client, row.method.lower())(API + fill(row.path, ids), body, format="json")


@pytest.mark.parametrize("mode", ["component", "global"])
@pytest.mark.parametrize("row", ROWS, ids=str)
def test_policy_matrix(row, mode, tenant_a, tenant_b):
    flow = build_flow(tenant_a)
    ids = flow.ids()
    if mode == "component":  # every component action has a policy on the root, so nothing falls back
        tenant_a.member("owner", root_policies=access.COMPONENT_ACTIONS)

    outsider = token_client(tenant_b.admin())
    lacking = {need: token_client(tenant_a.member(global_policies=_everything_but(need, mode)[1],
                                                  root_policies=_everything_but(need, mode)[0]))
               for need in row.needs}
    component, global_ = _policies(row.needs, mode)
    holder = token_client(tenant_a.member(global_policies=global_, root_policies=component))
    before = snapshot(tenant_a.tenant)

    assert_error(_send(outsider, row, ids), 404, "not_found")
    assert snapshot(tenant_a.tenant) == before
    for need, client in lacking.items():
        assert_error(_send(client, row, ids), 403, "permission_denied")
        assert snapshot(tenant_a.tenant) == before, f"refused without {need}, yet changed"
    response = _send(holder, row, ids)
    assert response.status_code == row.status, response.content[:500]


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_anonymous_requests_are_401(row, flow_a):
    response = _send(APIClient(), row, flow_a.ids())
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Bearer"


def test_data_and_provenance_policies_grant_no_view_or_modify(tenant_a, flow_a):
    """view_data, modify_data and view_provenance (and the global policies other than view_flow
    and modify_flow) are not view or modify."""
    tenant_a.member("owner", root_policies=access.COMPONENT_ACTIONS)
    user = tenant_a.member(root_policies=(access.VIEW_DATA, access.MODIFY_DATA, access.VIEW_PROVENANCE),
                           global_policies=(access.MANAGE_POLICIES, access.QUERY_PROVENANCE, access.VIEW_CLUSTER,
                                            access.USE_RESTRICTED))
    client = token_client(user)
    assert_error(client.get(f"{API}processors/{flow_a.gen.pk}"), 403)
    assert_error(client.put(f"{API}processors/{flow_a.gen.pk}", {**REVISION, "name": "x"}, format="json"), 403)
    assert_error(client.get(f"{API}process-groups/{flow_a.root.pk}/flow-definition"), 403)


def test_lists_show_only_the_components_the_user_may_view(tenant_a, flow_a):
    user = tenant_a.member(root_policies=(VIEW,))
    owner = tenant_a.member("owner", root_policies=access.COMPONENT_ACTIONS)
    access.grant(flow_a.spare, VIEW, user=owner)  # spare now has a view policy of its own, not held by user
    names = [p["name"] for p in token_client(user).get(f"{API}process-groups/{flow_a.root.pk}/processors").json()
             ["results"]]
    assert names == ["gen", "log", "put"]
    everything = token_client(owner).get(f"{API}process-groups/{flow_a.root.pk}/processors").json()
    assert [p["name"] for p in everything["results"]] == ["gen", "log", "put", "spare"]


# ------------------------------------------------------------------ endpoints outside the flow

@pytest.mark.parametrize("path", ["schema/", "docs/", "redoc/"])
def test_the_api_documentation_is_public_in_development_only(path, settings, tenant_a):
    settings.DEBUG = True
    assert APIClient().get(API + path).status_code == 200
    settings.DEBUG = False  # production: the schema and documentation need a user
    assert APIClient().get(API + path).status_code in (401, 403)
    assert token_client(tenant_a.member()).get(API + path).status_code == 200


@pytest.mark.parametrize("path", ["tenants", "tokens", "processor-types",
                                  "processor-types/PutFile", "controller-service-types",
                                  "controller-service-types/StandardSSLContextService"])
def test_endpoints_outside_the_flow_need_only_a_user(path, tenant_a):
    assert token_client(tenant_a.member()).get(API + path).status_code == 200
    assert_error(APIClient().get(API + path), 401)


def test_a_user_sees_only_their_own_tenants(tenant_a, tenant_b):
    user = tenant_a.member()
    client = token_client(user)
    listed = client.get(f"{API}tenants").json()
    assert [t["id"] for t in listed["results"]] == [str(tenant_a.tenant.pk)]
    assert listed["results"][0]["rootGroupId"] == str(tenant_a.root.pk)
    assert client.get(f"{API}tenants/{tenant_a.tenant.pk}").status_code == 200
    assert_error(client.get(f"{API}tenants/{tenant_b.tenant.pk}"), 404, "not_found")


def test_a_tenant_lists_the_global_policies_the_user_holds(tenant_a):
    user = tenant_a.member(global_policies=(access.VIEW_FLOW, access.USE_RESTRICTED))
    body = token_client(user).get(f"{API}tenants/{tenant_a.tenant.pk}").json()
    assert body["globalPolicies"] == [access.VIEW_FLOW, access.USE_RESTRICTED]


def test_a_superuser_who_is_not_a_member_sees_nothing(tenant_a, flow_a, django_user_model):
    root = django_user_model.objects.create_superuser("root-user", password="x" * 20)
    client = token_client(root)
    assert_error(client.get(f"{API}process-groups/{flow_a.root.pk}"), 404)
    assert_error(client.get(f"{API}tenants/{tenant_a.tenant.pk}"), 404)
    assert client.get(f"{API}tenants").json()["count"] == 0


def test_another_users_token_is_not_found(tenant_a):
    mine, theirs = token_client(tenant_a.member()), tenant_a.member()
    token, _ = ApiToken.issue(theirs, "theirs")
    assert_error(mine.get(f"{API}tokens/{token.pk}"), 404, "not_found")
    assert_error(mine.delete(f"{API}tokens/{token.pk}"), 404, "not_found")
    token.refresh_from_db()
    assert token.revoked_at is None
    assert mine.get(f"{API}tokens").json()["count"] == 1  # only the client's own token


# ------------------------------------------------------------------ connections across tenants

def _connection_body(ends: dict) -> dict:
    return {"source": {"id": str(ends["source"])}, "destination": {"id": str(ends["destination"])},
            "selectedRelationships": ["success"]}


@pytest.mark.parametrize("end", ["source", "destination"])
def test_a_connection_to_another_tenants_component_is_400_revealing_nothing(end, tenant_a, tenant_b, flow_a):
    flow_b = build_flow(tenant_b)
    client = token_client(tenant_b.admin())
    foreign = flow_a.spare.pk if end == "source" else flow_a.log.pk
    ends = {"source": flow_b.spare.pk, "destination": flow_b.funnel.pk, end: foreign}
    url = f"{API}process-groups/{flow_b.root.pk}/connections"
    before = snapshot(tenant_b.tenant)
    refused = assert_error(client.post(url, _connection_body(ends), format="json"), 400)
    nowhere = uuid.uuid4()  # the answer is the one for an id that does not exist at all
    absent = assert_error(client.post(url, _connection_body({**ends, end: nowhere}), format="json"), 400)
    assert refused["problems"] == [{"path": f"$.{end}.id", "message": f"no component with id {foreign} in this tenant"}]
    assert absent["problems"] == [{"path": f"$.{end}.id", "message": f"no component with id {nowhere} in this tenant"}]
    assert flow_a.spare.name not in refused["message"] and "GenerateFlowFile" not in str(refused)
    assert snapshot(tenant_b.tenant) == before


def test_moving_a_connection_to_another_tenants_component_is_400(tenant_a, tenant_b, flow_a):
    flow_b = build_flow(tenant_b)
    client = token_client(tenant_b.admin())
    response = client.put(f"{API}connections/{flow_b.conn.pk}",
                          {**REVISION, "destination": {"id": str(flow_a.log.pk)}}, format="json")
    body = assert_error(response, 400)
    assert body["problems"] == [{"path": "$.destination.id",
                                 "message": f"no component with id {flow_a.log.pk} in this tenant"}]
    flow_b.conn.refresh_from_db()
    assert flow_b.conn.destination_id == flow_b.log.pk and flow_b.conn.version == 0


def test_a_group_cannot_use_another_tenants_parameter_context(tenant_a, tenant_b):
    ParameterContext.objects.create(tenant=tenant_a.tenant, name="secret-context")
    client = token_client(tenant_b.admin())
    body = assert_error(client.put(f"{API}process-groups/{tenant_b.root.pk}",
                                   {**REVISION, "parameterContext": "secret-context"}, format="json"), 400)
    assert body["problems"] == [{"path": "$.parameterContext",
                                 "message": "the tenant has no parameter context named 'secret-context'"}]
