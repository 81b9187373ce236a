"""ExtractText: copies what regular expressions capture in the content into FlowFile attributes."""

from __future__ import annotations

import codecs
import re
import unicodedata

import regex

from engine.components import (
    DynamicProperties,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
)
from engine.components import validators as v
import engine.java_regex as java_regex_flags
from engine.java_regex import java_regex
from engine.units import parse_data_size

_BOOLEAN = ["true", "false"]
_INT_MAX = 2**31 - 1
_MAX_GROUPS = 40


def _buffer_size(value, context):
    """At most 2 GB, like NiFi's buffer (a Java array)."""
    try:
        size = parse_data_size(value)
    except ValueError:
        return None  # DATA_SIZE reports it
    return None if size <= _INT_MAX else f"{value!r} is larger than the maximum of 2 GB"


def _flag(name: str, description: str) -> PropertyDescriptor:
    return PropertyDescriptor(name, description=description, required=True, default="false",
                              allowed_values=_BOOLEAN)


CHARACTER_SET = PropertyDescriptor(
    "Character Set", description="The character set the content is encoded in.", required=True, default="UTF-8",
    validators=[v.CHARACTER_SET])
MAX_BUFFER_SIZE = PropertyDescriptor(
    "Maximum Buffer Size", description="How much of the content, from its start, the regular expressions are "
    "applied to; the rest of a larger FlowFile is not looked at.", required=True, default="1 MB",
    validators=[v.DATA_SIZE, _buffer_size])
MAX_CAPTURE_GROUP_LENGTH = PropertyDescriptor(
    "Maximum Capture Group Length", description="The most characters an attribute value can have; longer "
    "captures are truncated.", default="1024", validators=[v.POSITIVE_INTEGER])
CANON_EQ = _flag(
    "Enable Canonical Equivalence", "Characters match when their canonical decompositions match ('a' followed by "
    "a combining ring matches 'å'). Done by normalizing the content and the expression to NFC before matching, "
    "so captured values are in NFC form.")
CASE_INSENSITIVE = _flag(
    "Enable Case-insensitive Matching", "Letters match whatever their case; the embedded flag (?i) does the same. "
    "Only ASCII letters, unless Unicode-aware case folding or Unicode character classes are enabled.")
COMMENTS = _flag(
    "Permit Whitespace and Comments in Pattern", "Whitespace in the expression is ignored and '#' starts a comment "
    "up to the end of the line; the embedded flag (?x) does the same.")
DOTALL = _flag(
    "Enable DOTALL Mode", "'.' also matches line endings; the embedded flag (?s) does the same.")
LITERAL = _flag(
    "Enable Literal Parsing of the Pattern", "The expression is plain text: its metacharacters and escapes have no "
    "special meaning.")
MULTILINE = _flag(
    "Enable Multiline Mode", "'^' and '$' also match just after and just before each line ending; the embedded "
    "flag (?m) does the same.")
UNICODE_CASE = _flag(
    "Enable Unicode-aware Case Folding", "With case-insensitive matching, letters of every script match whatever "
    "their case, not only ASCII ones; the embedded flag (?u) does the same.")
UNICODE_CHARACTER_CLASS = _flag(
    "Enable Unicode Predefined Character Classes", "\\w, \\d, \\s and \\b follow Unicode (letters, digits and "
    "spaces of every script) instead of ASCII; case folding is then Unicode-aware too.")
UNIX_LINES = _flag(
    "Enable Unix Lines Mode", "Only '\\n' ends a line for '.', '^' and '$' (otherwise '\\r', '\\r\\n', U+0085, "
    "U+2028 and U+2029 do too); the embedded flag (?d) does the same.")
INCLUDE_GROUP_ZERO = PropertyDescriptor(
    "Include Capture Group 0", description="Whether the whole match (capture group 0) becomes an attribute too "
    "(it can be long).", required=True, default="true", allowed_values=_BOOLEAN)
REPEATING_GROUPS = PropertyDescriptor(
    "Enable repeating capture group", description="Whether every match of an expression is extracted; otherwise "
    "only the first one is.", required=True, default="false", allowed_values=_BOOLEAN)
NAMED_GROUPS = PropertyDescriptor(
    "Enable named group support", description="Whether attributes are named after the groups' names instead of "
    "their numbers; every capturing group must then have a name.", default="false", allowed_values=_BOOLEAN)

MATCHED = Relationship("matched", "FlowFiles for which at least one expression matched (and attributes were set)")
UNMATCHED = Relationship("unmatched", "FlowFiles for which no expression matched (their attributes are unchanged)")

_BATCH = 100


def compile_flags(properties) -> tuple[int, bool, bool]:
    """The java_regex flags for the flag properties, whether the pattern is literal, and whether
    canonical equivalence (NFC normalization) is on. ``properties`` maps property names to values."""

    def on(descriptor: PropertyDescriptor) -> bool:
        return (properties.get(descriptor.name) or descriptor.default or "").strip().lower() == "true"

    flags = 0
    if on(CASE_INSENSITIVE):
        flags |= re.IGNORECASE
    if on(COMMENTS):
        flags |= re.VERBOSE
    if on(DOTALL):
        flags |= re.DOTALL
    if on(MULTILINE):
        flags |= re.MULTILINE
    if on(UNICODE_CASE):
        flags |= java_regex_flags.UNICODE_CASE
    if on(UNICODE_CHARACTER_CLASS):
        flags |= java_regex_flags.UNICODE_CHARACTER_CLASS | java_regex_flags.UNICODE_CASE
    if on(UNIX_LINES):
        flags |= java_regex_flags.UNIX_LINES
    return flags, on(LITERAL), on(CANON_EQ)


def compile_pattern(pattern: str, flags: int, literal: bool, canonical: bool) -> re.Pattern[str] | regex.Pattern[str]:
    """Compile a user's (Java-syntax) expression with the flags of ``compile_flags``."""
    if canonical:
        pattern = unicodedata.normalize("NFC", pattern)
    if literal:
        unicode_case = flags & java_regex_flags.UNICODE_CASE
        return re.compile(re.escape(pattern), (flags & re.IGNORECASE) | (0 if unicode_case else re.ASCII))
    return java_regex(pattern, flags)


class ExtractText(Processor):
    """Evaluates regular expressions (user-added properties: attribute name → expression) against
    the content and puts what they capture into attributes.

    For a property ``name``: without named groups, the first capture group's value goes into
    ``name``, and capture group N into ``name.N`` (group 0, the whole match, only with Include
    Capture Group 0). With repeating capture groups, later matches continue the numbering:
    with two groups, the second match's groups become ``name.3`` and ``name.4``. With named
    groups, group ``g`` goes into ``name.g`` (``name.g.1``, ``name.g.2`` ... for later matches)
    and the whole first match into ``name``. Empty and unmatched groups set nothing. A FlowFile
    goes to 'matched' when some attribute was set (ATTRIBUTES_MODIFIED provenance), to
    'unmatched' otherwise.

    Only the first Maximum Buffer Size bytes of the content are looked at. Expressions are Java's,
    with Java's meaning (engine/java_regex.py), inline flags included.
    """

    nifi_type = "org.apache.nifi.processors.standard.ExtractText"
    tags = ("evaluate", "extract", "Text", "Regular Expression", "regex")
    properties = (CHARACTER_SET, MAX_BUFFER_SIZE, MAX_CAPTURE_GROUP_LENGTH, CANON_EQ, CASE_INSENSITIVE, COMMENTS,
                  DOTALL, LITERAL, MULTILINE, UNICODE_CASE, UNICODE_CHARACTER_CLASS, UNIX_LINES, INCLUDE_GROUP_ZERO,
                  REPEATING_GROUPS, NAMED_GROUPS)
    relationships = (MATCHED, UNMATCHED)
    dynamic_properties = DynamicProperties(
        "A FlowFile attribute", "A Regular Expression with one or more capturing group",
        "What the expression captures goes into this attribute (the first group) and into attributes named after "
        "it with each group's number (or name) appended.")
    input_requirement = InputRequirement.REQUIRED
    migrated_properties = {
        "extract-text-enable-named-groups": "Enable named group support",
        "extract-text-enable-repeating-capture-group": "Enable repeating capture group",
    }

    def validate(self, context):
        values = {name: value.value for name, value in context.properties.items()}
        flags, literal, canonical = compile_flags(values)
        group_zero = context.property(INCLUDE_GROUP_ZERO).as_bool()
        named = context.property(NAMED_GROUPS).as_bool()
        for name, value in context.dynamic_properties.items():
            try:
                pattern = compile_pattern(value.value or "", flags, literal, canonical)
            except (ValueError, re.error) as error:
                yield f"'{name}' {error}"
                continue
            if pattern.groups > _MAX_GROUPS:
                yield f"'{name}' has {pattern.groups} capturing groups, more than the {_MAX_GROUPS} allowed"
            elif not group_zero and pattern.groups < 1:
                yield f"'{name}' needs at least one capturing group when Include Capture Group 0 is false"
            if named and len(pattern.groupindex) != pattern.groups:
                yield f"'{name}' must name all of its capturing groups when named group support is enabled"

    def on_scheduled(self, context):
        values = {name: value.value for name, value in context.properties.items()}
        flags, literal, self._canonical = compile_flags(values)
        self._patterns = {name: compile_pattern(value.value or "", flags, literal, self._canonical)
                          for name, value in context.dynamic_properties.items()}
        self._charset = codecs.lookup(context.property(CHARACTER_SET).value.strip()).name
        self._buffer_size = context.property(MAX_BUFFER_SIZE).as_data_size()
        self._max_length = context.property(MAX_CAPTURE_GROUP_LENGTH).as_int()
        self._first_group = 0 if context.property(INCLUDE_GROUP_ZERO).as_bool() else 1
        self._repeating = context.property(REPEATING_GROUPS).as_bool()
        self._named = context.property(NAMED_GROUPS).as_bool()

    def on_trigger(self, context, session):
        for flowfile in session.get_batch(_BATCH):
            with session.read(flowfile) as stream:
                data = stream.read(self._buffer_size)
            text = data.decode(self._charset, errors="replace")
            if self._canonical:
                text = unicodedata.normalize("NFC", text)
            results: dict[str, str] = {}
            for name, pattern in self._patterns.items():
                if self._named and len(pattern.groupindex) == pattern.groups:
                    self._extract_named(name, pattern, text, results)
                else:
                    self._extract_numbered(name, pattern, text, results)
            if results:
                session.transfer(session.put_all_attributes(flowfile, results), MATCHED)
            else:
                session.transfer(flowfile, UNMATCHED)

    def _matches(self, pattern: re.Pattern[str], text: str):
        matches = pattern.finditer(text)
        if self._repeating:
            return matches
        first = next(matches, None)
        return () if first is None else (first,)

    def _extract_numbered(self, name: str, pattern: re.Pattern[str], text: str, results: dict[str, str]) -> None:
        offset = 0  # later matches continue the numbering after the groups of the earlier ones
        for match in self._matches(pattern, text):
            for group in range(self._first_group if offset == 0 else 1, pattern.groups + 1):
                value = match.group(group)
                if value:
                    value = value[:self._max_length]
                    results[f"{name}.{group + offset}"] = value
                    if group == 1 and offset == 0:
                        results[name] = value
            offset += pattern.groups

    def _extract_named(self, name: str, pattern: re.Pattern[str], text: str, results: dict[str, str]) -> None:
        for index, match in enumerate(self._matches(pattern, text)):
            suffix = f".{index}" if index else ""
            for group in pattern.groupindex:
                value = match.group(group)
                if value:
                    results[f"{name}.{group}{suffix}"] = value[:self._max_length]
            if self._first_group == 0 and index == 0:
                results[name] = match.group(0)[:self._max_length]
