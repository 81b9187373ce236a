"""File confinement with real files and symbolic links: FetchFile, PutFile, GetFile and ListFile
in a tenant's group touch only the tenant's roots; /proc, the data directory and protected
paths are refused to everyone. Each refusal is a bulletin, and nothing is read or written."""

from __future__ import annotations

import os

import pytest

from engine.flow import load_flow
from engine.runtime import FlowController
from engine.storage import NodeStorage
from engine.testing import ProcessorTestRunner
from engine.testing.flows import flow, group, service

ACME = {"capabilities": ["read-filesystem", "write-filesystem"]}


@pytest.fixture
def runners(tmp_path):
    made = []

    def make(processor_type, properties, layout=None, tenant=ACME, **options):
        confinement = layout.settings() if layout is not None else None
        runner = ProcessorTestRunner(processor_type, tmp_path, properties, tenant=tenant, confinement=confinement,
                                     **options)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        runner.close()


def fetch(runners, layout, path, tenant=ACME):
    runner = runners("FetchFile", {"File to Fetch": str(path)}, layout, tenant=tenant)
    runner.enqueue(b"")
    runner.run()
    return runner


def refused_to_failure(runner, subject, reason):
    (failed,) = runner.output("failure")
    assert runner.content(failed) == b""  # nothing was read into it
    assert not runner.output("success")
    assert any(f"FetchFile[processor-under-test] refused {subject}: {reason}" in message
               for message in runner.bulletins), runner.bulletins


def test_proc_self_environ_is_refused(runners, layout):
    runner = fetch(runners, layout, "/proc/self/environ")
    refused_to_failure(runner, "/proc/self/environ", "/proc is never reachable")


def test_proc_is_refused_to_the_operator_too(runners, layout):
    runner = fetch(runners, layout, "/proc/self/environ", tenant=None)
    refused_to_failure(runner, "/proc/self/environ", "/proc is never reachable")


def test_dot_dot_escape_is_refused(runners, layout):
    escape = f"{layout.acme}/../other/theirs.txt"
    runner = fetch(runners, layout, escape)
    refused_to_failure(runner, escape, f"outside tenant acme's file roots ({layout.acme})")


def test_symbolic_link_escape_is_refused(runners, layout):
    (layout.acme / "link.txt").symlink_to(layout.outside / "loose.txt")
    runner = fetch(runners, layout, layout.acme / "link.txt")
    refused_to_failure(runner, f"{layout.acme}/link.txt", "outside tenant acme's file roots")


def test_symbolic_link_to_a_directory_does_not_open_it(runners, layout):
    (layout.acme / "door").symlink_to(layout.platform)
    runner = fetch(runners, layout, layout.acme / "door" / "secrets.env")
    refused_to_failure(runner, f"{layout.acme}/door/secrets.env", "it is inside a protected directory of the platform")


def test_another_tenants_root_is_refused(runners, layout):
    runner = fetch(runners, layout, layout.other / "theirs.txt")
    refused_to_failure(runner, f"{layout.other}/theirs.txt", "outside tenant acme's file roots")


def test_the_nodes_data_directory_is_refused_even_to_the_operator(runners, layout):
    runner = runners("FetchFile", {"File to Fetch": "${target}"}, layout, tenant=None)
    journal = next(path for path in runner.storage.data_dir.rglob("*") if path.is_file())
    runner.enqueue(b"", target=str(journal))
    runner.run()
    refused_to_failure(runner, str(journal), "it is inside the node's data directory")


def test_a_protected_file_is_refused_whatever_the_roots_say(runners, layout):
    tenant = {**ACME, "files": {"roots": [str(layout.platform.parent)]}}
    runner = fetch(runners, layout, layout.secret, tenant=tenant)
    refused_to_failure(runner, str(layout.secret), "it is inside a protected directory of the platform")


def test_a_file_of_the_tenants_root_is_fetched(runners, layout):
    (layout.acme / "mine.txt").write_text("acme's own")
    runner = fetch(runners, layout, layout.acme / "mine.txt")
    (fetched,) = runner.output("success")
    assert runner.content(fetched) == b"acme's own"
    assert not runner.bulletins


def test_configured_roots_replace_the_default_one(runners, layout):
    tenant = {**ACME, "files": {"roots": [str(layout.outside)]}}
    runner = fetch(runners, layout, layout.outside / "loose.txt", tenant=tenant)
    (fetched,) = runner.output("success")
    assert runner.content(fetched) == b"not a tenant's"
    other = fetch(runners, layout, layout.acme / "anything.txt", tenant=tenant)
    refused_to_failure(other, f"{layout.acme}/anything.txt", f"outside tenant acme's file roots ({layout.outside})")


def put(runners, layout, directory, filename="out.txt", tenant=ACME):
    runner = runners("PutFile", {"Directory": str(directory)}, layout, tenant=tenant)
    runner.enqueue(b"exfiltrated", filename=filename)
    runner.run()
    return runner


def put_refused(runner, reason):
    (failed,) = runner.output("failure")
    assert not runner.output("success")
    assert any("PutFile[processor-under-test] refused" in message and reason in message
               for message in runner.bulletins), runner.bulletins


def test_put_file_outside_the_root_writes_nothing(runners, layout):
    runner = put(runners, layout, layout.outside / "drop")
    put_refused(runner, "outside tenant acme's file roots")
    assert not (layout.outside / "drop").exists()


def test_put_file_into_a_protected_directory_writes_nothing(runners, layout):
    runner = put(runners, layout, layout.platform, tenant={**ACME, "files": {"roots": [str(layout.platform)]}})
    put_refused(runner, "inside a protected directory of the platform")
    assert sorted(os.listdir(layout.platform)) == ["secrets.env"]


def test_put_file_through_a_symbolic_link_writes_nothing(runners, layout):
    (layout.acme / "exit").symlink_to(layout.outside)
    runner = put(runners, layout, layout.acme / "exit")
    put_refused(runner, "outside tenant acme's file roots")
    assert sorted(os.listdir(layout.outside)) == ["loose.txt"]


def test_put_file_filename_cannot_climb_out(runners, layout):
    runner = put(runners, layout, layout.acme, filename="sub/../../other/planted.txt")
    assert runner.output("failure") and not (layout.other / "planted.txt").exists()


def test_put_file_inside_the_root_writes(runners, layout):
    runner = put(runners, layout, layout.acme / "out")
    assert runner.output("success")
    assert (layout.acme / "out" / "out.txt").read_bytes() == b"exfiltrated"


def test_get_file_outside_the_root_is_invalid(runners, layout):
    runner = runners("GetFile", {"Input Directory": str(layout.other)}, layout, input=False)
    assert any(problem.message.startswith(f"directory '{layout.other}' refused: ")
               and "outside tenant" in problem.message for problem in runner.node.validate()), runner.node.validate()


def test_get_file_whose_directory_is_moved_out_yields_with_a_bulletin(runners, layout):
    (layout.acme / "real").mkdir()
    (layout.acme / "in").symlink_to(layout.acme / "real")
    runner = runners("GetFile", {"Input Directory": str(layout.acme / "in")}, layout, input=False)
    runner.node.start()
    (layout.acme / "in").unlink()
    (layout.acme / "in").symlink_to(layout.other)  # once started (and validated), before the listing
    runner.run()
    assert not runner.output("success")
    assert (layout.other / "theirs.txt").read_text() == "other tenant's data"  # neither read nor deleted
    assert any(f"GetFile[processor-under-test] refused {layout.acme}/in: outside tenant acme's file roots" in message
               for message in runner.bulletins), runner.bulletins


def test_get_file_leaves_links_out_of_the_root_alone(runners, layout):
    (layout.acme / "own.txt").write_text("mine")
    (layout.acme / "theirs.txt").symlink_to(layout.other / "theirs.txt")
    (layout.acme / "dir").symlink_to(layout.outside)
    runner = runners("GetFile", {"Input Directory": str(layout.acme)}, layout, input=False)
    runner.run()
    assert [runner.content(flowfile) for flowfile in runner.output("success")] == [b"mine"]
    assert (layout.other / "theirs.txt").exists() and (layout.outside / "loose.txt").exists()
    assert (layout.acme / "theirs.txt").is_symlink()


def test_list_file_whose_directory_is_moved_out_lists_nothing(runners, layout):
    (layout.acme / "in").symlink_to(layout.acme)
    runner = runners("ListFile", {"Input Directory": str(layout.acme / "in")}, layout, input=False)
    runner.node.start()
    (layout.acme / "in").unlink()
    (layout.acme / "in").symlink_to(layout.outside)
    runner.run()
    assert not runner.output("success")
    assert any("ListFile[processor-under-test] refused" in message for message in runner.bulletins)


def test_list_file_does_not_list_through_links(runners, layout):
    (layout.acme / "own.txt").write_text("mine")
    (layout.acme / "escape").symlink_to(layout.other)
    runner = runners("ListFile", {"Input Directory": str(layout.acme), "Listing Strategy": "none"}, layout,
                     input=False)
    runner.run()
    assert [flowfile.attributes["filename"] for flowfile in runner.output("success")] == ["own.txt"]


def test_without_a_files_root_a_tenant_touches_no_file(runners, layout, tmp_path):
    runner = runners("FetchFile", {"File to Fetch": str(layout.acme / "x")}, None)
    runner.enqueue(b"")
    runner.run()
    (failed,) = runner.output("failure")
    assert any("tenant acme has no file roots" in message for message in runner.bulletins)


def test_merge_content_header_file_is_confined(runners, layout):
    literal = runners("MergeContent", {"Delimiter Strategy": "Filename", "Header File": "/proc/self/environ"}, layout)
    assert any("'Header File' names '/proc/self/environ', which this component may not read" in str(problem)
               for problem in literal.node.validate())
    runner = runners("MergeContent", {"Delimiter Strategy": "Filename", "Header File": "${header}",
                                      "Maximum Number of Entries": "1"}, layout)
    runner.enqueue(b"payload", header="/proc/self/environ")
    runner.run(1, stop=False)
    assert not runner.output("merged")
    (failed,) = runner.output("failure")
    assert runner.content(failed) == b"payload"
    assert any("MergeContent[processor-under-test] refused /proc/self/environ: /proc is never reachable" in message
               for message in runner.bulletins), runner.bulletins


def test_an_ssl_context_service_reads_no_keystore_outside_the_roots(tmp_path, layout):
    document = flow(group("root", groups=[group("acme-group", services=[service(
        "tls", "StandardSSLContextService", {"Truststore Filename": str(layout.secret), "Truststore Type": "PEM"})])]))
    document["tenants"] = {"acme": {"group": "acme-group"}}
    storage = NodeStorage(tmp_path / "node")
    controller = FlowController(storage, confinement=layout.settings())
    try:
        controller.load(load_flow(document), storage.open(background=False))
        problems = [str(problem) for problem in controller.service("tls").validate()]
        assert any(f"truststore refused {layout.secret}: it is inside a protected directory of the platform" in p
                   for p in problems), problems
    finally:
        storage.close()
