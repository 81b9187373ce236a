"""RouteText: routes each line of text content by user-added conditions."""

from __future__ import annotations

import codecs
import re
import shutil
import tempfile
from typing import BinaryIO

from engine.components import (
    AllowableValue,
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v
from engine.expression import ExpressionError, compile_expression
from engine.expression.parser import parse
from engine.expression.types import Type
from engine.java_regex import java_regex
from engine.processors._text import iter_lines, without_line_ending

PROPERTY_NAME = "Route to each matching Property Name"
ALL_MATCH = "Route to 'matched' if line matches all conditions"
ANY_MATCHES = "Route to 'matched' if lines matches any condition"

STARTS_WITH = "Starts With"
ENDS_WITH = "Ends With"
CONTAINS = "Contains"
EQUALS = "Equals"
MATCHES_REGEX = "Matches Regular Expression"
CONTAINS_REGEX = "Contains Regular Expression"
SATISFIES_EXPRESSION = "Satisfies Expression"
_REGEX_STRATEGIES = (MATCHES_REGEX, CONTAINS_REGEX)

ROUTING_STRATEGY = PropertyDescriptor(
    "Routing Strategy", description="Where lines go once compared with the user-added properties.", required=True,
    default=PROPERTY_NAME, allowed_values=[
        AllowableValue(PROPERTY_NAME, description="Each line goes to the relationship of every property it "
                       "matches (to several FlowFiles when it matches several properties)."),
        AllowableValue(ALL_MATCH, description="A line goes to 'matched' when it matches every property."),
        AllowableValue(ANY_MATCHES, description="A line goes to 'matched' when it matches at least one property."),
    ])
MATCHING_STRATEGY = PropertyDescriptor(
    "Matching Strategy", description="How each line is compared with the value of each user-added property.",
    required=True, allowed_values=[
        AllowableValue(SATISFIES_EXPRESSION, description="The value is a boolean expression; besides the "
                       "FlowFile's attributes it sees 'line' (the line as read, its line ending included) and "
                       "'lineNo' (1 for the first line)."),
        AllowableValue(STARTS_WITH, description="The line starts with the value."),
        AllowableValue(ENDS_WITH, description="The line ends with the value."),
        AllowableValue(CONTAINS, description="The line contains the value."),
        AllowableValue(EQUALS, description="The line equals the value."),
        AllowableValue(MATCHES_REGEX, description="The whole line matches the regular expression."),
        AllowableValue(CONTAINS_REGEX, description="Some part of the line matches the regular expression."),
    ])
CHARACTER_SET = PropertyDescriptor(
    "Character Set", description="The character set the text is encoded in.", required=True, default="UTF-8",
    validators=[v.CHARACTER_SET])
TRIM_WHITESPACE = PropertyDescriptor(
    "Ignore Leading/Trailing Whitespace", description="Whether whitespace (and control characters) at the start "
    "and end of each line is ignored when the line is compared.", required=True, default="true",
    validators=[v.BOOLEAN])
IGNORE_CASE = PropertyDescriptor(
    "Ignore Case", description="Whether comparisons ignore case ('HELLO' matches 'hello'). Not used by "
    "'Satisfies Expression'.", required=True, default="false", allowed_values=["true", "false"])
GROUPING_REGEX = PropertyDescriptor(
    "Grouping Regular Expression", description="A regular expression with at least one capturing group, matched "
    "against the whole of each line: lines with the same captured values (all groups, joined) go to the same "
    "FlowFile, lines that do not match it to a FlowFile of their own group. To group a CSV file by its first "
    "column: '(.*?),.*'. Lines routed to different relationships never share a FlowFile.")

ORIGINAL = Relationship("original", "The incoming FlowFile, once its lines have been routed")
UNMATCHED = Relationship("unmatched", "Lines that satisfy no condition (or not all of them, with the 'all' strategy)")
MATCHED = Relationship("matched", "Lines that satisfy the conditions (with the 'matched' strategies)")

ROUTE_ATTRIBUTE = "RouteText.Route"
GROUP_ATTRIBUTE = "RouteText.Group"

_BATCH = 50
_SPOOL_IN_MEMORY = 1 << 18
_STATIC = frozenset(p.name for p in (ROUTING_STRATEGY, MATCHING_STRATEGY, CHARACTER_SET, TRIM_WHITESPACE,
                                     IGNORE_CASE, GROUPING_REGEX))
#: Java's String.trim() removes every character up to U+0020.
_JAVA_WHITESPACE = "".join(chr(code) for code in range(0x21))


def _literal_text(value: str) -> str | None:
    """The value of a property without expressions (None when it holds some, or a malformed one,
    which the framework reports)."""
    try:
        compiled = compile_expression(value)
    except ExpressionError:
        return None
    return compiled.evaluate({}) if compiled.is_literal else None


def _returns_boolean(value: str) -> bool:
    parts = parse(value).parts
    return len(parts) == 1 and not isinstance(parts[0], str) and parts[0].type in (Type.BOOLEAN, Type.ANY)


class RouteText(Processor):
    """Routes the lines of text content: each line is compared with the user-added properties
    (by the Matching Strategy) and copied to a new FlowFile for the relationship it belongs to.

    Lines going to the same relationship (and, with a Grouping Regular Expression, having the
    same group) are copied together, in their order, into one new FlowFile per relationship and
    group; each gets the attributes ``RouteText.Route`` (its relationship) and ``RouteText.Group``
    (the captured group values joined by ", ", empty without grouping). The incoming FlowFile goes
    unchanged to 'original'. Lines keep their line endings; lines end at ``\\n``, ``\\r\\n`` or a
    lone ``\\r``. Lines are not written at all for relationships that are auto-terminated.

    Provenance: the new FlowFiles are children of the incoming one (FORK) and each gets a ROUTE
    event, as does the original.

    Regular expressions are Java's (engine/java_regex.py): with Ignore Case they ignore the case of
    US-ASCII letters only, as Java's CASE_INSENSITIVE does (``(?u)`` in the expression folds all
    Unicode letters). Without 'Ignore Leading/Trailing Whitespace', a line is compared without its line
    ending; the expression variable ``line`` holds the line as read, line ending included, as in
    NiFi. Content is read in chunks and the lines of each new FlowFile are spooled to disk past a
    few hundred kilobytes, so large inputs do not need to fit in memory.
    """

    nifi_type = "org.apache.nifi.processors.standard.RouteText"
    tags = ("attributes", "routing", "text", "regexp", "regex", "Regular Expression", "Expression Language",
            "csv", "filter", "logs", "delimited", "find", "string", "search", "detect")
    properties = (ROUTING_STRATEGY, MATCHING_STRATEGY, CHARACTER_SET, TRIM_WHITESPACE, IGNORE_CASE, GROUPING_REGEX)
    relationships = (ORIGINAL, UNMATCHED)
    dynamic_relationships = True
    dynamic_properties = DynamicProperties(
        "Relationship Name", "value to match against",
        "Lines that match this value (by the Matching Strategy) go to the relationship of this name, or count "
        "as one of the conditions of the 'matched' strategies.", ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (
        WrittenAttribute(ROUTE_ATTRIBUTE, "The relationship the FlowFile was routed to"),
        WrittenAttribute(GROUP_ATTRIBUTE, "The values captured by the Grouping Regular Expression, joined by ', '"),
    )

    @classmethod
    def relationships_for(cls, properties):
        if (properties.get(ROUTING_STRATEGY.name) or PROPERTY_NAME) == PROPERTY_NAME:
            names = [name for name, value in properties.items() if name not in _STATIC and value is not None]
            return [ORIGINAL, UNMATCHED] + [Relationship(name, "Lines that match this property") for name in names]
        return [ORIGINAL, UNMATCHED, MATCHED]

    def validate(self, context):
        conditions = context.dynamic_properties
        if not conditions:
            yield "at least one user-added property (a condition to match lines against) is needed"
        strategy = context.property(MATCHING_STRATEGY).value
        for name, condition in conditions.items():
            value = condition.value or ""
            if not value.strip():
                yield f"'{name}' must not be empty"
            elif strategy in _REGEX_STRATEGIES:
                literal = _literal_text(value)
                if literal is not None:
                    try:
                        java_regex(literal)
                    except ValueError as error:
                        yield f"'{name}' {error}"
            elif strategy == SATISFIES_EXPRESSION:
                try:
                    boolean = _returns_boolean(value)
                except ExpressionError as error:
                    yield f"'{name}' is not a valid expression: {error}"
                    continue
                if not boolean:
                    yield f"'{name}' must be an expression that returns a boolean, like ${{line:startsWith('#')}}"
        grouping = context.property(GROUPING_REGEX).value
        if grouping is not None:
            try:
                if java_regex(grouping).groups < 1:
                    yield f"'{GROUPING_REGEX.name}' needs at least one capturing group"
            except ValueError as error:
                yield f"'{GROUPING_REGEX.name}' {error}"

    def on_scheduled(self, context):
        self._routing = context.property(ROUTING_STRATEGY).value
        self._matching = context.property(MATCHING_STRATEGY).value
        self._charset = codecs.lookup(context.property(CHARACTER_SET).value.strip()).name
        self._trim = context.property(TRIM_WHITESPACE).as_bool()
        self._ignore_case = context.property(IGNORE_CASE).as_bool()
        grouping = context.property(GROUPING_REGEX).value
        self._grouping = java_regex(grouping) if grouping is not None else None
        self._conditions = context.dynamic_properties
        targets = [MATCHED.name, UNMATCHED.name] + list(self._conditions)
        self._wanted = {name for name in targets if context.has_connection(name)}

    def on_trigger(self, context, session):
        for flowfile in session.get_batch(_BATCH):
            self._route(session, flowfile)

    def _comparisons(self, flowfile) -> dict[str, object]:
        """What each line is compared with, for this FlowFile: text, a pattern or the expression."""
        if self._matching == SATISFIES_EXPRESSION:
            return dict(self._conditions)
        comparisons: dict[str, object] = {}
        for name, condition in self._conditions.items():
            try:
                value = condition.evaluate(flowfile).value or ""
                if self._matching in _REGEX_STRATEGIES:
                    comparisons[name] = java_regex(value, re.IGNORECASE if self._ignore_case else 0)
                else:
                    comparisons[name] = value.lower() if self._ignore_case else value
            except (ExpressionError, ValueError) as error:
                raise ProcessException(f"condition {name!r} failed for FlowFile {flowfile.uuid}: {error}") from error
        return comparisons

    def _matches(self, text: str, comparison, flowfile, variables: dict[str, str]) -> bool:
        strategy = self._matching
        if strategy == SATISFIES_EXPRESSION:
            result = comparison.evaluate(flowfile, variables).value
            return result is not None and result.strip().lower() == "true"
        if strategy == MATCHES_REGEX:
            return comparison.fullmatch(text) is not None
        if strategy == CONTAINS_REGEX:
            return comparison.search(text) is not None
        if self._ignore_case:
            text = text.lower()
        if strategy == STARTS_WITH:
            return text.startswith(comparison)
        if strategy == ENDS_WITH:
            return text.endswith(comparison)
        if strategy == CONTAINS:
            return comparison in text
        return text == comparison

    def _group(self, text: str) -> tuple[str, ...]:
        if self._grouping is None:
            return ()
        match = self._grouping.fullmatch(text)
        return tuple(value or "" for value in match.groups()) if match else ()

    def _route(self, session, flowfile) -> None:
        comparisons = self._comparisons(flowfile)
        by_name = self._routing == PROPERTY_NAME
        outputs: dict[tuple[str, tuple[str, ...]], _Output] = {}

        def append(relationship: str, text: str, line: str) -> None:
            if relationship not in self._wanted:
                return
            key = (relationship, self._group(text))
            output = outputs.get(key)
            if output is None:
                output = outputs[key] = _Output(self._charset)
            output.write(line)

        try:
            with session.read(flowfile) as stream:
                for number, line in enumerate(iter_lines(stream, self._charset), 1):
                    text = line.strip(_JAVA_WHITESPACE) if self._trim else without_line_ending(line)
                    variables = {"line": line, "lineNo": str(number)}
                    matched = 0
                    for name, comparison in comparisons.items():
                        if self._matches(text, comparison, flowfile, variables):
                            matched += 1
                            if by_name:
                                append(name, text, line)
                            elif self._routing == ANY_MATCHES:
                                break
                        elif self._routing == ALL_MATCH:
                            break
                    if by_name:
                        if not matched:
                            append(UNMATCHED.name, text, line)
                    elif matched and (self._routing == ANY_MATCHES or matched == len(comparisons)):
                        append(MATCHED.name, text, line)
                    else:
                        append(UNMATCHED.name, text, line)
            for (relationship, group), output in outputs.items():
                child = session.create(flowfile)
                child = session.write(child, output.copy_to)
                child = session.put_all_attributes(child, {ROUTE_ATTRIBUTE: relationship,
                                                           GROUP_ATTRIBUTE: ", ".join(group)})
                session.provenance.route(child, relationship)
                session.transfer(child, relationship)
        except ExpressionError as error:
            raise ProcessException(f"a condition failed for FlowFile {flowfile.uuid}: {error}") from error
        finally:
            for output in outputs.values():
                output.close()
        flowfile = session.put_attribute(flowfile, ROUTE_ATTRIBUTE, ORIGINAL.name)
        session.provenance.route(flowfile, ORIGINAL.name)
        session.transfer(flowfile, ORIGINAL)


class _Output:
    """The lines bound for one new FlowFile, encoded and spooled (to disk once they grow)."""

    def __init__(self, charset: str) -> None:
        self._encoder = codecs.getincrementalencoder(charset)()
        self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY)

    def write(self, line: str) -> None:
        self._spool.write(self._encoder.encode(line))

    def copy_to(self, out: BinaryIO) -> None:
        self._spool.write(self._encoder.encode("", final=True))
        self._spool.seek(0)
        shutil.copyfileobj(self._spool, out)

    def close(self) -> None:
        self._spool.close()
