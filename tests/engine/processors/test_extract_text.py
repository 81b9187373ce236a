"""ExtractText: regular-expression captures from the content become attributes."""

from __future__ import annotations

import pytest

from engine.processors.extract_text import ExtractText
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner


@pytest.fixture
def extract(tmp_path):
    """Build ExtractText runners (closed at the end of the test)."""
    runners = []

    def make(properties, **options):
        runner = ProcessorTestRunner(ExtractText, tmp_path, properties, **options)
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


def extracted(flowfile, prefix):
    return {key: value for key, value in flowfile.attributes.items() if key == prefix or key.startswith(prefix + ".")}


def matched_one(runner, content, **attributes):
    runner.enqueue(content, **attributes)
    runner.run()
    assert runner.output("unmatched") == []
    (flowfile,) = runner.output("matched")
    return flowfile


def test_capture_groups_become_attributes(extract):
    runner = extract({"kv": r"(\w+)=(\d+)"})
    flowfile = matched_one(runner, b"color=red size=42 weight=7")
    assert extracted(flowfile, "kv") == {"kv": "size", "kv.0": "size=42", "kv.1": "size", "kv.2": "42"}


def test_capture_group_zero_can_be_left_out(extract):
    runner = extract({"kv": r"(\w+)=(\d+)", "Include Capture Group 0": "false"})
    flowfile = matched_one(runner, b"size=42")
    assert extracted(flowfile, "kv") == {"kv": "size", "kv.1": "size", "kv.2": "42"}


def test_an_expression_without_groups_sets_only_group_zero(extract):
    runner = extract({"number": r"\d+"})
    flowfile = matched_one(runner, b"abc 123 456")
    assert extracted(flowfile, "number") == {"number.0": "123"}


def test_optional_groups_that_do_not_match_set_nothing(extract):
    runner = extract({"regex": "abc(def)?(g)"})
    flowfile = matched_one(runner, b"xxabcgxx")
    assert extracted(flowfile, "regex") == {"regex.0": "abcg", "regex.2": "g"}


def test_repeating_capture_groups_continue_the_numbering(extract):
    runner = extract({"kv": r"(\w)=(\d)", "Enable repeating capture group": "true"})
    flowfile = matched_one(runner, b"a=1 b=2 c=3")
    assert extracted(flowfile, "kv") == {"kv": "a", "kv.0": "a=1", "kv.1": "a", "kv.2": "1", "kv.3": "b",
                                         "kv.4": "2", "kv.5": "c", "kv.6": "3"}
    single = extract({"kv": r"(\w)=(\d)"})
    assert extracted(matched_one(single, b"a=1 b=2"), "kv") == {"kv": "a", "kv.0": "a=1", "kv.1": "a", "kv.2": "1"}


def test_named_groups_name_the_attributes(extract):
    runner = extract({"date": r"(?<year>\d{4})-(?<month>\d{2})", "Enable named group support": "true",
                      "Enable repeating capture group": "true"})
    flowfile = matched_one(runner, b"from 2023-01 to 2024-12")
    assert extracted(flowfile, "date") == {"date": "2023-01", "date.year": "2023", "date.month": "01",
                                           "date.year.1": "2024", "date.month.1": "12"}


def test_named_groups_without_group_zero(extract):
    runner = extract({"date": r"(?<year>\d{4})", "Enable named group support": "true",
                      "Include Capture Group 0": "false"})
    assert extracted(matched_one(runner, b"in 1999"), "date") == {"date.year": "1999"}


def test_named_groups_are_numbered_when_the_support_is_off(extract):
    runner = extract({"date": r"(?<year>\d{4})"})
    assert extracted(matched_one(runner, b"in 1999"), "date") == {"date": "1999", "date.0": "1999", "date.1": "1999"}


def test_several_expressions_and_routing(extract):
    runner = extract({"a": "(A+)", "b": "(B+)"})
    runner.enqueue(b"xx AAA yy")
    runner.enqueue(b"nothing here", keep="me")
    runner.run()
    (matched,) = runner.output("matched")
    assert matched.attributes["a"] == "AAA" and "b" not in matched.attributes
    (unmatched,) = runner.output("unmatched")
    assert runner.content(unmatched) == b"nothing here"
    assert not extracted(unmatched, "a") and not extracted(unmatched, "b")
    assert unmatched.attributes["keep"] == "me"


def test_empty_content_is_unmatched(extract):
    runner = extract({"all": "(.*)"})
    runner.enqueue(b"")
    runner.run()
    assert len(runner.output("unmatched")) == 1, "empty captures set no attribute"


def test_maximum_capture_group_length_truncates_values(extract):
    runner = extract({"word": r"(\w+)", "Maximum Capture Group Length": "4"})
    flowfile = matched_one(runner, b"abcdefgh")
    assert extracted(flowfile, "word") == {"word": "abcd", "word.0": "abcd", "word.1": "abcd"}


def test_only_the_first_maximum_buffer_size_bytes_are_searched(extract):
    runner = extract({"tail": "(END)", "Maximum Buffer Size": "10 B"})
    runner.enqueue(b"0123456789END")
    runner.enqueue(b"012345END")
    runner.run()
    assert len(runner.output("unmatched")) == 1 and len(runner.output("matched")) == 1
    assert runner.content(runner.output("unmatched")[0]) == b"0123456789END"


@pytest.mark.parametrize("flag, pattern, content, expected", [
    ("Enable Case-insensitive Matching", "(hello)", b"HeLLo", "HeLLo"),
    ("Enable DOTALL Mode", "a(.)b", b"a\nb", "\n"),
    ("Enable Multiline Mode", "^(second)$", b"first\nsecond\nthird", "second"),
    ("Permit Whitespace and Comments in Pattern", "(a b) # the letters", b"ab", "ab"),
    ("Enable Literal Parsing of the Pattern", "(a.b)", b"x(a.b)x", None),
    ("Enable Unicode Predefined Character Classes", r"(\w+)", "café".encode(), "café"),
    ("Enable Unicode Predefined Character Classes", r"(\p{Alpha}+)", "жук".encode(), "жук"),
    ("Enable Unix Lines Mode", "a(.)", b"a\r", "\r"),
])
def test_flag_properties(extract, flag, pattern, content, expected):
    off = extract({"r": pattern, "Include Capture Group 0": "true"})
    off.enqueue(content)
    off.run()
    on = extract({"r": pattern, flag: "true"})
    flowfile = matched_one(on, content)
    if expected is None:
        assert flowfile.attributes["r.0"] == pattern
    else:
        assert flowfile.attributes["r.1"] == expected
    if off.output("matched"):
        assert off.output("matched")[0].attributes.get("r.1") != expected, "the flag makes the difference"


def test_inline_flags_and_java_families(extract):
    runner = extract({"r": r"(?U)(\w+) (?d)(.)(?u)(?i)(É)\p{IsGreek}"})
    flowfile = matched_one(runner, "жук \réα".encode())
    assert [flowfile.attributes[f"r.{n}"] for n in (1, 2, 3)] == ["жук", "\r", "é"]


def test_literal_pattern_without_the_flag_is_invalid_here(extract):
    assert extract({"r": "a.b("}).validate()


def test_case_folding_is_ascii_only_unless_unicode_case_is_enabled(extract):
    ascii_only = extract({"r": "(ÉTÉ)", "Enable Case-insensitive Matching": "true"})
    ascii_only.enqueue("été".encode())
    ascii_only.run()
    assert len(ascii_only.output("unmatched")) == 1
    unicode = extract({"r": "(ÉTÉ)", "Enable Case-insensitive Matching": "true",
                       "Enable Unicode-aware Case Folding": "true"})
    assert matched_one(unicode, "été".encode()).attributes["r"] == "été"


def test_canonical_equivalence_matches_composed_and_decomposed_forms(extract):
    decomposed = "cafe\u0301".encode()
    plain = extract({"r": "(café)"})
    plain.enqueue(decomposed)
    plain.run()
    assert len(plain.output("unmatched")) == 1
    canonical = extract({"r": "(café)", "Enable Canonical Equivalence": "true"})
    assert matched_one(canonical, decomposed).attributes["r"] == "café"


def test_unix_lines_mode_is_accepted(extract):
    runner = extract({"r": "(a.c)", "Enable Unix Lines Mode": "true"})
    assert runner.validate() == []
    assert matched_one(runner, b"abc").attributes["r"] == "abc"


@pytest.mark.parametrize("charset", ["ISO-8859-1", "UTF-16", "windows-1252"])
def test_character_sets(extract, charset):
    runner = extract({"name": r"name=(\S+)", "Character Set": charset})
    flowfile = matched_one(runner, "name=Müller;".encode(charset))
    assert flowfile.attributes["name"] == "Müller;"


def test_unicode_content(extract):
    runner = extract({"city": "city: (.+)"})
    assert matched_one(runner, "city: 東京\n".encode()).attributes["city"] == "東京"


def test_provenance_records_the_attribute_change(extract):
    runner = extract({"r": "(x)"})
    flowfile = matched_one(runner, b"x")
    (event,) = runner.events(event_type=E.ATTRIBUTES_MODIFIED)
    assert event.flowfile_uuid == flowfile.uuid and event.updated_attributes["r"] == "x"


def test_validation_reports_malformed_expressions(extract):
    problems = extract({"bad": "(unclosed", "good": "(ok)"}).validate()
    assert len(problems) == 1 and "'bad'" in problems[0] and "(unclosed" in problems[0]


def test_validation_of_group_counts(extract):
    assert any("at least one capturing group" in problem
               for problem in extract({"r": "abc", "Include Capture Group 0": "false"}).validate())
    too_many = "".join(f"(x{index})" for index in range(41))
    assert any("more than the 40 allowed" in problem for problem in extract({"r": too_many}).validate())
    assert any("must name all of its capturing groups" in problem
               for problem in extract({"r": r"(?<a>x)(y)", "Enable named group support": "true"}).validate())


def test_validation_of_the_other_properties(extract):
    problems = extract({"r": "(x)", "Maximum Buffer Size": "3 GB", "Maximum Capture Group Length": "0",
                        "Character Set": "no-such-charset", "Enable DOTALL Mode": "yes"}).validate()
    subjects = {problem.split("'")[1] for problem in problems}
    assert subjects == {"Maximum Buffer Size", "Maximum Capture Group Length", "Character Set", "Enable DOTALL Mode"}


def test_nifi_1_property_names_are_migrated(extract):
    runner = extract({"r": r"(\d)", "extract-text-enable-repeating-capture-group": "true",
                      "extract-text-enable-named-groups": "false"})
    assert runner.validate() == []
    assert extracted(matched_one(runner, b"1 2"), "r") == {"r": "1", "r.0": "1", "r.1": "1", "r.2": "2"}
