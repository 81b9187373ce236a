import io
import struct
import tarfile
import time
import tracemalloc
import zipfile
from datetime import UTC, datetime

from engine.processors.merge_content import MergeContent
from engine.provenance.event import ProvenanceEventType as E
from engine.runtime import Outcome
from engine.storage import NodeStorage
from engine.testing import ProcessorTestRunner


def merge_runner(tmp_path, **properties):
    return ProcessorTestRunner(MergeContent, tmp_path, properties)


def props(**named):
    """Property names with spaces, from keyword arguments with underscores."""
    return {name.replace("_", " "): value for name, value in named.items()}


def contents(runner, relationship="merged"):
    return [runner.content(flowfile) for flowfile in runner.output(relationship)]


def read_flowfile_stream_v3(data):
    """Parse NiFi's FlowFile Stream v3 into (attributes, content) pairs."""
    stream = io.BytesIO(data)
    packages = []

    def length():
        (short,) = struct.unpack(">H", stream.read(2))
        return struct.unpack(">I", stream.read(4))[0] if short == 0xFFFF else short

    def text():
        return stream.read(length()).decode("utf-8")

    while magic := stream.read(7):
        assert magic == b"NiFiFF3"
        attributes = {}
        for _ in range(length()):
            key = text()
            attributes[key] = text()
        (size,) = struct.unpack(">q", stream.read(8))
        packages.append((attributes, stream.read(size)))
    return packages


# -- binning --------------------------------------------------------------------------------


def test_full_bins_merge_at_once_and_the_rest_when_the_queue_runs_dry(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Maximum_Number_of_Entries="3")) as runner:
        for number in range(7):
            runner.enqueue(f"<{number}>".encode())
        runner.run(1, stop=False)
        assert contents(runner) == [b"<0><1><2>", b"<3><4><5>"]
        assert [f.attributes["merge.reason"] for f in runner.output("merged")] == ["MAX_ENTRIES_THRESHOLD_REACHED"] * 2
        assert [f.attributes["merge.count"] for f in runner.output("merged")] == ["3", "3"]

        runner.run(1, stop=False)
        assert contents(runner)[2] == b"<6>"
        assert runner.output("merged")[2].attributes["merge.reason"] == "MIN_THRESHOLDS_REACHED"
        assert len(runner.output("original")) == 7
        assert runner.output("failure") == []


def test_a_bin_below_the_minimum_entries_waits(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Minimum_Number_of_Entries="5")) as runner:
        for number in range(3):
            runner.enqueue(b"x")
        runner.run(3, stop=False)
        assert runner.output("merged") == [] and runner.input_flowfiles() == []
        for number in range(2):
            runner.enqueue(b"y")
        runner.run(2, stop=False)
        assert contents(runner) == [b"xxxyy"]


def test_bins_fill_up_to_the_maximum_group_size(tmp_path):
    properties = props(Maximum_Group_Size="16 B", Minimum_Group_Size="10 B")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        for letter in "abcde":
            runner.enqueue(letter.encode() * 8)
        runner.run(2, stop=False)
        assert contents(runner) == [b"a" * 8 + b"b" * 8, b"c" * 8 + b"d" * 8]
        assert {f.attributes["merge.reason"] for f in runner.output("merged")} == {"MAX_BYTES_THRESHOLD_REACHED"}
        assert len(runner.output("original")) == 4, "the last 8 bytes stay below the minimum group size"


def test_a_flowfile_larger_than_the_maximum_group_size_is_merged_alone(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Maximum_Group_Size="16 B")) as runner:
        runner.enqueue(b"z" * 40, filename="big.bin")
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert runner.content(merged) == b"z" * 40
        assert merged.attributes["merge.count"] == "1" and merged.attributes["merge.reason"] == "UNSET"
        assert merged.attributes["filename"] == "big.bin"


def test_a_bin_older_than_max_bin_age_is_merged_whatever_its_size(tmp_path):
    properties = props(Minimum_Number_of_Entries="10", Max_Bin_Age="1 sec")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"one,")
        runner.enqueue(b"two")
        runner.run(2, stop=False)
        assert runner.output("merged") == []
        runner.clock.advance(1.1)
        outcomes = runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert runner.content(merged) == b"one,two"
        assert merged.attributes["merge.reason"] == "TIMEOUT"
        assert int(merged.attributes["merge.bin.age"]) >= 1000
        assert outcomes == [Outcome.DID_WORK]


def test_a_trigger_with_nothing_to_do_yields(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Minimum_Number_of_Entries="10")) as runner:
        assert runner.run(1, stop=False) == [Outcome.YIELDED]
        runner.enqueue(b"a")
        assert runner.run(1, stop=False) == [Outcome.DID_WORK]
        assert runner.run(1, stop=False) == [Outcome.YIELDED], "the bin waits: nothing is due"


def test_correlation_attribute_gives_each_value_its_own_bins(tmp_path):
    properties = props(Correlation_Attribute_Name="group")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        for group, text in [("a", "a1"), ("b", "b1"), ("a", "a2"), ("b", "b2"), ("a", "a3")]:
            runner.enqueue(text.encode(), group=group)
        runner.run(2, stop=False)
        merged = {f.attributes["group"]: runner.content(f) for f in runner.output("merged")}
        assert merged == {"a": b"a1a2a3", "b": b"b1b2"}


def test_correlation_attribute_name_may_be_an_expression(tmp_path):
    properties = props(Correlation_Attribute_Name="${which}")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"1", which="color", color="red")
        runner.enqueue(b"2", which="color", color="blue")
        runner.enqueue(b"3", which="color", color="red")
        runner.run(2, stop=False)
        assert sorted(contents(runner)) == [b"13", b"2"]


def test_a_correlation_expression_that_fails_sends_the_flowfile_to_failure(tmp_path):
    properties = props(Correlation_Attribute_Name="${n:toDate():toNumber()}")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"bad", n="abc")
        runner.enqueue(b"good", n="7", **{"7": "g"})
        runner.run(2, stop=False)
        assert contents(runner, "failure") == [b"bad"]
        assert contents(runner) == [b"good"]
        assert any("cannot tell which bin" in message for message in runner.bulletins)


def test_when_bins_run_out_the_oldest_is_merged(tmp_path):
    properties = props(Correlation_Attribute_Name="group", Minimum_Number_of_Entries="10", Maximum_number_of_Bins="2")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        for group in "xyz":
            runner.enqueue(group.encode(), group=group)
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert runner.content(merged) == b"x"
        assert merged.attributes["merge.reason"] == "BIN_MANAGER_FULL"


# -- defragment -----------------------------------------------------------------------------


def fragment(runner, identifier, index, count, text, **attributes):
    return runner.enqueue(text, **{"fragment.identifier": identifier, "fragment.index": str(index),
                                   "fragment.count": str(count), **attributes})


def test_defragment_puts_fragments_back_in_order(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Merge_Strategy="Defragment")) as runner:
        fragment(runner, "A", 2, 3, b"C", **{"segment.original.filename": "a.txt"})
        fragment(runner, "B", 1, 2, b"y", **{"segment.original.filename": "b.txt"})
        fragment(runner, "A", 0, 3, b"A", **{"segment.original.filename": "a.txt"})
        fragment(runner, "B", 0, 2, b"x", **{"segment.original.filename": "b.txt"})
        fragment(runner, "A", 1, 3, b"B", **{"segment.original.filename": "a.txt"})
        runner.run(1, stop=False)
        merged = {f.attributes["filename"]: runner.content(f) for f in runner.output("merged")}
        assert merged == {"a.txt": b"ABC", "b.txt": b"xy"}
        for flowfile in runner.output("merged"):
            assert flowfile.attributes["merge.reason"] == "MAX_ENTRIES_THRESHOLD_REACHED"
            assert "fragment.index" not in flowfile.attributes
            assert flowfile.attributes["fragment.identifier"] in ("A", "B")


def test_defragment_waits_for_every_fragment(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Merge_Strategy="Defragment")) as runner:
        fragment(runner, "A", 0, 3, b"1")
        fragment(runner, "A", 1, 3, b"2")
        runner.run(3, stop=False)
        assert runner.output("merged") == [] and runner.output("failure") == []
        fragment(runner, "A", 2, 3, b"3")
        runner.run(1, stop=False)
        assert contents(runner) == [b"123"]


def test_incomplete_fragments_that_age_out_go_to_failure(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Merge_Strategy="Defragment", Max_Bin_Age="1 sec")) as runner:
        fragment(runner, "A", 0, 3, b"1")
        fragment(runner, "A", 2, 3, b"3")
        runner.run(2, stop=False)
        runner.clock.advance(1.1)
        runner.run(1, stop=False)
        assert runner.output("merged") == [] and runner.output("original") == []
        assert sorted(runner.content(f) for f in runner.output("failure")) == [b"1", b"3"]
        assert any("3 are expected but 2 arrived" in message for message in runner.bulletins)


def test_fragments_that_disagree_on_the_count_go_to_failure(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Merge_Strategy="Defragment", Max_Bin_Age="1 sec")) as runner:
        fragment(runner, "A", 0, 2, b"1")
        fragment(runner, "A", 1, 3, b"2")
        runner.run(1, stop=False)
        runner.clock.advance(1.1)
        runner.run(1, stop=False)
        assert len(runner.output("failure")) == 2
        assert any("another fragment of the group says" in message for message in runner.bulletins)


def test_a_fragment_without_an_index_goes_to_failure_at_once(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Merge_Strategy="Defragment")) as runner:
        runner.enqueue(b"lost", **{"fragment.identifier": "A", "fragment.count": "2"})
        runner.run(1, stop=False)
        (failed,) = runner.output("failure")
        assert runner.content(failed) == b"lost"


# -- formats --------------------------------------------------------------------------------


def test_tar_entries_carry_name_path_mode_and_modified_time(tmp_path):
    properties = props(Merge_Format="TAR", Keep_Path="true", Maximum_Number_of_Entries="2")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"first", filename="a.txt", path="./dir/sub/",
                       **{"tar.permissions": "755", "file.lastModifiedTime": "2024-05-01T10:00:00+0200"})
        runner.enqueue(b"second", filename="b.txt", path="./", **{"tar.permissions": "bad"})
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert merged.attributes["mime.type"] == "application/tar"
        assert merged.attributes["filename"].endswith(".tar")
        with tarfile.open(fileobj=io.BytesIO(runner.content(merged))) as archive:
            first, second = archive.getmembers()
            assert first.name == "dir/sub/a.txt" and archive.extractfile(first).read() == b"first"
            assert first.mode == 0o755
            assert first.mtime == datetime(2024, 5, 1, 8, 0, tzinfo=UTC).timestamp()
            assert second.name == "b.txt" and archive.extractfile(second).read() == b"second"
            assert second.mode == 0o644 and abs(second.mtime - time.time()) < 60


def test_tar_entries_without_keep_path_sit_at_the_root(tmp_path):
    properties = props(Merge_Format="TAR", Maximum_Number_of_Entries="1")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"data", filename="a.txt", path="dir/")
        runner.run(1, stop=False)
        with tarfile.open(fileobj=io.BytesIO(contents(runner)[0])) as archive:
            assert archive.getnames() == ["a.txt"]


def test_zip_archive_holds_every_flowfile(tmp_path):
    properties = props(Merge_Format="ZIP", Keep_Path="true", Compression_Level="9", Maximum_Number_of_Entries="3")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"a" * 1000, filename="a.txt", path="docs")
        runner.enqueue(b"b" * 1000, filename="b.txt", path="./")
        runner.enqueue(b"", filename="empty.txt", path="./")
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert merged.attributes["mime.type"] == "application/zip" and merged.attributes["filename"].endswith(".zip")
        with zipfile.ZipFile(io.BytesIO(runner.content(merged))) as archive:
            assert archive.testzip() is None
            assert archive.namelist() == ["docs/a.txt", "b.txt", "empty.txt"]
            assert archive.read("docs/a.txt") == b"a" * 1000 and archive.read("empty.txt") == b""
            info = archive.getinfo("b.txt")
            assert info.compress_type == zipfile.ZIP_DEFLATED and info.compress_size < 100


def test_zip_compression_level_zero_stores_the_bytes(tmp_path):
    properties = props(Merge_Format="ZIP", Compression_Level="0", Maximum_Number_of_Entries="1")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"b" * 1000, filename="b.txt")
        runner.run(1, stop=False)
        with zipfile.ZipFile(io.BytesIO(contents(runner)[0])) as archive:
            assert archive.getinfo("b.txt").compress_size >= 1000
            assert archive.read("b.txt") == b"b" * 1000


def test_a_duplicate_zip_entry_is_left_out_and_a_clone_fails(tmp_path):
    properties = props(Merge_Format="ZIP", Maximum_Number_of_Entries="2")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"one", filename="same.txt")
        second = runner.enqueue(b"two", filename="same.txt")
        runner.run(1, stop=False)
        with zipfile.ZipFile(io.BytesIO(contents(runner)[0])) as archive:
            assert archive.namelist() == ["same.txt"] and archive.read("same.txt") == b"one"
        (failed,) = runner.output("failure")
        assert runner.content(failed) == b"two" and failed.uuid != second.uuid
        assert len(runner.output("original")) == 2
        assert [e for e in runner.events(event_type=E.CLONE) if second.uuid in e.parent_uuids]


def test_flowfile_stream_v3_packs_attributes_and_content(tmp_path):
    properties = props(Merge_Format="FlowFile Stream, v3", Maximum_Number_of_Entries="2")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        first = runner.enqueue(b"hello", filename="a.txt", note="caf\u00e9", long="x" * 70000)
        second = runner.enqueue(b"", filename="b.txt")
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        assert merged.attributes["mime.type"] == "application/flowfile-v3"
        assert merged.attributes["filename"].endswith(".pkg")
        (a, a_content), (b, b_content) = read_flowfile_stream_v3(runner.content(merged))
        assert a_content == b"hello" and b_content == b""
        assert a["uuid"] == first.uuid and a["note"] == "caf\u00e9" and a["long"] == "x" * 70000
        assert b["uuid"] == second.uuid and b["filename"] == "b.txt"


# -- delimiters -----------------------------------------------------------------------------


def test_text_delimiters_surround_and_separate_the_contents(tmp_path):
    properties = props(Delimiter_Strategy="Text", Maximum_Number_of_Entries="3")
    properties.update({"Header File": "[${kind}:", "Footer File": "]", "Demarcator File": "\n"})
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        assert runner.validate() == []
        for text in ("a", "b", "c"):
            runner.enqueue(text.encode(), kind="letters")
        runner.run(1, stop=False)
        assert contents(runner) == [b"[letters:a\nb\nc]"]


def test_filename_delimiters_come_from_files(tmp_path):
    (tmp_path / "header").write_bytes(b"<<")
    (tmp_path / "footer").write_bytes(b">>")
    (tmp_path / "demarcator").write_bytes(b"|")
    properties = props(Delimiter_Strategy="Filename", Maximum_Number_of_Entries="2")
    properties.update({"Header File": str(tmp_path / "header"), "Footer File": str(tmp_path / "footer"),
                       "Demarcator File": str(tmp_path / "demarcator")})
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"a")
        runner.enqueue(b"b")
        runner.run(1, stop=False)
        assert contents(runner) == [b"<<a|b>>"]


def test_delimiters_are_ignored_without_a_delimiter_strategy(tmp_path):
    properties = props(Maximum_Number_of_Entries="2")
    properties.update({"Demarcator File": ","})
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"a")
        runner.enqueue(b"b")
        runner.run(1, stop=False)
        assert contents(runner) == [b"ab"]


def test_a_delimiter_file_that_vanished_sends_the_bin_to_failure(tmp_path):
    (tmp_path / "header").write_bytes(b"<<")
    properties = props(Delimiter_Strategy="Filename", Minimum_Number_of_Entries="2")
    properties["Header File"] = str(tmp_path / "header")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"a")
        runner.run(1, stop=False)
        (tmp_path / "header").unlink()
        runner.enqueue(b"b")
        runner.run(2, stop=False)
        assert runner.output("merged") == [] and runner.output("original") == []
        assert sorted(contents(runner, "failure")) == [b"a", b"b"]
        assert any("failed to merge" in message for message in runner.bulletins)


# -- attributes -----------------------------------------------------------------------------


def merge_attributes(tmp_path, strategy):
    properties = props(Attribute_Strategy=strategy, Maximum_Number_of_Entries="3")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        runner.enqueue(b"1", a="1", b="2", filename="x")
        runner.enqueue(b"2", a="1", b="3", c="4", filename="x")
        runner.enqueue(b"3", a="1", filename="x")
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        return {key: value for key, value in merged.attributes.items() if key in "abc"}


def test_keep_only_common_attributes(tmp_path):
    assert merge_attributes(tmp_path, "Keep Only Common Attributes") == {"a": "1"}


def test_keep_all_unique_attributes(tmp_path):
    assert merge_attributes(tmp_path, "Keep All Unique Attributes") == {"a": "1", "c": "4"}


def test_keep_first_attributes(tmp_path):
    assert merge_attributes(tmp_path, "Keep First Attributes") == {"a": "1", "b": "2", "c": "4"}


def test_merged_flowfile_gets_the_merge_attributes(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Maximum_Number_of_Entries="2")) as runner:
        runner.enqueue(b"a", **{"mime.type": "text/plain", "segment.original.filename": "whole.txt"})
        runner.enqueue(b"b", **{"mime.type": "text/plain", "segment.original.filename": "whole.txt"})
        runner.enqueue(b"c", **{"mime.type": "text/plain"})
        runner.enqueue(b"d", **{"mime.type": "text/csv"})
        runner.run(1, stop=False)
        first, second = runner.output("merged")
        assert first.attributes["mime.type"] == "text/plain" and first.attributes["filename"] == "whole.txt"
        assert second.attributes["mime.type"] == "application/octet-stream"
        assert second.attributes["filename"].isdigit()
        originals = runner.output("original")
        assert [f.attributes["merge.uuid"] for f in originals] == [first.uuid] * 2 + [second.uuid] * 2


# -- provenance and durability --------------------------------------------------------------


def test_the_merge_records_a_join_with_every_original_as_parent(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Maximum_Number_of_Entries="5")) as runner:
        originals = [runner.enqueue(str(number).encode()) for number in range(5)]
        runner.run(1, stop=False)
        (merged,) = runner.output("merged")
        (join,) = runner.events(event_type=E.JOIN)
        assert join.flowfile_uuid == merged.uuid and join.child_uuids == (merged.uuid,)
        assert sorted(join.parent_uuids) == sorted(flowfile.uuid for flowfile in originals)
        assert join.component_id == "processor-under-test"


def test_stopping_rolls_the_bins_back_to_the_input_queue(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Minimum_Number_of_Entries="10")) as runner:
        originals = [runner.enqueue(f"{number}".encode(), n=str(number)) for number in range(4)]
        runner.run(2, stop=False)
        assert runner.input_flowfiles() == [] and runner.output("original") == []
        runner.stop()
        back = runner.input_flowfiles()
        assert sorted(f.uuid for f in back) == sorted(f.uuid for f in originals)
        assert all(runner.content(f) == f.attributes["n"].encode() for f in back)
        assert runner.output("merged") == [] and runner.output("failure") == []
        assert runner.storage.verify().ok

        runner.run(2, stop=False)  # started again, the FlowFiles are binned once more
        assert runner.input_flowfiles() == [] and runner.output("merged") == []
        for number in range(4, 10):
            runner.enqueue(f"{number}".encode())
        runner.run(2, stop=False)
        assert contents(runner) == [b"0123456789"]


def test_binned_flowfiles_are_still_queued_after_a_crash(tmp_path):
    runner = ProcessorTestRunner(MergeContent, tmp_path, props(Minimum_Number_of_Entries="10"))
    originals = [runner.enqueue(b"payload-%d" % number) for number in range(3)]
    runner.run(1, stop=False)
    assert runner.input_flowfiles() == []
    runner.storage.close()  # the node goes down with the bins open: nothing committed them

    storage = NodeStorage(runner.directory / "node")
    recovered = storage.open(background=False)
    try:
        queued = recovered.queues["input"]
        assert sorted(f.uuid for f in queued) == sorted(f.uuid for f in originals)
        assert sorted(storage.content.read_bytes(f.content_claim) for f in queued) == [
            b"payload-0", b"payload-1", b"payload-2"]
        assert not recovered.queues.get("out-merged") and not recovered.queues.get("out-original")
    finally:
        storage.close()
        runner.controller.shutdown(timeout=2)


def test_many_flowfiles_totalling_megabytes_merge_without_holding_them_in_memory(tmp_path):
    block = bytes(range(256)) * 128  # 32 KiB
    count = 640  # 20 MiB in all
    with ProcessorTestRunner(MergeContent, tmp_path, props(Maximum_Number_of_Entries="1000")) as runner:
        for _ in range(count):
            runner.enqueue(block)
        tracemalloc.start()
        try:
            runner.run(2, stop=False)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        (merged,) = runner.output("merged")
        assert merged.size == count * len(block) and merged.attributes["merge.count"] == str(count)
        with runner.storage.content.open_reader(merged.content_claim) as reader:
            assert all(chunk == block for chunk in iter(lambda: reader.read(len(block)), b""))
        assert peak < 8 * 2**20, f"merging used {peak} bytes of memory"
        assert len(runner.output("original")) == count


# -- configuration --------------------------------------------------------------------------


def test_invalid_configurations_are_reported(tmp_path):
    properties = props(Minimum_Number_of_Entries="5", Maximum_Number_of_Entries="2", Minimum_Group_Size="2 KB",
                       Maximum_Group_Size="1 KB", Max_Bin_Age="0 sec")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        problems = runner.validate()
        assert any("'Max Bin Age' must be at least 1 sec" in problem for problem in problems)
    del properties["Max Bin Age"]
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        problems = runner.validate()
        assert any("Minimum Group Size" in problem and "Maximum Group Size" in problem for problem in problems)
        assert any("Minimum Number of Entries" in problem for problem in problems)


def test_unsupported_formats_and_missing_delimiter_files_are_reported(tmp_path):
    with ProcessorTestRunner(MergeContent, tmp_path, props(Merge_Format="Avro")) as runner:
        assert any("'Merge Format' is 'Avro', which is not one of the allowed values" in p for p in runner.validate())
    properties = props(Delimiter_Strategy="Filename")
    properties["Header File"] = str(tmp_path / "missing")
    with ProcessorTestRunner(MergeContent, tmp_path, properties) as runner:
        assert any("not an existing file" in problem for problem in runner.validate())


def test_a_flow_exported_by_nifi_with_every_property_loads(tmp_path):
    properties = {
        "Merge Strategy": "Bin-Packing Algorithm", "Merge Format": "Binary Concatenation",
        "Attribute Strategy": "Keep Only Common Attributes", "Correlation Attribute Name": None,
        "mergecontent-metadata-strategy": "Do Not Merge Uncommon Metadata", "Minimum Number of Entries": "1",
        "Maximum Number of Entries": "1000", "Minimum Group Size": "0 B", "Maximum Group Size": None,
        "Max Bin Age": None, "Maximum number of Bins": "5", "Delimiter Strategy": "Do Not Use Delimiters",
        "Header File": None, "Footer File": None, "Demarcator File": None, "Compression Level": "1",
        "Keep Path": "false", "Tar Modified Time": "${file.lastModifiedTime}",
    }
    with ProcessorTestRunner("org.apache.nifi.processors.standard.MergeContent", tmp_path, properties) as runner:
        assert runner.validate() == []
        runner.enqueue(b"ok")
        runner.run(2)
        assert contents(runner) == [b"ok"]
