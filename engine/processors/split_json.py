"""SplitJson: splits the array a JsonPath finds in a FlowFile's JSON content into one FlowFile per element."""

from __future__ import annotations

import uuid

from engine import jsonpath
from engine.components import InputRequirement, Processor, PropertyDescriptor, Relationship, WrittenAttribute
from engine.components import validators as v
from engine.jackson import compact, scalar_text
from engine.processors._json_path import (
    MAX_STRING_LENGTH,
    NULL_REPRESENTATIONS,
    NULL_VALUE_REPRESENTATION,
    InvalidJson,
    is_scalar,
    path_problem,
    read_json,
)

JSON_PATH = PropertyDescriptor(
    "JsonPath Expression", description="A JsonPath finding the array to split into its elements.", required=True,
    validators=[v.NON_EMPTY])

ORIGINAL = Relationship("original", "The FlowFile that was split (nothing goes here when it fails)")
SPLIT = Relationship("split", "One FlowFile per element of the array")
FAILURE = Relationship("failure", "FlowFiles whose content is not valid JSON, or where the JsonPath finds nothing "
                       "or something other than an array")


class SplitJson(Processor):
    """Splits a JSON document into one FlowFile per element of the array a JsonPath (Jayway's syntax)
    finds in it; the original goes to 'original', each element to 'split'.

    An object or array element is written as compact JSON, a scalar as text (a null as Null Value
    Representation says). The splits carry ``fragment.identifier`` (shared), ``fragment.index`` (from 0),
    ``fragment.count`` and ``segment.original.filename``; the original gets ``fragment.identifier`` and
    ``fragment.count`` too. Content that is not JSON, a path found nowhere, or a result that is not
    an array sends the FlowFile to 'failure' and makes no split. The whole document is held in memory.
    """

    nifi_type = "org.apache.nifi.processors.standard.SplitJson"
    tags = ("json", "split", "jsonpath")
    properties = (JSON_PATH, NULL_VALUE_REPRESENTATION, MAX_STRING_LENGTH)
    relationships = (ORIGINAL, SPLIT, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute("fragment.identifier", "A random UUID shared by the splits of one FlowFile (and by it)"),
        WrittenAttribute("fragment.index", "The position of the split among its siblings, from 0"),
        WrittenAttribute("fragment.count", "The number of splits made of the FlowFile"),
        WrittenAttribute("segment.original.filename", "The filename of the FlowFile that was split"),
    )
    see_also = ("EvaluateJsonPath", "SplitText", "SplitRecord")

    def validate(self, context):
        problem = path_problem(context.property(JSON_PATH).value)
        if problem:
            yield f"'JsonPath Expression' {problem}"

    def on_scheduled(self, context):
        self._path = jsonpath.compile(context.property(JSON_PATH).value)
        self._null = NULL_REPRESENTATIONS[context.property(NULL_VALUE_REPRESENTATION).value]
        self._max_string = context.property(MAX_STRING_LENGTH).as_data_size()

    def on_trigger(self, context, session):
        original = session.get()
        if original is None:
            return
        try:
            document = read_json(session.read_bytes(original), self._max_string)
            elements = self._path.read(document)
        except InvalidJson as error:
            context.logger.error("FlowFile %s did not have valid JSON content (%s); routing to failure",
                                 original.uuid, error)
            session.transfer(original, FAILURE)
            return
        except jsonpath.JsonPathError as error:
            context.logger.warning("JsonPath %s could not be found for FlowFile %s (%s); routing to failure",
                                   self._path.text, original.uuid, error)
            session.transfer(original, FAILURE)
            return
        if not isinstance(elements, list):
            context.logger.error("The evaluated value %s of %s was not a JSON Array compatible type and cannot be "
                                 "split; routing FlowFile %s to failure", _text(elements, self._null),
                                 self._path.text, original.uuid)
            session.transfer(original, FAILURE)
            return
        fragment = str(uuid.uuid4())
        count = str(len(elements))
        filename = original.attributes.get("filename", "")
        splits = [session.create(original) for _ in elements]
        splits = [session.put_all_attributes(split, {
            "fragment.identifier": fragment, "fragment.count": count, "fragment.index": str(index),
            "segment.original.filename": filename}) for index, split in enumerate(splits)]
        splits = session.write_all_bytes([(split, _text(element, self._null).encode())
                                          for split, element in zip(splits, elements)])
        for split in splits:
            session.transfer(split, SPLIT)
        original = session.put_all_attributes(original, {"fragment.identifier": fragment, "fragment.count": count})
        session.transfer(original, ORIGINAL)
        context.logger.info("Split %s into %d FlowFiles", original.uuid, len(elements))


def _text(value, null: str) -> str:
    return scalar_text(value, null) if is_scalar(value) else compact(value)
