"""DetectDuplicate against both map cache clients: a MapCacheServer over TCP and a real Redis."""

from __future__ import annotations

import time

import msgpack
import pytest

from engine.processors.detect_duplicate import DetectDuplicate
from engine.runtime import Outcome
from engine.testing import ProcessorTestRunner
from tests.servers import free_port


class MapCacheBackend:
    name = "map-cache"

    def __init__(self, request) -> None:
        self.port = free_port()

    def services(self) -> dict:
        return {"server": ("MapCacheServer", {"Port": str(self.port)}),
                "client": ("MapCacheClientService", {"Server Hostname": "127.0.0.1", "Server Port": str(self.port),
                                                     "Communications Timeout": "2 secs"})}

    def take_down(self, runner) -> None:
        runner.controller.disable_service("server")


class RedisBackend:
    name = "redis"

    def __init__(self, request) -> None:
        self.server = request.getfixturevalue("redis_server")

    def services(self) -> dict:
        return {"pool": ("RedisConnectionPoolService", {"Connection String": self.server.address,
                                                        "Communication Timeout": "2 secs"}),
                "client": ("RedisDistributedMapCacheClientService", {"redis-connection-pool": "pool"})}

    def take_down(self, runner) -> None:
        self.server.stop()


@pytest.fixture(params=[MapCacheBackend, RedisBackend], ids=["map-cache", "redis"])
def backend(request):
    return request.param(request)


def runner_for(tmp_path, backend, **properties) -> ProcessorTestRunner:
    return ProcessorTestRunner(DetectDuplicate, tmp_path,
                               {"Distributed Cache Service": "client", **properties}, services=backend.services())


def cache(runner):
    return runner.controller.service("client").instance


def test_first_sighting_is_non_duplicate_and_later_ones_duplicates(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"FlowFile Description": "${filename}"}) as runner:
        runner.enqueue(b"1", **{"hash.value": "aaa", "filename": "first.txt"})
        runner.enqueue(b"2", **{"hash.value": "bbb", "filename": "other.txt"})
        runner.enqueue(b"3", **{"hash.value": "aaa", "filename": "second.txt"})
        runner.run()
        assert [f.attributes["filename"] for f in runner.output("non-duplicate")] == ["first.txt", "other.txt"]
        (duplicate,) = runner.output("duplicate")
        assert duplicate.attributes["filename"] == "second.txt"
        assert duplicate.attributes["original.flowfile.description"] == "first.txt"
        assert "original.flowfile.description" not in runner.output("non-duplicate")[0].attributes
        routes = [(e.flowfile_uuid, e.relationship) for e in runner.events(event_type="ROUTE")]
        assert (duplicate.uuid, "duplicate") in routes
        assert sum(1 for _, relationship in routes if relationship == "non-duplicate") == 2
        runner.enqueue(b"4", **{"hash.value": "bbb", "filename": "again.txt"})
        runner.run()
        assert runner.output("duplicate")[-1].attributes["original.flowfile.description"] == "other.txt"


def test_cached_value_holds_the_description_and_the_time(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"FlowFile Description": "desc-${n}"}) as runner:
        before = int(time.time() * 1000)
        runner.enqueue(b"", **{"hash.value": "k", "n": "1"})
        runner.run()
        version, cached_at, description = msgpack.unpackb(cache(runner).get("k"))
        assert version == 1 and description == "desc-1"
        assert before <= cached_at <= int(time.time() * 1000)


def test_cache_entry_identifier_expression(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"Cache Entry Identifier": "${customer}-${order}"}) as runner:
        runner.enqueue(b"", customer="c1", order="1")
        runner.enqueue(b"", customer="c1", order="2")
        runner.enqueue(b"", customer="c1", order="1")
        runner.run()
        assert len(runner.output("non-duplicate")) == 2
        assert len(runner.output("duplicate")) == 1
        assert cache(runner).contains_key("c1-2")


def test_age_off_duration_treats_old_entries_as_absent(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"Age Off Duration": "300 millis", "FlowFile Description": "${n}"}) as runner:
        runner.enqueue(b"", **{"hash.value": "k", "n": "1"})
        runner.run()
        time.sleep(0.5)
        runner.enqueue(b"", **{"hash.value": "k", "n": "2"})
        runner.enqueue(b"", **{"hash.value": "k", "n": "3"})
        runner.run()
        assert [f.attributes["n"] for f in runner.output("non-duplicate")] == ["1", "2"]
        (duplicate,) = runner.output("duplicate")
        assert duplicate.attributes["original.flowfile.description"] == "2"  # the aged-off entry was replaced


def test_not_caching_the_identifier_only_looks_up(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"Cache The Entry Identifier": "false"}) as runner:
        runner.enqueue(b"", **{"hash.value": "k"})
        runner.enqueue(b"", **{"hash.value": "k"})
        runner.run()
        assert len(runner.output("non-duplicate")) == 2
        assert cache(runner).contains_key("k") is False
        cache(runner).put("k", b"stored by another flow")
        runner.enqueue(b"", **{"hash.value": "k"})
        runner.run()
        (duplicate,) = runner.output("duplicate")
        assert duplicate.attributes["original.flowfile.description"] == "stored by another flow"


def test_not_caching_with_age_off_drops_old_entries(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"Cache The Entry Identifier": "false",
                                          "Age Off Duration": "200 millis"}) as runner:
        old = int(time.time() * 1000) - 1000
        cache(runner).put("k", msgpack.packb([1, old, "old one"]))
        runner.enqueue(b"", **{"hash.value": "k"})
        runner.run()
        assert len(runner.output("non-duplicate")) == 1
        assert cache(runner).contains_key("k") is False


def test_foreign_values_never_age_off(tmp_path, backend):
    with runner_for(tmp_path, backend, **{"Age Off Duration": "1 millis"}) as runner:
        cache(runner).put("k", b"\xff\xfe not ours")
        time.sleep(0.01)
        runner.enqueue(b"", **{"hash.value": "k"})
        runner.run()
        (duplicate,) = runner.output("duplicate")
        assert duplicate.attributes["original.flowfile.description"].endswith("not ours")


def test_blank_identifier_goes_to_failure_penalized(tmp_path, backend):
    with runner_for(tmp_path, backend) as runner:
        runner.enqueue(b"no hash.value attribute")
        runner.enqueue(b"", **{"hash.value": "   "})
        runner.enqueue(b"", **{"hash.value": "fine"})
        (outcome,) = runner.run()
        assert outcome is Outcome.DID_WORK
        failures = runner.output("failure")
        assert len(failures) == 2
        assert all(f.penalty_expiration > 0 for f in failures)
        assert len(runner.output("non-duplicate")) == 1
        assert any("blank" in message for message in runner.bulletins)


def test_cache_failure_routes_to_failure_penalizes_and_yields(tmp_path, backend):
    with runner_for(tmp_path, backend) as runner:
        runner.enqueue(b"", **{"hash.value": "before"})
        runner.run()
        backend.take_down(runner)
        for n in range(3):
            runner.enqueue(b"", **{"hash.value": f"k{n}"})
        (outcome,) = runner.run()
        assert outcome is Outcome.YIELDED
        (failed,) = runner.output("failure")
        assert failed.attributes["hash.value"] == "k0"
        assert failed.penalty_expiration > 0
        assert sorted(f.attributes["hash.value"] for f in runner.input_flowfiles()) == ["k1", "k2"]
        assert any("cannot use the cache" in message for message in runner.bulletins)


def test_validation(tmp_path, backend):
    with ProcessorTestRunner(DetectDuplicate, tmp_path, {
            "Age Off Duration": "soon", "Cache The Entry Identifier": "maybe"}, services=backend.services()) as runner:
        problems = runner.validate()
        assert any("'Distributed Cache Service' is required" in p for p in problems)
        assert any("Age Off Duration" in p for p in problems)
        assert any("Cache The Entry Identifier" in p and "allowed values" in p for p in problems)
    with ProcessorTestRunner(DetectDuplicate, tmp_path, {"Distributed Cache Service": "pool-or-server"},
                             services={"pool-or-server": ("MapCacheServer", {"Port": str(free_port())})}) as runner:
        assert any("is not a DistributedMapCacheClient" in p for p in runner.validate())


def test_nifi_names_and_defaults():
    assert DetectDuplicate.nifi_type == "org.apache.nifi.processors.standard.DetectDuplicate"
    assert [(d.name, d.default) for d in DetectDuplicate.properties] == [
        ("Cache Entry Identifier", "${hash.value}"), ("FlowFile Description", ""), ("Age Off Duration", None),
        ("Distributed Cache Service", None), ("Cache The Entry Identifier", "true")]
    assert [r.name for r in DetectDuplicate.relationships] == ["duplicate", "non-duplicate", "failure"]


def test_a_nifi_1x_flow_loads_with_the_former_service_names(tmp_path):
    port = free_port()
    services = {
        "server": ("org.apache.nifi.distributed.cache.server.map.DistributedMapCacheServer", {
            "Port": str(port), "Maximum Cache Entries": "10000", "Eviction Strategy": "Least Frequently Used",
            "Persistence Directory": None, "SSL Context Service": None, "maximum-read-size": "1 MB"}),
        "client": ("org.apache.nifi.distributed.cache.client.DistributedMapCacheClientService", {
            "Server Hostname": "localhost", "Server Port": str(port), "SSL Context Service": None,
            "Communications Timeout": "30 secs"}),
    }
    with ProcessorTestRunner("org.apache.nifi.processors.standard.DetectDuplicate", tmp_path, {
            "Cache Entry Identifier": "${hash.value}", "FlowFile Description": "", "Age Off Duration": None,
            "Distributed Cache Service": "client", "Cache The Entry Identifier": "true"},
            services=services) as runner:
        assert runner.validate() == []
        runner.enqueue(b"", **{"hash.value": "h"})
        runner.enqueue(b"", **{"hash.value": "h"})
        runner.run()
        assert len(runner.output("non-duplicate")) == 1
        assert runner.output("duplicate")[0].attributes["original.flowfile.description"] == ""
