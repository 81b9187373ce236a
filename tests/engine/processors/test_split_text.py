"""SplitText: text content split at line boundaries, by line count and size, with headers."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from engine.processors.split_text import _READ_SIZE, SplitText
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


@pytest.fixture
def split(tmp_path):
    """Build SplitText runners (closed at the end of the test)."""
    runners = []

    def make(properties, **options):
        runner = ProcessorTestRunner(SplitText, tmp_path, properties, **options)
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


def pieces(runner):
    return [runner.content(flowfile) for flowfile in runner.output("splits")]


def test_splits_by_line_count_with_fragment_attributes(split):
    runner = split({"Line Split Count": "2"})
    incoming = runner.enqueue(b"1\n2\n3\n4\n5\n", filename="numbers.txt")
    runner.run()
    assert pieces(runner) == [b"1\n2", b"3\n4", b"5"]
    splits = runner.output("splits")
    (original,) = runner.output("original")
    fragment_id = original.attributes["fragment.identifier"]
    assert original.uuid == incoming.uuid and original.attributes["fragment.count"] == "3"
    for index, flowfile in enumerate(splits, 1):
        attributes = flowfile.attributes
        assert attributes["fragment.identifier"] == fragment_id
        assert attributes["fragment.index"] == str(index)
        assert attributes["fragment.count"] == "3"
        assert attributes["fragment.size"] == str(flowfile.size)
        assert attributes["segment.original.filename"] == "numbers.txt"
    assert [flowfile.attributes["text.line.count"] for flowfile in splits] == ["2", "2", "1"]


def test_splits_without_header_are_slices_of_the_original_content(split):
    runner = split({"Line Split Count": "2", "Remove Trailing Newlines": "false"})
    incoming = runner.enqueue(b"aa\nbb\ncc\ndd\nee\n")
    runner.run()
    original_claim = incoming.content_claim
    expected = [(0, 6), (6, 6), (12, 3)]
    for flowfile, (offset, length) in zip(runner.output("splits"), expected, strict=True):
        claim = flowfile.content_claim
        assert claim.resource_claim == original_claim.resource_claim, "no bytes were copied"
        assert (claim.offset, claim.length) == (original_claim.offset + offset, length)
    assert b"".join(pieces(runner)) == b"aa\nbb\ncc\ndd\nee\n", "the splits put together are the original"


def test_trailing_newlines_are_removed_by_default(split):
    runner = split({"Line Split Count": "3"})
    runner.enqueue(b"a\nb\n\n\nc\n\n")
    runner.run()
    assert pieces(runner) == [b"a\nb", b"\nc"], "only the empty lines at the end of a split are removed"
    assert [flowfile.attributes["text.line.count"] for flowfile in runner.output("splits")] == ["2", "1"]


def test_a_split_of_empty_lines_is_dropped_when_trailing_newlines_are_removed(split):
    runner = split({"Line Split Count": "2"})
    runner.enqueue(b"a\nb\n\n\nc\n")
    runner.run()
    assert pieces(runner) == [b"a\nb", b"c"]
    assert [flowfile.attributes["fragment.index"] for flowfile in runner.output("splits")] == ["1", "2"]
    assert runner.output("original")[0].attributes["fragment.count"] == "2"
    kept = split({"Line Split Count": "2", "Remove Trailing Newlines": "false"})
    kept.enqueue(b"a\nb\n\n\nc\n")
    kept.run()
    assert pieces(kept) == [b"a\nb\n", b"\n\n", b"c\n"]
    assert [flowfile.attributes["text.line.count"] for flowfile in kept.output("splits")] == ["2", "0", "1"]


def test_maximum_fragment_size_alone(split):
    runner = split({"Line Split Count": "0", "Maximum Fragment Size": "10 B", "Remove Trailing Newlines": "false"})
    runner.enqueue(b"1234\n5678\n9\nabcdefghijkl\nx\n")
    runner.run()
    assert pieces(runner) == [b"1234\n5678\n", b"9\n", b"abcdefghijkl\n", b"x\n"]
    sizes = [int(flowfile.attributes["fragment.size"]) for flowfile in runner.output("splits")]
    assert sizes == [10, 2, 13, 2], "a line larger than the maximum makes a split of its own"


def test_whichever_limit_is_reached_first_ends_a_split(split):
    runner = split({"Line Split Count": "3", "Maximum Fragment Size": "8 B", "Remove Trailing Newlines": "false"})
    runner.enqueue(b"a\nb\nc\nd\nlong line\ne\nf\n")
    runner.run()
    assert pieces(runner) == [b"a\nb\nc\n", b"d\n", b"long line\n", b"e\nf\n"]


def test_header_lines_are_copied_into_every_split(split):
    runner = split({"Line Split Count": "2", "Header Line Count": "1"})
    incoming = runner.enqueue(b"id,name\n1,a\n2,b\n3,c\n")
    runner.run()
    assert pieces(runner) == [b"id,name\n1,a\n2,b", b"id,name\n3,c"]
    splits = runner.output("splits")
    assert [flowfile.attributes["text.line.count"] for flowfile in splits] == ["2", "1"]
    assert [flowfile.attributes["fragment.size"] for flowfile in splits] == ["15", "11"]
    assert all(flowfile.content_claim.length == flowfile.size for flowfile in splits)
    (fork,) = runner.events(event_type=E.FORK)
    assert fork.flowfile_uuid == incoming.uuid and set(fork.child_uuids) == {f.uuid for f in splits}


def test_header_with_crlf_keeps_its_line_endings(split):
    runner = split({"Line Split Count": "1", "Header Line Count": "2", "Remove Trailing Newlines": "false"})
    runner.enqueue(b"h1\r\nh2\r\nx\r\ny\r\n")
    runner.run()
    assert pieces(runner) == [b"h1\r\nh2\r\nx\r\n", b"h1\r\nh2\r\ny\r\n"]


def test_header_counts_toward_the_maximum_fragment_size(split):
    runner = split({"Line Split Count": "0", "Maximum Fragment Size": "12 B", "Header Line Count": "1",
                    "Remove Trailing Newlines": "false"})
    runner.enqueue(b"head\naa\nbb\ncc\n")
    runner.run()
    assert pieces(runner) == [b"head\naa\nbb\n", b"head\ncc\n"]


def test_header_marker_characters_select_the_header_lines(split):
    runner = split({"Line Split Count": "2", "Header Line Marker Characters": "#"})
    runner.enqueue(b"# one\n# two\nrow1\n#not header\nrow3\n")
    runner.run()
    assert pieces(runner) == [b"# one\n# two\nrow1\n#not header", b"# one\n# two\nrow3"]


def test_header_marker_that_matches_no_line_means_no_header(split):
    runner = split({"Line Split Count": "2", "Header Line Marker Characters": "#"})
    runner.enqueue(b"a\nb\nc\n")
    runner.run()
    assert pieces(runner) == [b"a\nb", b"c"]


def test_content_that_is_all_header_makes_one_header_split(split):
    runner = split({"Line Split Count": "5", "Header Line Count": "2"})
    incoming = runner.enqueue(b"h1\nh2\n")
    runner.run()
    (only,) = runner.output("splits")
    assert runner.content(only) == b"h1\nh2"
    assert only.attributes["text.line.count"] == "0" and only.attributes["fragment.count"] == "1"
    assert only.content_claim.resource_claim == incoming.content_claim.resource_claim


def test_a_split_of_empty_lines_with_a_header_is_the_header_alone(split):
    runner = split({"Line Split Count": "2", "Header Line Count": "1"})
    runner.enqueue(b"h\na\n\n\n\nb\n")
    runner.run()
    assert pieces(runner) == [b"h\na", b"h", b"h\nb"]


def test_too_few_header_lines_go_to_failure(split):
    runner = split({"Line Split Count": "1", "Header Line Count": "3"})
    incoming = runner.enqueue(b"h1\nh2\n")
    runner.run()
    (failed,) = runner.output("failure")
    assert failed.uuid == incoming.uuid and runner.content(failed) == b"h1\nh2\n"
    assert runner.output("splits") == [] and runner.output("original") == []
    assert any("fewer than the 3 header lines" in message for message in runner.bulletins)


def test_a_header_larger_than_the_maximum_fragment_size_goes_to_failure(split):
    runner = split({"Line Split Count": "1", "Header Line Count": "1", "Maximum Fragment Size": "4 B"})
    runner.enqueue(b"a long header\nrow\n")
    runner.run()
    assert len(runner.output("failure")) == 1 and runner.output("splits") == []


def test_crlf_and_lone_cr_line_endings(split):
    runner = split({"Line Split Count": "2"})
    runner.enqueue(b"a\r\nb\r\nc\rd\re\r\n")
    runner.run()
    assert pieces(runner) == [b"a\r\nb", b"c\rd", b"e"]
    kept = split({"Line Split Count": "2", "Remove Trailing Newlines": "false"})
    kept.enqueue(b"a\r\nb\r\nc\rd\re\r\n")
    kept.run()
    assert pieces(kept) == [b"a\r\nb\r\n", b"c\rd\r", b"e\r\n"]


def test_content_without_a_trailing_newline(split):
    runner = split({"Line Split Count": "2", "Remove Trailing Newlines": "false"})
    runner.enqueue(b"a\nb\nc")
    runner.run()
    assert pieces(runner) == [b"a\nb\n", b"c"]


def test_empty_content_makes_no_split(split):
    runner = split({"Line Split Count": "2", "Header Line Count": "1"})
    runner.enqueue(b"")
    runner.run()
    assert runner.output("splits") == []
    (original,) = runner.output("original")
    assert original.attributes["fragment.count"] == "0"


def test_unicode_content_is_split_at_line_boundaries_only(split):
    text = "ünïcödé\n日本語のテキスト\nemoji 🎉\n"
    runner = split({"Line Split Count": "0", "Maximum Fragment Size": "40 B", "Remove Trailing Newlines": "false"})
    runner.enqueue(text.encode())  # 12 + 25 + 11 bytes
    runner.run()
    assert [piece.decode() for piece in pieces(runner)] == ["ünïcödé\n日本語のテキスト\n", "emoji 🎉\n"]


def test_provenance_forks_the_splits_from_the_original(split):
    runner = split({"Line Split Count": "1"})
    incoming = runner.enqueue(b"a\nb\nc\n")
    runner.run()
    (fork,) = runner.events(event_type=E.FORK)
    assert fork.flowfile_uuid == incoming.uuid
    assert list(fork.child_uuids) == [flowfile.uuid for flowfile in runner.output("splits")]
    assert runner.events(event_type=E.CONTENT_MODIFIED) == []


def test_several_flowfiles_get_their_own_fragment_identifiers(split):
    runner = split({"Line Split Count": "1"})
    runner.enqueue(b"a\nb\n")
    runner.enqueue(b"c\n")
    runner.run()
    identifiers = [flowfile.attributes["fragment.identifier"] for flowfile in runner.output("splits")]
    assert identifiers[0] == identifiers[1] != identifiers[2]
    assert [flowfile.attributes["fragment.count"] for flowfile in runner.output("splits")] == ["2", "2", "1"]


def test_a_multi_megabyte_input_is_split_into_slices(split):
    lines = [f"{number:09d},{'x' * (number % 50)}\n".encode() for number in range(120_000)]
    content = b"".join(lines)
    assert len(content) > 4_000_000
    runner = split({"Line Split Count": "1000", "Remove Trailing Newlines": "false"})
    incoming = runner.enqueue(content)
    started = time.monotonic()
    runner.run()
    elapsed = time.monotonic() - started
    splits = runner.output("splits")
    assert len(splits) == 120
    assert all(f.content_claim.resource_claim == incoming.content_claim.resource_claim for f in splits)
    assert b"".join(runner.content(flowfile) for flowfile in splits) == content
    assert runner.content(splits[7]) == b"".join(lines[7000:8000])
    assert elapsed < 30


def test_a_large_input_is_scanned_without_being_read_into_memory(split):
    line = b"0123456789" * 10 + b"\n"
    content = line * 160_000  # 16 MB
    runner = split({"Line Split Count": "40000", "Header Line Count": "1"})
    runner.enqueue(content)
    del content
    tracemalloc.start()
    try:
        runner.run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(runner.output("splits")) == 4
    assert peak < 8_000_000, f"{peak} bytes were held at once"
    first = runner.output("splits")[0]
    assert first.size == 40_001 * len(line) - 1


def test_validation(split):
    assert any("'Maximum Fragment Size' must be set" in problem
               for problem in split({"Line Split Count": "0"}).validate())
    problems = split({"Line Split Count": "-1", "Header Line Count": "x", "Maximum Fragment Size": "big",
                      "Remove Trailing Newlines": "maybe"}).validate()
    subjects = {problem.split("'")[1] for problem in problems}
    assert subjects == {"Line Split Count", "Header Line Count", "Maximum Fragment Size", "Remove Trailing Newlines"}
    assert any("'Line Split Count' is required" in problem for problem in split({}).validate())
    assert split({"Line Split Count": "10"}).validate() == []


def test_a_crlf_split_across_read_chunks_is_one_line_ending(split):
    first = b"x" * (_READ_SIZE - 1) + b"\r\n"  # the "\r" ends the first chunk
    runner = split({"Line Split Count": "1", "Remove Trailing Newlines": "false"})
    runner.enqueue(first + b"y\r\n")
    runner.run()
    assert pieces(runner) == [first, b"y\r\n"]
