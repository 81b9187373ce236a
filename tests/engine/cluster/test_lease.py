"""Leases with fencing tokens on a real redis-server."""

from __future__ import annotations

import time

from engine.cluster.lease import Lease
from engine.cluster.records import read_holder


def test_one_holder_at_a_time_and_tokens_only_grow(client, keys):
    a = Lease(client, keys, "primary", "a", ttl=0.5)
    b = Lease(client, keys, "primary", "b", ttl=0.5)
    assert a.hold() and a.token == 1
    assert not b.hold() and b.token == 0
    assert a.hold() and a.token == 1, "renewing keeps the tenure's token"
    assert read_holder(client, keys, "primary") == ("a", 1)
    time.sleep(0.3)
    assert a.hold()
    time.sleep(0.3)
    assert not b.hold(), "a renewed lease has not expired"
    time.sleep(0.6)
    assert b.hold() and b.token == 2, "an expired lease goes to the next asker with a greater token"
    assert not a.hold() and a.token == 0
    b.release()
    assert client.get(keys.lock("primary")) is None
    assert a.hold() and a.token == 3


def test_release_by_a_former_holder_leaves_the_successor_alone(client, keys):
    a = Lease(client, keys, "coordinator", "a", ttl=0.2)
    b = Lease(client, keys, "coordinator", "b", ttl=5)
    assert a.hold()
    time.sleep(0.3)
    assert b.hold()
    a.release()
    assert read_holder(client, keys, "coordinator") == ("b", 2)


def test_a_lease_turns_invalid_before_it_can_expire_in_redis(client, keys):
    a = Lease(client, keys, "primary", "a", ttl=0.4)
    assert a.hold() and a.valid
    time.sleep(0.32)
    assert not a.valid, "no renewal for most of the lease: act as if it were gone"
    assert client.pttl(keys.lock("primary")) > 0, "while Redis still holds it"
