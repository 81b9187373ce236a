"""Recursive-descent parser from expression text to a checked syntax tree."""

from __future__ import annotations

import dataclasses
import re

from engine.expression.errors import ExpressionError
from engine.expression.functions import FUNCTIONS, Function
from engine.expression.nodes import (Attribute, Call, Coerce, Const, DynamicAttribute, Item, MultiCall, Node,
                                     ParameterReference, Reduce, Template)
from engine.expression.types import Type, coerce, compatible

__all__ = ["parse", "expression_ranges"]

_SPECIAL = frozenset("$|{}()[],:;/*'\" \t\r\n")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?(?:\d+(\.\d*)?|(\.)\d+)([eE][+-]?\d+)?(?![A-Za-z_])")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"'}
_PARAMETER_NAME = re.compile(r"[A-Za-z0-9 ._-]+")


class _ScopeArgument(Node):
    """The evaluation's Scope, passed to functions that read more than their subject (evaluateELString)."""

    __slots__ = ()

    def __init__(self, position: int) -> None:
        self.position, self.type = position, Type.ANY

    def build(self):  # type: ignore[no-untyped-def]
        return lambda scope: scope


def parse(text: str) -> Template:
    """Parse a property value into a Template; raises ExpressionError at the first problem."""
    return _Parser(text).template()


def expression_ranges(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` offsets of each top-level ``${...}`` expression in a property value, ``end``
    exclusive; for a malformed value, those before the fault. Lets the flow substitute ``#{name}`` outside
    expressions while leaving references inside them to the expression (which reads its ``parameters``)."""
    parser = _Parser(text)
    try:
        parser.template()
    except ExpressionError:
        pass
    return parser.ranges


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.ranges: list[tuple[int, int]] = []

    def template(self) -> Template:
        text = self.text
        parts: list[str | Node] = []
        literal: list[str] = []
        i = 0
        while i < len(text):
            dollar = text.find("$", i)
            if dollar < 0:
                literal.append(text[i:])
                break
            literal.append(text[i:dollar])
            end = dollar
            while end < len(text) and text[end] == "$":
                end += 1
            run = end - dollar
            if end < len(text) and text[end] == "{":
                # Before '{', each '$$' is an escaped '$'; an odd '$' left over opens an expression.
                literal.append("$" * (run // 2))
                if run % 2:
                    if literal:
                        parts.append("".join(literal))
                        literal = []
                    parts.append(self.expression(end - 1))
                    self.ranges.append((end - 1, self.pos))
                    i = self.pos
                    continue
            else:
                literal.append("$" * run)
            i = end
        if literal:
            parts.append("".join(literal))
        return Template([part for part in parts if part != ""])

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t\r\n":
            self.pos += 1

    def found(self) -> str:
        char = self.peek()
        return repr(char) if char else "end of text"

    @staticmethod
    def unterminated(start: int) -> ExpressionError:
        return ExpressionError("unterminated '${': expected '}'", start)

    def expression(self, start: int) -> Node:
        self.pos = start + 2
        node = self.subject(start)
        # A multi-attribute subject's chain runs once per value, from an Item node, then is combined.
        source: Call | None = None
        if node.type is Type.MULTI:
            source, node = node, Item(node.position)  # type: ignore[assignment]
        reducer: Call | None = None
        while True:
            self.skip_spaces()
            char = self.peek()
            if char == "}":
                self.pos += 1
                break
            if char == ":":
                self.pos += 1
                if reducer is not None:
                    self.skip_spaces()
                    raise ExpressionError(
                        f"no function may follow '{reducer.function.name}', which reduces the values; write "
                        f"${{literal(${{...}}):function()}} to use its result", self.pos)
                node = self.call(node, start)
                if node.function.reducer:  # type: ignore[attr-defined]
                    reducer = node  # type: ignore[assignment]
            elif not char:
                raise self.unterminated(start)
            else:
                raise ExpressionError(f"expected ':' or '}}' but found {char!r}", self.pos)
        if source is None:
            return node
        name = source.function.name
        if reducer is not None:
            if source.function.combine != "all":
                raise ExpressionError(f"'{reducer.function.name}' needs allAttributes, allMatchingAttributes or "
                                      f"allDelineatedValues, not '{name}'", reducer.position)
            return Reduce(source, reducer.subject, reducer.function, reducer.args, source.position)  # type: ignore[arg-type]
        if node.type is not Type.BOOLEAN:
            also = " (or by join/count)" if source.function.combine == "all" else ""
            raise ExpressionError(f"'{name}' must be followed by functions ending in a boolean function such as "
                                  f"isEmpty(){also}", node.position if isinstance(node, Call) else source.position)
        return MultiCall(source, node, source.position)

    def parameter(self, start: int) -> ParameterReference:
        """``#{name}`` or ``#{'quoted name'}`` at the current position."""
        position = self.pos
        self.pos += 2
        if self.peek() in ("'", '"'):
            name = self.string()
        else:
            match = _PARAMETER_NAME.match(self.text, self.pos)
            if match is None:
                raise ExpressionError(f"expected a parameter name after '#{{' but found {self.found()}", self.pos)
            name = match.group().strip()
            self.pos = match.end()
        if self.peek() != "}":
            if not self.peek():
                raise self.unterminated(start)
            raise ExpressionError(f"expected '}}' to close the parameter reference but found {self.found()}", self.pos)
        self.pos += 1
        return ParameterReference(name, position)

    def literal_text(self, value: str, position: int) -> Node | str:
        """A quoted string; one holding ``${...}`` is itself a template, evaluated as NiFi does."""
        if "${" not in value:
            return value
        try:
            template = _Parser(value).template()
        except ExpressionError as exc:
            raise ExpressionError(exc.message, position + 1 + exc.position) from None
        if all(isinstance(part, str) for part in template.parts):
            return "".join(template.parts)  # type: ignore[arg-type]
        template.position = position
        return template

    def subject(self, start: int) -> Node:
        self.skip_spaces()
        position = self.pos
        char = self.peek()
        if not char:
            raise self.unterminated(start)
        if char in "'\"":
            name = self.literal_text(self.string(), position)
            return Attribute(name, position) if isinstance(name, str) else DynamicAttribute(name, position)
        if self.text.startswith("${", position):
            return DynamicAttribute(self.expression(position), position)
        if self.text.startswith("#{", position):
            return self.parameter(start)
        while self.pos < len(self.text) and self.text[self.pos] not in _SPECIAL:
            self.pos += 1
        name = self.text[position:self.pos]
        if not name:
            raise ExpressionError(f"expected an attribute name or function but found {char!r}", position)
        self.skip_spaces()
        if self.peek() == "(":
            function = self.function(name, position)
            if function.subject is not None and function.standalone is not None:
                function = dataclasses.replace(function, subject=None, impl=function.standalone, standalone=None)
            if function.subject is not None:
                raise ExpressionError(f"function '{name}' needs a subject, as in ${{attribute:{name}(...)}}",
                                      position)
            return self.make_call(function, None, self.arguments(start), position)
        if name[0].isdigit():
            raise ExpressionError(f"attribute name {name!r} starts with a digit and must be quoted", position)
        return Attribute(name, position)

    def call(self, subject: Node, start: int) -> Node:
        self.skip_spaces()
        position = self.pos
        match = _IDENTIFIER.match(self.text, self.pos)
        if match is None:
            if not self.peek():
                raise self.unterminated(start)
            raise ExpressionError(f"expected a function name after ':' but found {self.found()}", position)
        self.pos = match.end()
        function = self.function(match.group(), position)
        if function.subject is None:
            raise ExpressionError(f"function '{function.name}' does not take a subject", position)
        self.skip_spaces()
        if self.peek() != "(":
            if not self.peek():
                raise self.unterminated(start)
            raise ExpressionError(f"expected '(' after '{function.name}' but found {self.found()}", self.pos)
        return self.make_call(function, subject, self.arguments(start), position)

    @staticmethod
    def function(name: str, position: int) -> Function:
        function = FUNCTIONS.get(name)
        if function is None:
            raise ExpressionError(f"unknown function '{name}'", position)
        return function

    def arguments(self, start: int) -> list[tuple[Node, int]]:
        self.pos += 1
        args: list[tuple[Node, int]] = []
        self.skip_spaces()
        if self.peek() == ")":
            self.pos += 1
            return args
        while True:
            self.skip_spaces()
            position = self.pos
            args.append((self.argument(start), position))
            self.skip_spaces()
            char = self.peek()
            self.pos += 1
            if char == ")":
                return args
            if char != ",":
                self.pos -= 1
                if not char:
                    raise self.unterminated(start)
                raise ExpressionError(f"expected ',' or ')' but found {char!r}", self.pos)

    def argument(self, start: int) -> Node:
        self.skip_spaces()
        position = self.pos
        char = self.peek()
        if not char:
            raise self.unterminated(start)
        if char in "'\"":
            value = self.literal_text(self.string(), position)
            return Const(value, position) if isinstance(value, str) else value
        if self.text.startswith("${", position):
            return self.expression(position)
        if self.text.startswith("#{", position):
            return self.parameter(start)
        number = _NUMBER.match(self.text, position)
        if number is not None:
            self.pos = number.end()
            text = number.group()
            return Const(float(text) if any(number.groups()) else int(text), position)
        word = _IDENTIFIER.match(self.text, position)
        if word is not None and word.group() in ("true", "false"):
            self.pos = word.end()
            return Const(word.group() == "true", position)
        raise ExpressionError(
            f"expected an argument (a quoted string, number, true, false or ${{...}}) but found {char!r}", position)

    def string(self) -> str:
        quote, start = self.text[self.pos], self.pos
        self.pos += 1
        out: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == quote:
                self.pos += 1
                return "".join(out)
            if char == "\\" and self.pos + 1 < len(self.text):
                following = self.text[self.pos + 1]
                # Unknown escapes keep their backslash so regular expressions such as '\d' pass through.
                out.append(_ESCAPES.get(following, "\\" + following))
                self.pos += 2
            else:
                out.append(char)
                self.pos += 1
        raise ExpressionError("unterminated string literal", start)

    @staticmethod
    def make_call(function: Function, subject: Node | None, args: list[tuple[Node, int]], position: int) -> Node:
        name = function.name
        if not function.accepts(len(args)):
            raise ExpressionError(f"function '{name}' takes {function.arity} but got {len(args)}", position)
        if subject is not None and not compatible(subject.type, function.subject):  # type: ignore[arg-type]
            raise ExpressionError(f"function '{name}' cannot be applied to a {subject.type.value} "
                                  f"(it expects a {function.subject.value})", position)  # type: ignore[union-attr]
        checked: list[Node] = []
        for index, (arg, arg_position) in enumerate(args):
            required = function.param_type(index)
            label = f"argument {index + 1} of '{name}'"
            if isinstance(arg, Const):
                try:
                    value = coerce(arg.value, required)  # type: ignore[arg-type]
                except ValueError as exc:
                    raise ExpressionError(f"{label}: {exc}", arg_position) from None
                if value is None and arg.value is not None:
                    raise ExpressionError(f"{label}: cannot convert {arg.value!r} to a {required.value}", arg_position)
                checked.append(Const(value, arg_position))
            elif not compatible(arg.type, required):
                raise ExpressionError(f"{label} must be a {required.value} but the expression gives a "
                                      f"{arg.type.value}", arg_position)
            else:
                checked.append(Coerce(arg, required, label, arg_position, function.lenient_arguments))
        if function.scoped:
            checked.insert(0, _ScopeArgument(position))
        return Call(function, subject, checked, position)
