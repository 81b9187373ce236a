"""Starting a node whose write-ahead log is damaged, as the operator accepted: nothing the lost
transactions may have needed is deleted — swap files and content the recovered log does not
name go to the quarantine folder — and the damage is reported."""

from __future__ import annotations


import pytest

from engine.config import StorageConfig
from engine.damage import StorageCorruptionError
from engine.storage import NodeStorage
from engine.wal.journal import FRAME_HEADER, list_journals
from tests.engine.session.conftest import Node
from tests.engine.wal.conftest import frame_offsets

SMALL_CLAIMS = {"content_repository": {"max_appendable_size": "1 B", "sections": 4}}


def flip_frame(data_dir, index: int) -> None:
    (_, journal), = list_journals(data_dir / "flowfile_repository" / "journals")[-1:]
    offset = frame_offsets(journal)[index]
    data = bytearray(journal.read_bytes())
    data[offset + FRAME_HEADER + 3] ^= 0xFF
    journal.write_bytes(bytes(data))


def storage(data_dir, accept: bool = False) -> NodeStorage:
    config = dict(SMALL_CLAIMS, flowfile_repository={"accept_damage": accept})
    return NodeStorage(data_dir, StorageConfig.from_mapping(config))


def test_content_of_lost_transactions_is_kept_in_the_quarantine(tmp_path):
    data_dir = tmp_path / "node"
    first = storage(data_dir)
    first.open(background=False)
    node = Node(first)
    node.seed("q", b"kept")
    lost = node.seed("q", b"lost one", b"lost two")[1:]
    lost_files = {first.content.path(f.content_claim.resource_claim).name for f in lost}
    first.lock.release()  # the node dies, leaving its files as they are
    flip_frame(data_dir, 1)
    with pytest.raises(StorageCorruptionError):
        storage(data_dir).open(background=False)
    second = storage(data_dir, accept=True)
    recovered = second.open(background=False)
    assert [second.content.read_bytes(f.content_claim) for f in recovered.queues["q"]] == [b"kept"]
    quarantined = {p.name for p in (data_dir / "quarantine").glob("*/content_repository/*/*")}
    assert lost_files <= quarantined
    assert second.verify().ok
    assert [d.kind for d in second.damage.entries()] == ["journal"]
    second.close()


def test_a_swap_file_whose_record_was_lost_is_kept_in_the_quarantine(tmp_path):
    data_dir = tmp_path / "node"
    first = storage(data_dir)
    first.open(background=False)
    node = Node(first)
    swapped = node.seed("q", b"a", b"b", b"c")
    location = first.flowfiles.swap.swap_out("q", swapped)
    node.seed("q", b"later")  # so the damaged frame is not the journal's last
    first.lock.release()
    flip_frame(data_dir, 1)
    second = storage(data_dir, accept=True)
    recovered = second.open(background=False)
    assert recovered.swap_files == {}
    assert list((data_dir / "quarantine").glob(f"*/flowfile_repository/swap/{location}"))
    # the FlowFiles the swap-out took are still in the log: the record that moved them was lost
    assert sorted(second.content.read_bytes(f.content_claim) for f in recovered.queues["q"]) == \
        [b"a", b"b", b"c", b"later"]
    assert second.verify().ok
    second.close()
