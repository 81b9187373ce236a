"""The exfiltration suite: a tenant administrator made by ``create_tenant --admin`` (default
rights), working through the REST API with a token, tries to read the node's environment, the
platform's secrets, a node's data directory and another tenant's files (directly, through
``..`` and through symlinks) with GetFile, FetchFile, ListFile and PutFile, and to reach the
platform's Redis, PostgreSQL and web tier and the cloud metadata address with InvokeHTTP.

With default rights the restricted components cannot even be created or deployed. With the file
capabilities granted by an operator (file roots in a temporary directory), the flow is deployed
to a real ``manage.py runnode`` process, and the engine refuses every attempt with a bulletin:
no FlowFile leaves a refused attempt by success, nothing is read (the canaries are nowhere in
the node's repositories) and nothing is written. A control attempt inside the tenant's own root
(and an allowlisted HTTP server) shows the flow really ran."""

from __future__ import annotations

import gzip
import http.server
import secrets
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection as db_connection

from flowsite.cluster.status import forget_answers
from flowsite.flows.models import Connection, ProcessGroup, Processor
from flowsite.tenancy.models import Tenant
from tests.flowsite.api.support import API, assert_error
from tests.flowsite.conftest import token_client
from tests.workers.cluster import Cluster, wait_until

FILE_TYPES = ("GetFile", "FetchFile", "ListFile", "PutFile")
#: Those NiFi 2 marks @Restricted (ListFile is not).
RESTRICTED_FILE_TYPES = ("GetFile", "FetchFile", "PutFile")


# ------------------------------------------------------------------------------------- the world

class Recorder(http.server.ThreadingHTTPServer):
    """An HTTP server on 127.0.0.1 that counts the requests it gets."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (the standard library's name)
                recorder.requests.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


@dataclass
class World:
    """Two tenants' file roots, the platform's secrets file, canaries and the attacker's client."""

    tmp: Path
    a_root: Path
    b_root: Path
    secrets_file: Path
    canaries: dict[str, str]
    api: object
    tenant: Tenant
    root_group: str
    cleanup: list[Path] = field(default_factory=list)


@pytest.fixture
def world(tmp_path, db, settings_for_nodes):
    """Tenants ``acme`` (administrator mallory, default rights) and ``globex`` (with a file of its
    own), a secrets file in the platform's directory, and canaries to look for."""
    canaries = {name: f"canary-{name}-{secrets.token_hex(12)}" for name in ("secret", "other-tenant", "environ")}
    platform = Path(settings.BASE_DIR) / ".local" / f"exfiltration-{secrets.token_hex(4)}"
    platform.mkdir(parents=True)
    secrets_file = platform / "secrets.env"
    secrets_file.write_text(f"SECRET_KEY={canaries['secret']}\nFLOWSITE_SENSITIVE_KEY={canaries['secret']}\n")
    a_root, b_root = tmp_path / "acme-files", tmp_path / "globex-files"
    for directory in (a_root / "in", a_root / "out", b_root):
        directory.mkdir(parents=True)
    (a_root / "in" / "mine.txt").write_text("acme's own file")
    (b_root / "b-secret.txt").write_text(canaries["other-tenant"])
    (a_root / "link-secrets").symlink_to(secrets_file)
    (a_root / "link-globex").symlink_to(b_root, target_is_directory=True)
    get_user_model().objects.create_user("mallory", password="a password nobody types")
    call_command("create_tenant", "Acme", "--slug", "acme", "--admin", "mallory")
    call_command("create_tenant", "Globex", "--slug", "globex")
    tenant = Tenant.objects.get(slug="acme")
    api = token_client(get_user_model().objects.get(username="mallory"))
    root_group = next(t["rootGroupId"] for t in api.get(f"{API}tenants").json()["results"] if t["slug"] == "acme")
    yield World(tmp_path, a_root, b_root, secrets_file, canaries, api, tenant, root_group)
    shutil.rmtree(platform, ignore_errors=True)


@pytest.fixture
def settings_for_nodes(redis_server, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{redis_server.port}/0"
    settings.FLOWSITE_CLUSTER = "default"
    forget_answers()
    yield redis_server
    forget_answers()


@pytest.fixture
def node(world, settings_for_nodes):
    """One ``manage.py runnode`` process in the cluster, with a canary in its environment."""
    cluster = Cluster(world.tmp / "nodes", settings_for_nodes.port, "default", election_max_candidates=1)
    cluster.env["FLOWSITE_EXFILTRATION_CANARY"] = world.canaries["environ"]
    started = cluster.start("n1")
    cluster.wait_connected("n1")
    yield started
    cluster.stop_all()
    for planted in Path("/dev/shm").glob("flowsite-exfiltration-*"):  # only if the engine let it be written
        shutil.rmtree(planted, ignore_errors=True)


# ----------------------------------------------------------------------------- building by the API

class Designer:
    """Builds processors and connections in the tenant's root group through the REST API."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.api = world.api
        self.group = world.root_group
        self.sink = None
        self.to_start: list[dict] = []

    def processor(self, type_name: str, name: str, properties: dict, *, terminate=(), expect=201, **extra) -> dict:
        body = {"type": type_name, "name": name, "properties": properties,
                "autoTerminatedRelationships": list(terminate), **extra}
        answer = self.api.post(f"{API}process-groups/{self.group}/processors", body, format="json")
        assert answer.status_code == expect, answer.json()
        return answer.json()

    def connect(self, source: dict, destination: dict, relationships) -> dict:
        body = {"source": {"id": source["id"]}, "destination": {"id": destination["id"]},
                "selectedRelationships": list(relationships)}
        answer = self.api.post(f"{API}process-groups/{self.group}/connections", body, format="json")
        assert answer.status_code == 201, answer.json()
        return answer.json()

    def start(self, processor: dict) -> None:
        """Start ``processor`` once the design is complete (it must be valid to start)."""
        self.to_start.append(processor)

    def start_all(self) -> None:
        for processor in self.to_start:
            self._start(processor)
        self.to_start = []

    def _start(self, processor: dict) -> None:
        current = self.api.get(f"{API}processors/{processor['id']}").json()
        answer = self.api.put(f"{API}processors/{processor['id']}/run-status",
                              {"state": "RUNNING", "revision": {"version": current["revision"]["version"]}},
                              format="json")
        assert answer.status_code == 200, answer.json()

    def sink_processor(self) -> dict:
        """A LogAttribute never started: what reaches it stays queued, to be counted."""
        if self.sink is None:
            self.sink = self.processor("LogAttribute", "sink", {}, terminate=["success"])
        return self.sink

    def generator(self, name: str) -> dict:
        gen = self.processor("GenerateFlowFile", f"{name} source", {"File Size": "1 B"}, schedulingPeriod="1 sec")
        self.start(gen)
        return gen


@dataclass
class Attempt:
    """One processor trying something it must not do: ``ok`` holds what would prove it worked,
    ``refused`` what its refusals route to (None for a source processor, refused by bulletin only)."""

    name: str
    processor: dict
    target: str
    ok: dict
    refused: dict | None = None


def fetch_attempt(designer: Designer, name: str, path: str) -> Attempt:
    gen = designer.generator(name)
    fetch = designer.processor("FetchFile", name, {"File to Fetch": path})
    designer.connect(gen, fetch, ["success"])
    ok = designer.connect(fetch, designer.sink_processor(), ["success"])
    refused = designer.connect(fetch, designer.sink_processor(), ["not.found", "permission.denied", "failure"])
    designer.start(fetch)
    return Attempt(name, fetch, path, ok, refused)


def get_attempt(designer: Designer, name: str, directory: str, keep: bool = False) -> Attempt:
    get = designer.processor("GetFile", name, {"Input Directory": directory,
                                               "Keep Source File": "true" if keep else "false",
                                               "Ignore Hidden Files": "false", "Polling Interval": "0 sec",
                                               "Recurse Subdirectories": "false"},
                             schedulingPeriod="1 sec")
    ok = designer.connect(get, designer.sink_processor(), ["success"])
    designer.start(get)
    return Attempt(name, get, directory, ok)


def list_attempt(designer: Designer, name: str, directory: str) -> Attempt:
    listing = designer.processor("ListFile", name, {"Input Directory": directory, "Ignore Hidden Files": "false",
                                                         "Recurse Subdirectories": "false"},
                                 schedulingPeriod="1 sec")
    ok = designer.connect(listing, designer.sink_processor(), ["success"])
    designer.start(listing)
    return Attempt(name, listing, directory, ok)


def put_attempt(designer: Designer, name: str, directory: str) -> Attempt:
    gen = designer.generator(name)
    put = designer.processor("PutFile", name, {"Directory": directory, "Create Missing Directories": "true"})
    designer.connect(gen, put, ["success"])
    ok = designer.connect(put, designer.sink_processor(), ["success"])
    refused = designer.connect(put, designer.sink_processor(), ["failure"])
    designer.start(put)
    return Attempt(name, put, directory, ok, refused)


def http_attempt(designer: Designer, name: str, address: str) -> Attempt:
    gen = designer.generator(name)
    invoke = designer.processor("InvokeHTTP", name, {"HTTP URL": f"http://{address}/exfiltrate",
                                                     "Connection Timeout": "2 secs",
                                                     "Socket Read Timeout": "2 secs"})
    designer.connect(gen, invoke, ["success"])
    ok = designer.connect(invoke, designer.sink_processor(), ["Original", "Response", "Retry", "No Retry"])
    refused = designer.connect(invoke, designer.sink_processor(), ["Failure"])
    designer.start(invoke)
    return Attempt(name, invoke, address, ok, refused)


# ------------------------------------------------------------------------------ watching the node

def deploy(world: World) -> str:
    answer = world.api.post(f"{API}cluster/deployments", {}, format="json")
    assert answer.status_code == 202, answer.json()
    deploy_id = answer.json()["deploy_id"]
    wait_until(lambda: {r["node"]: r["status"] for r in world.api.get(
        f"{API}cluster/deployments/{deploy_id}").json()["reports"]} == {"n1": "applied"}, 90,
        "the node applied the deployment")
    return deploy_id


def status(world: World) -> dict:
    forget_answers()
    return world.api.get(f"{API}flow/status").json()


def queued(answer: dict, connection: dict) -> int:
    return next((c["queued_count"] for c in answer["connections"] if c["id"] == connection["id"]), 0)


def bulletins_of(answer: dict, attempt: Attempt) -> list[str]:
    """The bulletins of the attempt's processor, and its validation errors: a source whose
    directory is refused is invalid (it never runs) and says why."""
    said = [b.get("message", "") for b in answer["bulletins"] if b.get("source_id") == attempt.processor["id"]]
    for processor in answer["processors"]:
        if processor["id"] == attempt.processor["id"]:
            said += processor.get("validation_errors") or []
    return said


def refusal_seen(answer: dict, attempt: Attempt) -> bool:
    """The engine refused the attempt with a bulletin saying so (and, for processors with a
    failure route, failed the FlowFile)."""
    said = any("refus" in message.lower() for message in bulletins_of(answer, attempt))
    return said and (attempt.refused is None or queued(answer, attempt.refused) >= 1)


def wait_for_refusals(world: World, attempts: list[Attempt]) -> None:
    """Wait until the engine has refused every attempt with a bulletin; fail naming those it has not."""
    pending = list(attempts)

    def all_refused() -> bool:
        answer = status(world)
        pending[:] = [attempt for attempt in pending if not refusal_seen(answer, attempt)]
        return not pending

    try:
        wait_until(all_refused, 120, "every attempt refused with a bulletin")
    except AssertionError:
        answer = status(world)
        raise AssertionError("not refused with a bulletin (name, target, bulletins): " + repr(
            [(a.name, a.target, bulletins_of(answer, a)) for a in pending])) from None


def files_under(directory: Path) -> list[bytes]:
    """Every regular file's bytes under ``directory`` (gzip files decompressed)."""
    found = []
    for path in directory.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if path.suffix == ".gz":
                try:
                    data = gzip.decompress(data)
                except OSError:
                    pass
            found.append(data)
    return found


def platform_addresses(redis_port: int, web: Recorder) -> dict[str, str]:
    database = db_connection.settings_dict
    return {"redis": f"127.0.0.1:{redis_port}",
            "postgresql": f"{database['HOST'] or '127.0.0.1'}:{database['PORT'] or 5432}",
            "web": web.address, "metadata": "169.254.169.254:80"}


# ------------------------------------------------------------------------------------------- tests

def test_with_default_rights_restricted_components_cannot_be_created_imported_or_deployed(world):
    properties = {"GetFile": {"Input Directory": "/proc/self"}, "FetchFile": {"File to Fetch": "/proc/self/environ"},
                  "ListFile": {"Input Directory": str(world.secrets_file.parent)},
                  "PutFile": {"Directory": str(world.b_root)}}
    accepted = []
    for type_name in RESTRICTED_FILE_TYPES:
        answer = world.api.post(f"{API}process-groups/{world.root_group}/processors",
                                {"type": type_name, "name": type_name, "properties": properties[type_name]},
                                format="json")
        if answer.status_code != 403:  # checked last, so that the other refusals are checked too
            accepted.append((type_name, answer.status_code))
            continue
        body = assert_error(answer, 403, "permission_denied")
        assert f"{type_name} is a restricted component requiring" in body["message"]
        assert "the tenant has not been granted 'read-filesystem'" in body["message"] or (
            "the tenant has not been granted 'write-filesystem'" in body["message"])

    definition = {"flowContents": {"identifier": "g", "name": "smuggled", "processors": [
        {"identifier": "p", "name": "p", "type": "FetchFile", "properties": {"File to Fetch": "/proc/self/environ"}}]}}
    assert_error(world.api.post(f"{API}process-groups/{world.root_group}/process-groups/import", definition,
                                format="json"), 403, "permission_denied")

    # A design edited behind the API's back (or kept from before a revocation) does not deploy either.
    root = ProcessGroup.objects.get(pk=world.root_group)
    gen = Processor.objects.create(tenant=world.tenant, parent=root, name="gen", type="GenerateFlowFile")
    put = Processor.objects.create(tenant=world.tenant, parent=root, name="smuggled put", type="PutFile",
                                   properties={"Directory": str(world.b_root)}, auto_terminated=["success", "failure"])
    Connection.objects.create(tenant=world.tenant, parent=root, source=gen, destination=put,
                              selected_relationships=["success"])
    body = assert_error(world.api.post(f"{API}cluster/deployments", {}, format="json"), 400, "invalid_design")
    assert any(p["message"].startswith("smuggled put: PutFile is a restricted component")
               and "'write-filesystem'" in p["message"] for p in body["problems"]), body
    assert accepted == [], "restricted, yet accepted with default rights"
    # ListFile is not restricted in NiFi 2 (no @Restricted): it may be created, and the engine confines
    # its listing to the tenant's roots (the next tests prove the refusals on a node).
    listing = world.api.post(f"{API}process-groups/{world.root_group}/processors",
                             {"type": "ListFile", "name": "ListFile", "properties": properties["ListFile"]},
                             format="json")
    assert listing.status_code == 201, listing.content


def test_with_file_capabilities_the_engine_refuses_every_escape(world, node):
    call_command("grant_tenant", "acme", "--capability", "read-filesystem", "--capability", "write-filesystem",
                 "--file-root", str(world.a_root))
    call_command("grant_tenant", "globex", "--capability", "read-filesystem", "--file-root", str(world.b_root))
    data_dir = node.data_dir
    designer = Designer(world)
    control_fetch = fetch_attempt(designer, "control fetch", str(world.a_root / "in" / "mine.txt"))
    control_put = put_attempt(designer, "control put", str(world.a_root / "out"))
    attempts = [
        fetch_attempt(designer, "fetch environ", "/proc/self/environ"),
        fetch_attempt(designer, "fetch secrets", str(world.secrets_file)),
        fetch_attempt(designer, "fetch node flow", str(data_dir / "flow.json.gz")),
        fetch_attempt(designer, "fetch dotdot", f"{world.a_root}/../{world.b_root.name}/b-secret.txt"),
        fetch_attempt(designer, "fetch symlink", str(world.a_root / "link-secrets")),
        fetch_attempt(designer, "fetch other tenant", str(world.b_root / "b-secret.txt")),
        get_attempt(designer, "get proc", "/proc/self", keep=True),
        get_attempt(designer, "get platform", str(world.secrets_file.parent)),
        get_attempt(designer, "get node data", str(data_dir), keep=True),
        get_attempt(designer, "get dotdot", f"{world.a_root}/../{world.b_root.name}"),
        get_attempt(designer, "get symlink", str(world.a_root / "link-globex")),
        list_attempt(designer, "list platform", str(world.secrets_file.parent)),
        list_attempt(designer, "list node data", str(data_dir)),
        list_attempt(designer, "list other tenant", str(world.b_root)),
        put_attempt(designer, "put dev", f"/dev/shm/flowsite-exfiltration-{secrets.token_hex(4)}"),
        put_attempt(designer, "put platform", str(world.secrets_file.parent)),
        put_attempt(designer, "put node data", str(data_dir / "planted")),
        put_attempt(designer, "put dotdot", f"{world.a_root}/../{world.b_root.name}"),
        put_attempt(designer, "put symlink", str(world.a_root / "link-globex")),
    ]
    designer.start_all()
    before = {path: sorted(p.name for p in path.iterdir()) for path in (world.secrets_file.parent, world.b_root)}
    deploy(world)

    wait_until(lambda: queued(status(world), control_fetch.ok) >= 1 and any((world.a_root / "out").iterdir()), 90,
               "the control attempts inside the tenant's root working")
    wait_for_refusals(world, attempts)

    answer = status(world)
    for attempt in attempts:
        assert queued(answer, attempt.ok) == 0, f"{attempt.name}: a FlowFile left by success"
        assert any(attempt.target in message or Path(attempt.target).name in message
                   for message in bulletins_of(answer, attempt)), (attempt.name, bulletins_of(answer, attempt))
    assert control_put.ok and queued(answer, control_put.refused) == 0, "the control PutFile wrote its files"

    # Nothing read: no canary in any of the node's repositories; nothing written or removed.
    for data in files_under(data_dir):
        for name, canary in world.canaries.items():
            assert canary.encode() not in data, f"the {name} canary reached the node's data directory"
    assert {path: sorted(p.name for p in path.iterdir()) for path in before} == before
    assert (world.b_root / "b-secret.txt").read_text() == world.canaries["other-tenant"]
    assert not (data_dir / "planted").exists()
    assert not list(Path("/dev/shm").glob("flowsite-exfiltration-*"))


def test_outbound_connections_to_the_platform_and_metadata_are_refused(world, node, settings_for_nodes):
    web, allowed = Recorder(), Recorder()
    try:
        call_command("grant_tenant", "acme", "--allow", allowed.address)
        designer = Designer(world)
        control = http_attempt(designer, "control http", allowed.address)
        attempts = [http_attempt(designer, f"http {name}", address)
                    for name, address in platform_addresses(settings_for_nodes.port, web).items()]
        designer.start_all()
        deploy(world)
        wait_until(lambda: allowed.requests, 90, "the allowlisted server reached (the flow runs)")
        wait_for_refusals(world, attempts)
        answer = status(world)
        for attempt in attempts:
            assert queued(answer, attempt.ok) == 0, f"{attempt.name}: a response came back"
            host = urlsplit(f"http://{attempt.target}").hostname
            assert any(host in message for message in bulletins_of(answer, attempt)), attempt.name
        assert web.requests == [], "the web tier got a request from the tenant's flow"
        assert queued(answer, control.ok) >= 1
    finally:
        web.shutdown()
        allowed.shutdown()
