"""Corruption campaign for swap files: a flipped byte, a cut or a lost file costs at most the
FlowFiles of the damaged chunk, is reported with the file and the offset, and sticks nothing."""

from __future__ import annotations

import os
import random
import shutil

import pytest

from tests.engine.repository.swap_helpers import Node, layout, swap_files

SWAPPED = 60  # one swap file of 3 chunks of 20 FlowFiles; 40 stay in memory
CHUNK = 20


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    path = tmp_path_factory.mktemp("template") / "node"
    node = Node.open(path, chunk_records=CHUNK)
    assert node.fill(range(100)) == list(range(100))
    assert node.queue.size().swapped_count == SWAPPED
    node.close()
    (swap_file,) = swap_files(path)
    return path, layout(swap_file)


def offsets(file_layout) -> list[int]:
    """Every frame boundary (the fields of one chunk header too), then 20 seeded random offsets."""
    boundaries = {0, 8, 12, 16, file_layout.summary_end, file_layout.size - 1}
    for start, _, _ in file_layout.chunks:
        boundaries |= {start, start + 20}
    middle = file_layout.chunks[1][0]
    boundaries |= {middle + 4, middle + 8, middle + 12, middle + 16}
    rng = random.Random(20240611)
    return sorted(boundaries) + sorted(rng.randrange(file_layout.size) for _ in range(20))


def flip(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def truncate(path, offset):
    os.truncate(path, offset)


def run(template, work, damage):
    """Damage the swap file of a copy of the template, restart, drain; return what came out."""
    source, file_layout = template
    shutil.copytree(source, work)
    (swap_file,) = swap_files(work)
    if damage is not None:
        damage(swap_file)
    node = Node.open(work)
    try:
        seen = node.drain()
        reports = [d for d in node.storage.damage.entries() if d.kind == "swap file"]
        assert len(seen) == len(set(seen)), "a FlowFile came out twice"
        assert not node.storage.flowfiles.swap_locations, "the log still names the swap file"
        assert not swap_files(work), "the swap file is still in place"
        verification = node.storage.verify()
        assert verification.ok, verification.problems
    finally:
        node.close()
    return swap_file, set(seen), reports


def expect(swap_file, work, seen, reports, lost_at_most, offset):
    assert set(range(40)) <= seen, "a FlowFile held in memory was lost"
    lost = set(range(100)) - seen
    assert lost <= lost_at_most, f"FlowFiles outside the damaged chunk were lost: {sorted(lost - lost_at_most)}"
    (report,) = reports
    assert report.path == str(swap_file) and report.offset == offset, report
    assert f"{len(lost):,} FlowFile(s)" in report.effect or "unknown" in report.effect, report.effect
    if offset is not None:
        assert list(work.glob(f"quarantine/*/flowfile_repository/swap/{swap_file.name}")), "not quarantined"


def test_the_swapped_flowfiles_are_the_last_60_in_three_chunks(template):
    _, file_layout = template
    assert [len(indexes) for _, _, indexes in file_layout.chunks] == [CHUNK] * 3
    assert file_layout.indexes() == set(range(40, 100))


def test_an_untouched_file_comes_back_exactly(template, tmp_path):
    _, seen, reports = run(template, tmp_path / "node", None)
    assert seen == set(range(100)) and not reports


def test_flipped_bytes_cost_at_most_their_chunk(template, tmp_path):
    _, file_layout = template
    for number, offset in enumerate(offsets(file_layout)):
        work = tmp_path / f"flip-{number}"
        swap_file, seen, reports = run(template, work, lambda path: flip(path, offset))
        expect(swap_file, work, seen, reports, file_layout.chunk_indexes(offset), file_layout.frame_start(offset))


def test_a_cut_costs_the_chunks_from_the_cut_on(template, tmp_path):
    _, file_layout = template
    for number, offset in enumerate(offsets(file_layout)):
        work = tmp_path / f"cut-{number}"
        swap_file, seen, reports = run(template, work, lambda path: truncate(path, offset))
        expect(swap_file, work, seen, reports, file_layout.indexes_from(offset), file_layout.frame_start(offset))


def test_a_deleted_file_costs_its_flowfiles_and_start_up_goes_on(template, tmp_path):
    work = tmp_path / "node"
    swap_file, seen, reports = run(template, work, lambda path: path.unlink())
    assert seen == set(range(40))
    (report,) = reports
    assert report.path == str(swap_file) and report.offset is None and "missing" in report.found
    assert "connection q" in report.effect
    again = Node.open(work)
    assert not again.storage.damage.entries() and again.queue.size().count == 0
    again.close()
