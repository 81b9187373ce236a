"""Helpers of the deployment tests: compose.yaml as compose reads it, and Django run in a
subprocess under a chosen environment (settings are read once per process)."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.db import connection

REPO_ROOT = Path(__file__).resolve().parents[2]

_VARIABLE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<operator>:?[-?])(?P<argument>[^}]*))?\}")


class MissingVariable(KeyError):
    """A variable compose requires (``${NAME:?message}``) is not set; the message is compose's."""


def load_compose() -> dict[str, Any]:
    """compose.yaml parsed, with its anchors and merge keys resolved."""
    return yaml.safe_load((REPO_ROOT / "compose.yaml").read_text())


def interpolate(text: str, environment: Mapping[str, str]) -> str:
    """Substitute ``${NAME}``, ``${NAME:-default}``, ``${NAME-default}``, ``${NAME:?message}`` and
    ``${NAME?message}`` as compose does with ``environment`` as the shell's variables."""

    def substitute(match: re.Match) -> str:
        name, operator, argument = match["name"], match["operator"], match["argument"]
        value = environment.get(name)
        missing = value is None or (value == "" and operator is not None and operator.startswith(":"))
        if operator is not None and operator.endswith("?") and missing:
            raise MissingVariable(f"{name}: {argument}")
        if operator is not None and operator.endswith("-") and missing:
            return argument
        return value or ""

    return _VARIABLE.sub(substitute, text)


def service_environment(service: Mapping[str, Any], environment: Mapping[str, str]) -> dict[str, str]:
    """The variables a service's container gets, interpolated with ``environment``."""
    return {name: interpolate(str(value), environment) for name, value in (service.get("environment") or {}).items()}


def secret_environment() -> dict[str, str]:
    """Values for the secrets production requires: long random keys and a database password."""
    return {"SECRET_KEY": secrets.token_urlsafe(64), "FLOWSITE_SENSITIVE_KEY": secrets.token_urlsafe(32),
            "FLOWSITE_CLUSTER_KEY": secrets.token_urlsafe(32), "POSTGRES_PASSWORD": secrets.token_hex(16)}


def with_secret_files(environment: Mapping[str, str], directory: Path) -> dict[str, str]:
    """``environment`` with each ``…_FILE`` under ``/run/secrets/`` (where compose mounts the
    secrets) pointing to a file of ``directory`` holding a random key instead."""
    changed = dict(environment)
    directory.mkdir(parents=True, exist_ok=True)
    for name, value in environment.items():
        if name.endswith("_FILE") and value.startswith("/run/secrets/"):
            path = directory / Path(value).name
            path.write_text(secrets.token_urlsafe(48) + "\n")
            changed[name] = str(path)
    return changed


def database_url_of_tests() -> str:
    """A URL of the database the tests use (the test database once a test holds ``db``)."""
    database = connection.settings_dict
    credentials = database["USER"] + (f":{database['PASSWORD']}" if database["PASSWORD"] else "")
    port = f":{database['PORT']}" if database["PORT"] else ""
    return f"postgres://{credentials}@{database['HOST'] or 'localhost'}{port}/{database['NAME']}"


def run_django(args: list[str], environment: Mapping[str, str]) -> subprocess.CompletedProcess:
    """Run ``python ARGS`` in the project with exactly the Flowsite variables of ``environment``
    (the others of this process are removed) and return its result."""
    flowsite_variables = set(settings.ENVIRONMENT_VARIABLES) | {"DJANGO_SETTINGS_MODULE"}
    env = {name: value for name, value in os.environ.items() if name not in flowsite_variables}
    env.update(environment)
    return subprocess.run([sys.executable, *args], cwd=REPO_ROOT, env=env, capture_output=True, text=True, check=False,
                          timeout=120)
