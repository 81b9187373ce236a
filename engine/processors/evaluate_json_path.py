"""EvaluateJsonPath: evaluates JsonPaths against a FlowFile's JSON content, into attributes or the content."""

from __future__ import annotations

from engine import jsonpath
from engine.components import (
    DynamicProperties,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
)
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

DESTINATION_ATTRIBUTE, DESTINATION_CONTENT = "flowfile-attribute", "flowfile-content"
AUTO, JSON, SCALAR = "auto-detect", "json", "scalar"
IGNORE, WARN, SKIP = "ignore", "warn", "skip"

DESTINATION = PropertyDescriptor(
    "Destination", description="Whether the results go to attributes named after the user-added properties, or "
    "replace the content (then exactly one JsonPath may be given, and its name does not matter).", required=True,
    default=DESTINATION_CONTENT, allowed_values=[DESTINATION_CONTENT, DESTINATION_ATTRIBUTE])
RETURN_TYPE = PropertyDescriptor(
    "Return Type", description="json writes objects and arrays as JSON; scalar accepts only scalars (an object or "
    "array sends the FlowFile to failure); auto-detect is json for the content and scalar for attributes.",
    required=True, default=AUTO, allowed_values=[AUTO, JSON, SCALAR])
PATH_NOT_FOUND = PropertyDescriptor(
    "Path Not Found Behavior", description="With attributes as the destination, what a JsonPath finding nothing "
    "does: ignore (the attribute is set empty), warn (the same, with a warning) or skip (no attribute).",
    required=True, default=IGNORE, allowed_values=[WARN, IGNORE, SKIP],
    depends_on=[PropertyDependency("Destination", (DESTINATION_ATTRIBUTE,))])

MATCHED = Relationship("matched", "FlowFiles whose JsonPaths were evaluated (always, with attributes as the "
                       "destination)")
UNMATCHED = Relationship("unmatched", "FlowFiles whose JsonPath found nothing, with the content as the destination")
FAILURE = Relationship("failure", "FlowFiles whose content is not valid JSON, or whose result is an object or "
                       "array when a scalar is asked for")


class EvaluateJsonPath(Processor):
    """Evaluates JsonPath expressions (Jayway's syntax) against the JSON content of each FlowFile and
    writes the results to attributes, or to the content.

    Each user-added property is an attribute name and a JsonPath. A scalar result is written as text
    (a null as Null Value Representation says), an object or array as compact JSON. A definite path
    (names and indexes only) that finds nothing is "not found"; an indefinite one (wildcards,
    ``..``, filters, slices) gives an array, empty when nothing matched. With the content as the
    destination, a path not found sends the FlowFile to 'unmatched' unchanged, and a result replaces
    the content (a CONTENT_MODIFIED event names the path).
    """

    nifi_type = "org.apache.nifi.processors.standard.EvaluateJsonPath"
    tags = ("JSON", "evaluate", "JsonPath")
    properties = (DESTINATION, RETURN_TYPE, PATH_NOT_FOUND, NULL_VALUE_REPRESENTATION, MAX_STRING_LENGTH)
    relationships = (MATCHED, UNMATCHED, FAILURE)
    dynamic_properties = DynamicProperties(
        "A FlowFile attribute (with Destination flowfile-attribute)", "A JsonPath expression",
        "With Destination flowfile-attribute, the attribute is set to what the JsonPath finds; with "
        "flowfile-content, the content is replaced by it.")
    input_requirement = InputRequirement.REQUIRED
    see_also = ("SplitJson", "AttributesToJSON")

    def validate(self, context):
        paths = context.dynamic_properties
        for name, value in paths.items():
            problem = path_problem(value.value)
            if problem:
                yield f"'{name}' {problem}"
        if context.property(DESTINATION).value == DESTINATION_CONTENT and len(paths) != 1:
            yield f"JsonPaths: Exactly one JsonPath must be set if using destination of {DESTINATION_CONTENT}"

    def on_scheduled(self, context):
        self._to_attributes = context.property(DESTINATION).value == DESTINATION_ATTRIBUTE
        return_type = context.property(RETURN_TYPE).value
        self._scalar_only = return_type == SCALAR or (return_type == AUTO and self._to_attributes)
        self._not_found = context.property(PATH_NOT_FOUND).value if self._to_attributes else IGNORE
        self._null = NULL_REPRESENTATIONS[context.property(NULL_VALUE_REPRESENTATION).value]
        self._max_string = context.property(MAX_STRING_LENGTH).as_data_size()
        self._paths = [(name, jsonpath.compile(value.value)) for name, value in context.dynamic_properties.items()]

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return
        try:
            document = read_json(session.read_bytes(flowfile), self._max_string)
        except InvalidJson as error:
            context.logger.error("FlowFile %s did not have valid JSON content (%s); routing to failure",
                                 flowfile.uuid, error)
            session.transfer(flowfile, FAILURE)
            return
        results: dict[str, str] = {}
        for name, path in self._paths:
            try:
                value = path.read(document)
            except jsonpath.PathNotFoundError:
                if self._not_found == WARN:
                    context.logger.warning("FlowFile %s could not find path %s for attribute key %s.",
                                           flowfile.uuid, path.text, name)
                if not self._to_attributes:
                    session.transfer(flowfile, UNMATCHED)
                    return
                if self._not_found != SKIP:
                    results[name] = ""
                continue
            except jsonpath.JsonPathError as error:
                context.logger.error("JsonPath %s failed on FlowFile %s (%s); routing to failure", path.text,
                                     flowfile.uuid, error)
                session.transfer(flowfile, FAILURE)
                return
            if self._scalar_only and not is_scalar(value):
                context.logger.error("Unable to return a scalar value for the expression %s for FlowFile %s. "
                                     "Evaluated value was %s. Transferring to failure.", path.text, flowfile.uuid,
                                     compact(value))
                session.transfer(flowfile, FAILURE)
                return
            text = scalar_text(value, self._null) if is_scalar(value) else compact(value)
            if self._to_attributes:
                results[name] = text
            else:
                flowfile = session.write_bytes(flowfile, text.encode())
                session.provenance.modify_content(
                    flowfile, details=f"Replaced content with result of expression {path.text}")
        if results:
            flowfile = session.put_all_attributes(flowfile, results)
        session.transfer(flowfile, MATCHED)
