"""The production profile of the settings: ``manage.py check --deploy`` is clean, secrets are
required (and keys strong), each may come from a file, a node holds neither SECRET_KEY nor a
database, only PostgreSQL is accepted, and docs/configuration.md covers every variable."""

from __future__ import annotations

import base64
import re
import secrets

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


@pytest.mark.parametrize("variable", ["SECRET_KEY", "FLOWSITE_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY"])
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


@pytest.mark.parametrize("variable", ["FLOWSITE_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY"])
@pytest.mark.parametrize("weak", ["short", "a" * 64, "0" * 43, secrets.token_urlsafe(20), "development-only-key"],
                         ids=["short", "one-letter", "zeros", "20-random-bytes", "development"])
def test_production_refuses_a_key_shorter_than_32_random_bytes(variable, weak):
    result = run_django(["manage.py", "check"], production_environment(**{variable: weak}))
    assert result.returncode != 0
    assert f"ImproperlyConfigured: {variable} " in result.stderr
    assert "secrets.token_urlsafe(32)" in result.stderr, "the message says how to make one"


@pytest.mark.parametrize("strong", [secrets.token_urlsafe(32), secrets.token_hex(32),
                                    base64.b64encode(secrets.token_bytes(48)).decode()],
                         ids=["urlsafe", "hex", "base64-48-bytes"])
def test_production_accepts_32_random_bytes_as_hex_or_base64(strong):
    result = run_django(["manage.py", "check"], production_environment(FLOWSITE_SENSITIVE_KEY=strong))
    assert result.returncode == 0, result.stderr


def test_development_keeps_its_development_keys_and_debug_off_does_not():
    assert run_django(["manage.py", "check"], {"DATABASE_URL": database_url_of_tests(),
                                               "FLOWSITE_SENSITIVE_KEY": "short"}).returncode == 0
    result = run_django(["manage.py", "check"], {"DATABASE_URL": database_url_of_tests(), "DEBUG": "false",
                                                 "FLOWSITE_SENSITIVE_KEY": "short"})
    assert "ImproperlyConfigured: FLOWSITE_SENSITIVE_KEY must be at least 32 random bytes" in result.stderr


SETUP = "import os, django; os.environ['DJANGO_SETTINGS_MODULE'] = 'flowsite.settings'; django.setup()\n"


def _show(*names: str) -> list[str]:
    return ["-c", SETUP + "from django.conf import settings\n"
                          f"print(repr([getattr(settings, n) for n in {list(names)!r}]))"]


@pytest.mark.parametrize("variable", ["SECRET_KEY", "FLOWSITE_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY", "DATABASE_URL",
                                      "REDIS_URL"])
def test_every_secret_may_come_from_a_file(variable, tmp_path):
    environment = production_environment()
    value = environment.pop(variable)
    secret_file = tmp_path / "secret"
    secret_file.write_text(value + "\n")
    result = run_django(_show("SECRET_KEY", "FLOWSITE_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY", "DATABASES", "REDIS_URL"),
                        {**environment, f"{variable}_FILE": str(secret_file)})
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    expected = value if variable != "DATABASE_URL" else value.rsplit("/", 1)[1]
    assert repr(expected)[1:-1] in shown, "the file's contents, without the final newline"


def test_a_secret_and_its_file_together_or_a_file_that_cannot_be_read_are_refused(tmp_path):
    secret_file = tmp_path / "key"
    secret_file.write_text(secrets.token_urlsafe(32))
    both = run_django(["manage.py", "check"], production_environment(FLOWSITE_SENSITIVE_KEY_FILE=str(secret_file)))
    assert ("ImproperlyConfigured: both FLOWSITE_SENSITIVE_KEY and FLOWSITE_SENSITIVE_KEY_FILE are set: set only one "
            "of them") in both.stderr
    environment = production_environment()
    del environment["SECRET_KEY"]
    missing = run_django(["manage.py", "check"], {**environment, "SECRET_KEY_FILE": str(tmp_path / "nowhere")})
    assert f"ImproperlyConfigured: SECRET_KEY_FILE='{tmp_path / 'nowhere'}' cannot be read: No such file or directory" \
        in missing.stderr
    (tmp_path / "empty").write_text("\n")
    empty = run_django(["manage.py", "check"], {**environment, "SECRET_KEY_FILE": str(tmp_path / "empty")})
    assert f"ImproperlyConfigured: SECRET_KEY_FILE='{tmp_path / 'empty'}' is empty" in empty.stderr


def test_a_node_loads_production_settings_without_secret_key_or_database():
    environment = production_environment(FLOWSITE_ROLE="node")
    del environment["SECRET_KEY"], environment["DATABASE_URL"]
    probe = (SETUP + "from django.conf import settings; from django.db import connection\n"
             "print('databases', settings.DATABASES)\n"
             "try:\n    connection.cursor()\n"
             "except Exception as error:\n    print('no database:', type(error).__name__)")
    result = run_django(["-c", probe], environment)
    assert result.returncode == 0, result.stderr
    assert "django.db.backends.dummy" in result.stdout, result.stdout
    assert "no database: ImproperlyConfigured" in result.stdout, result.stdout
