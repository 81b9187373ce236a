"""The syntax tree of a compiled expression; every node evaluates itself against a Scope."""

from __future__ import annotations

from engine.expression.errors import ExpressionError
from engine.expression.functions import CALL, PROPAGATE, Function, Scope
from engine.expression.types import Type, Value, coerce, render

__all__ = ["Node", "Attribute", "Const", "Coerce", "Call", "Item", "DynamicAttribute", "ParameterReference", "MultiCall",
           "Reduce", "Template"]


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
    try:
        if function.on_null is CALL:
            return function.impl(coerce(subject, function.subject), *args)  # type: ignore[arg-type]
        value = None if subject is None else coerce(subject, function.subject)  # type: ignore[arg-type]
        if value is None or None in args:
            return None if function.on_null is PROPAGATE else function.on_null  # type: ignore[return-value]
        return function.impl(value, *args)
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
            except (ValueError, ArithmeticError, OSError) as exc:
                raise ExpressionError(f"{self.function.name}: {exc}", self.position) from None
        subject = self.subject.evaluate(scope)
        if subject is None and self.function.on_null is not CALL:
            return None if self.function.on_null is PROPAGATE else self.function.on_null  # type: ignore[return-value]
        return _apply(self.function, subject, [arg.evaluate(scope) for arg in self.args], self.position)


class Item(Node):
    """The value being visited by a multi-attribute subject (``anyAttribute(...)``): the root of its chain."""

    __slots__ = ()

    def __init__(self, position: int) -> None:
        self.position, self.type = position, Type.STRING

    def evaluate(self, scope: Scope) -> Value:
        return scope.item


class DynamicAttribute(Node):
    """A subject whose attribute name is itself computed: ``${${attr}}`` or ``${'prefix${b}'}``."""

    __slots__ = ("name",)

    def __init__(self, name: Node, position: int) -> None:
        self.name, self.position, self.type = name, position, Type.STRING

    def evaluate(self, scope: Scope) -> Value:
        return scope.lookup(render(self.name.evaluate(scope)))


class ParameterReference(Node):
    """``#{name}`` inside an expression: the value of a parameter of the component's parameter context
    (null when the context has no such parameter, as in NiFi; flow validation reports the missing reference)."""

    __slots__ = ("name",)

    def __init__(self, name: str, position: int) -> None:
        self.name, self.position, self.type = name, position, Type.STRING

    def evaluate(self, scope: Scope) -> Value:
        return scope.parameters.get(self.name)


def _values(source: Call, scope: Scope) -> list[Value]:
    values = source.evaluate(scope)
    # With nothing to visit NiFi still evaluates the chain once, on null.
    return values if values else [None]  # type: ignore[return-value]


class MultiCall(Node):
    """A boolean chain applied to each value of a multi-attribute subject, combined by any/all."""

    __slots__ = ("source", "chain")

    def __init__(self, source: Call, chain: Node, position: int) -> None:
        self.source, self.chain, self.position = source, chain, position
        self.type = Type.BOOLEAN

    def evaluate(self, scope: Scope) -> Value:
        values = _values(self.source, scope)
        chain, saved = self.chain, scope.item
        try:
            if self.source.function.combine == "any":
                for value in values:
                    scope.item = value
                    if chain.evaluate(scope) is True:
                        return True
                return False
            for index, value in enumerate(values):
                scope.item = value
                result = chain.evaluate(scope)
                # As in NiFi, a null result fails only the first value.
                if result is False or (index == 0 and result is None):
                    return False
            return True
        finally:
            scope.item = saved


class Reduce(Node):
    """``join(delimiter)`` or ``count()`` over the chain's results for each value of an all-values subject."""

    __slots__ = ("source", "chain", "function", "args")

    def __init__(self, source: Call, chain: Node, function: Function, args: list[Node], position: int) -> None:
        self.source, self.chain, self.function, self.args, self.position = source, chain, function, args, position
        self.type = function.result

    def evaluate(self, scope: Scope) -> Value:
        values = _values(self.source, scope)
        chain, saved = self.chain, scope.item
        results = []
        try:
            for value in values:
                scope.item = value
                results.append(chain.evaluate(scope))
        finally:
            scope.item = saved
        if self.function.name == "count":
            return sum(1 for result in results if result is not None and result is not False)
        delimiter = render(self.args[0].evaluate(scope))
        return delimiter.join(render(result) for result in results)


class Template(Node):
    """A whole property value: literal text and embedded expressions, rendered to one string."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[str | Node]) -> None:
        self.parts, self.position, self.type = parts, 0, Type.STRING

    def evaluate(self, scope: Scope) -> str:
        return "".join(part if isinstance(part, str) else render(part.evaluate(scope)) for part in self.parts)
