"""The production profile of the settings: ``manage.py check --deploy`` is clean, secrets are
required, only PostgreSQL is accepted, and docs/configuration.md covers every variable."""

from __future__ import annotations

import re

import pytest
from django.conf import settings

from tests.flowsite.deployment import (
    REPO_ROOT,
    database_url_of_tests,
    run_django,
    secret_environment,
)


def production_environment(**overrides: str) -> dict[str, str]:
    """A complete production environment (random long keys), changed by ``overrides``."""
    return {"FLOWSITE_ENV": "production", "ALLOWED_HOSTS": "flowsite.example.com",
            "DATABASE_URL": database_url_of_tests(), "REDIS_URL": settings.REDIS_URL,
            **secret_environment(), **overrides}


def test_check_deploy_is_clean_under_production_settings():
    result = run_django(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_environment())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_fails_on_a_weak_production_setting():
    result = run_django(["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
                        production_environment(SECURE_SSL_REDIRECT="false"))
    assert result.returncode != 0
    assert "security.W008" in result.stderr


@pytest.mark.parametrize("variable", ["SECRET_KEY", "FLOWSITE_SENSITIVE_KEY"])
def test_production_settings_refuse_to_load_without_a_secret(variable):
    environment = production_environment()
    del environment[variable]
    result = run_django(["manage.py", "check"], environment)
    assert result.returncode != 0
    assert (f"django.core.exceptions.ImproperlyConfigured: {variable} must be set when FLOWSITE_ENV=production"
            in result.stderr)


def test_development_settings_load_without_secrets():
    result = run_django(["manage.py", "check"], {"DATABASE_URL": database_url_of_tests()})
    assert result.returncode == 0, result.stderr


def test_a_cluster_name_that_cannot_prefix_keys_is_refused():
    result = run_django(["manage.py", "check"], production_environment(FLOWSITE_CLUSTER="a:b"))
    assert result.returncode != 0
    assert "ImproperlyConfigured: FLOWSITE_CLUSTER='a:b': a cluster name has no ':' and no spaces" in result.stderr


@pytest.mark.parametrize("url", ["sqlite:///flowsite.db", "mysql://flowsite@db:3306/flowsite"])
def test_a_database_other_than_postgresql_is_refused(url):
    result = run_django(["manage.py", "check"], production_environment(DATABASE_URL=url))
    assert result.returncode != 0
    assert "ImproperlyConfigured: DATABASE_URL must name a PostgreSQL database" in result.stderr


def test_configuration_document_covers_every_variable():
    text = (REPO_ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", text, flags=re.MULTILINE))
    assert documented == set(settings.ENVIRONMENT_VARIABLES)
