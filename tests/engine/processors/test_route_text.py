"""RouteText: each line of the content goes to the relationships its conditions pick."""

from __future__ import annotations

import pytest

from engine.processors._text import READ_SIZE
from engine.processors.route_text import RouteText
from engine.provenance.event import ProvenanceEventType as E
from engine.testing import ProcessorTestRunner

NAME = "Route to each matching Property Name"
ALL = "Route to 'matched' if line matches all conditions"
ANY = "Route to 'matched' if lines matches any condition"


@pytest.fixture
def route(tmp_path):
    """Build RouteText runners (closed at the end of the test)."""
    runners = []

    def make(properties, **options):
        runner = ProcessorTestRunner(RouteText, tmp_path, properties, **options)
        runners.append(runner)
        return runner

    yield make
    for runner in runners:
        runner.close()


def contents(runner, relationship):
    return [runner.content(flowfile) for flowfile in runner.output(relationship)]


def test_each_line_goes_to_every_property_it_matches(route):
    runner = route({"Matching Strategy": "Starts With", "fruit": "a", "long": "avo"})
    runner.enqueue(b"apple\nbanana\navocado\ncherry\n")
    runner.run()
    assert contents(runner, "fruit") == [b"apple\navocado\n"]
    assert contents(runner, "long") == [b"avocado\n"]
    assert contents(runner, "unmatched") == [b"banana\ncherry\n"]
    (fruit,) = runner.output("fruit")
    assert fruit.attributes["RouteText.Route"] == "fruit"
    assert fruit.attributes["RouteText.Group"] == ""


def test_original_goes_to_original_unchanged_with_the_route_attribute(route):
    runner = route({"Matching Strategy": "Contains", "x": "x"})
    incoming = runner.enqueue(b"axe\nbee\n", filename="in.txt")
    runner.run()
    (original,) = runner.output("original")
    assert original.uuid == incoming.uuid
    assert runner.content(original) == b"axe\nbee\n"
    assert original.attributes["RouteText.Route"] == "original"
    assert original.content_claim == incoming.content_claim
    (child,) = runner.output("x")
    assert child.attributes["filename"] == "in.txt", "children inherit the original's attributes"


def test_relationships_follow_the_routing_strategy():
    by_name = RouteText.relationships_for({"Matching Strategy": "Equals", "alpha": "a", "beta": "b"})
    assert [r.name for r in by_name] == ["original", "unmatched", "alpha", "beta"]
    matched = RouteText.relationships_for({"Routing Strategy": ALL, "Matching Strategy": "Equals", "alpha": "a"})
    assert [r.name for r in matched] == ["original", "unmatched", "matched"]


def test_all_conditions_must_match_with_the_all_strategy(route):
    runner = route({"Routing Strategy": ALL, "Matching Strategy": "Contains", "a": "a", "b": "b"})
    runner.enqueue(b"ab\na\nb\nba\nc")
    runner.run()
    assert contents(runner, "matched") == [b"ab\nba\n"]
    assert contents(runner, "unmatched") == [b"a\nb\nc"]
    assert runner.output("matched")[0].attributes["RouteText.Route"] == "matched"


def test_one_condition_is_enough_with_the_any_strategy(route):
    runner = route({"Routing Strategy": ANY, "Matching Strategy": "Contains", "a": "a", "b": "b"})
    runner.enqueue(b"ab\na\nb\nc\n")
    runner.run()
    assert contents(runner, "matched") == [b"ab\na\nb\n"]
    assert contents(runner, "unmatched") == [b"c\n"]


@pytest.mark.parametrize("strategy, value, expected", [
    ("Starts With", "ERROR", [b"ERROR disk full\n"]),
    ("Ends With", "full", [b"ERROR disk full\n", b"WARN almost full\n"]),
    ("Contains", "disk", [b"ERROR disk full\n", b"INFO disk ok\n"]),
    ("Equals", "INFO disk ok", [b"INFO disk ok\n"]),
    ("Matches Regular Expression", r"(ERROR|WARN) \w+ full", [b"ERROR disk full\n", b"WARN almost full\n"]),
    ("Matches Regular Expression", "disk", []),
    ("Contains Regular Expression", r"\bok$", [b"INFO disk ok\n"]),
    ("Contains Regular Expression", r"(?<level>[A-Z]{5}) ", [b"ERROR disk full\n"]),
])
def test_matching_strategies(route, strategy, value, expected):
    runner = route({"Matching Strategy": strategy, "hit": value})
    runner.enqueue(b"ERROR disk full\nINFO disk ok\nWARN almost full\n")
    runner.run()
    assert b"".join(contents(runner, "hit")) == b"".join(expected)
    hits = b"".join(expected)
    misses = [line + b"\n" for line in b"ERROR disk full\nINFO disk ok\nWARN almost full".split(b"\n")
              if line + b"\n" not in expected]
    assert b"".join(contents(runner, "unmatched")) == b"".join(misses)
    assert (runner.output("hit") != []) == bool(hits), "no FlowFile is made for a relationship without lines"


def test_satisfies_expression_sees_line_line_number_and_attributes(route):
    runner = route({"Matching Strategy": "Satisfies Expression",
                    "header": "${lineNo:le(2)}",
                    "mine": "${line:startsWith(${owner})}"})
    runner.enqueue(b"# title\n# columns\nbob,1\nann,2\nbob,3\n", owner="bob")
    runner.run()
    assert contents(runner, "header") == [b"# title\n# columns\n"]
    assert contents(runner, "mine") == [b"bob,1\nbob,3\n"]
    assert contents(runner, "unmatched") == [b"ann,2\n"]


def test_satisfies_expression_line_variable_includes_the_line_ending(route):
    runner = route({"Matching Strategy": "Satisfies Expression",
                    "raw": "${line:endsWith(';')}", "trimmed": "${line:trim():endsWith(';')}"})
    runner.enqueue(b"a;\nb\nc;")
    runner.run()
    assert contents(runner, "raw") == [b"c;"], "only the last line has no line ending"
    assert contents(runner, "trimmed") == [b"a;\nc;"]


def test_ignore_case_applies_to_text_and_regular_expressions(route):
    text = route({"Matching Strategy": "Equals", "Ignore Case": "true", "hit": "hello"})
    text.enqueue(b"HELLO\nHello\nhelp\n")
    text.run()
    assert contents(text, "hit") == [b"HELLO\nHello\n"]
    regex = route({"Matching Strategy": "Matches Regular Expression", "Ignore Case": "true", "hit": "h[aeiou]llo"})
    regex.enqueue(b"HELLO\nHALLO\nhelp\n")
    regex.run()
    assert contents(regex, "hit") == [b"HELLO\nHALLO\n"]
    exact = route({"Matching Strategy": "Starts With", "hit": "he"})
    exact.enqueue(b"HELLO\nhello\n")
    exact.run()
    assert contents(exact, "hit") == [b"hello\n"]


def test_leading_and_trailing_whitespace_is_ignored_by_default(route):
    runner = route({"Matching Strategy": "Equals", "hit": "abc"})
    runner.enqueue(b"  abc \t\nabc\n abcd\n")
    runner.run()
    assert contents(runner, "hit") == [b"  abc \t\nabc\n"], "lines are written as they were read"


def test_whitespace_counts_when_not_ignored_but_line_endings_never_do(route):
    runner = route({"Matching Strategy": "Ends With", "Ignore Leading/Trailing Whitespace": "false", "hit": "c"})
    runner.enqueue(b"abc\r\nabc \r\nbc\n\n")
    runner.run()
    assert contents(runner, "hit") == [b"abc\r\nbc\n"]
    empty = route({"Matching Strategy": "Matches Regular Expression",
                   "Ignore Leading/Trailing Whitespace": "false", "blank": "^$"})
    empty.enqueue(b"a\n\n \nb\r\n\r\n")
    empty.run()
    assert contents(empty, "blank") == [b"\n\r\n"]


def test_crlf_and_lone_cr_line_endings_are_kept(route):
    runner = route({"Matching Strategy": "Starts With", "a": "a"})
    runner.enqueue(b"a1\r\nb1\ra2\rb2\r\na3")
    runner.run()
    assert contents(runner, "a") == [b"a1\r\na2\ra3"]
    assert contents(runner, "unmatched") == [b"b1\rb2\r\n"]


def test_content_without_a_trailing_newline(route):
    runner = route({"Matching Strategy": "Contains", "x": "x"})
    runner.enqueue(b"one\nxx")
    runner.run()
    assert contents(runner, "x") == [b"xx"]
    assert contents(runner, "unmatched") == [b"one\n"]


def test_empty_content_routes_only_the_original(route):
    runner = route({"Matching Strategy": "Contains", "x": "x"})
    runner.enqueue(b"")
    runner.run()
    assert runner.output("x") == [] and runner.output("unmatched") == []
    (original,) = runner.output("original")
    assert runner.content(original) == b""


def test_grouping_regular_expression_makes_a_flowfile_per_group(route):
    runner = route({"Matching Strategy": "Satisfies Expression", "Grouping Regular Expression": "(.*?),.*",
                    "data": "${lineNo:gt(0)}"})
    runner.enqueue(b"us,1\nfr,2\nus,3\nnot grouped\nfr,4\n")
    runner.run()
    groups = {flowfile.attributes["RouteText.Group"]: runner.content(flowfile) for flowfile in runner.output("data")}
    assert groups == {"us": b"us,1\nus,3\n", "fr": b"fr,2\nfr,4\n", "": b"not grouped\n"}


def test_grouping_joins_the_values_of_several_groups(route):
    runner = route({"Routing Strategy": ANY, "Matching Strategy": "Contains",
                    "Grouping Regular Expression": r"(\w+)-(\w+)?:.*", "colon": ":"})
    runner.enqueue(b"a-b:1\na-:2\na-b:3\nplain\n")
    runner.run()
    groups = {flowfile.attributes["RouteText.Group"]: runner.content(flowfile) for flowfile in runner.output("matched")}
    assert groups == {"a, b": b"a-b:1\na-b:3\n", "a, ": b"a-:2\n"}
    (unmatched,) = runner.output("unmatched")
    assert unmatched.attributes["RouteText.Group"] == ""


def test_property_values_are_expressions_over_the_flowfile(route):
    runner = route({"Matching Strategy": "Starts With", "own": "${prefix}"})
    runner.enqueue(b"p1 x\np2 y\n", prefix="p1")
    runner.enqueue(b"p1 x\np2 y\n", prefix="p2")
    runner.run()
    assert contents(runner, "own") == [b"p1 x\n", b"p2 y\n"]


def test_unicode_content(route):
    runner = route({"Matching Strategy": "Contains Regular Expression", "Ignore Case": "true", "greek": "ΑΒΓ"})
    runner.enqueue("αβγ δ\nλόγος\nΑΒΓ\n".encode())
    runner.run()
    # Java's CASE_INSENSITIVE (what Ignore Case sets) folds only US-ASCII letters.
    assert contents(runner, "greek") == ["ΑΒΓ\n".encode()]
    assert contents(runner, "unmatched") == ["αβγ δ\nλόγος\n".encode()]
    unicode = route({"Matching Strategy": "Contains Regular Expression", "Ignore Case": "true", "greek": "(?u)ΑΒΓ"})
    unicode.enqueue("αβγ δ\nλόγος\n".encode())
    unicode.run()
    assert contents(unicode, "greek") == ["αβγ δ\n".encode()]


@pytest.mark.parametrize("charset", ["ISO-8859-1", "UTF-16LE", "UTF-16"])
def test_other_character_sets(route, charset):
    runner = route({"Matching Strategy": "Starts With", "Character Set": charset, "e": "é"})
    runner.enqueue("éte\r\nhiver\nétang\n".encode(charset))
    runner.run()
    (out,) = runner.output("e")
    assert runner.content(out).decode(charset) == "éte\r\nétang\n"
    assert runner.content(runner.output("unmatched")[0]).decode(charset) == "hiver\n"


def test_auto_terminated_relationships_get_no_flowfile(route):
    runner = route({"Matching Strategy": "Matches Regular Expression", "blank": "^$"},
                   auto_terminate=("blank",))
    runner.enqueue(b"a\n\nb\n")
    runner.run()
    assert contents(runner, "unmatched") == [b"a\nb\n"]
    assert not [event for event in runner.events() if event.event_type is E.DROP], "no line was written for 'blank'"


def test_provenance_records_fork_and_route_events(route):
    runner = route({"Matching Strategy": "Starts With", "a": "a"})
    incoming = runner.enqueue(b"a\nb\n")
    runner.run()
    (a,) = runner.output("a")
    (unmatched,) = runner.output("unmatched")
    (fork,) = runner.events(event_type=E.FORK)
    assert fork.flowfile_uuid == incoming.uuid
    assert set(fork.child_uuids) == {a.uuid, unmatched.uuid}
    routes = {(event.flowfile_uuid, event.relationship) for event in runner.events(event_type=E.ROUTE)}
    assert routes == {(a.uuid, "a"), (unmatched.uuid, "unmatched"), (incoming.uuid, "original")}


def test_a_large_input_is_routed_line_by_line(route):
    runner = route({"Matching Strategy": "Ends With", "even": "0"})
    lines = [f"line {number:07d}\n".encode() for number in range(200_000)]
    runner.enqueue(b"".join(lines))
    runner.run()
    assert contents(runner, "even") == [b"".join(lines[::10])]
    unmatched = [line for index, line in enumerate(lines) if index % 10]
    assert contents(runner, "unmatched") == [b"".join(unmatched)]


def test_a_failing_condition_rolls_back_and_penalizes(route):
    runner = route({"Matching Strategy": "Satisfies Expression", "bad": "${line:toDate():gt(1)}"})
    runner.enqueue(b"1\nnot a number\n")
    runner.run()
    assert runner.output("original") == [] and runner.output("bad") == []
    (waiting,) = runner.input_flowfiles()
    assert waiting.penalty_expiration > 0
    assert any("not a number" in message for message in runner.bulletins)


def test_validation_needs_a_condition_and_a_matching_strategy(route):
    assert any("'Matching Strategy' is required" in problem for problem in route({"x": "x"}).validate())
    problems = route({"Matching Strategy": "Contains"}).validate()
    assert any("at least one user-added property" in problem for problem in problems)


def test_validation_reports_malformed_regular_expressions(route):
    problems = route({"Matching Strategy": "Matches Regular Expression", "bad": "(unclosed", "good": "a+"}).validate()
    assert len(problems) == 1 and "'bad'" in problems[0] and "(unclosed" in problems[0]
    grouping = route({"Matching Strategy": "Contains", "x": "x", "Grouping Regular Expression": "no groups"})
    assert any("at least one capturing group" in problem for problem in grouping.validate())
    broken = route({"Matching Strategy": "Contains", "x": "x", "Grouping Regular Expression": "([a-"})
    assert any("Grouping Regular Expression" in problem for problem in broken.validate())


def test_validation_of_satisfies_expression_conditions(route):
    problems = route({"Matching Strategy": "Satisfies Expression", "text": "${line:toUpper()}",
                      "fine": "${line:contains('a')}"}).validate()
    assert len(problems) == 1 and "'text' must be an expression that returns a boolean" in problems[0]
    broken = route({"Matching Strategy": "Satisfies Expression", "broken": "${line:startsWith('a'}"}).validate()
    assert len(broken) == 1 and "broken" in broken[0]


def test_validation_refuses_unknown_strategies_and_empty_conditions(route):
    problems = route({"Matching Strategy": "Sounds Like", "Routing Strategy": "Somewhere", "x": "x"}).validate()
    assert any("Sounds Like" in problem for problem in problems)
    assert any("Somewhere" in problem for problem in problems)
    assert any("'x' must not be empty" in problem
               for problem in route({"Matching Strategy": "Contains", "x": " "}).validate())


def test_line_endings_and_characters_split_across_read_chunks(route):
    first = b"a" * (READ_SIZE - 1) + b"\r"  # its "\n" starts the next chunk
    second = "b" * (READ_SIZE - 2) + "é\n"  # the "é" straddles the next chunk boundary
    runner = route({"Matching Strategy": "Starts With", "a": "a", "b": "b"})
    runner.enqueue(first + b"\n" + second.encode() + b"a last")
    runner.run()
    assert contents(runner, "a") == [first + b"\n" + b"a last"]
    assert contents(runner, "b") == [second.encode()]
    assert runner.output("unmatched") == [], "no empty line was seen between '\\r' and '\\n'"
