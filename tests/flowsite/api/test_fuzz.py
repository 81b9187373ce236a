"""Fuzzing the API from its own OpenAPI schema (/api/v1/schema/) with schemathesis: for every
operation, valid and invalid requests generated from the schema, sent in-process to the WSGI
application with the bearer token of a tenant administrator. No answer may be a server error,
and every answer must conform to the schema (status, content type, body, headers).

Most cases are pointed at real things of the tenant (ids, processor types, revisions), so the
requests reach the serializers, the engine's validation and the flow code instead of stopping
at a 404 or a 409."""

from __future__ import annotations

import hashlib
import uuid
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from engine.components import default_registry
from flowsite import celery_app
from flowsite.api.models import ApiToken
from flowsite.flows.definition import Identity, export_group
from flowsite.flows.models import Component, ControllerService, FlowVersion, Label, ParameterContext
from tests.flowsite.api.support import build_flow

#: Every check but the two about how strictly requests are read. A request the schema allows can
#: be refused: it names a processor type or parameter context that does not exist, a revision
#: by ``?clientId=`` left empty, a flow definition that is an object but not a flow. A request
#: the schema forbids can be read: DRF takes 0 for "0" and false for 0.0, and ignores an
#: unusable ?offset= or an empty ?source=, as most Django APIs do.
CONFIG = schemathesis.Config.from_dict({"checks": {"positive_data_acceptance": {"enabled": False},
                                                   "negative_data_rejection": {"enabled": False}}})
schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", get_wsgi_application(), config=CONFIG)

#: Which components' ids each path's {id} may be pointed at, by the path's first segment.
_TARGETS = {
    "process-groups": ("root", "root", "child"), "processors": ("gen", "log", "spare", "put"), "connections": ("conn",),
    "funnels": ("funnel",), "input-ports": ("in_port",), "output-ports": ("out_port",), "tenants": ("tenant",),
    "tokens": ("token",), "platform": ("tenant",), "controller-services": ("service",),
    "parameter-contexts": ("context",), "labels": ("label",), "flowfile-queues": ("conn",),
}
_CONNECTABLE = ("gen", "log", "spare", "put", "funnel", "in_port", "out_port")
_PROCESSOR_TYPES = tuple(sorted(t.type_name for t in default_registry().processors()))
_SERVICE_TYPES = tuple(sorted(t.type_name for t in default_registry().services()))


def _pick(seed: Any, options: tuple) -> Any:
    """One of ``options`` three times in four (None otherwise), chosen by ``seed``: generated
    values, so that a failing case replays and shrinks."""
    number = int(hashlib.sha256(repr(seed).encode()).hexdigest(), 16)
    return None if number % 4 == 3 else options[number // 4 % len(options)]


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(str(value))
    except ValueError:
        return False
    return True


class FuzzTarget:
    """Tenant A's flow and an administrator's token; points generated cases at its objects."""

    def __init__(self, world) -> None:
        flow = build_flow(world)
        FlowVersion.objects.create(group=flow.root, number=1, definition=export_group(flow.root, Identity.VERSIONED))
        token, self.secret = ApiToken.issue(world.admin(), "fuzz")
        service = ControllerService.objects.create(tenant=world.tenant, parent=world.root, type="CSVReader")
        context = ParameterContext.objects.create(tenant=world.tenant, name="fuzz", parameters=[
            {"name": "p", "value": "v", "sensitive": False, "description": ""}])
        label = Label.objects.create(tenant=world.tenant, parent=world.root, text="note")
        self.ids = {**flow.ids(), "tenant": str(world.tenant.pk), "token": str(token.pk), "service": str(service.pk),
                    "context": str(context.pk), "label": str(label.pk)}

    def aim(self, case) -> None:
        """Point most cases' references at real things: the {id} and {number} of the path, a
        processor's type, a connection's ends, the revision of the component changed. Values of the wrong kind
        (negative cases) are left as generated."""
        parameters = case.path_parameters or {}
        if _is_uuid(parameters.get("id")):
            name = _pick((parameters, case.query, case.body), _TARGETS[case.operation.path.split("/")[3]])
            if name:
                parameters["id"] = self.ids[name]
        if isinstance(parameters.get("number"), int) and _pick(parameters, (True,)):
            parameters["number"] = 1  # the root's committed version
        body = case.body if isinstance(case.body, dict) else {}
        if isinstance(body.get("type"), str) and case.operation.path.endswith("/processors"):
            body["type"] = _pick(body, _PROCESSOR_TYPES) or body["type"]
        if isinstance(body.get("type"), str) and case.operation.path.endswith("/controller-services"):
            body["type"] = _pick(body, _SERVICE_TYPES) or body["type"]
        for end in ("source", "destination"):
            if isinstance(body.get(end), dict) and _is_uuid(body[end].get("id")):
                name = _pick((end, body), _CONNECTABLE)
                if name:
                    body[end]["id"] = self.ids[name]
        revision = body.get("revision")
        if (isinstance(revision, dict) and isinstance(revision.get("version"), int) and _is_uuid(parameters.get("id"))
                and _pick(revision, (True,))):
            versions = [model.objects.filter(pk=parameters["id"]).values_list("version", flat=True).first()
                        for model in (Component, ParameterContext)]
            current = next((version for version in versions if version is not None), None)
            revision["version"] = revision["version"] if current is None else current


@pytest.fixture
def target(tenant_a, redis_server, settings):
    """The flow to fuzz; database connections stay open across requests, as in Django's test
    client (the test's transaction lives on the connection). The cluster's Redis is a private
    redis-server (with no node in it), so the cluster endpoints answer rather than 503; the jobs
    of request resources run in the test process."""
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    celery_app.conf.task_always_eager = True
    # schemathesis sends invalid credentials again and again to see them refused (401); the
    # lockout that would follow (429) is tested in tests/flowsite/test_hardening.py
    settings.AXES_FAILURE_LIMIT = 1_000_000
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield FuzzTarget(tenant_a)
    finally:
        celery_app.conf.task_always_eager = False
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=15, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_answers_conform_to_the_schema(case, target):
    target.aim(case)
    case.call_and_validate(headers={"Authorization": f"Bearer {target.secret}"})
