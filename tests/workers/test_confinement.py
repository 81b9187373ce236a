"""``manage.py runnode`` confines the node's components to what the platform must keep to itself:
the Redis of REDIS_URL, the addresses of FLOWSITE_PLATFORM_ADDRESSES and the project's .local
directory are refused even to the operator's own components, each refusal logged as a bulletin
and nothing sent."""

from __future__ import annotations

from tests.engine.httpserver import start_server
from tests.workers.cluster import REPO_ROOT
from engine.testing.flows import connection, flow, processor
from workers.confinement import platform_addresses, protected_paths

EVERY = ["Original", "Response", "Retry", "No Retry", "Failure"]


def test_runnode_refuses_the_platforms_services_and_directories(cluster_factory, redis_server, tmp_path):
    web = start_server()
    try:
        cluster = cluster_factory()
        cluster.env["FLOWSITE_PLATFORM_ADDRESSES"] = f"127.0.0.1:{web.port}"
        secrets = REPO_ROOT / ".local" / "secrets.env"
        node = cluster.start("node-1", flow(
            processors=[
                processor("gen", "GenerateFlowFile", schedulingPeriod="1 sec"),
                processor("to-redis", "InvokeHTTP", {"HTTP URL": f"http://127.0.0.1:{redis_server.port}/"},
                          auto_terminate=EVERY),
                processor("to-web", "InvokeHTTP", {"HTTP URL": web.url("/")}, auto_terminate=EVERY),
                processor("secrets", "FetchFile", {"File to Fetch": str(secrets)},
                          auto_terminate=["success", "failure", "not.found", "permission.denied"]),
            ],
            connections=[connection("c1", "gen", "to-redis"), connection("c2", "gen", "to-web"),
                         connection("c3", "gen", "secrets")]))
        node.wait_for_output(f"InvokeHTTP[to-redis] refused 127.0.0.1:{redis_server.port}: 127.0.0.1:"
                             f"{redis_server.port} is one of the platform's own services")
        node.wait_for_output(f"InvokeHTTP[to-web] refused 127.0.0.1:{web.port}: 127.0.0.1:{web.port} is one of "
                             f"the platform's own services (127.0.0.1:{web.port})")
        node.wait_for_output(f"FetchFile[secrets] refused {secrets}: it is inside a protected directory of the "
                             f"platform")
        assert web.requests == []
    finally:
        web.close()


def test_the_files_root_stays_open_inside_protected_directories(tmp_path):
    project, data = tmp_path / "project", tmp_path / "project" / ".local" / "nodes"
    for directory in (project / ".local" / "files" / "acme", data / "node-1", data / "node-2"):
        directory.mkdir(parents=True)
    (data / "node-2" / "flow.json.gz").write_bytes(b"")
    (project / ".local" / "secrets.env").write_text("x")
    paths = protected_paths(project, data / "node-1", project / ".local" / "files")
    assert str(project / ".local" / "secrets.env") in paths and str(data) in paths
    assert not any(path.startswith(str(project / ".local" / "files")) for path in paths)
    outside = protected_paths(project, tmp_path / "elsewhere" / "node-1", None)
    assert outside == [str(project / ".local")]


def test_platform_addresses_come_from_redis_url_and_the_environment():
    assert platform_addresses("redis://redis:6380/0", {"FLOWSITE_PLATFORM_ADDRESSES": "web:8000, db:5432"}) == [
        "redis:6380", "web:8000", "db:5432"]
    assert platform_addresses("redis://[::1]/0", {}) == ["[::1]:6379"]
