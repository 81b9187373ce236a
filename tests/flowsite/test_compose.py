"""compose.yaml, the Dockerfile and .dockerignore agree with the project: every command exists
and accepts its options, every variable is one the settings read (or one its image documents),
volumes, dependencies and addresses match the services."""

from __future__ import annotations

import fnmatch
import json
import re
import sys
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from celery.app.utils import find_app
from celery.bin.base import CLIContext
from celery.bin.celery import celery as celery_command_line
from daphne.cli import CommandLineInterface, import_by_path
from django.conf import settings
from django.core.management import get_commands, load_command_class
from django.urls import resolve

from flowsite.health import healthz
from tests.flowsite.deployment import (
    REPO_ROOT,
    MissingVariable,
    database_url_of_tests,
    interpolate,
    load_compose,
    run_django,
    secret_environment,
    service_environment,
    with_secret_files,
)

COMPOSE = load_compose()
SERVICES = COMPOSE["services"]
#: The services that run the image built from this repository.
PROJECT_SERVICES = sorted(name for name, service in SERVICES.items() if "build" in service)
#: Spark's daemons, run from that image's pyspark distribution.
SPARK_SERVICES = ["spark-master", "spark-worker"]
#: The services that run Flowsite itself (and read its settings).
FLOWSITE_SERVICES = [name for name in PROJECT_SERVICES if name not in SPARK_SERVICES]
NODES = ["node-1", "node-2", "node-3"]

#: Variables that are not Flowsite settings, allowed only on services of the image that reads them.
IMAGE_VARIABLES = {
    "postgres": {"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB"},
    "redis": set(),
}
#: What Spark's own launch scripts read (pyspark's spark-class).
SPARK_VARIABLES = {"SPARK_WORKER_CORES", "SPARK_WORKER_MEMORY"}

#: depends_on conditions; the one-shot ones wait for a service that runs once and exits.
ONE_SHOT_CONDITIONS = {"service_completed_successfully"}
CONDITIONS = {"service_started", "service_healthy", *ONE_SHOT_CONDITIONS}


def image_name(service: dict) -> str:
    return service["image"].rsplit(":", 1)[0]


def environment(name: str) -> dict[str, str]:
    """A service's container variables, with the required secrets given."""
    return service_environment(SERVICES[name], secret_environment())


def manage_py_command(argv: list[str]) -> None:
    """Check ``python manage.py NAME ARGS``: the command exists and accepts the arguments."""
    assert argv[:2] == ["python", "manage.py"], argv
    name, arguments = argv[2], argv[3:]
    commands = get_commands()
    assert name in commands, f"no management command {name!r}"
    parser = load_command_class(commands[name], name).create_parser("manage.py", name)
    parser.parse_args(arguments)  # raises CommandError on an unknown or missing option


def daphne_command(argv: list[str]) -> None:
    """Check ``daphne ARGS``: the options parse and the application path imports."""
    options = CommandLineInterface().parser.parse_args(argv[1:])
    assert callable(import_by_path(options.application))


def celery_command(argv: list[str]) -> None:
    """Check ``celery -A APP worker ARGS``: the app is this project's and the worker accepts the options."""
    assert argv[1] == "-A", argv
    app = find_app(argv[2])
    assert app.main == "flowsite"
    command = celery_command_line.commands[argv[3]]
    command.make_context(argv[3], argv[4:], obj=CLIContext(app=app, no_color=True, workdir=None))


#: The Spark daemons compose runs, and the options each is given.
SPARK_DAEMONS = {"org.apache.spark.deploy.master.Master": {"--host", "--port", "--webui-port"},
                 "org.apache.spark.deploy.worker.Worker": {"--work-dir", "--cores", "--memory", "--webui-port"}}


def spark_class_command(argv: list[str]) -> None:
    """Check ``spark-class CLASS OPTIONS``: the script is pyspark's (on the image's PATH, as in
    the virtualenv), the class is in its jars, and the options are the daemon's."""
    assert (Path(sys.executable).parent / "spark-class").exists(), "pip's pyspark installs spark-class"
    daemon, options = argv[1], argv[2:]
    assert daemon in SPARK_DAEMONS, daemon
    import pyspark

    entry = daemon.replace(".", "/") + ".class"
    jars = (Path(pyspark.__file__).parent / "jars").glob("spark-core_*.jar")
    assert any(entry in zipfile.ZipFile(jar).namelist() for jar in jars), f"{daemon} is not in pyspark's jars"
    given = {option for option in options if option.startswith("--")}
    assert given <= SPARK_DAEMONS[daemon], given - SPARK_DAEMONS[daemon]


PROGRAMS = {"python": manage_py_command, "daphne": daphne_command, "celery": celery_command,
            "spark-class": spark_class_command}


def test_the_platform_services_are_all_there():
    assert "version" not in COMPOSE
    assert set(SERVICES) == {"postgres", "redis", "migrate", "web", "jobs", "analytics", *NODES, "spark-master",
                             "spark-worker"}
    assert PROJECT_SERVICES == sorted(["migrate", "web", "jobs", "analytics", *NODES, *SPARK_SERVICES])


@pytest.mark.parametrize("name", PROJECT_SERVICES)
def test_project_services_run_the_image_built_here_with_a_command_that_exists(name):
    service = SERVICES[name]
    assert service["build"] == "." and service["image"] == SERVICES["web"]["image"]
    command = service["command"]
    assert isinstance(command, list), "exec form: the process gets SIGTERM itself"
    assert command[0] in PROGRAMS, f"{name}: no check knows the program {command[0]!r}"
    PROGRAMS[command[0]](command)


def test_the_command_checks_reject_what_does_not_exist():
    with pytest.raises(AssertionError, match="no management command"):
        manage_py_command(["python", "manage.py", "runnodes", "--node-id", "x"])
    with pytest.raises(Exception, match="unrecognized arguments"):
        manage_py_command(["python", "manage.py", "runnode", "--node-id", "x", "--data-dir", "/d", "--bogus"])
    with pytest.raises(ImportError):
        daphne_command(["daphne", "flowsite.nowhere:application"])
    with pytest.raises(Exception, match="No such option"):
        celery_command(["celery", "-A", "flowsite", "worker", "--bogus"])


def test_the_migrate_service_runs_once_and_the_others_keep_running():
    assert SERVICES["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    assert SERVICES["migrate"]["restart"] == "no"
    for name, service in SERVICES.items():
        if name != "migrate":
            assert service["restart"] == "unless-stopped", name


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_service_variables_are_settings_or_documented_by_the_image(name):
    service = SERVICES[name]
    allowed = (set(settings.ENVIRONMENT_VARIABLES) if name in FLOWSITE_SERVICES else SPARK_VARIABLES
               if name in SPARK_SERVICES else IMAGE_VARIABLES[image_name(service)])
    unknown = set(service.get("environment") or {}) - allowed
    assert not unknown, f"{name} sets variables nothing reads: {sorted(unknown)}"


#: What only the control plane holds: nodes never get them (nor a file of them).
CONTROL_PLANE_ONLY = {"SECRET_KEY", "SECRET_KEY_FILE", "DATABASE_URL", "DATABASE_URL_FILE"}


def test_project_services_share_the_production_environment_and_nodes_hold_only_what_they_need():
    shared = SERVICES["web"]["environment"]
    for name in FLOWSITE_SERVICES:
        expected = shared if name not in NODES else {
            **{k: v for k, v in shared.items() if k not in CONTROL_PLANE_ONLY},
            "FLOWSITE_PLATFORM_ADDRESSES": "web:8000,postgres:5432"}  # what flows may never reach
        assert SERVICES[name]["environment"] == expected, name
    assert shared["FLOWSITE_ENV"] == "production"
    assert {"SECRET_KEY_FILE", "DATABASE_URL"} <= set(shared)
    for name in NODES:
        assert not CONTROL_PLANE_ONLY & set(SERVICES[name]["environment"]), name
        assert "secret_key" not in SERVICES[name]["secrets"], name


def test_keys_are_secret_files_mounted_only_where_they_are_read():
    declared = COMPOSE["secrets"]
    assert {name: secret["file"] for name, secret in declared.items()} == {
        "secret_key": "./secrets/secret_key", "sensitive_key": "./secrets/sensitive_key",
        "cluster_key": "./secrets/cluster_key"}
    for name in SPARK_SERVICES:
        assert "secrets" not in SERVICES[name], f"{name} needs no key"
    for name in FLOWSITE_SERVICES:
        environment = SERVICES[name]["environment"]
        files = {value.removeprefix("/run/secrets/") for key, value in environment.items() if key.endswith("_FILE")}
        assert files == set(SERVICES[name]["secrets"]), f"{name}: every mounted secret is read, and only those"
        assert not set(environment) & {"SECRET_KEY", "FLOWSITE_SENSITIVE_KEY", "FLOWSITE_CLUSTER_KEY"}, name
    ignored = [line for name in (".gitignore", ".dockerignore") for line in (REPO_ROOT / name).read_text().splitlines()]
    assert "/secrets/" in ignored and "secrets" in ignored, "the key files stay out of git and of the image"


@pytest.mark.parametrize("variable", ["POSTGRES_PASSWORD"])
def test_compose_refuses_to_start_without_a_secret(variable):
    given = secret_environment()
    service_environment(SERVICES["web"], given)
    del given[variable]
    with pytest.raises(MissingVariable, match=variable):
        service_environment(SERVICES["web"], given)
    with pytest.raises(MissingVariable, match=variable):
        service_environment(SERVICES["web"], {**secret_environment(), variable: ""})


def test_named_volumes_are_declared_and_used():
    declared = set(COMPOSE["volumes"])
    used = {mount.split(":", 1)[0] for service in SERVICES.values() for mount in service.get("volumes", [])}
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name) for name in used), "only named volumes, no host paths"
    assert used == declared


def test_each_node_has_its_own_volume_at_its_data_directory_and_shares_the_tenants_files():
    volumes = []
    for name in NODES:
        command = SERVICES[name]["command"]
        assert command[command.index("--node-id") + 1] == name, "the node id is the service's host name"
        data_dir = command[command.index("--data-dir") + 1]
        files_root = command[command.index("--files-root") + 1]
        mounts = dict(reversed(mount.split(":")) for mount in SERVICES[name]["volumes"])
        staging = environment(name)["FLOWSITE_SPARK_STAGING_DIR"]
        assert set(mounts) == {data_dir, files_root, staging, "/analytics"}
        assert mounts[files_root] == "tenant-files"
        assert mounts[staging] == "spark-staging"
        volumes.append(mounts[data_dir])
    assert len(set(volumes)) == len(NODES)
    assert SERVICES["node-1"]["stop_grace_period"], "a node needs time to checkpoint"


def test_the_analytics_volume_is_shared_by_the_nodes_the_analytics_worker_and_spark_at_one_path():
    path = SERVICES["analytics"]["environment"]["FLOWSITE_ANALYTICS_DIR"]
    for name in [*NODES, "analytics", "spark-worker"]:
        assert f"analytics:{path}" in SERVICES[name]["volumes"], name
    for name in ("web", "jobs"):
        assert "volumes" not in SERVICES[name], f"{name} never reads a node's files"


def _queues(name: str) -> set[str]:
    command = SERVICES[name]["command"]
    return set(command[command.index("--queues") + 1].split(","))


def test_quick_requests_and_spark_analytics_have_workers_of_their_own():
    """Every task is routed to a queue one worker serves, and analytics is served apart."""
    from flowsite import celery_app

    assert _queues("jobs") == {settings.CELERY_TASK_DEFAULT_QUEUE} and _queues("analytics") == {"analytics"}
    celery_app.loader.import_default_modules()
    routed = {route["queue"] for route in settings.CELERY_TASK_ROUTES.values()}
    assert routed | {settings.CELERY_TASK_DEFAULT_QUEUE} == _queues("jobs") | _queues("analytics")
    assert celery_app.amqp.router.route({}, "provenance.run_analytics")["queue"].name == "analytics"
    assert celery_app.amqp.router.route({}, "provenance.run_request")["queue"].name == "provenance"


def test_dependencies_use_the_long_form_and_conditions_their_targets_support():
    for name, service in SERVICES.items():
        for target, dependency in (service.get("depends_on") or {}).items():
            assert target in SERVICES, f"{name} depends on a missing service {target}"
            condition = dependency["condition"]
            assert condition in CONDITIONS
            if condition == "service_healthy":
                assert "healthcheck" in SERVICES[target], f"{name} waits for {target} to be healthy: it has no check"
            if condition in ONE_SHOT_CONDITIONS:
                assert SERVICES[target]["restart"] == "no", f"{target} must run once"
    for name in ("web", "jobs", "analytics"):
        assert SERVICES[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_database_url_names_the_postgres_service():
    given = secret_environment()
    url = urlsplit(service_environment(SERVICES["web"], given)["DATABASE_URL"])
    postgres = service_environment(SERVICES["postgres"], given)
    assert url.scheme == "postgres" and url.hostname == "postgres" and url.port == 5432
    assert url.username == postgres["POSTGRES_USER"] and url.password == postgres["POSTGRES_PASSWORD"]
    assert url.path == f"/{postgres['POSTGRES_DB']}"
    assert postgres["POSTGRES_USER"] in SERVICES["postgres"]["healthcheck"]["test"]


def test_redis_and_spark_urls_name_their_services():
    redis = urlsplit(environment("web")["REDIS_URL"])
    assert (redis.scheme, redis.hostname, redis.port) == ("redis", "redis", 6379)
    spark = environment("web")["SPARK_MASTER"]
    master, worker = SERVICES["spark-master"], SERVICES["spark-worker"]
    assert urlsplit(spark).hostname == master["hostname"] == "spark-master"
    assert master["command"][master["command"].index("--port") + 1] == str(urlsplit(spark).port)
    assert worker["command"][-1] == spark
    assert worker["depends_on"] == {"spark-master": {"condition": "service_healthy"}}


def test_the_spark_worker_sees_the_nodes_staging_and_analytics_directories_at_the_same_path():
    staging = environment("web")["FLOWSITE_SPARK_STAGING_DIR"]
    analytics = environment("web")["FLOWSITE_ANALYTICS_DIR"]
    assert staging.startswith("/") and analytics.startswith("/")
    worker = dict(reversed(mount.split(":")) for mount in SERVICES["spark-worker"]["volumes"])
    assert worker == {staging: "spark-staging", analytics: "analytics"}
    dockerfile = re.sub(r"\s+", " ", (REPO_ROOT / "Dockerfile").read_text().replace("\\\n", " "))
    assert f"mkdir /data {staging} {analytics} && chown flowsite:flowsite /data {staging} {analytics}" in dockerfile, \
        "the volumes start out owned by the user the nodes and the worker run as"


def dockerfile_instruction(keyword: str) -> str:
    """The argument of ``keyword`` in the image's own (last) stage, where it must be given once."""
    stages = (REPO_ROOT / "Dockerfile").read_text().split("\nFROM ")
    lines = ("FROM " + stages[-1]).splitlines()
    (line,) = [line for line in lines if line.startswith(keyword + " ")]
    return line[len(keyword) + 1:]


def test_dockerfile_installs_the_browser_libraries_from_the_lock_file():
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    assert "COPY package.json package-lock.json ./" in dockerfile and "RUN npm ci" in dockerfile
    assert dockerfile.index("COPY --from=browser-libraries") < dockerfile.index("collectstatic")


def test_dockerfile_serves_what_the_web_service_serves():
    web = SERVICES["web"]
    assert json.loads(dockerfile_instruction("CMD")) == web["command"]
    port = dockerfile_instruction("EXPOSE")
    assert web["command"][web["command"].index("-p") + 1] == port
    assert [mapping.rsplit(":", 1)[1] for mapping in web["ports"]] == [port]
    health_url = urlsplit(re.search(r"http://[^'\"]+", " ".join(web["healthcheck"]["test"])).group())
    assert str(health_url.port) == port
    assert resolve(health_url.path).func is healthz
    assert dockerfile_instruction("FROM").startswith("python:3.11-slim")
    assert dockerfile_instruction("USER") != "root"


def test_web_healthcheck_passes_the_production_security_settings(db, tmp_path):
    """The healthcheck's plain-HTTP request to 127.0.0.1 is answered, not redirected to HTTPS."""
    health_url = urlsplit(re.search(r"http://[^'\"]+", " ".join(SERVICES["web"]["healthcheck"]["test"])).group())
    variables = {**with_secret_files(environment("web"), tmp_path / "secrets"), "DATABASE_URL": database_url_of_tests(),
                 "REDIS_URL": settings.REDIS_URL}
    probe = ("import flowsite.asgi; from django.test import Client; "
             f"response = Client().get({health_url.path!r}, HTTP_HOST={health_url.netloc!r}); "
             "print(response.status_code, response.content.decode())")
    result = run_django(["-c", probe], variables)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["200", '{"database":', '"ok"}'], result.stdout


def test_dockerignore_keeps_local_state_out_and_the_sources_in():
    patterns = [line for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
                if line and not line.startswith("#")]

    def ignored(path: str) -> bool:
        return any(fnmatch.fnmatch(path, pattern) or path.startswith(pattern + "/") for pattern in patterns)

    for path in [".env", ".venv", ".local", ".data", ".git", "bench/out", "engine/__pycache__/x.pyc",
                 "node_modules/cytoscape/package.json"]:
        assert ignored(path), path
    for path in ["manage.py", "requirements.txt", "engine/node.py", "flowsite/settings.py",
                 "workers/management/commands/runnode.py", "static/.gitkeep"]:
        assert not ignored(path), path


def test_interpolation_follows_compose():
    given = {"SET": "value", "EMPTY": ""}
    assert interpolate("${SET}-${UNSET}-${UNSET:-d}-${EMPTY:-d}-${EMPTY-d}-${SET:?m}", given) == "value--d-d--value"
    with pytest.raises(MissingVariable):
        interpolate("${EMPTY:?m}", given)
