"""The syntax tree of a compiled expression; every node evaluates itself against a Scope."""

from __future__ import annotations

from engine.expression.errors import ExpressionError
from engine.expression.functions import CALL, PROPAGATE, Function, Scope
from engine.expression.types import Type, Value, coerce, render

__all__ = ["Node", "Attribute", "Const", "Coerce", "Call", "MultiCall", "Template"]


class Node:
    """A syntax-tree node: ``type`` is its static type, ``position`` its offset in the expression text."""

    __slots__ = ("type", "position")

    def evaluate(self, scope: Scope) -> Value:
        raise NotImplementedError


class Attribute(Node):
    """A subject naming an attribute (or variable); a missing name is null."""

    __slots__ = ("name",)

    def __init__(self, name: str, position: int) -> None:
        self.name, self.position, self.type = name, position, Type.STRING

    def evaluate(self, scope: Scope) -> Value:
        return scope.lookup(self.name)


class Const(Node):
    """A literal argument, already converted to what its parameter needs."""

    __slots__ = ("value",)

    def __init__(self, value: object, position: int) -> None:
        self.value, self.position = value, position
        if isinstance(value, bool):
            self.type = Type.BOOLEAN
        elif isinstance(value, (int, float)):
            self.type = Type.NUMBER
        else:
            self.type = Type.STRING

    def evaluate(self, scope: Scope) -> object:
        return self.value


class Coerce(Node):
    """An embedded-expression argument, converted to its parameter's type each time it is evaluated."""

    __slots__ = ("inner", "required", "label")

    def __init__(self, inner: Node, required: Type, label: str, position: int) -> None:
        self.inner, self.required, self.label = inner, required, label
        self.position, self.type = position, required

    def evaluate(self, scope: Scope) -> object:
        value = self.inner.evaluate(scope)
        try:
            return coerce(value, self.required)
        except ValueError as exc:
            raise ExpressionError(f"{self.label}: {exc}", self.position) from None


def _apply(function: Function, subject: Value, args: list[object], position: int) -> Value:
    if subject is None and function.on_null is not CALL:
        return None if function.on_null is PROPAGATE else function.on_null  # type: ignore[return-value]
    try:
        return function.impl(coerce(subject, function.subject), *args)  # type: ignore[arg-type]
    except (ValueError, ArithmeticError, OverflowError) as exc:
        raise ExpressionError(f"{function.name}: {exc}", position) from None


class Call(Node):
    """A function call; ``subject`` is None for functions that start an expression."""

    __slots__ = ("function", "subject", "args")

    def __init__(self, function: Function, subject: Node | None, args: list[Node], position: int) -> None:
        self.function, self.subject, self.args, self.position = function, subject, args, position
        self.type = function.result

    def evaluate(self, scope: Scope) -> Value:
        if self.subject is None:
            args = [arg.evaluate(scope) for arg in self.args]
            try:
                return self.function.impl(scope, *args)
            except (ValueError, OSError) as exc:
                raise ExpressionError(f"{self.function.name}: {exc}", self.position) from None
        subject = self.subject.evaluate(scope)
        skip_args = subject is None and self.function.on_null is not CALL
        args = [] if skip_args else [arg.evaluate(scope) for arg in self.args]
        return _apply(self.function, subject, args, self.position)


class MultiCall(Node):
    """A boolean function applied to each value of a multi-attribute subject, combined by any/all."""

    __slots__ = ("source", "function", "args")

    def __init__(self, source: Call, function: Function, args: list[Node], position: int) -> None:
        self.source, self.function, self.args, self.position = source, function, args, position
        self.type = Type.BOOLEAN

    def evaluate(self, scope: Scope) -> Value:
        values = self.source.evaluate(scope)
        args = [arg.evaluate(scope) for arg in self.args]
        results = [bool(_apply(self.function, value, args, self.position)) for value in values]  # type: ignore[union-attr]
        return self.source.function.combine(results)  # type: ignore[misc]


class Template(Node):
    """A whole property value: literal text and embedded expressions, rendered to one string."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[str | Node]) -> None:
        self.parts, self.position, self.type = parts, 0, Type.STRING

    def evaluate(self, scope: Scope) -> str:
        return "".join(part if isinstance(part, str) else render(part.evaluate(scope)) for part in self.parts)
