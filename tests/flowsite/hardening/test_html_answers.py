"""Every operation of the OpenAPI schema, asked for ``text/html`` (as a browser asks), answers a
working browsable page or JSON, never a server error: as a tenant administrator (on real ids of
the tenant's flow), as a member with no policy, and anonymously."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from tests.flowsite.api.support import build_flow
from tests.servers import RedisServer

_TARGET = {"process-groups": "root", "processors": "gen", "connections": "conn", "funnels": "funnel",
           "input-ports": "in_port", "output-ports": "out_port", "tenants": "tenant", "tokens": "token"}


def _operations() -> list[tuple[str, str]]:
    with override_settings(DEBUG=True):
        schema = APIClient().get("/api/v1/schema/?format=json").json()
    order = {"get": 0, "post": 1, "put": 2, "patch": 3, "delete": 4}
    return sorted(((method.upper(), path) for path, item in schema["paths"].items() for method in item
                   if method in order), key=lambda op: (order[op[0].lower()], op[1]))


def _url(path: str, ids: dict[str, str]) -> str:
    kind = path.split("/")[3]
    return re.sub(r"\{id\}", ids.get(_TARGET.get(kind, ""), "00000000-0000-0000-0000-000000000000"),
                  path).replace("{number}", "1").replace("{name}", "GenerateFlowFile").replace("{node}", "node-1") \
        .replace("{deploy_id}", "1")


@pytest.fixture(scope="module")
def cluster_redis(tmp_path_factory):
    """The cluster's Redis (no node in it), so cluster endpoints answer rather than 503."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.mark.parametrize("who", ["administrator", "member without policies", "anonymous"])
def test_no_operation_answers_html_with_a_server_error(who, tenant_a, cluster_redis, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{cluster_redis.port}/0"
    flow = build_flow(tenant_a)
    user = tenant_a.admin() if who == "administrator" else tenant_a.member()
    token, secret = ApiToken.issue(user, "html")
    ids = {**flow.ids(), "tenant": str(tenant_a.tenant.pk), "token": str(token.pk)}
    credentials = {} if who == "anonymous" else {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    failures = []
    for method, path in _operations():  # reads first, then changes, deletions last
        url = _url(path, ids)
        response = getattr(APIClient(raise_request_exception=False), method.lower())(url, HTTP_ACCEPT="text/html",
                                                                                     **credentials)
        if response.status_code >= 500:
            failures.append((method, url, response.status_code, response.content[:200]))
        elif response.status_code < 300 and method == "GET":
            assert response["Content-Type"].startswith(("text/html", "application/json")), (url, response)
    assert not failures, failures
