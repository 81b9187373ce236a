"""EvaluateJsonPath: results into attributes or the content, return types, paths not found, nulls."""

from __future__ import annotations

import json

from engine.testing import ProcessorTestRunner

DOCUMENT = json.dumps({"name": "ada", "age": 36, "ratio": 1e20, "ok": True, "none": None,
                       "tags": ["a", "b"], "address": {"city": "London"},
                       "books": [{"title": "Notes", "year": 1843}, {"title": "Letters"}]}).encode()


def evaluate(tmp_path, properties, content=DOCUMENT, **attributes):
    runner = ProcessorTestRunner("EvaluateJsonPath", tmp_path, properties)
    runner.enqueue(content, **attributes)
    runner.run()
    return runner


def test_attributes_get_scalars_as_text_and_missing_paths_empty(tmp_path):
    properties = {"Destination": "flowfile-attribute", "name": "$.name", "age": "$.age", "ratio": "$.ratio",
                  "ok": "$.ok", "none": "$.none", "missing": "$.nope", "titles": "$.books[*].title"}
    properties["Return Type"] = "json"
    with evaluate(tmp_path, properties) as runner:
        (out,) = runner.output("matched")
        attributes = out.attributes
        assert (attributes["name"], attributes["age"], attributes["ratio"], attributes["ok"]) == \
            ("ada", "36", "1.0E20", "true")
        assert attributes["none"] == "" and attributes["missing"] == ""
        assert attributes["titles"] == '["Notes","Letters"]'
        assert runner.content(out) == DOCUMENT


def test_scalar_return_type_sends_objects_to_failure(tmp_path):
    properties = {"Destination": "flowfile-attribute", "city": "$.address.city", "address": "$.address"}
    with evaluate(tmp_path, properties) as runner:
        (failed,) = runner.output("failure")
        assert "city" not in failed.attributes
        assert any("Unable to return a scalar value for the expression $.address" in m for m in runner.bulletins)


def test_path_not_found_skip_and_warn(tmp_path):
    properties = {"Destination": "flowfile-attribute", "Path Not Found Behavior": "skip", "missing": "$.nope"}
    with evaluate(tmp_path, properties) as runner:
        (out,) = runner.output("matched")
        assert "missing" not in out.attributes
    properties["Path Not Found Behavior"] = "warn"
    with evaluate(tmp_path / "warn", properties) as runner:
        (out,) = runner.output("matched")
        assert out.attributes["missing"] == ""
        assert any("could not find path $.nope for attribute key missing" in m for m in runner.bulletins)


def test_null_value_representation(tmp_path):
    properties = {"Destination": "flowfile-attribute", "none": "$.none",
                  "Null Value Representation": "the string 'null'"}
    with evaluate(tmp_path, properties) as runner:
        assert runner.output("matched")[0].attributes["none"] == "null"


def test_content_destination_replaces_the_content_with_the_result(tmp_path):
    with evaluate(tmp_path, {"result": "$.books[0]"}) as runner:
        (out,) = runner.output("matched")
        assert runner.content(out) == b'{"title":"Notes","year":1843}'
        (event,) = runner.events(event_type="CONTENT_MODIFIED")
        assert event.details == "Replaced content with result of expression $.books[0]"
    with evaluate(tmp_path / "scalar", {"result": "$.name"}) as runner:
        assert runner.content(runner.output("matched")[0]) == b"ada"


def test_content_destination_unmatched_when_the_path_finds_nothing(tmp_path):
    with evaluate(tmp_path, {"result": "$.books[5]"}) as runner:
        (out,) = runner.output("unmatched")
        assert runner.content(out) == DOCUMENT


def test_invalid_json_goes_to_failure(tmp_path):
    with evaluate(tmp_path, {"result": "$.a"}, content=b"{not json") as runner:
        (failed,) = runner.output("failure")
        assert runner.content(failed) == b"{not json"
        assert any("did not have valid JSON content" in m for m in runner.bulletins)


def test_strings_longer_than_max_string_length_make_the_json_invalid(tmp_path):
    with evaluate(tmp_path, {"result": "$.a", "Max String Length": "4 B"}, content=b'{"a": "12345"}') as runner:
        assert len(runner.output("failure")) == 1


def test_validation_wants_valid_paths_and_one_path_for_the_content(tmp_path):
    with ProcessorTestRunner("EvaluateJsonPath", tmp_path, {"a": "$.a", "b": "$.b"}) as runner:
        assert runner.validate() == [
            "JsonPaths: Exactly one JsonPath must be set if using destination of flowfile-content"]
    with ProcessorTestRunner("EvaluateJsonPath", tmp_path, {"Destination": "flowfile-attribute",
                                                            "a": "$.[[["}) as runner:
        assert runner.validate() == ["'a' specified expression was not valid: $.[[["]
