import copy
import json

import pytest

from engine import jsonpath
from engine.jsonpath import InvalidModificationError, InvalidPathError, PathNotFoundError

BOOK = {
    "firstName": "John",
    "age": 25,
    "voter": True,
    "spouse": None,
    "address": {"city": "New York", "postalCode": "10021-3100"},
    "phoneNumbers": [{"type": "home", "number": "212 555-1234"}, {"type": "office", "number": "646 555-4567"}],
    "nicknames": [],
    "scores": [3, 1, 2],
}


@pytest.fixture
def book():
    return copy.deepcopy(BOOK)


@pytest.mark.parametrize("path, expected", [
    ("$.firstName", "John"),
    ("$.address.city", "New York"),
    ("$['address']['postalCode']", "10021-3100"),
    ("$.phoneNumbers[1].type", "office"),
    ("$.phoneNumbers[-1].type", "office"),
    ("$.spouse", None),
    ("$.nicknames", []),
    ("$['firstName','age']", {"firstName": "John", "age": 25}),
    ("firstName", "John"),
])
def test_definite_paths_read_one_value(book, path, expected):
    compiled = jsonpath.compile(path)
    assert compiled.definite
    assert compiled.read(book) == expected


@pytest.mark.parametrize("path, expected", [
    ("$.phoneNumbers[?(@.type=='home')].number", ["212 555-1234"]),
    ("$.phoneNumbers[*].type", ["home", "office"]),
    ("$..number", ["212 555-1234", "646 555-4567"]),
    ("$.phoneNumbers[0:1].type", ["home"]),
    ("$.phoneNumbers[0,1].type", ["home", "office"]),
    ("$.address.*", ["New York", "10021-3100"]),
    ("$.phoneNumbers[?(@.type=='fax')].number", []),
    ("$..missing", []),
])
def test_indefinite_paths_read_a_list(book, path, expected):
    compiled = jsonpath.compile(path)
    assert not compiled.definite
    assert compiled.read(book) == expected


@pytest.mark.parametrize("path", ["$.missing", "$.address.missing", "$.phoneNumbers[5]", "$.firstName.x"])
def test_a_definite_path_that_finds_nothing_raises(book, path):
    with pytest.raises(PathNotFoundError, match="no results for path"):
        jsonpath.compile(path).read(book)


@pytest.mark.parametrize("path, expected", [
    ("$.phoneNumbers.length()", 2),
    ("$.address.size()", 2),
    ("$.scores.min()", 1.0),
    ("$.scores.max()", 3.0),
    ("$.scores.sum()", 6.0),
    ("$.scores.avg()", 2.0),
    ("$.scores.first()", 3),
    ("$.scores.last()", 2),
    ("$.address.keys()", ["city", "postalCode"]),
])
def test_trailing_functions(book, path, expected):
    assert jsonpath.compile(path).read(book) == expected


def test_aggregating_an_empty_array_is_an_error(book):
    with pytest.raises(jsonpath.JsonPathError, match="empty array"):
        jsonpath.compile("$.nicknames.sum()").read(book)


@pytest.mark.parametrize("path", ["$..", "", "$.a[", "foo bar", "$.a[?(@.b ==)]"])
def test_invalid_paths_are_refused_when_compiled(path):
    with pytest.raises(InvalidPathError, match="invalid JSON path"):
        jsonpath.compile(path)


def test_compile_is_cached():
    assert jsonpath.compile("$.a.b") is jsonpath.compile("$.a.b")


def test_delete_removes_each_match(book):
    jsonpath.compile("$.phoneNumbers[?(@.type=='home')]").delete(book)
    assert book["phoneNumbers"] == [{"type": "office", "number": "646 555-4567"}]
    jsonpath.compile("$.firstName").delete(book)
    assert "firstName" not in book


def test_delete_of_several_array_elements_keeps_the_rest(book):
    jsonpath.compile("$.scores[0,2]").delete(book)
    assert book["scores"] == [1]


def test_delete_of_a_missing_path_raises_and_changes_nothing(book):
    with pytest.raises(PathNotFoundError):
        jsonpath.compile("$.missing").delete(book)
    assert book == BOOK


def test_the_root_cannot_be_deleted_or_set(book):
    with pytest.raises(InvalidModificationError):
        jsonpath.compile("$").delete(book)
    with pytest.raises(InvalidModificationError):
        jsonpath.compile("$").set(book, 1)


def test_set_replaces_each_match(book):
    jsonpath.compile("$.phoneNumbers[*].type").set(book, "mobile")
    assert [p["type"] for p in book["phoneNumbers"]] == ["mobile", "mobile"]
    jsonpath.compile("$.age").set(book, "35")
    assert book["age"] == "35"


def test_set_does_not_create_a_missing_key(book):
    with pytest.raises(PathNotFoundError):
        jsonpath.compile("$.missing").set(book, 1)
    assert "missing" not in book


def test_add_appends_to_arrays(book):
    jsonpath.compile("$.nicknames").add(book, "Jimmy")
    assert book["nicknames"] == ["Jimmy"]
    root = [1]
    assert jsonpath.compile("$").add(root, 2) == [1, 2]


def test_add_to_something_not_an_array_is_refused(book):
    with pytest.raises(InvalidModificationError, match="Can only add to an array"):
        jsonpath.compile("$.firstName").add(book, "Jimmy")


def test_put_sets_a_key_in_objects(book):
    jsonpath.compile("$").put(book, "middlename", "Turon")
    jsonpath.compile("$.address").put(book, "country", "US")
    jsonpath.compile("$.phoneNumbers[1]").put(book, "backup", "212-555-1212")
    assert book["middlename"] == "Turon"
    assert book["address"]["country"] == "US"
    assert book["phoneNumbers"][1]["backup"] == "212-555-1212"


def test_put_into_something_not_an_object_is_refused(book):
    with pytest.raises(InvalidModificationError, match="Can only add properties to a map"):
        jsonpath.compile("$.nicknames").put(book, "k", "v")


def test_changes_return_the_document_for_serialising(book):
    result = jsonpath.compile("$.address").put(book, "country", "US")
    assert json.loads(json.dumps(result))["address"]["country"] == "US"
