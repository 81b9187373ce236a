"""Child process of the swap crash test: fills a prioritized queue far past the swap threshold,
then drains it in sessions, logging each session's removals before and after its commit,
until the test kills it.

    python -m tests.engine.queue.swap_child DATA_DIR LOG COUNT SEED
"""

from __future__ import annotations

import json
import os
import random
import sys

from engine.queue import FlowFileQueue, QueueSettings
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage

SETTINGS = QueueSettings(prioritizers=("PriorityAttributePrioritizer",), back_pressure_object_threshold=0)


def main() -> None:
    data_dir, log_path, count, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    storage = NodeStorage(data_dir)
    storage.open()
    queue = FlowFileQueue("q", SETTINGS, swapper=storage.flowfiles.swap)
    log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    generator = SessionComponent("gen", "Generator", outgoing={"success": [queue]})
    for start in range(0, count, 2000):
        session = ProcessSession(storage, generator)
        for index in range(start, min(count, start + 2000)):
            flowfile = session.create()
            flowfile = session.put_all_attributes(flowfile, {"priority": str(rng.randint(0, 10_000)),
                                                             "index": str(index)})
            session.transfer(flowfile, "success")
        session.commit()
    os.write(log_fd, b'{"filled": true}\n')
    os.fsync(log_fd)
    sink = SessionComponent("sink", "Sink", incoming=[queue], auto_terminated=frozenset({"done"}))
    while True:
        session = ProcessSession(storage, sink)
        flowfiles = session.get_batch(rng.randint(1, 3000))
        if rng.random() < 0.3:
            session.rollback()
            continue
        for flowfile in flowfiles:
            session.transfer(flowfile, "done")
        os.write(log_fd, (json.dumps({"removing": [f.attributes["index"] for f in flowfiles]}) + "\n").encode())
        session.commit()
        os.write(log_fd, b'{"committed": true}\n')


if __name__ == "__main__":
    main()
