"""AttributesToJSON: writes a FlowFile's attributes as a JSON object, to an attribute or the content."""

from __future__ import annotations

import json
from typing import Any

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.jackson import compact, pretty
from engine.java_regex import java_regex

JSON_ATTRIBUTE = "JSONAttributes"
DESTINATION_ATTRIBUTE = "flowfile-attribute"
DESTINATION_CONTENT = "flowfile-content"
#: NiFi's CoreAttributes, left out when Include Core Attributes is false.
CORE_ATTRIBUTES = frozenset(("filename", "path", "absolute.path", "uuid", "mime.type", "priority",
                             "discard.reason", "alternate.identifier"))

ATTRIBUTES_LIST = PropertyDescriptor(
    "Attributes List", description="Comma-separated names of the attributes to put in the JSON (case-sensitive); "
    "when neither this nor the regular expression is set, every attribute is. A listed attribute the FlowFile "
    "lacks is written as an empty string, or null with Null Value.", validators=[v.NON_EMPTY])
ATTRIBUTES_REGEX = PropertyDescriptor(
    "Attributes Regular Expression", description="Attributes whose whole name matches this regular expression are "
    "put in the JSON too (with the Attributes List, both sets are).", validators=[v.REGEX, v.NON_EMPTY],
    expression_language=ExpressionScope.ENVIRONMENT)
DESTINATION = PropertyDescriptor(
    "Destination", description=f"Whether the JSON goes to a new attribute '{JSON_ATTRIBUTE}' or replaces the "
    "FlowFile's content.", required=True, default=DESTINATION_ATTRIBUTE,
    allowed_values=[DESTINATION_ATTRIBUTE, DESTINATION_CONTENT])
INCLUDE_CORE_ATTRIBUTES = PropertyDescriptor(
    "Include Core Attributes", description="Whether the core attributes every FlowFile has (filename, path, "
    "absolute.path, uuid, mime.type, priority, discard.reason, alternate.identifier) are included when all "
    "attributes are written.", required=True, default="true", allowed_values=["true", "false"])
NULL_VALUE = PropertyDescriptor(
    "Null Value", description="If true, a listed attribute the FlowFile lacks is null in the JSON; if false, an "
    "empty string.", required=True, default="false", allowed_values=["true", "false"])
JSON_HANDLING_STRATEGY = PropertyDescriptor(
    "JSON Handling Strategy", description="How attribute values holding JSON are written.", required=True,
    default="ESCAPED", allowed_values=[
        AllowableValue("ESCAPED", "Escaped", "Values holding JSON are written as strings."),
        AllowableValue("NESTED", "Nested", "Values holding a JSON object or array are written as that object or "
                       "array.")])
PRETTY_PRINT = PropertyDescriptor(
    "Pretty Print", description="Whether the JSON written to the content is indented.", required=True,
    default="false", allowed_values=["true", "false"],
    depends_on=[PropertyDependency("Destination", (DESTINATION_CONTENT,))])

SUCCESS = Relationship("success", "FlowFiles whose attributes were written as JSON")
FAILURE = Relationship("failure", "FlowFiles with an attribute that looks like JSON but is not (Nested only)")


class AttributesToJSON(Processor):
    """Writes the attributes of each FlowFile as a JSON object, either to the attribute
    ``JSONAttributes`` or as the FlowFile's new content (then with ``mime.type`` application/json).

    With the Nested strategy an attribute whose trimmed value starts and ends with braces or brackets
    is parsed and written as that JSON object or array; one that does not parse sends the FlowFile to
    failure. Pretty-printed content is indented the way NiFi's Jackson writer indents it.
    """

    nifi_type = "org.apache.nifi.processors.standard.AttributesToJSON"
    tags = ("json", "attributes", "flowfile")
    properties = (ATTRIBUTES_LIST, ATTRIBUTES_REGEX, DESTINATION, INCLUDE_CORE_ATTRIBUTES, NULL_VALUE,
                  JSON_HANDLING_STRATEGY, PRETTY_PRINT)
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    migrated_properties = {"attributes-to-json-regex": "Attributes Regular Expression"}
    writes_attributes = (
        WrittenAttribute(JSON_ATTRIBUTE, "The JSON object of the attributes (Destination flowfile-attribute)"),
        WrittenAttribute("mime.type", "application/json (Destination flowfile-content)"),
    )

    def on_scheduled(self, context):
        listed = context.property(ATTRIBUTES_LIST).value
        names = [name.strip() for name in listed.split(",")] if listed and listed.strip() else None
        self._listed = list(dict.fromkeys(names)) if names is not None else None
        regex = context.property(ATTRIBUTES_REGEX)
        self._regex = java_regex(regex.evaluate().value) if regex.is_set() else None
        self._excluded = frozenset() if context.property(INCLUDE_CORE_ATTRIBUTES).as_bool() else CORE_ATTRIBUTES
        self._null_for_missing = context.property(NULL_VALUE).as_bool()
        self._to_content = context.property(DESTINATION).value == DESTINATION_CONTENT
        self._pretty = self._to_content and context.property(PRETTY_PRINT).as_bool()
        self._nested = context.property(JSON_HANDLING_STRATEGY).value == "NESTED"

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return
        selected = self._select(flowfile.attributes)
        try:
            document = self._nest(selected) if self._nested else selected
        except ValueError as error:
            context.logger.error("%s has an attribute that is not valid JSON: %s; routing to failure", flowfile.uuid,
                                 error)
            session.transfer(flowfile, FAILURE)
            return
        if self._to_content:
            text = pretty(document) if self._pretty else compact(document)
            flowfile = session.write_bytes(flowfile, text.encode())
            flowfile = session.put_attribute(flowfile, "mime.type", "application/json")
        else:
            flowfile = session.put_attribute(flowfile, JSON_ATTRIBUTE, compact(document))
        session.transfer(flowfile, SUCCESS)

    def _select(self, attributes) -> dict[str, str | None]:
        if self._listed is None and self._regex is None:
            return {name: value for name, value in attributes.items() if name not in self._excluded}
        selected: dict[str, str | None] = {}
        for name in self._listed or ():
            value = attributes.get(name)
            selected[name] = value if value is not None or self._null_for_missing else ""
        if self._regex is not None:
            selected.update((name, value) for name, value in attributes.items() if self._regex.fullmatch(name))
        return selected

    @staticmethod
    def _nest(selected: dict[str, str | None]) -> dict[str, Any]:
        nested: dict[str, Any] = {}
        for name, value in selected.items():
            trimmed = value.strip() if value is not None else ""
            if trimmed[:1] + trimmed[-1:] in ("{}", "[]"):
                nested[name] = json.JSONDecoder().raw_decode(trimmed)[0]
            else:
                nested[name] = value
        return nested
