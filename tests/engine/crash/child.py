"""The crash-test workload: commits sessions with content in a loop until it is killed.

``python -m tests.engine.crash.child DATA_DIR INTENT_LOG SEED POLICY``

At start it recovers the node's storage and writes what it found to ``DATA_DIR/../recovered.json``
(FlowFiles with their queue, attributes and a SHA-256 of the content as read back, plus the
storage verification), then prints READY and loops. Before each commit it appends the commit's
expected effect to the intent log, and after the commit returns it appends that it committed:
the parent can then tell committed, uncommitted and in-doubt transactions apart.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from pathlib import Path

from engine.config import StorageConfig
from engine.queue import FlowFileQueue
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage

QUEUES = ("in", "out")


def storage_config(policy: str) -> StorageConfig:
    """Small sizes and short intervals so that kills land in every kind of background work."""
    return StorageConfig.from_mapping({
        "flowfile_repository": {"sync_policy": policy, "checkpoint_interval": "150 ms"},
        "content_repository": {
            "max_appendable_size": "16 KB", "archive_max_retention": "300 ms", "cleanup_interval": "100 ms",
            "sections": 16,
        },
        "provenance_repository": {"rollover_time": "200 ms", "maintenance_interval": "500 ms"},
    })


def content_for(rng: random.Random) -> bytes:
    size = rng.choices([0, 10, 200, 3000, 20_000, 70_000], weights=[1, 3, 3, 3, 2, 1])[0]
    return rng.randbytes(size)


def dump_state(storage: NodeStorage, recovered, path: Path) -> None:
    flowfiles = {}
    for queue_id, items in recovered.queues.items():
        for flowfile in items:
            flowfiles[flowfile.uuid] = describe(storage, queue_id, flowfile)
    for queue_id, files in recovered.swap_files.items():
        for location, _ in files:
            for flowfile in storage.flowfiles.swap.read_flowfiles(location):
                flowfiles[flowfile.uuid] = describe(storage, queue_id, flowfile)
    verification = storage.verify()
    state = {"flowfiles": flowfiles, "problems": verification.problems}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state))
    os.replace(tmp, path)


def describe(storage: NodeStorage, queue_id: str, flowfile) -> list:
    data = storage.content.read_bytes(flowfile.content_claim) if flowfile.content_claim else b""
    return [queue_id, hashlib.sha256(data).hexdigest(), dict(flowfile.attributes)]


class Workload:
    def __init__(self, storage: NodeStorage, recovered, intent_log: Path, rng: random.Random) -> None:
        self.storage = storage
        self.rng = rng
        self.queues = {name: FlowFileQueue(name) for name in QUEUES}
        for name, items in recovered.queues.items():
            self.queues[name].put_all(items)
        self.swapped = [loc for files in recovered.swap_files.values() for loc, _ in files]
        self.worker = SessionComponent(
            "worker", "CrashWorker", incoming=[self.queues["in"]],
            outgoing={"in": [self.queues["in"]], "out": [self.queues["out"]]}, auto_terminated=frozenset({"done"}),
        )
        self.drain = SessionComponent("drain", "CrashDrain", incoming=[self.queues["out"]],
                                      auto_terminated=frozenset({"done"}))
        self.log_fd = os.open(intent_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.txn = self._last_txn(intent_log) + 1

    @staticmethod
    def _last_txn(intent_log: Path) -> int:
        last = 0
        for line in intent_log.read_text().splitlines():
            entry = json.loads(line)
            last = max(last, entry.get("txn", 0))
        return last

    def _log(self, entry: dict) -> None:
        os.write(self.log_fd, (json.dumps(entry) + "\n").encode())

    def run_forever(self) -> None:
        while True:
            choice = self.rng.random()
            if choice < 0.08 and len(self.queues["out"]) > 20:
                self.swap_out()
            elif choice < 0.12 and self.swapped:
                self.swap_in()
            elif choice < 0.3:
                self.drain_session()
            else:
                self.work_session()

    def swap_out(self) -> None:
        queue = self.queues["out"]
        flowfiles = queue.poll(10).flowfiles
        queue.acknowledge(flowfiles)
        self.swapped.append(self.storage.flowfiles.swap.swap_out("out", flowfiles))

    def swap_in(self) -> None:
        self.queues["out"].put_all(self.storage.flowfiles.swap.swap_in(self.swapped.pop(0)))

    def work_session(self) -> None:
        rng = self.rng
        session = ProcessSession(self.storage, self.worker)
        puts, dels = {}, []

        def put(flowfile, queue, data):
            puts[flowfile.uuid] = [queue, hashlib.sha256(data).hexdigest(), dict(flowfile.attributes)]

        for index in range(rng.randint(1, 4)):
            data = content_for(rng)
            flowfile = session.create()
            flowfile = session.put_all_attributes(flowfile, {"txn": str(self.txn), "index": str(index)})
            flowfile = session.write_bytes(flowfile, data)
            session.transfer(flowfile, "in")
            put(flowfile, "in", data)
        backlog = 4 if len(self.queues["in"]) > 100 else 0
        for flowfile in session.get_batch(rng.randint(0, 3) + backlog):
            action = rng.choice(["modify", "attributes", "clone", "remove", "done"])
            if action == "modify":
                data = content_for(rng)
                flowfile = session.write_bytes(flowfile, data)
                flowfile = session.put_attribute(flowfile, "modified_by", str(self.txn))
                session.transfer(flowfile, "out")
                put(flowfile, "out", data)
            elif action == "attributes":
                data = session.read_bytes(flowfile)
                flowfile = session.put_attribute(flowfile, "touched_by", str(self.txn))
                session.transfer(flowfile)
                put(flowfile, "in", data)
            elif action == "clone":
                data = session.read_bytes(flowfile)
                size = len(data)
                offset = rng.randint(0, size)
                child = session.clone(flowfile, offset, size - offset)
                child = session.put_attribute(child, "sliced_by", str(self.txn))
                session.transfer(child, "out")
                put(child, "out", data[offset:])
                session.transfer(flowfile, "out")
                put(flowfile, "out", data)
            elif action == "remove":
                session.remove(flowfile)
                dels.append(flowfile.uuid)
            else:
                session.transfer(flowfile, "done")
                dels.append(flowfile.uuid)
        self._commit(session, puts, dels)

    def drain_session(self) -> None:
        session = ProcessSession(self.storage, self.drain)
        dels = []
        for flowfile in session.get_batch(self.rng.randint(1, 6)):
            session.transfer(flowfile, "done")
            dels.append(flowfile.uuid)
        self._commit(session, {}, dels)

    def _commit(self, session: ProcessSession, puts: dict, dels: list) -> None:
        self._log({"txn": self.txn, "puts": puts, "dels": dels})
        session.commit()
        self._log({"committed": self.txn})
        self.txn += 1


def main() -> None:
    data_dir, intent_log, seed, policy = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    storage = NodeStorage(data_dir, storage_config(policy))
    recovered = storage.open()
    dump_state(storage, recovered, data_dir.parent / "recovered.json")
    print("READY", flush=True)
    Workload(storage, recovered, intent_log, random.Random(seed)).run_forever()


if __name__ == "__main__":
    main()
