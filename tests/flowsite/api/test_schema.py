"""The OpenAPI schema: generated without a warning and valid, served at /api/v1/schema/, and
saying what the API does (creations are 201, partial PUTs, every error answer documented)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.test import override_settings
from rest_framework.test import APIClient

ROOT = Path(__file__).resolve().parents[3]


def test_the_schema_generates_without_warnings_and_validates(tmp_path):
    """``manage.py spectacular --validate --fail-on-warn`` in a process of its own (drf-spectacular
    keeps its warnings in process-wide caches, which earlier tests may have filled)."""
    result = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file",
         str(tmp_path / "schema.yaml")],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "flowsite.settings"}, capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr  # --fail-on-warn: any warning fails the command
    assert yaml.safe_load((tmp_path / "schema.yaml").read_text())["openapi"].startswith("3.")


@pytest.fixture(scope="module")
def schema() -> dict:
    with override_settings(DEBUG=True):  # served without authentication in development only
        response = APIClient().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def test_creations_are_201(schema):
    paths = schema["paths"]
    for path in ("processors", "connections", "funnels", "input-ports", "output-ports", "process-groups",
                 "versions"):
        assert "201" in paths[f"/api/v1/process-groups/{{id}}/{path}"]["post"]["responses"], path
    assert "201" in paths["/api/v1/tokens"]["post"]["responses"]
    assert "200" in paths["/api/v1/process-groups/{id}/versions/{number}/revert"]["post"]["responses"]


def test_a_put_of_a_component_is_partial(schema):
    put = schema["paths"]["/api/v1/processors/{id}"]["put"]["requestBody"]["content"]
    assert list(put) == ["application/json"]
    assert put["application/json"]["schema"]["$ref"] == "#/components/schemas/PatchedProcessorRequest"
    assert "required" not in schema["components"]["schemas"]["PatchedProcessorRequest"]


@pytest.mark.parametrize("method, path, statuses", [
    ("get", "/api/v1/processor-types", {"400", "401", "403", "429"}),
    ("get", "/api/v1/processors/{id}", {"400", "401", "403", "429", "404"}),
    ("put", "/api/v1/processors/{id}", {"400", "401", "403", "429", "404", "409", "413", "415"}),
    ("delete", "/api/v1/funnels/{id}", {"400", "401", "403", "429", "404", "409"}),
    ("post", "/api/v1/process-groups/{id}/process-groups/import", {"400", "401", "403", "429", "404", "413", "415"}),
    ("post", "/api/v1/process-groups/{id}/versions/{number}/revert",
     {"400", "401", "403", "429", "404", "409", "413", "415"}),
    ("delete", "/api/v1/tokens/{id}", {"400", "401", "403", "429", "404"}),
])
def test_error_answers_are_documented(schema, method, path, statuses):
    responses = schema["paths"][path][method]["responses"]
    assert {code for code in responses if code >= "400"} == statuses
    for code in statuses:
        assert responses[code]["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/Error"
    error = schema["components"]["schemas"]["Error"]
    assert set(error["required"]) == {"status", "code", "message", "problems"}
