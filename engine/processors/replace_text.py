"""ReplaceText: replaces, prepends, appends or substitutes text in the content."""

from __future__ import annotations

import codecs
import os
import re
import shutil
from collections import ChainMap
from collections.abc import Callable, Mapping
from typing import BinaryIO

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
)
from engine.components import validators as v
from engine.expression import ExpressionError, compile_expression
from engine.expression.functions import Scope
from engine.expression.nodes import Template
from engine.expression.parser import parse
from engine.expression.types import render
from engine.java_regex import java_regex, java_replacement
from engine.processors._text import iter_lines, line_ending

PREPEND = "Prepend"
APPEND = "Append"
SURROUND = "Surround"
REGEX_REPLACE = "Regex Replace"
LITERAL_REPLACE = "Literal Replace"
ALWAYS_REPLACE = "Always Replace"
SUBSTITUTE_VARIABLES = "Substitute Variables"

LINE_BY_LINE = "Line-by-Line"
ENTIRE_TEXT = "Entire text"

ALL = "All"
FIRST_LINE = "First-Line"
LAST_LINE = "Last-Line"
EXCEPT_FIRST_LINE = "Except-First-Line"
EXCEPT_LAST_LINE = "Except-Last-Line"

DEFAULT_REGEX = "(?s)(^.*$)"

REPLACEMENT_STRATEGY = PropertyDescriptor(
    "Replacement Strategy", description="What is done to the text.", required=True, default=REGEX_REPLACE,
    allowed_values=[
        AllowableValue(PREPEND, description="The Replacement Value is put before the text (or each line)."),
        AllowableValue(APPEND, description="The Replacement Value is put after the text (or at the end of each "
                       "line, before its line ending)."),
        AllowableValue(SURROUND, description="'Text to Prepend' is put before and 'Text to Append' after the text "
                       "(or each line)."),
        AllowableValue(REGEX_REPLACE, description="Every match of the Search Value (a regular expression) is "
                       "replaced by the Replacement Value, which may refer to capturing groups as $1, $2... (in "
                       "expressions as '$1'). A Search Value of '.*' replaces everything without searching."),
        AllowableValue(LITERAL_REPLACE, description="Every occurrence of the Search Value (plain text) is replaced "
                       "by the Replacement Value."),
        AllowableValue(ALWAYS_REPLACE, description="The text (or each line, keeping its line ending) is replaced by "
                       "the Replacement Value; the Search Value is not used."),
        AllowableValue(SUBSTITUTE_VARIABLES, description="References ${name} in the text are replaced by the value "
                       "of the FlowFile attribute 'name' (${name:-default} gives a default; $${name} stays as "
                       "'${name}'); references to missing attributes are left as they are."),
    ])
SEARCH_VALUE = PropertyDescriptor(
    "Regular Expression", display_name="Search Value", description="What to search for: a regular expression "
    "(Regex Replace; attribute values inserted by expressions are matched literally) or plain text (Literal "
    "Replace).", required=True, default=DEFAULT_REGEX, expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency(REPLACEMENT_STRATEGY.name, (REGEX_REPLACE, LITERAL_REPLACE))])
REPLACEMENT_VALUE = PropertyDescriptor(
    "Replacement Value", description="The text to insert. With Regex Replace, $1, $2... refer to the capturing "
    "groups (references to groups that do not exist are kept as text) and expressions see the groups as the "
    "attributes '$0', '$1'... (quote them: ${'$1':toUpper()}).", required=True, default="$1",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency(REPLACEMENT_STRATEGY.name,
                                   (REGEX_REPLACE, LITERAL_REPLACE, ALWAYS_REPLACE, PREPEND, APPEND))])
PREPEND_TEXT = PropertyDescriptor(
    "Text to Prepend", description="The text put before the text, or before each line.", required=True,
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency(REPLACEMENT_STRATEGY.name, (SURROUND,))])
APPEND_TEXT = PropertyDescriptor(
    "Text to Append", description="The text put after the text, or at the end of each line.", required=True,
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency(REPLACEMENT_STRATEGY.name, (SURROUND,))])
CHARACTER_SET = PropertyDescriptor(
    "Character Set", description="The character set the content is encoded in.", required=True, default="UTF-8",
    validators=[v.CHARACTER_SET])
MAX_BUFFER_SIZE = PropertyDescriptor(
    "Maximum Buffer Size", description="The most data held in memory: with 'Entire text', a larger FlowFile goes "
    "to failure (except with Prepend, Append, Surround and Always Replace, which stream); with 'Line-by-Line', a "
    "FlowFile with a longer line (in characters) goes to failure.", required=True, default="1 MB",
    validators=[v.DATA_SIZE])
EVALUATION_MODE = PropertyDescriptor(
    "Evaluation Mode", description="Whether the strategy is applied to each line separately or to the whole "
    "text at once (held in memory).", required=True, default=LINE_BY_LINE, allowed_values=[LINE_BY_LINE, ENTIRE_TEXT])
LINE_MODE = PropertyDescriptor(
    "Line-by-Line Evaluation Mode", description="In 'Line-by-Line' mode, which lines the strategy is applied to; "
    "the others are left as they are.", default=ALL,
    allowed_values=[ALL, FIRST_LINE, LAST_LINE, EXCEPT_FIRST_LINE, EXCEPT_LAST_LINE])

SUCCESS = Relationship("success", "FlowFiles processed, whether or not some text was replaced")
FAILURE = Relationship("failure", "FlowFiles that could not be processed (too large for the buffer, an expression "
                       "or a regular expression that failed)")

_BATCH = 100
_STREAMING = (PREPEND, APPEND, SURROUND, ALWAYS_REPLACE)
_GROUP_REFERENCE = re.compile(r"(?<!\\)\$(\d+)")
_DOLLAR_NOT_DIGIT = re.compile(r"\$\D")
_DOLLAR_DIGIT = re.compile(r"(\$\d)")


class _Failure(Exception):
    """The FlowFile goes to failure, for this reason."""


def _evaluate(template: Template, attributes: Mapping[str, str], decorate: Callable[[str], str]) -> str:
    """Evaluate a parsed property value, passing the result of each embedded expression through
    ``decorate`` (literal text is kept as written)."""
    scope = Scope(attributes, os.environ)
    return "".join(part if isinstance(part, str) else decorate(render(part.evaluate(scope)))
                   for part in template.parts)


def _literal_group_references(replacement: str, groups: int) -> str:
    """Escape ``$N`` references to groups the expression does not have, so they stay text.

    As in Java, ``$123`` with 12 groups is group 12 followed by '3'.
    """

    def escape(match: re.Match[str]) -> str:
        digits = match.group(1)
        if int(digits[0]) > groups:
            return "\\" + match.group(0)
        return match.group(0)

    return _GROUP_REFERENCE.sub(escape, replacement)


def _java_template(replacement: str, groups: int) -> str:
    """A Python ``re`` template doing what NiFi does with a (evaluated) Replacement Value."""
    if groups:
        replacement = _literal_group_references(replacement, groups)
    if _DOLLAR_NOT_DIGIT.search(replacement):
        # NiFi then takes the whole value literally: no group references, no escapes.
        return replacement.replace("\\", "\\\\")
    if not groups:
        replacement = _literal_group_references(replacement, groups)
    if replacement.endswith("$"):
        replacement = replacement[:-1] + "\\$"
    return java_replacement(replacement, groups)


def substitute_variables(text: str, attributes: Mapping[str, str], _active: tuple[str, ...] = ()) -> str:
    """Replace ``${name}`` references by attribute values (recursively), as NiFi's Substitute
    Variables strategy does: ``${name:-default}`` gives a default for a missing attribute,
    ``$${name}`` is the literal text ``${name}``, unknown references stay as they are. Raises
    ValueError on a reference cycle."""
    out = []
    position = 0
    while True:
        start = text.find("${", position)
        if start < 0:
            out.append(text[position:])
            return "".join(out)
        if start > position and text[start - 1] == "$":
            out.append(text[position:start - 1])
            out.append("${")
            position = start + 2
            continue
        end = text.find("}", start + 2)
        if end < 0:
            out.append(text[position:])
            return "".join(out)
        out.append(text[position:start])
        expression = text[start + 2:end]
        name, delimiter, default = expression.partition(":-")
        value = attributes.get(name)
        if value is None and delimiter:
            value = default
        if value is None:
            out.append(text[start:end + 1])
        else:
            if name in _active:
                raise ValueError(f"the attribute reference ${{{name}}} refers back to itself")
            out.append(substitute_variables(value, attributes, _active + (name,)))
        position = end + 1


class ReplaceText(Processor):
    """Changes the text content of FlowFiles: replaces what a regular expression or a literal text
    matches, replaces everything, prepends, appends, surrounds, or substitutes attribute values
    for ``${name}`` references — in the whole text or line by line.

    In 'Line-by-Line' mode the content is streamed: each line (ending at ``\\n``, ``\\r\\n`` or a
    lone ``\\r``) is handled on its own, line ending included, as in NiFi — so a regular
    expression in (?s) mode or one matching ``\\s`` also sees the line ending. In 'Entire text'
    mode Regex Replace, Literal Replace and Substitute Variables hold the whole text in memory
    and send FlowFiles larger than the Maximum Buffer Size to failure.

    Regular expressions are Java's, with Java's meaning (engine/java_regex.py): ``\\w``, ``\\d``
    and ``\\s`` are ASCII unless ``(?U)``, and ``.``, ``$`` and ``^`` know ``\\r\\n``, ``\\r`` and
    the Unicode line separators as line endings. Replacement values follow NiFi: ``$N`` and ``\\``
    escapes work unless the value holds a ``$`` followed by something other than a digit, in
    which case the whole value is literal text; values inserted by expressions never refer to
    groups.

    A changed content records CONTENT_MODIFIED provenance; a FlowFile whose content stays the
    same (in Entire text mode when nothing was replaced, empty content in Line-by-Line mode) is
    passed on untouched.
    """

    nifi_type = "org.apache.nifi.processors.standard.ReplaceText"
    tags = ("Text", "Regular Expression", "Update", "Change", "Replace", "Modify", "Regex")
    properties = (REPLACEMENT_STRATEGY, SEARCH_VALUE, REPLACEMENT_VALUE, PREPEND_TEXT, APPEND_TEXT, CHARACTER_SET,
                  MAX_BUFFER_SIZE, EVALUATION_MODE, LINE_MODE)
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED

    def validate(self, context):
        strategy = context.property(REPLACEMENT_STRATEGY).value
        search = context.property(SEARCH_VALUE).value
        if strategy == LITERAL_REPLACE and not search:
            yield f"'{SEARCH_VALUE.display_name}' must not be empty with Literal Replace"
        elif strategy == REGEX_REPLACE and search is not None:
            try:
                compiled = compile_expression(search)
            except ExpressionError:
                return  # the framework reports malformed expressions
            if compiled.is_literal:
                try:
                    java_regex(compiled.evaluate({}))
                except ValueError as error:
                    yield f"'{SEARCH_VALUE.display_name}' is not valid: {error}"

    def on_scheduled(self, context):
        strategy = context.property(REPLACEMENT_STRATEGY).value
        self._entire = context.property(EVALUATION_MODE).value == ENTIRE_TEXT
        search = context.property(SEARCH_VALUE).value
        replacement = context.property(REPLACEMENT_VALUE).value or ""
        if strategy == REGEX_REPLACE and (search == ".*" or (search == DEFAULT_REGEX and self._entire
                                                             and not replacement)):
            strategy = ALWAYS_REPLACE  # NiFi's shortcuts: these replace everything without searching
        self._strategy = strategy
        self._charset = codecs.lookup(context.property(CHARACTER_SET).value.strip()).name
        self._max_buffer = context.property(MAX_BUFFER_SIZE).as_data_size()
        self._line_mode = context.property(LINE_MODE).value or ALL
        self._search = context.property(SEARCH_VALUE)
        self._replacement = context.property(REPLACEMENT_VALUE)
        self._prepend = context.property(PREPEND_TEXT)
        self._append = context.property(APPEND_TEXT)
        self._search_template = parse(search) if strategy == REGEX_REPLACE else None
        self._replacement_template = parse(replacement) if strategy == REGEX_REPLACE else None
        self._literal_replacement = self._replacement_template is not None and all(
            isinstance(part, str) for part in self._replacement_template.parts)

    def on_trigger(self, context, session):
        for flowfile in session.get_batch(_BATCH):
            try:
                if self._entire and self._strategy not in _STREAMING and flowfile.size > self._max_buffer:
                    raise _Failure(f"its {flowfile.size} bytes are more than the Maximum Buffer Size of "
                                   f"{self._max_buffer} bytes")
                flowfile = self._replace(session, flowfile)
            except (_Failure, ValueError, re.error) as error:  # ValueError: expressions, long lines
                context.logger.warning("routing %s to failure: %s", flowfile.uuid, error)
                session.transfer(flowfile, FAILURE)
                continue
            session.transfer(flowfile, SUCCESS)

    # -- per FlowFile ---------------------------------------------------------------------

    def _replace(self, session, flowfile):
        """The FlowFile with its content changed; raises to send it to failure."""
        strategy = self._strategy
        if strategy == REGEX_REPLACE:
            change = self._regex_replacer(flowfile)
        elif strategy == LITERAL_REPLACE:
            search = self._search.evaluate(flowfile).value or ""
            replacement = self._replacement.evaluate(flowfile).value or ""

            def change(text: str) -> str:
                return text.replace(search, replacement)
        elif strategy == SUBSTITUTE_VARIABLES:
            attributes = flowfile.attributes

            def change(text: str) -> str:
                return substitute_variables(text, attributes)
        else:
            return self._insert(session, flowfile)
        if self._entire:
            text = session.read_bytes(flowfile).decode(self._charset, errors="replace")
            changed = change(text)
            if changed is None or changed == text:
                return flowfile  # nothing to change: the content stays as it is
            return session.write_bytes(flowfile, changed.encode(self._charset))
        return self._by_line(session, flowfile, lambda line: _or(change(line), line))

    def _insert(self, session, flowfile):
        """Prepend, Append, Surround and Always Replace: no searching, so large contents stream."""
        if self._strategy == SURROUND:
            before = self._prepend.evaluate(flowfile).value or ""
            after = self._append.evaluate(flowfile).value or ""
        else:
            value = self._replacement.evaluate(flowfile).value or ""
            before = value if self._strategy == PREPEND else ""
            after = value if self._strategy == APPEND else ""
        if self._strategy == ALWAYS_REPLACE:
            if self._entire:
                return session.write_bytes(flowfile, value.encode(self._charset))
            return self._by_line(session, flowfile, lambda line: value + line_ending(line))
        if self._entire:
            charset = self._charset

            def surround(source: BinaryIO, out: BinaryIO) -> None:
                out.write(before.encode(charset))
                shutil.copyfileobj(source, out)
                out.write(after.encode(charset))

            if not before and not after:
                return flowfile
            return session.modify(flowfile, surround)

        def surround_line(line: str) -> str:
            ending = line_ending(line)
            return before + line[:len(line) - len(ending)] + after + ending

        return self._by_line(session, flowfile, surround_line)

    def _regex_replacer(self, flowfile) -> Callable[[str], str | None]:
        """A function replacing every match in a text (None when nothing matched)."""
        attributes = flowfile.attributes
        try:
            regex = _evaluate(self._search_template, attributes, re.escape)
            pattern = java_regex(regex)
        except ValueError as error:
            raise _Failure(str(error)) from error
        groups = pattern.groups
        if self._literal_replacement:
            template = _java_template(_evaluate(self._replacement_template, attributes, str), groups)

            def expand(match: re.Match[str]) -> str:
                return match.expand(template)
        else:
            replacement_template = self._replacement_template

            def expand(match: re.Match[str]) -> str:
                captured = {f"${index}": match.group(index) for index in range(groups + 1)}
                captured = {name: value for name, value in captured.items() if value is not None}
                value = _evaluate(replacement_template, ChainMap(captured, attributes),
                                  lambda result: _DOLLAR_DIGIT.sub(r"\\\1", result))
                return match.expand(_java_template(value, groups))

        def replace(text: str) -> str | None:
            result, count = pattern.subn(expand, text)
            return result if count else None

        return replace

    def _by_line(self, session, flowfile, change: Callable[[str], str]):
        """Apply ``change`` to the lines the Line-by-Line Evaluation Mode selects, streaming."""
        if not flowfile.size:
            return flowfile
        mode = self._line_mode
        charset = self._charset
        max_length = self._max_buffer

        def rewrite(source: BinaryIO, out: BinaryIO) -> None:
            encoder = codecs.getincrementalencoder(charset)()
            previous = None
            index = 0
            for line in iter_lines(source, charset, max_length):
                if previous is not None:
                    out.write(encoder.encode(_apply(mode, index, False, previous, change)))
                    index += 1
                previous = line
            if previous is not None:
                out.write(encoder.encode(_apply(mode, index, True, previous, change)))
            out.write(encoder.encode("", final=True))

        return session.modify(flowfile, rewrite)


def _apply(mode: str, index: int, last: bool, line: str, change: Callable[[str], str]) -> str:
    """``line`` changed when the Line-by-Line Evaluation Mode selects it."""
    selected = (mode == ALL or (mode == FIRST_LINE and index == 0) or (mode == LAST_LINE and last)
                or (mode == EXCEPT_FIRST_LINE and index > 0) or (mode == EXCEPT_LAST_LINE and not last))
    return change(line) if selected else line


def _or(value: str | None, default: str) -> str:
    return default if value is None else value
