"""scripts/up runs the platform (web, nodes, jobs) against the servers it is given, with the
demo tenant and its flow deployed to the nodes as the portal deploys it; scripts/down stops it. Run
as a user would, in a scratch .local folder, with two nodes (``--nodes 2``)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import psycopg
import pytest
import redis

from engine.cluster.keys import ClusterKeys
from engine.cluster.records import ClusterView
from tests.servers import free_port

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def scratch_database():
    """A database of its own on the test server (dropped afterwards); yields its URL."""
    base = os.environ["DATABASE_URL"]
    name = f"flowsite_up_{os.getpid()}"
    admin_url = base.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'drop database if exists "{name}"')
        connection.execute(f'create database "{name}"')
    yield base.rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'drop database if exists "{name}" with (force)')


def _get(url: str, token: str | None = None):
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read()


def test_up_runs_the_platform_and_down_stops_it(scratch_database, redis_server, tmp_path):
    port = free_port()
    local = tmp_path / "local"
    nodes = ["node-1", "node-2"]
    # A Redis of its own: the node joins the cluster there, and a cluster flow left by another
    # test would be the flow it inherits.
    env = {**os.environ, "DATABASE_URL": scratch_database, "REDIS_URL": f"redis://127.0.0.1:{redis_server.port}/0",
           "FLOWSITE_PORT": str(port), "FLOWSITE_LOCAL_DIR": str(local)}
    # Secrets made earlier are kept; a password that starts with "-" must not read as an option.
    local.mkdir()
    (local / "secrets.env").write_text("SECRET_KEY=a-test-secret-key-that-is-long-enough-for-django-checks\n"
                                       "FLOWSITE_SENSITIVE_KEY=a-test-sensitive-key\n"
                                       "FLOWSITE_DEMO_PASSWORD=-starts-with-a-dash\n")
    up = subprocess.run(["scripts/up", "--nodes", "2"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        assert f"http://127.0.0.1:{port}/" in up.stdout
        password = re.search(r"log in as: admin / (\S+)", up.stdout).group(1)
        assert password == "-starts-with-a-dash"

        status, _ = _get(f"http://127.0.0.1:{port}/healthz")
        assert status == 200
        login = subprocess.run(
            [str(REPO / ".venv/bin/python"), "manage.py", "shell", "-c",
             "from django.contrib.auth import authenticate; from flowsite.api.models import ApiToken;"
             f"user = authenticate(username='admin', password={password!r}); assert user is not None;"
             "print(ApiToken.issue(user, 'setup test')[1])"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        assert login.returncode == 0, login.stderr
        token = login.stdout.strip().splitlines()[-1]
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/tenants", token)
        tenants = json.loads(body)["results"]
        assert [t["slug"] for t in tenants] == ["demo"]
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/process-groups/{tenants[0]['rootGroupId']}"
                            "/process-groups", token)
        assert json.loads(body)["count"] == 1

        assert "deployed demo (design)" in up.stdout, "the demo flow goes through a deployment"
        output = local / "files" / "demo" / "output"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(list(output.glob("hello-*.txt"))) < 3:
            time.sleep(0.2)
        assert sorted(p.name for p in output.glob("hello-*.txt")) == ["hello-1.txt", "hello-2.txt", "hello-3.txt"]

        # Both nodes joined the one cluster.
        cluster = redis.Redis(host="127.0.0.1", port=redis_server.port)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and ClusterView(cluster, ClusterKeys("default")).connected() != nodes:
            time.sleep(0.5)
        assert ClusterView(cluster, ClusterKeys("default")).connected() == nodes
        cluster.close()
        time.sleep(1.5)  # the web tier's cached status answers (1 s) predate node-2

        # The portal and the nodes agree: deployed, and what the design says RUNNING runs on both nodes.
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/cluster/deployments", token)
        deployments = json.loads(body)
        deployments = deployments.get("results", deployments) if isinstance(deployments, dict) else deployments
        assert [d["tenant"] for d in deployments] == ["demo"]
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/flow/status", token)
        processors = json.loads(body)["processors"]
        assert len(processors) == 4
        assert {(p["run_status"], tuple(n["node"] for n in p["nodes"])) for p in processors} == \
            {("Running", tuple(nodes))}
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/process-groups/{tenants[0]['rootGroupId']}"
                            "/process-groups", token)
        group = json.loads(body)["results"][0]
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/process-groups/{group['id']}/processors", token)
        assert {p["state"] for p in json.loads(body)["results"]} == {"RUNNING"}
        for name in ("web", "jobs", *nodes):
            assert (local / "run" / f"{name}.pid").exists()
        pids = set()
        for node in nodes:
            node_flow = gzip.decompress((local / "nodes" / node / "flow.json.gz").read_bytes())
            assert "demo" in json.loads(node_flow)["tenants"], f"{node} runs the cluster's flow, not a file"
            node_pid = (local / "run" / f"{node}.pid").read_text().strip()
            pids.add(node_pid)
            node_environment = dict(entry.split(b"=", 1) for entry in Path(f"/proc/{node_pid}/environ").read_bytes()
                                    .split(b"\0") if b"=" in entry)
            assert not {b"SECRET_KEY", b"DATABASE_URL", b"FLOWSITE_DEMO_PASSWORD"} & set(node_environment), \
                "a node holds neither Django's key, the database nor the demo password"
            assert {b"FLOWSITE_SENSITIVE_KEY", b"FLOWSITE_CLUSTER_KEY", b"REDIS_URL"} <= set(node_environment)
        assert len(pids) == 2, "one process per node"
    finally:
        down = subprocess.run(["scripts/down"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert down.returncode == 0, down.stdout + down.stderr
    assert not list((local / "run").glob("*.pid"))
    with pytest.raises(OSError):
        _get(f"http://127.0.0.1:{port}/healthz")


def test_the_node_count_defaults_to_one_per_core_at_most_four():
    def count(*args, **env):
        script = "source scripts/lib/nodes.sh; node_count " + " ".join(args)
        environment = {k: v for k, v in os.environ.items() if k != "FLOWSITE_NODES"} | env
        return subprocess.run(["bash", "-c", script], cwd=REPO, env=environment, capture_output=True, text=True)
    assert count().stdout.strip() == str(min(len(os.sched_getaffinity(0)), 4))  # nproc counts the usable cores
    assert count("3").stdout.strip() == "3" and count(FLOWSITE_NODES="6").stdout.strip() == "6"
    assert count("2", FLOWSITE_NODES="6").stdout.strip() == "2", "--nodes wins over the environment"
    refused = count("0")
    assert refused.returncode == 2 and "must be a whole number from 1 up, not '0'" in refused.stderr
    up = subprocess.run(["scripts/up", "--nodes", "many"], cwd=REPO, capture_output=True, text=True, timeout=30)
    assert up.returncode == 2 and "not 'many'" in up.stderr and "nothing was started" in up.stderr
