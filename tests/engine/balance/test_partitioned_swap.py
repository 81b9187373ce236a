"""Remote partitions swap through the real FlowFile repository, renames are logged, restarts lose nothing."""

from __future__ import annotations

import errno

import pytest

from engine.balance.partitioned_queue import PartitionedQueue
from engine.balance.partitioners import PARTITION_BY_ATTRIBUTE, ROUND_ROBIN, SINGLE_NODE
from engine.balance.queue_factory import partitioned_queue_factory
from engine.balance.topology import ClusterTopology, TopologyStore
from engine.config import StorageConfig
from engine.flow.model import ConnectionConfig
from engine.queue import FlowFileQueue, QueueSettings
from engine.repository.swap import partition_of, queue_of, swap_name, with_partition
from engine.session import ProcessSession, SessionComponent
from engine.storage import NodeStorage
from engine.testing.faults import FaultPlan

SETTINGS = QueueSettings(back_pressure_object_threshold=0)
THREE = ClusterTopology("b", ("a", "b", "c"), frozenset({"a", "c"}))


def open_storage(path) -> NodeStorage:
    storage = NodeStorage(path, StorageConfig())
    storage.open(background=False)
    return storage


def fill(storage: NodeStorage, queue, count: int, batch: int = 500, **attributes) -> None:
    component = SessionComponent("gen", "Generator", outgoing={"success": [queue]})
    for start in range(0, count, batch):
        session = ProcessSession(storage, component)
        for n in range(start, min(start + batch, count)):
            flowfile = session.create()
            flowfile = session.put_all_attributes(flowfile, {"n": str(n), **{k: v.format(n=n) for k, v in
                                                                              attributes.items()}})
            session.transfer(session.write_bytes(flowfile, b"x%d" % n), "success")
        session.commit()


def reopen(storage: NodeStorage, path, topology: ClusterTopology, strategy: str = ROUND_ROBIN, attribute: str = ""):
    storage.close()
    storage = open_storage(path)
    queue = PartitionedQueue("c1", SETTINGS, topology, strategy, attribute, storage.flowfiles.swap)
    recovered = storage.recovered
    queue.restore(recovered.queues.get("c1", []), recovered.swap_files.get("c1", []))
    return storage, queue


def everything(queue) -> list[int]:
    """Poll every partition dry (swapping in as needed) and return the FlowFiles' numbers."""
    seen = []
    partitions = [queue.local_partition(), *queue.remote_partitions().values()] \
        if isinstance(queue, PartitionedQueue) else [queue]
    for partition in partitions:
        while True:
            polled = partition.poll(5_000).flowfiles
            if not polled:
                break
            seen += [int(f.attributes["n"]) for f in polled]
    return sorted(seen)


def on_disk(storage: NodeStorage) -> set[str]:
    return {p.name for p in storage.flowfiles.swap.directory.iterdir()}


def test_swap_names_carry_the_partition_and_old_names_still_parse():
    name = swap_name("conn-1", "node.one/2")
    assert name.endswith(".node%2Eone%2F2.swap") and name.count(".") == 2
    assert partition_of(name) == "node.one/2" and queue_of(name) == "conn-1"
    old = with_partition(name, None)
    assert partition_of(old) is None and queue_of(old) == "conn-1" and old == name.split(".")[0] + ".swap"
    assert with_partition(old, "n2") == old[:-5] + ".n2.swap"
    assert queue_of("1700000000000-q-with-dashes-2b1e6c1e-4a8c-4c54-9d43-5f3c0a3c9d11.swap") == "q-with-dashes"
    with pytest.raises(ValueError):
        with_partition("not-a-swap-file", "n2")


def test_remote_partitions_swap_at_1000_in_files_named_for_their_node(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN, swap=storage.flowfiles.swap)
    fill(storage, queue, 3_300)
    remote = queue.remote_partitions()
    for node in ("a", "c"):
        size = remote[node].size()
        assert (size.count, size.active_count, size.swapped_count, size.swap_files) == (1_100, 100, 1_000, 1)
    assert queue.local_partition().size().swap_files == 0
    logged = storage.flowfiles.swap_locations
    assert {partition_of(location) for location in logged} == {"a", "c"} and logged == on_disk(storage)
    assert all(queue_of(location) == "c1" for location in logged)
    assert queue.awaiting_transfer()[0] == 2_200 and queue.size().count == 3_300

    storage, queue = reopen(storage, tmp_path / "node", THREE)
    remote = queue.remote_partitions()
    assert remote["a"].size().swapped_count == 1_000 and remote["c"].size().swapped_count == 1_000
    assert queue.size().count == 3_300
    assert everything(queue) == list(range(3_300))
    storage.close()


def test_a_removed_node_s_swap_files_are_renamed_to_other_partitions_and_logged(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN, swap=storage.flowfiles.swap)
    fill(storage, queue, 3_300)
    queue.set_topology(ClusterTopology("b", ("a", "b"), frozenset({"a"})))
    logged = storage.flowfiles.swap_locations
    assert logged == on_disk(storage) and len(logged) == 2 and "c" not in {partition_of(n) for n in logged}
    assert queue.size().count == 3_300 and set(queue.remote_partitions()) == {"a"}

    # A restart with the same topology finds every file where the log says it is.
    storage, queue = reopen(storage, tmp_path / "node", ClusterTopology("b", ("a", "b"), frozenset({"a"})))
    assert queue.size().count == 3_300
    assert everything(queue) == list(range(3_300))
    storage.close()


def test_swap_files_of_a_node_gone_while_the_node_was_down_go_through_the_partitioner(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE, swap=storage.flowfiles.swap)
    fill(storage, queue, 2_500)
    assert queue.remote_partitions()["a"].size().swap_files == 2
    storage, queue = reopen(storage, tmp_path / "node", ClusterTopology("b", ("b", "c")), SINGLE_NODE)
    # The first node is b now: a's files are renamed into the local partition, no longer named for a.
    assert queue.local_partition().size().swapped_count == 2_000 and queue.size().count == 2_500
    assert all(partition_of(n) is None for n in storage.flowfiles.swap_locations)
    assert storage.flowfiles.swap_locations == on_disk(storage)
    storage, queue = reopen(storage, tmp_path / "node", ClusterTopology("b", ("b", "c")), SINGLE_NODE)
    assert everything(queue) == list(range(2_500))
    storage.close()


def test_partition_by_attribute_swaps_a_file_in_to_partition_it_again(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, PARTITION_BY_ATTRIBUTE, "k", storage.flowfiles.swap)
    fill(storage, queue, 6_000, k="{n}")
    files = queue.remote_partitions()["c"].size().swap_files
    assert files >= 1
    four = ClusterTopology("b", ("a", "b", "c", "d"), frozenset({"a", "c", "d"}))
    queue.set_topology(four)
    assert queue.size().count == 6_000 and storage.flowfiles.swap_locations == on_disk(storage)
    storage, queue = reopen(storage, tmp_path / "node", four, PARTITION_BY_ATTRIBUTE, "k")
    assert queue.size().count == 6_000
    owner = PartitionedQueue("x", SETTINGS, four, PARTITION_BY_ATTRIBUTE, "k")
    for node, partition in {**queue.remote_partitions(), "b": queue.local_partition()}.items():
        for flowfile in partition.poll(10_000).flowfiles:
            owner_node = owner.partitioner.partition(flowfile, four)
            assert owner_node == node
    storage.close()


def test_an_unreachable_round_robin_node_s_swap_files_move_and_survive_a_restart(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN, swap=storage.flowfiles.swap)
    fill(storage, queue, 3_300)
    queue.node_unreachable("c")
    assert len(queue.remote_partitions()["c"]) == 0 and queue.size().count == 3_300
    assert "c" not in {partition_of(n) for n in storage.flowfiles.swap_locations}
    storage, queue = reopen(storage, tmp_path / "node", THREE)
    assert everything(queue) == list(range(3_300))
    storage.close()


@pytest.mark.parametrize("operation", ["link", "write"])
def test_a_rename_the_disk_refuses_keeps_the_file_under_its_logged_name(tmp_path, operation):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN, swap=storage.flowfiles.swap)
    fill(storage, queue, 3_300)
    before = set(storage.flowfiles.swap_locations)
    plan = FaultPlan(fail_at=1, errno=errno.ENOSPC, operations={operation},
                     matches="journals" if operation == "write" else ".swap")
    with plan.installed():
        queue.set_topology(ClusterTopology("b", ("a", "b"), frozenset({"a"})))
    assert plan.triggered
    logged = storage.flowfiles.swap_locations
    assert logged == on_disk(storage) and len(logged & before) >= 1  # one file kept its name
    assert queue.size().count == 3_300
    storage, queue = reopen(storage, tmp_path / "node", ClusterTopology("b", ("a", "b"), frozenset({"a"})))
    assert everything(queue) == list(range(3_300))
    storage.close()


def test_the_factory_takes_a_plain_queue_over_and_hands_it_back(tmp_path):
    storage = open_storage(tmp_path / "node")
    store = TopologyStore(tmp_path / "node", "b")
    store.connected_nodes(["a", "c"])
    settings = QueueSettings(back_pressure_object_threshold=0, swap_threshold=1_000, swap_batch_size=1_000)
    factory = partitioned_queue_factory(store, lambda config: settings, storage.flowfiles.swap)
    config = ConnectionConfig("c1")
    plain = factory(config, None)
    assert type(plain) is FlowFileQueue
    fill(storage, plain, 3_000)
    assert plain.size().swap_files == 2
    config.load_balance_strategy = ROUND_ROBIN
    queue = factory(config, plain)
    assert isinstance(queue, PartitionedQueue) and len(plain) == 0 and plain.size().unacknowledged_count == 0
    assert queue.size().count == 3_000 and queue.awaiting_transfer()[0] >= 1_000
    store.node_removed("c")  # queues the factory made follow the store
    assert set(queue.remote_partitions()) == {"a"}
    config.load_balance_strategy = "DO_NOT_LOAD_BALANCE"
    back = factory(config, queue)
    assert type(back) is FlowFileQueue and back.size().count == 3_000 and queue.size().count == 0
    assert all(partition_of(n) is None for n in storage.flowfiles.swap_locations)
    assert storage.flowfiles.swap_locations == on_disk(storage)
    storage.close()
    storage = open_storage(tmp_path / "node")
    plain = FlowFileQueue("c1", settings, storage.flowfiles.swap)
    plain.restore(storage.recovered.queues.get("c1", []), storage.recovered.swap_files.get("c1", []))
    assert everything(plain) == list(range(3_000))
    storage.close()


def test_offloading_makes_every_connection_partitioned(tmp_path):
    storage = open_storage(tmp_path / "node")
    store = TopologyStore(tmp_path / "node", "b")
    store.connected_nodes(["a", "c"])
    offloading = [False]
    factory = partitioned_queue_factory(store, lambda config: SETTINGS, storage.flowfiles.swap,
                                        offloading=lambda: offloading[0])
    config = ConnectionConfig("c1")
    plain = factory(config, None)
    fill(storage, plain, 100)
    offloading[0] = True
    queue = factory(config, plain)
    assert isinstance(queue, PartitionedQueue) and queue.offloading
    assert len(queue.local_partition()) == 0 and queue.awaiting_transfer()[0] == 100
    storage.close()


def test_a_damaged_remote_swap_file_is_contained_and_named_at_restart(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, SINGLE_NODE, swap=storage.flowfiles.swap)
    fill(storage, queue, 2_500)
    damaged = sorted(storage.flowfiles.swap_locations)[0]
    path = storage.flowfiles.swap.path(damaged)
    data = bytearray(path.read_bytes())
    data[-100] ^= 0xFF  # inside the file's only chunk
    path.write_bytes(bytes(data))
    storage, queue = reopen(storage, tmp_path / "node", THREE, SINGLE_NODE)
    assert queue.remote_partitions()["a"].size().swap_files == 2  # only summaries are read at start
    assert len(everything(queue)) == 1_500  # the damaged body is found when the sender swaps it in
    (damage,) = storage.damage.entries()
    assert damage.path == str(path) and damage.offset is not None and "1,000 FlowFile(s)" in damage.effect
    assert "quarantine" in damage.remedy and queue.size()[::7] == (0, 1_500)  # the lost left the figures
    assert damaged not in storage.flowfiles.swap_locations
    storage.close()


def test_emptying_the_connection_deletes_every_partition_s_swap_files_and_settles_each(tmp_path):
    storage = open_storage(tmp_path / "node")
    queue = PartitionedQueue("c1", SETTINGS, THREE, ROUND_ROBIN, swap=storage.flowfiles.swap)
    fill(storage, queue, 3_300)
    flowfiles, swapped = queue.take_all()
    assert len(flowfiles) == 1_300 and len(swapped) == 2 and queue.size().unacknowledged_count == 3_300
    kept = swapped.pop()
    for swap_file in swapped:  # what the controller's drop_queue does
        storage.flowfiles.swap.delete(swap_file.location)
        queue.acknowledge_counts(swap_file.count, swap_file.bytes)
    queue.give_back([kept])  # one the disk would not delete
    queue.acknowledge(flowfiles)
    assert queue.size().count == 1_000 and queue.size().unacknowledged_count == 0
    assert queue.remote_partitions()[partition_of(kept.location)].size().swap_files == 1
    assert all(p.size().unacknowledged_count == 0 for p in [queue.local_partition(), *queue.remote_partitions().values()])
    assert storage.flowfiles.swap_locations == on_disk(storage) == {kept.location}
    storage.close()
