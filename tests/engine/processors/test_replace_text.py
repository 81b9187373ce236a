"""ReplaceText: regex, literal and whole replacements, prepend/append/surround, variable substitution."""

from __future__ import annotations

import pytest

from engine.processors.replace_text import ReplaceText, substitute_variables
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner

ENTIRE = {"Evaluation Mode": "Entire text"}


@pytest.fixture
def replace(tmp_path):
    """Build ReplaceText runners (closed at the end of the test)."""
    runners = []

    def make(properties, **options):
        runner = ProcessorTestRunner(ReplaceText, tmp_path, properties, **options)
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


def result(runner, content: bytes, **attributes) -> bytes:
    """Run ``content`` through ``runner`` and return the content that went to success."""
    runner.enqueue(content, **attributes)
    runner.run()
    assert runner.output("failure") == []
    return runner.content(runner.output("success")[-1])


def test_defaults_leave_the_content_as_it_is(replace):
    runner = replace({})
    assert runner.validate() == []
    assert result(runner, b"one\r\ntwo\nthree") == b"one\r\ntwo\nthree"


def test_regex_replace_with_group_references(replace):
    runner = replace({"Regular Expression": r"(\w+)@(\w+)\.com", "Replacement Value": "$2 at $1", **ENTIRE})
    assert result(runner, b"mail ann@acme.com or bob@corp.com") == b"mail acme at ann or corp at bob"


def test_regex_replace_line_by_line(replace):
    runner = replace({"Regular Expression": r"^(\d+),", "Replacement Value": "[$1];"})
    assert result(runner, b"1,a\n22,b\nx,c\n") == b"[1];a\n[22];b\nx,c\n"


def test_groups_are_available_to_expressions(replace):
    runner = replace({"Regular Expression": "(WOLF|TIGER|LION)", "Replacement Value": "${'$1':toLower()}!"})
    assert result(runner, b"a WOLF and a LION\n") == b"a wolf! and a lion!\n"


def test_expressions_see_flowfile_attributes(replace):
    runner = replace({"Regular Expression": "NAME", "Replacement Value": "${user}", **ENTIRE})
    assert result(runner, b"hello NAME, bye NAME", user="ann") == b"hello ann, bye ann"


def test_references_to_missing_groups_stay_text(replace):
    runner = replace({"Regular Expression": r"(\d+) USD", "Replacement Value": "$1 dollars ($8 fee)", **ENTIRE})
    assert result(runner, b"costs 5 USD") == b"costs 5 dollars ($8 fee)"
    two_digits = replace({"Regular Expression": r"(\d)", "Replacement Value": "<$12>", **ENTIRE})
    assert result(two_digits, b"7") == b"<72>", "as in Java, $12 with one group is group 1 then '2'"


def test_a_dollar_not_followed_by_a_digit_makes_the_whole_value_literal(replace):
    runner = replace({"Regular Expression": r"(\d+)", "Replacement Value": "$1 costs $ a lot", **ENTIRE})
    assert result(runner, b"42") == b"$1 costs $ a lot"


def test_backslash_escapes_in_the_replacement(replace):
    runner = replace({"Regular Expression": r"(\d+)", "Replacement Value": r"\$1 is $1\\", **ENTIRE})
    assert result(runner, b"42") == b"$1 is 42\\"


def test_values_inserted_by_expressions_never_refer_to_groups(replace):
    runner = replace({"Regular Expression": "(x)", "Replacement Value": "${price}-$1", **ENTIRE})
    assert result(runner, b"x", price="$1") == b"$1-x"


def test_attribute_values_in_the_search_value_match_literally(replace):
    runner = replace({"Regular Expression": "${needle}+", "Replacement Value": "_", **ENTIRE})
    assert result(runner, b"a.b axb a.bbb", needle="a.b") == b"_ axb _"


def test_a_search_value_that_fails_to_compile_sends_the_flowfile_to_failure(replace):
    runner = replace({"Regular Expression": "(${pattern}", "Replacement Value": "_"})
    runner.enqueue(b"abc", pattern="a")
    runner.run()
    (failed,) = runner.output("failure")
    assert runner.content(failed) == b"abc"


def test_an_expression_that_fails_sends_the_flowfile_to_failure(replace):
    # 'abc' is no date, so format() fails (a non-number is null for toNumber(), as in NiFi).
    runner = replace({"Regular Expression": "(.+)", "Replacement Value": "${'$1':format('yyyy')}"})
    runner.enqueue(b"12\nabc\n")
    runner.run()
    (failed,) = runner.output("failure")
    assert runner.content(failed) == b"12\nabc\n" and runner.output("success") == []
    assert any("format" in message for message in runner.bulletins)


def test_regex_replace_sees_line_endings_in_line_by_line_mode(replace):
    runner = replace({"Replacement Value": "<$1>"})
    assert result(runner, b"a\nb") == b"<a\n><b>", "the default (?s)(^.*$) takes the line ending in"
    joined = replace({"Regular Expression": r"\n", "Replacement Value": " "})
    assert result(joined, b"a\nb\nc") == b"a b c"


def test_dot_star_replaces_everything(replace):
    runner = replace({"Regular Expression": ".*", "Replacement Value": "X"})
    assert result(runner, b"a\r\nb\n") == b"X\r\nX\n"
    empty = replace({"Replacement Value": "", **ENTIRE})
    assert result(empty, b"something") == b""


def test_multiline_regex_in_entire_text_mode(replace):
    runner = replace({"Regular Expression": "(?m)^#.*$\\n?", "Replacement Value": "", **ENTIRE})
    assert result(runner, b"# comment\ncode\n# more\nend") == b"code\nend"


def test_no_match_in_entire_text_mode_leaves_the_flowfile_untouched(replace):
    runner = replace({"Regular Expression": "zzz", "Replacement Value": "y", **ENTIRE})
    incoming = runner.enqueue(b"abc")
    runner.run()
    (out,) = runner.output("success")
    assert out.content_claim == incoming.content_claim
    assert runner.events(event_type=E.CONTENT_MODIFIED) == []


def test_literal_replace(replace):
    entire = replace({"Replacement Strategy": "Literal Replace", "Regular Expression": "a.b",
                      "Replacement Value": "$1", **ENTIRE})
    assert result(entire, b"a.b axb\na.b") == b"$1 axb\n$1"
    lines = replace({"Replacement Strategy": "Literal Replace", "Regular Expression": "(x)",
                     "Replacement Value": "${tag}"})
    assert result(lines, b"(x)(x)\r\nx\n", tag="y") == b"yy\r\nx\n"


def test_always_replace(replace):
    entire = replace({"Replacement Strategy": "Always Replace", "Replacement Value": "new ${n}", **ENTIRE})
    assert result(entire, b"old\ncontent\n", n="1") == b"new 1"
    lines = replace({"Replacement Strategy": "Always Replace", "Replacement Value": "L"})
    assert result(lines, b"a\r\nb\rc\nd") == b"L\r\nL\rL\nL"


def test_prepend_and_append(replace):
    prepend = replace({"Replacement Strategy": "Prepend", "Replacement Value": "> "})
    assert result(prepend, b"a\r\nb\n") == b"> a\r\n> b\n"
    append = replace({"Replacement Strategy": "Append", "Replacement Value": ";"})
    assert result(append, b"a\r\nb\nc") == b"a;\r\nb;\nc;"
    whole = replace({"Replacement Strategy": "Append", "Replacement Value": "<end>", **ENTIRE})
    assert result(whole, b"a\nb\n") == b"a\nb\n<end>"
    start = replace({"Replacement Strategy": "Prepend", "Replacement Value": "${filename}: ", **ENTIRE})
    assert result(start, b"a\nb\n", filename="f.txt") == b"f.txt: a\nb\n"


def test_surround(replace):
    lines = replace({"Replacement Strategy": "Surround", "Text to Prepend": "<li>", "Text to Append": "</li>"})
    assert result(lines, b"one\r\ntwo\n") == b"<li>one</li>\r\n<li>two</li>\n"
    entire = replace({"Replacement Strategy": "Surround", "Text to Prepend": "[", "Text to Append": "]", **ENTIRE})
    assert result(entire, b"a\nb\n") == b"[a\nb\n]"
    assert any("'Text to Prepend' is required" in problem
               for problem in replace({"Replacement Strategy": "Surround"}).validate())


def test_substitute_variables(replace):
    runner = replace({"Replacement Strategy": "Substitute Variables", **ENTIRE})
    content = b"Dear ${name}, you owe ${amount:-nothing}. ${unknown} stays, $${name} is escaped."
    assert result(runner, content, name="Ann") == b"Dear Ann, you owe nothing. ${unknown} stays, ${name} is escaped."
    lines = replace({"Replacement Strategy": "Substitute Variables"})
    assert result(lines, b"${a}\n${b}\n", a="1", b="2") == b"1\n2\n"


def test_substitute_variables_resolves_references_in_values_and_refuses_cycles(replace):
    assert substitute_variables("${a}", {"a": "<${b}>", "b": "B"}) == "<B>"
    assert substitute_variables("no end ${a", {"a": "x"}) == "no end ${a"
    runner = replace({"Replacement Strategy": "Substitute Variables"})
    runner.enqueue(b"${a}", a="${b}", b="${a}")
    runner.run()
    assert len(runner.output("failure")) == 1


@pytest.mark.parametrize("mode, expected", [
    ("All", b"*1\n*2\n*3\n"),
    ("First-Line", b"*1\n2\n3\n"),
    ("Last-Line", b"1\n2\n*3\n"),
    ("Except-First-Line", b"1\n*2\n*3\n"),
    ("Except-Last-Line", b"*1\n*2\n3\n"),
])
def test_line_by_line_evaluation_modes(replace, mode, expected):
    runner = replace({"Replacement Strategy": "Prepend", "Replacement Value": "*",
                      "Line-by-Line Evaluation Mode": mode})
    assert result(runner, b"1\n2\n3\n") == expected


@pytest.mark.parametrize("mode, expected", [
    ("All", b"*x"), ("First-Line", b"*x"), ("Last-Line", b"*x"), ("Except-First-Line", b"x"),
    ("Except-Last-Line", b"x"),
])
def test_line_by_line_evaluation_modes_with_a_single_line(replace, mode, expected):
    runner = replace({"Replacement Strategy": "Prepend", "Replacement Value": "*",
                      "Line-by-Line Evaluation Mode": mode})
    assert result(runner, b"x") == expected


def test_entire_text_larger_than_the_buffer_goes_to_failure(replace):
    runner = replace({"Regular Expression": "a", "Replacement Value": "b", "Maximum Buffer Size": "10 B", **ENTIRE})
    runner.enqueue(b"a" * 11)
    runner.enqueue(b"a" * 10)
    runner.run()
    assert len(runner.output("failure")) == 1 and runner.content(runner.output("failure")[0]) == b"a" * 11
    assert runner.content(runner.output("success")[0]) == b"b" * 10
    streaming = replace({"Replacement Strategy": "Prepend", "Replacement Value": ">", "Maximum Buffer Size": "10 B",
                         **ENTIRE})
    assert result(streaming, b"a" * 100) == b">" + b"a" * 100, "Prepend does not buffer the content"


def test_a_line_longer_than_the_buffer_goes_to_failure(replace):
    runner = replace({"Regular Expression": "a", "Replacement Value": "b", "Maximum Buffer Size": "10 B"})
    runner.enqueue(b"aaa\n" + b"a" * 30 + b"\naaa\n")
    runner.enqueue(b"aaa\naaa\n")
    runner.run()
    assert len(runner.output("failure")) == 1
    assert runner.content(runner.output("success")[0]) == b"bbb\nbbb\n"


def test_empty_content(replace):
    lines = replace({"Replacement Strategy": "Prepend", "Replacement Value": "x"})
    incoming = lines.enqueue(b"")
    lines.run()
    (out,) = lines.output("success")
    assert lines.content(out) == b"" and out.content_claim == incoming.content_claim
    entire = replace({"Replacement Strategy": "Prepend", "Replacement Value": "x", **ENTIRE})
    assert result(entire, b"") == b"x"
    always = replace({"Replacement Strategy": "Always Replace", "Replacement Value": "y", **ENTIRE})
    assert result(always, b"") == b"y"


def test_content_without_a_trailing_newline(replace):
    runner = replace({"Replacement Strategy": "Append", "Replacement Value": "!"})
    assert result(runner, b"a\nb") == b"a!\nb!"


def test_unicode_content(replace):
    runner = replace({"Regular Expression": r"(?U)(\w+)", "Replacement Value": "«$1»"})
    assert result(runner, "грüße 東京\n".encode()) == "«грüße» «東京»\n".encode()


def test_word_class_is_ascii_as_in_java(replace):
    runner = replace({"Regular Expression": r"(\w+)", "Replacement Value": "«$1»"})
    assert result(runner, "грüß abc\n".encode()) == "грüß «abc»\n".encode()


@pytest.mark.parametrize("charset", ["ISO-8859-1", "UTF-16", "UTF-16LE", "cp1252"])
def test_other_character_sets(replace, charset):
    runner = replace({"Regular Expression": "é", "Replacement Value": "è", "Character Set": charset})
    out = result(runner, "café\r\nthé\n".encode(charset))
    assert out.decode(charset) == "cafè\r\nthè\n"


def test_a_large_content_streams_line_by_line(replace):
    lines = b"".join(b"row %07d\n" % number for number in range(150_000))
    runner = replace({"Replacement Strategy": "Append", "Replacement Value": ";"})
    out = result(runner, lines)
    assert out == lines.replace(b"\n", b";\n")


def test_provenance_records_the_content_change(replace):
    runner = replace({"Replacement Strategy": "Prepend", "Replacement Value": "x"})
    incoming = runner.enqueue(b"a")
    runner.run()
    (event,) = runner.events(event_type=E.CONTENT_MODIFIED)
    assert event.flowfile_uuid == incoming.uuid
    assert event.previous_content_claim == incoming.content_claim and event.content_claim != incoming.content_claim


def test_validation_reports_malformed_regular_expressions(replace):
    problems = replace({"Regular Expression": "([a-z]"}).validate()
    assert len(problems) == 1 and "Search Value" in problems[0] and "([a-z]" in problems[0]
    assert replace({"Regular Expression": "${dynamic}"}).validate() == [], "expressions are checked per FlowFile"
    literal = replace({"Replacement Strategy": "Literal Replace", "Regular Expression": "([a-z]"})
    assert literal.validate() == [], "a literal search value is not a regular expression"
    unused = replace({"Replacement Strategy": "Prepend", "Regular Expression": "([a-z]"})
    assert unused.validate() == [], "the search value is not used by Prepend"


def test_validation_of_the_other_properties(replace):
    empty = replace({"Replacement Strategy": "Literal Replace", "Regular Expression": ""}).validate()
    assert any("must not be empty" in problem for problem in empty)
    problems = replace({"Replacement Strategy": "Rewrite", "Evaluation Mode": "Whole",
                        "Line-by-Line Evaluation Mode": "Middle-Line", "Maximum Buffer Size": "lots",
                        "Character Set": "klingon"}).validate()
    subjects = {problem.split("'")[1] for problem in problems}
    assert subjects == {"Replacement Strategy", "Evaluation Mode", "Line-by-Line Evaluation Mode",
                        "Maximum Buffer Size", "Character Set"}
