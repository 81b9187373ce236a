"""AttributesToJSON: which attributes are written, where, and how JSON-looking values are handled."""

from __future__ import annotations

import json

from engine.testing import ProcessorTestRunner


def test_all_attributes_go_to_the_json_attribute_by_default(tmp_path):
    with ProcessorTestRunner("AttributesToJSON", tmp_path) as runner:
        original = runner.enqueue(b"body", color="blue", size="3")
        runner.run()
        (out,) = runner.output("success")
        assert runner.content(out) == b"body"
        written = json.loads(out.attributes["JSONAttributes"])
        assert written == dict(original.attributes)
        assert ": " not in out.attributes["JSONAttributes"], "compact, like Jackson's default writer"


def test_core_attributes_can_be_left_out(tmp_path):
    with ProcessorTestRunner("AttributesToJSON", tmp_path, {"Include Core Attributes": "false"}) as runner:
        runner.enqueue(b"", color="blue", **{"mime.type": "text/plain"})
        runner.run()
        (out,) = runner.output("success")
        assert json.loads(out.attributes["JSONAttributes"]) == {"color": "blue"}


def test_listed_and_matching_attributes_with_missing_ones_empty_or_null(tmp_path):
    properties = {"Attributes List": "color, missing", "Attributes Regular Expression": "s.*"}
    with ProcessorTestRunner("AttributesToJSON", tmp_path, properties) as runner:
        runner.enqueue(b"", color="blue", size="3", shape="round", other="x")
        runner.run()
        (out,) = runner.output("success")
        assert json.loads(out.attributes["JSONAttributes"]) == {
            "color": "blue", "missing": "", "size": "3", "shape": "round"}
    with ProcessorTestRunner("AttributesToJSON", tmp_path, {"Attributes List": "missing", "Null Value": "true"}) as runner:
        runner.enqueue(b"")
        runner.run()
        (out,) = runner.output("success")
        assert out.attributes["JSONAttributes"] == '{"missing":null}'


def test_the_attributes_regular_expression_is_java(tmp_path):
    properties = {"Attributes Regular Expression": r"\p{Upper}\p{Lower}+|\Qa.b\E"}
    with ProcessorTestRunner("AttributesToJSON", tmp_path, properties) as runner:
        runner.enqueue(b"", Color="blue", Éclat="x", **{"a.b": "1", "axb": "2"})
        runner.run()
        (out,) = runner.output("success")
        assert json.loads(out.attributes["JSONAttributes"]) == {"Color": "blue", "a.b": "1"}


def test_content_destination_pretty_prints_like_jackson_and_sets_the_mime_type(tmp_path):
    properties = {"Destination": "flowfile-content", "Attributes List": "a,b", "Pretty Print": "true",
                  "JSON Handling Strategy": "NESTED"}
    with ProcessorTestRunner("AttributesToJSON", tmp_path, properties) as runner:
        runner.enqueue(b"old content", a='{"x": [1, 2], "y": {}}', b=" [] ")
        runner.run()
        (out,) = runner.output("success")
        assert out.attributes["mime.type"] == "application/json"
        assert "JSONAttributes" not in out.attributes
        assert runner.content(out).decode() == '{\n  "a" : {\n    "x" : [ 1, 2 ],\n    "y" : { }\n  },\n  "b" : [ ]\n}'
        assert runner.events()[-1].event_type.value == "CONTENT_MODIFIED"


def test_escaped_strategy_keeps_json_values_as_strings(tmp_path):
    with ProcessorTestRunner("AttributesToJSON", tmp_path, {"Attributes List": "a"}) as runner:
        runner.enqueue(b"", a='{"x":1}')
        runner.run()
        (out,) = runner.output("success")
        assert json.loads(out.attributes["JSONAttributes"]) == {"a": '{"x":1}'}


def test_nested_strategy_sends_broken_json_to_failure_unchanged(tmp_path):
    properties = {"Attributes List": "a", "JSON Handling Strategy": "NESTED"}
    with ProcessorTestRunner("AttributesToJSON", tmp_path, properties) as runner:
        runner.enqueue(b"body", a="{not json}")
        runner.run()
        (out,) = runner.output("failure")
        assert runner.output("success") == []
        assert "JSONAttributes" not in out.attributes and runner.content(out) == b"body"
        assert any("not valid JSON" in bulletin for bulletin in runner.bulletins)


def test_pretty_print_matters_only_for_content_and_nifi_1_regex_name_loads(tmp_path):
    with ProcessorTestRunner("AttributesToJSON", tmp_path, {"attributes-to-json-regex": "c.*",
                                                            "Pretty Print": "true"}) as runner:
        assert runner.validate() == []
        runner.enqueue(b"", color="blue")
        runner.run()
        (out,) = runner.output("success")
        assert out.attributes["JSONAttributes"] == '{"color":"blue"}'


def test_control_characters_are_escaped_as_jackson_escapes_them(tmp_path):
    with ProcessorTestRunner("AttributesToJSON", tmp_path, {"Attributes List": "a"}) as runner:
        runner.enqueue(b"", a="tab\there\x1f/é")
        runner.run()
        (out,) = runner.output("success")
        assert out.attributes["JSONAttributes"] == '{"a":"tab\\there\\u001F/é"}'
