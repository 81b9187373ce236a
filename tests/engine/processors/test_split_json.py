"""SplitJson: one FlowFile per array element, fragment attributes, and what goes to failure."""

from __future__ import annotations

from engine.testing import ProcessorTestRunner


def split(tmp_path, path, content, **properties):
    runner = ProcessorTestRunner("SplitJson", tmp_path, {"JsonPath Expression": path, **properties})
    runner.enqueue(content, filename="people.json", source="crm")
    runner.run()
    return runner


def test_each_element_becomes_a_flowfile_with_fragment_attributes(tmp_path):
    content = b'{"people": [{"name": "ada", "langs": ["en"]}, "plain", 2.5, null, true]}'
    with split(tmp_path, "$.people", content) as runner:
        splits = runner.output("split")
        assert [runner.content(s) for s in splits] == [b'{"name":"ada","langs":["en"]}', b"plain", b"2.5", b"",
                                                      b"true"]
        (original,) = runner.output("original")
        assert runner.content(original) == content
        fragment = original.attributes["fragment.identifier"]
        assert original.attributes["fragment.count"] == "5"
        for index, piece in enumerate(splits):
            assert piece.attributes["fragment.identifier"] == fragment
            assert piece.attributes["fragment.index"] == str(index)
            assert piece.attributes["fragment.count"] == "5"
            assert piece.attributes["segment.original.filename"] == "people.json"
            assert piece.attributes["source"] == "crm", "the splits inherit the original's attributes"
        assert {e.event_type.value for e in runner.events()} >= {"FORK"}


def test_null_value_representation_applies_to_null_elements(tmp_path):
    with split(tmp_path, "$[*]", b"[null, 1]", **{"Null Value Representation": "the string 'null'"}) as runner:
        assert [runner.content(s) for s in runner.output("split")] == [b"null", b"1"]


def test_failures_make_no_split(tmp_path):
    cases = [("$.missing", b'{"a": [1]}', "could not be found"),
             ("$.a", b'{"a": {"b": 1}}', "was not a JSON Array compatible type"),
             ("$.a", b"not json", "did not have valid JSON content")]
    for number, (path, content, message) in enumerate(cases):
        with split(tmp_path / str(number), path, content) as runner:
            (failed,) = runner.output("failure")
            assert runner.content(failed) == content
            assert runner.output("split") == [] and runner.output("original") == []
            assert "fragment.identifier" not in failed.attributes
            assert any(message in m for m in runner.bulletins), runner.bulletins


def test_an_invalid_path_is_reported(tmp_path):
    with ProcessorTestRunner("SplitJson", tmp_path, {"JsonPath Expression": "$.[[["}) as runner:
        assert runner.validate() == ["'JsonPath Expression' specified expression was not valid: $.[[["]
