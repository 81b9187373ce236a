"""Two nodes' storage, a real redis-server, and a sender and receiver between them."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
import redis

from engine.balance.receiver import TransferReceiver
from engine.balance.sender import TransferSender
from engine.balance.trust import ClusterKeyTrust
from engine.balance.wire import Compression
from engine.cluster.keys import ClusterKeys
from engine.flowfile import FlowFile
from engine.queue import FlowFileQueue
from engine.repository.records import RepositoryRecord
from engine.storage import NodeStorage

SECRET = "test-cluster-key"
CONNECTION = "conn-1"


class Bulletins(list):
    """What the transfer reported, as (level, source, message)."""

    def __call__(self, level: str, source: str, message: str) -> None:
        self.append((level, source, message))

    def saying(self, text: str) -> list[str]:
        return [message for _, _, message in self if text in message]


@dataclass
class Cluster:
    """Node A sends connection ``conn-1``'s remote partition to node B."""

    tmp: Path
    redis_server: object
    keys: ClusterKeys = field(default_factory=lambda: ClusterKeys("test"))
    compression: Compression = Compression.DO_NOT_COMPRESS
    sender_options: dict = field(default_factory=dict)
    receiver_options: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.a = self.open_storage("a")
        self.b = self.open_storage("b")
        self.partition = FlowFileQueue(CONNECTION)
        self.b_queue = FlowFileQueue(CONNECTION)
        self.reachable = {"node-b"}
        self.sender_bulletins = Bulletins()
        self.receiver_bulletins = Bulletins()
        self.sender: TransferSender | None = None
        self.receiver: TransferReceiver | None = None
        self.clients: list[redis.Redis] = []

    def client(self) -> redis.Redis:
        connection = redis.Redis(host="127.0.0.1", port=self.redis_server.port, socket_timeout=5)
        self.clients.append(connection)
        return connection

    def open_storage(self, name: str) -> NodeStorage:
        storage = NodeStorage(self.tmp / name, node=f"node-{name}")
        storage.open(background=False)
        return storage

    def make(self, sizes: list[int], **attributes: str) -> list[FlowFile]:
        """FlowFiles committed on node A, queued in the remote partition for node B."""
        storage = self.a
        flowfiles = []
        for size in sizes:
            claim = storage.content.write_bytes(os.urandom(size)) if size >= 0 else None
            ff_id = storage.flowfiles.next_id()
            uuid = f"a-uuid-{ff_id}"
            now = int(time.time() * 1000)
            flowfiles.append(FlowFile(ff_id, uuid, {"filename": f"f{ff_id}", "uuid": uuid, **attributes}, claim,
                                      now - 5000, now - 9000, ff_id, now))
        storage.flowfiles.update([RepositoryRecord.create(f, CONNECTION) for f in flowfiles])
        self.partition.put_all(flowfiles)
        return flowfiles

    def start_sender(self, trust: ClusterKeyTrust | None = None, **options) -> TransferSender:
        settings = {"ack_timeout": 3.0, "penalty": 0.2, "idle_wait": 0.02, **self.sender_options, **options}
        trust = trust or ClusterKeyTrust(SECRET, "node-a")
        self.sender = TransferSender(
            self.client, self.keys, "node-a", self.a, lambda: self.reachable,
            lambda: [(CONNECTION, self.compression, {"node-b": self.partition})],
            trust, ClusterKeyTrust(SECRET), bulletin=self.sender_bulletins, **settings,
        )
        self.sender.start()
        return self.sender

    def start_receiver(self, lookup: Callable | None = None, factory: Callable | None = None,
                       **options) -> TransferReceiver:
        settings = {"block_ms": 50, "abandon_after": 5.0, **self.receiver_options, **options}
        queues = {CONNECTION: self.b_queue}
        self.receiver = TransferReceiver(
            factory or self.client, self.keys, "node-b", self.b, lookup or queues.get, ClusterKeyTrust(SECRET, "node-b"),
            ClusterKeyTrust(SECRET), bulletin=self.receiver_bulletins, **settings,
        )
        self.receiver.start()
        return self.receiver

    def received(self) -> list[FlowFile]:
        """What node B's queue holds (without taking it)."""
        return self.b_queue.peek(1_000_000)

    def close(self) -> None:
        for part in (self.sender, self.receiver):
            if part is not None:
                part.stop()
        for storage in (self.a, self.b):
            storage.close()
        for connection in self.clients:
            connection.close()


@pytest.fixture
def cluster(tmp_path, redis_server):
    made = Cluster(tmp_path, redis_server)
    yield made
    made.close()


def wait_for(condition: Callable[[], object], timeout: float = 20.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"{what} did not hold within {timeout} s")
