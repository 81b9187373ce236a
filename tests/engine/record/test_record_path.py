"""RecordPath: parsing, errors, evaluation on Python records and setting values.

The expected values are NiFi's: most cases come from NiFi's RecordPath guide
(nifi-docs/src/main/asciidoc/record-path-guide.adoc), on its "John Doe" record.
"""

from __future__ import annotations

import copy
import datetime as dt
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from engine.record.path import RecordPathError, compile_record_path
from engine.record.path_parser import (
    Child, Compare, Context, Descendant, FilterCall, Index, Literal, MapKeys, Not, Parent, Predicate, Root,
    WildcardChild, WildcardIndex,
)
from engine.record import path_values as pv
from tests.engine.record.people import JANE, JOHN, NOBODY

UTC = dt.timezone.utc

# the record of NiFi's RecordPath guide, section "Functions"
GUIDE = {
    "name": "John Doe",
    "workAddress": {"number": "123", "street": "5th Avenue", "city": "New York", "state": "NY", "zip": "10020"},
    "homeAddress": {"number": "456", "street": "Grand St", "city": "Jersey City", "state": "NJ", "zip": "07304"},
    "details": {"position": "Dataflow Engineer", "preferredState": "NY", "employer": "", "vehicle": None,
                "phrase": "   "},
}


def values(text, record):
    return compile_record_path(text).values(copy.deepcopy(record))


# --- parsing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, tree", [
    ("/", Root()),
    ("/name", Child(Root(), "name")),
    ("/a/b", Child(Child(Root(), "a"), "b")),
    ("//zip", Descendant(Root(), "zip")),
    ("/*", WildcardChild(Root())),
    ("/a[0]", Index(Child(Root(), "a"), ((0, 0),), True)),
    ("/a[-1]", Index(Child(Root(), "a"), ((-1, -1),), True)),
    ("/a[0, 2]", Index(Child(Root(), "a"), ((0, 0), (2, 2)), False)),
    ("/a[1..-1]", Index(Child(Root(), "a"), ((1, -1),), False)),
    ("/a[0, 4..6]", Index(Child(Root(), "a"), ((0, 0), (4, 6)), False)),
    ("/m['k']", MapKeys(Child(Root(), "m"), ("k",))),
    ("/m['a', \"b\"]", MapKeys(Child(Root(), "m"), ("a", "b"))),
    ("/a[*]", WildcardIndex(Child(Root(), "a"))),
    ("./x", Child(Context(), "x")),
    ("../x", Child(Parent(Context()), "x")),
    ("/a/..", Parent(Child(Root(), "a"))),
    ("/a[./x = 'y']", Predicate(Child(Root(), "a"), Compare("=", Child(Context(), "x"), Literal("y"), 7))),
    ("/a[. > 3]", Predicate(Child(Root(), "a"), Compare(">", Context(), Literal(3), 5))),
    ("/a[not(isEmpty(.))]",
     Predicate(Child(Root(), "a"), Not(FilterCall("isEmpty", (Context(),), 7), 3))),
    ("/'my field'/x.y-z", Child(Child(Root(), "my field"), "x.y-z")),
    ("/contains", Child(Root(), "contains")),
    ("  /a  /  b  ", Child(Child(Root(), "a"), "b")),
])
def test_parse_trees(text, tree):
    assert compile_record_path(text).tree == tree


@pytest.mark.parametrize("text, literal", [
    (r"'a\'b'", "a'b"), (r'"a\"b"', 'a"b'), (r"'tab\there'", "tab\there"), (r"'new\nline'", "new\nline"),
    (r"'\d+'", r"\d+"), (r"'\\'", "\\\\"), ('"double"', "double"), ("-42", -42),
])
def test_string_and_number_literals_follow_nifi_escapes(text, literal):
    assert compile_record_path(text).tree == Literal(literal)


@pytest.mark.parametrize("text, position, message", [
    ("", 0, "the RecordPath is empty"),
    ("/a[", 3, "expected an array index, a quoted map key, '*' or a predicate after '['"),
    ("/a[0", 4, "expected ',' or ']' after an array index"),
    ("/a[0..]", 6, "the end of an index range"),
    ("/a/", 3, "expected a field name, '*', '.' or '..' after '/'"),
    ("//", 2, "expected a field name or '*' after '//'"),
    ("name", 0, "a field is written /name"),
    ("/a[./b]", 3, "a predicate must be a comparison"),
    ("/a = ", 5, "expected a path"),
    ("/a['x", 3, "has no closing '"),
    ("/a b", 3, "expected the end of the path"),
    ("/a ! 'x'", 3, "unexpected character '!'"),
    ("substring(/a, 1)", 0, "substring() takes 3 arguments but got 2"),
    ("toDate(/a)", 0, "toDate() takes 2 to 3 arguments but got 1"),
    ("join(',')", 0, "join() takes at least 2 arguments but got 1"),
    ("concat(/a, 'b'", 14, "expected ',' or ')' in the arguments of concat()"),
    ("bogus(/a)", 0, "unknown function bogus()"),
    ("uuid5(/a)", 0, "the NiFi function uuid5() is not supported by Flowsite"),
    ("/a[not(/b)]", 3, "not() takes a filter function or a comparison"),
    ("/a[matchesRegex(., '[')]", 3, "matchesRegex(): invalid regular expression '[': unclosed character class"),
    ("format(/a, 'yyyy-bb')", 0, "unsupported letter 'b'"),
    ("format(/a, 'yyyy', 'Mars/Base')", 0, "unknown time zone 'Mars/Base'"),
    ("hash(/a, 'CRC32')", 0, "hash(): unknown algorithm 'CRC32'"),
])
def test_errors_name_the_position_and_what_was_expected(text, position, message):
    with pytest.raises(RecordPathError) as caught:
        compile_record_path(text)
    error = caught.value
    assert isinstance(error, ValueError)
    assert message in error.message
    assert error.position == position
    assert f"(at position {position} of {text!r})" in str(error)


@pytest.mark.parametrize("text, absolute", [
    ("/a", True), ("/", True), ("//a", True), ("./a", False), ("..", False), ("concat(/a, /b)", False),
    ("'x'", False), ("/a = 'x'", False),
])
def test_is_absolute_as_nifi(text, absolute):
    assert compile_record_path(text).is_absolute is absolute


@pytest.mark.parametrize("text, name", [
    ("/address/city", "city"), ("/a[0]", "a"), ("/m['k']", "m"), ("/a[*]/b[./c = 'x']", "b"), ("/a/b/..", "a"),
    ("//zip", "zip"), ("/*", None), ("/", None), ("toUpperCase(/a)", None), ("./x", "x"),
])
def test_field_name_is_the_last_field_stepped_to(text, name):
    assert compile_record_path(text).field_name == name


def test_compiled_paths_are_cached():
    assert compile_record_path("/a/b") is compile_record_path("/a/b")


# --- evaluation: NiFi's guide -------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("/name", ["John Doe"]),
    ("/workAddress/zip", ["10020"]),
    ("//zip", ["10020", "07304"]),
    ("/*[./state != 'NY']/zip", ["07304"]),
    ("/*[./state = /details/preferredState]/city", ["New York"]),
    ("/*/city[../state = 'NJ']", ["Jersey City"]),
    ("/details/vehicle", [None]),
    ("/missing", [None]),
    ("/name/first", [None]),
    # standalone functions
    ("substring( /name, 0, -1 )", ["John Doe"]), ("substring( /name, 0, -5 )", ["John"]),
    ("substring( /name, 1000, 1005 )", [""]), ("substring( /name, 0, 1005)", ["John Doe"]),
    ("substring( /name, -50, -1)", [""]),
    ("substringAfter( /name, ' ' )", ["Doe"]), ("substringAfter( /name, 'o' )", ["hn Doe"]),
    ("substringAfter( /name, '' )", ["John Doe"]), ("substringAfter( /name, 'xyz' )", ["John Doe"]),
    ("substringAfterLast( /name, ' ' )", ["Doe"]), ("substringAfterLast( /name, 'o' )", ["e"]),
    ("substringAfterLast( /name, '' )", ["John Doe"]), ("substringAfterLast( /name, 'xyz' )", ["John Doe"]),
    ("substringBefore( /name, ' ' )", ["John"]), ("substringBefore( /name, 'o' )", ["J"]),
    ("substringBefore( /name, '' )", ["John Doe"]), ("substringBefore( /name, 'xyz' )", ["John Doe"]),
    ("substringBeforeLast( /name, ' ' )", ["John"]), ("substringBeforeLast( /name, 'o' )", ["John D"]),
    ("substringBeforeLast( /name, '' )", ["John Doe"]), ("substringBeforeLast( /name, 'xyz' )", ["John Doe"]),
    ("replace( /name, 'o', 'x' )", ["Jxhn Dxe"]), ("replace( /name, 'o', 'xyz' )", ["Jxyzhn Dxyze"]),
    ("replace( /name, 'xyz', 'zyx' )", ["John Doe"]), ("replace( /name, 'Doe', /workAddress/city )", ["John New York"]),
    ("replaceRegex( /name, 'o', 'x' )", ["Jxhn Dxe"]), ("replaceRegex( /name, 'o', 'xyz' )", ["Jxyzhn Dxyze"]),
    ("replaceRegex( /name, 'xyz', 'zyx' )", ["John Doe"]),
    # the guide prints "John New York" here, but Java's replaceAll gives this (the space is part of the match)
    ("replaceRegex( /name, '\\s+.*', /workAddress/city )", ["JohnNew York"]),
    ("replaceRegex(/name, '([JD])', '$1x')", ["Jxohn Dxoe"]),
    ("replaceRegex(/name, '(?<hello>[JD])', '${hello}x')", ["Jxohn Dxoe"]),
    ("replaceNull( /details/vehicle, 'no vehicle' )", ["no vehicle"]),
    ("replaceNull( /name, 'default' )", ["John Doe"]),
    ("replaceNull( /details/vehicle, /name )", ["John Doe"]),
    ("concat( /name, ' lives in ',  /homeAddress/city )", ["John Doe lives in Jersey City"]),
    ("join(', ', /workAddress/* )", ["123, 5th Avenue, New York, NY, 10020"]),
    ("fieldName(//city/..)", ["workAddress", "homeAddress"]),
    ("//city[not(startsWith(fieldName(..), 'work'))]", ["Jersey City"]),
    ("coalesce(/details/vehicle, /name)", ["John Doe"]), ("coalesce(/details/vehicle, /missing)", []),
    ("trim(/details/phrase)", [""]), ("toUpperCase(/name)", ["JOHN DOE"]), ("toLowerCase(/name)", ["john doe"]),
    ("padLeft(/name, 15, '@')", ["@@@@@@@John Doe"]), ("padRight(/name, 15, '@')", ["John Doe@@@@@@@"]),
    ("padLeft(/name, 10)", ["__John Doe"]), ("padLeft(/name, 3, '@')", ["John Doe"]),
    ("hash(/name, 'MD5')", [hashlib.md5(b"John Doe").hexdigest()]),
    ("base64Encode(/name)", ["Sm9obiBEb2U="]), ("base64Decode('Sm9obg==')", ["John"]),
    ("escapeJson(/workAddress/number)", ['"123"']), ("count(/workAddress/*)", [5]),
    # filter functions
    ("/name[contains(., 'o')]", ["John Doe"]), ("/name[contains(., 'x')]", []),
    ("/name[contains( ../workAddress/state, /details/preferredState )]", ["John Doe"]),
    ("/name[containsRegex(., 'o[gh]n')]", ["John Doe"]), ("/name[containsRegex(., 'John')]", ["John Doe"]),
    ("/name[containsRegex(., 'o[xy]n')]", []),
    ("/name[matchesRegex(., 'John Doe')]", ["John Doe"]), ("/name[matchesRegex(., 'John')]", []),
    ("/name[matchesRegex(., '.* Doe' )]", ["John Doe"]),
    ("/name[startsWith(., 'J')]", ["John Doe"]), ("/name[startsWith(., 'x')]", []),
    ("/name[startsWith(., '')]", ["John Doe"]), ("/name[endsWith(., 'e')]", ["John Doe"]),
    ("/name[endsWith(., 'xyz')]", []), ("/name[endsWith(., '')]", ["John Doe"]),
    ("/name[not(endsWith(., 'x'))]", ["John Doe"]), ("/name[not(contains(., 'x'))]", ["John Doe"]),
    ("/name[not(endsWith(., 'e'))]", []),
    ("/name[isEmpty(/details/employer)]", ["John Doe"]), ("/name[isEmpty(/details/vehicle)]", ["John Doe"]),
    ("/name[isEmpty(/details/phrase)]", []), ("/name[isEmpty(.)]", []),
    ("/name[isBlank(/details/employer)]", ["John Doe"]), ("/name[isBlank(/details/vehicle)]", ["John Doe"]),
    ("/name[isBlank(/details/phrase)]", ["John Doe"]), ("/name[isBlank(.)]", []),
    ("/name[ substringAfter(., ' ') = 'Doe']", ["John Doe"]),
    # a filter outside a predicate yields booleans
    ("/name = 'John Doe'", [True]), ("contains(/name, 'x')", [False]), ("not(contains(/name, 'x'))", [True]),
    ("/workAddress/* = '123'", [True, False, False, False, False]),
])
def test_nifi_guide_examples(text, expected):
    assert values(text, GUIDE) == expected


def test_count_as_filter_from_the_guide():
    record = {"id": "1234", "elements": [{"name": "book", "color": "red"}, {"name": "computer", "color": "black"}]}
    assert values("count(/elements[*])", record) == [2]
    assert values("/id[ count(/elements[*]) = 2 ]", record) == ["1234"]


# --- evaluation: arrays, maps, predicates and types ---------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("/tags[0]", ["a"]), ("/tags[-1]", ["d"]), ("/tags[4]", []), ("/tags[-5]", []),
    ("/tags[0, 2]", ["a", None]), ("/tags[0, 0]", ["a", "a"]), ("/tags[0..1]", ["a", "b"]),
    ("/tags[1..-1]", ["b", None, "d"]), ("/tags[0..8]", ["a", "b", None, "d"]), ("/tags[2..1]", []),
    ("/tags[*]", ["a", "b", None, "d"]), ("/tags[*][. != 'b']", ["a", "d"]),
    ("/numbers[*][. > 3]", [5, 10]), ("/numbers[*][. > '3']", [5, 10]), ("/numbers[*][. <= 5]", [1, 5]),
    ("/attrs['color']", ["red"]), ("/attrs['nope']", [None]), ("/attrs['size', 'color']", ["L", "red"]),
    ("/attrs[*]", ["red", "L"]), ("/attrs/color", [None]),
    ("/orders[*]/id", ["o1", "o2"]), ("/orders[*][./total > 50]/id", ["o2"]),
    ("/orders[*]/items[*]/sku", ["x", "y"]), ("/orders[*]/items[*]/sku[../qty = 1]", ["x"]),
    ("//sku", ["x", "y"]), ("//id", ["o1", "o2"]),
    ("/orders[*][count(./items[*]) = 0]/id", ["o2"]),
    ("/age[. = 42]", [42]), ("/age[. = '42']", [42]), ("/age[. != 42]", []), ("/age[. != '42']", []),
    ("/age[. > 41]", [42]), ("/score[. > 3]", [3.5]),
    ("/active[. = 'true']", []), ("/born[. > 0]", [JOHN["born"]]),
    ("toString(/born, 'UTF-8')", ["327407400000"]), ("toString(/day, 'UTF-8')", ["1508457600000"]),
    ("toString(/score, 'UTF-8')", ["3.5"]), ("toString(/payload, 'UTF-8')", ["Hello"]),
    ("toString(/tags, 'UTF-8')", ["[a, b, null, d]"]), ("toString(/active, 'UTF-8')", ["true"]),
    ("toBytes(/name, 'UTF-16')", [b"\xfe\xff" + "John Doe".encode("utf-16-be")]),
    ("concat(/tags[*], '|', /age)", ["abnulld|42"]), ("join('-', /tags, /numbers)", ["a-b-null-d-1-5-10"]),
    ("toLowerCase(/missing)", [""]), ("padLeft(/missing, 3)", [None]), ("count(//city)", [2]),
    ("escapeJson(/orders[1])", ['{"id":"o2","total":99.0,"items":[]}']),
    ("unescapeJson('{\"a\": [1, 2]}')", [{"a": [1, 2]}]),
    ("format(/born, 'yyyy-MM-dd HH:mm:ss Z', 'GMT+8:00')", ["1980-05-17 18:30:00 +0800"]),
    ("format(/born, 'yyyy-MM-dd HH:mm', 'America/New_York')", ["1980-05-17 06:30"]),
    ("format(/millis, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'UTC')", ["2017-10-20T00:00:00Z"]),
    ("format(/day, 'yyyy/MM/dd', 'UTC')", ["2017/10/20"]), ("format(/name, 'yyyy')", ["John Doe"]),
    ("toDate(/eventDate, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'UTC')", [dt.datetime(2017, 10, 20, tzinfo=UTC)]),
    ("toDate(/eventDate, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'GMT+8:00')", [dt.datetime(2017, 10, 19, 16, tzinfo=UTC)]),
    ("format(toDate(/eventDate, \"yyyy-MM-dd'T'HH:mm:ss'Z'\", 'UTC'), 'yyyy-MM-dd', 'UTC')", ["2017-10-20"]),
])
def test_arrays_maps_predicates_and_types(text, expected):
    assert values(text, JOHN) == expected


def test_nulls_and_empty_arrays():
    assert values("/tags[*]", JANE) == []
    assert values("/tags[0]", JANE) == []
    assert values("/workAddress/city", JANE) == [None]
    assert values("//city", JANE) == ["Albany"]
    assert values("/tags[*]", NOBODY) == []
    assert values("/attrs['color']", NOBODY) == []
    assert values("concat(/name, '!')", NOBODY) == ["null!"]
    assert values("toDate(/eventDate, 'yyyy-MM-dd', 'UTC')", NOBODY) == ["not a date"]


def test_maps_given_as_dicts_behave_as_maps_given_as_pairs():
    record = {"m": {"color": "red", "size": "L"}}
    assert values("/m['color']", record) == ["red"]
    assert values("/m[*]", record) == ["red", "L"]
    assert values("/m['none']", record) == [None]


def test_field_values_carry_name_and_parent():
    found = compile_record_path("//city").evaluate(copy.deepcopy(JOHN))
    assert [fv.name for fv in found] == ["city", "city"]
    assert [fv.parent.name for fv in found] == ["workAddress", "homeAddress"]
    assert found[0].parent.parent.name == "root" and found[0].parent.parent.parent is None
    element = compile_record_path("/tags[1]").evaluate(copy.deepcopy(JOHN))[0]
    assert (element.name, element.value, element.parent.name) == ("tags", "b", "tags")


def test_relative_path_with_a_context_field():
    record = copy.deepcopy(JOHN)
    context = compile_record_path("/workAddress/city").evaluate(record)[0]
    assert compile_record_path("../zip").values(record, context) == ["10020"]
    assert compile_record_path("toUpperCase(.)").values(record, context) == ["NEW YORK"]
    assert compile_record_path("./x").values(record) == [None]


def test_a_record_must_be_a_dict():
    with pytest.raises(RecordPathError, match="a record is a dict, not list"):
        compile_record_path("/a").evaluate([1])


def test_evaluation_errors_name_the_path():
    with pytest.raises(RecordPathError, match="toBytes\\(\\) takes text but age is int"):
        compile_record_path("toBytes(/age, 'UTF-8')").evaluate(copy.deepcopy(JOHN))
    with pytest.raises(RecordPathError, match="unescapeJson\\(\\) cannot read name"):
        compile_record_path("unescapeJson(/name)").evaluate(copy.deepcopy(JOHN))
    with pytest.raises(RecordPathError, match="the regular expression '\\[' is invalid"):
        compile_record_path("/name[matchesRegex(., /details/position)]").evaluate({"name": "a",
                                                                                    "details": {"position": "["}})


# --- setting values ---------------------------------------------------------------------------------

def test_set_a_field_a_nested_field_and_a_new_field():
    record = copy.deepcopy(JOHN)
    compile_record_path("/name").evaluate(record)[0].set("X")
    compile_record_path("/workAddress/city").evaluate(record)[0].set("Paris")
    compile_record_path("/workAddress/country").evaluate(record)[0].set("FR")
    assert record["name"] == "X"
    assert record["workAddress"] == {**JOHN["workAddress"], "city": "Paris", "country": "FR"}


def test_set_array_elements_and_map_entries():
    record = copy.deepcopy(JOHN)
    for fv in compile_record_path("/tags[0, -1]").evaluate(record):
        fv.set(fv.value.upper())
    compile_record_path("/attrs['color']").evaluate(record)[0].set("green")
    compile_record_path("/attrs['shape']").evaluate(record)[0].set("round")
    assert record["tags"] == ["A", "b", None, "D"]
    assert record["attrs"] == [("color", "green"), ("size", "L"), ("shape", "round")]
    as_dict = {"m": {"a": 1}}
    compile_record_path("/m['b']").evaluate(as_dict)[0].set(2)
    assert as_dict == {"m": {"a": 1, "b": 2}}


def test_set_inside_a_null_record_does_nothing_as_in_nifi():
    record = copy.deepcopy(JANE)
    fv = compile_record_path("/workAddress/city").evaluate(record)[0]
    fv.set("Paris")
    assert record["workAddress"] is None


def test_set_the_whole_record_and_computed_values():
    record = {"a": 1}
    compile_record_path("/").evaluate(record)[0].set({"b": 2})
    assert record == {"b": 2}
    with pytest.raises(RecordPathError, match="only be replaced by a record"):
        compile_record_path("/").evaluate(record)[0].set(3)
    with pytest.raises(RecordPathError, match="not a field of the record"):
        compile_record_path("concat(/b, 'x')").evaluate(record)[0].set("y")
    derived = compile_record_path("toUpperCase(/b)").evaluate(record)[0]
    derived.set("written through the field the function read")
    assert record == {"b": "written through the field the function read"}


@pytest.mark.parametrize("destination, value, field, expected", [
    ("/name", "X", "name", "X"),
    ("/tags[*]", lambda v: None if v is None else v * 2, "tags", ["aa", "bb", None, "dd"]),
    ("/tags[*]", compile_record_path("toUpperCase(.)"), "tags", ["A", "B", "", "D"]),
    ("/orders[*]/id", compile_record_path("concat(., '-', ../total)"), "orders", None),
    ("/name", compile_record_path("/homeAddress/city"), "name", "Jersey City"),
    ("/name", compile_record_path("/nothing[0]"), "name", None),
    ("//city", compile_record_path("toLowerCase(.)"), "homeAddress",
     {**JOHN["homeAddress"], "city": "jersey city"}),
])
def test_update_as_updaterecord(destination, value, field, expected):
    record = copy.deepcopy(JOHN)
    count = compile_record_path(destination).update(record, value)
    assert count >= 1
    if destination == "/orders[*]/id":
        assert [o["id"] for o in record["orders"]] == ["o1-10.5", "o2-99.0"]
    else:
        assert record[field] == expected


def test_update_with_a_path_of_several_values_fails():
    with pytest.raises(RecordPathError, match="the replacement path selects 4 values"):
        compile_record_path("/name").update(copy.deepcopy(JOHN), compile_record_path("/tags[*]"))


# --- value rules ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("number, text", [
    (3.0, "3.0"), (0.001, "0.001"), (1e7, "1.0E7"), (1.5e-4, "1.5E-4"), (1e20, "1.0E20"), (-2.5, "-2.5"),
    (123456.789, "123456.789"), (float("nan"), "NaN"), (float("-inf"), "-Infinity"), (0.0, "0.0"),
])
def test_java_double_text(number, text):
    assert pv.java_double(number) == text


@pytest.mark.parametrize("name, offset", [
    ("GMT+8:00", dt.timedelta(hours=8)), ("UTC", dt.timedelta(0)), ("-05:30", dt.timedelta(hours=-5, minutes=-30)),
    ("GMT-8", dt.timedelta(hours=-8)),
])
def test_fixed_zones(name, offset):
    assert pv.resolve_zone(name).utcoffset(None) == offset


def test_java_regex_and_replacement_translation():
    named = pv.java_regex(r"(?<first>\w)(?<!x)\k<first>")
    assert named.fullmatch("aa").group("first") == "a" and not named.fullmatch("ab")
    assert pv.java_replacement(r"${first}-$1-\$") == r"\g<first>-\g<1>-$"


def test_the_sql_back_end_does_not_import_pyspark():
    script = ("import sys, engine.record.path, engine.record.path_sql, engine.record.path_update, "
              "engine.record.path_sql_functions; "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j')))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parents[3])
    assert result.stdout.strip() == "[]"
