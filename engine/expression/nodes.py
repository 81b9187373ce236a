"""The syntax tree of a compiled expression. Each node builds, once, a Python closure that evaluates it against
a Scope, with the conversions its static types make unnecessary left out."""

from __future__ import annotations

from collections.abc import Callable

from engine.expression.errors import ExpressionError
from engine.expression.functions import CALL, PROPAGATE, Function, Scope
from engine.expression.types import Type, Value, coerce, render

__all__ = ["Node", "Attribute", "Const", "Coerce", "Call", "Item", "DynamicAttribute", "ParameterReference", "MultiCall",
           "Reduce", "Template"]

Runner = Callable[[Scope], Value]
_FAILURES = (ValueError, ArithmeticError, OverflowError)
# Result types that already hold the kind of value a parameter of the given type needs.
_ALREADY = {
    Type.STRING: {Type.STRING},
    Type.NUMBER: {Type.NUMBER, Type.WHOLE, Type.DECIMAL},
    Type.WHOLE: {Type.WHOLE},
    Type.DECIMAL: {Type.DECIMAL},
    Type.BOOLEAN: {Type.BOOLEAN},
    Type.DATE: {Type.DATE},
    Type.INSTANT: {Type.INSTANT},
}


def _converter(source: Type, required: Type, nullable: bool) -> Callable[[Value], object] | None:
    """How to convert a value of static type ``source`` for ``required``; None when it needs nothing (a null
    String still becomes empty when ``nullable`` says the function receives nulls)."""
    if required is Type.ANY or (source in _ALREADY.get(required, ()) and not (nullable and required is Type.STRING)):
        return None
    return lambda value: coerce(value, required)


class Node:
    """A syntax-tree node: ``type`` is its static type, ``position`` its offset in the expression text."""

    __slots__ = ("type", "position", "_run")

    def evaluate(self, scope: Scope) -> Value:
        """This node's value for ``scope`` (the closure is built on first use, then reused)."""
        try:
            run = self._run
        except AttributeError:
            run = self._run = self.build()
        return run(scope)

    def build(self) -> Runner:
        """A closure computing this node's value from a Scope."""
        raise NotImplementedError


class Attribute(Node):
    """A subject naming an attribute (or variable); a missing name is null."""

    __slots__ = ("name",)

    def __init__(self, name: str, position: int) -> None:
        self.name, self.position, self.type = name, position, Type.STRING

    def build(self) -> Runner:
        name = self.name

        def attribute(scope: Scope) -> Value:
            value = scope.attributes.get(name)
            return scope.variables.get(name) if value is None else value
        return attribute


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

    def build(self) -> Runner:
        value = self.value
        return lambda scope: value  # type: ignore[return-value]


class Coerce(Node):
    """An embedded-expression argument, converted to its parameter's type each time it is evaluated; when
    ``lenient``, a value that does not convert reaches the function as the ValueError (isValidDate's pattern)."""

    __slots__ = ("inner", "required", "label", "lenient")

    def __init__(self, inner: Node, required: Type, label: str, position: int, lenient: bool = False) -> None:
        self.inner, self.required, self.label, self.lenient = inner, required, label, lenient
        self.position, self.type = position, required

    def build(self) -> Runner:
        inner, required, label, position = self.inner.build(), self.required, self.label, self.position
        lenient = self.lenient
        if _converter(self.inner.type, required, nullable=True) is None:
            return inner

        def convert(scope: Scope) -> Value:
            try:
                return coerce(inner(scope), required)  # type: ignore[return-value]
            except ValueError as exc:
                if lenient:
                    return exc  # type: ignore[return-value]
                raise ExpressionError(f"{label}: {exc}", position) from None
        return convert


class Call(Node):
    """A function call; ``subject`` is None for functions that start an expression."""

    __slots__ = ("function", "subject", "args")

    def __init__(self, function: Function, subject: Node | None, args: list[Node], position: int) -> None:
        self.function, self.subject, self.args, self.position = function, subject, args, position
        self.type = function.result

    def build(self) -> Runner:
        function, position = self.function, self.position
        impl, name = function.impl, function.name
        args = [arg.build() for arg in self.args]
        constant = all(isinstance(arg, Const) for arg in self.args)
        values = tuple(arg.value for arg in self.args) if constant else ()  # type: ignore[attr-defined]
        # A null argument makes the result the null default only where the parameter has a type to convert to
        # (Number, Date, …); parameters of any type receive the null themselves.
        offset = 1 if function.scoped else 0
        typed = [] if constant else [index for index in range(len(self.args))
                                     if index >= offset and function.param_type(index - offset) is not Type.ANY]

        def fail(exc: Exception) -> ExpressionError:
            return ExpressionError(f"{name}: {exc}", position)

        if self.subject is None:
            def standalone(scope: Scope) -> Value:
                try:
                    return impl(scope, *[arg(scope) for arg in args])
                except ExpressionError:
                    raise
                except (*_FAILURES, OSError) as exc:
                    raise fail(exc) from None
            return standalone

        subject = self.subject.build()
        nullable = function.on_null is CALL
        convert = _converter(self.subject.type, function.subject, nullable)  # type: ignore[arg-type]
        if nullable:
            def handles_null(scope: Scope) -> Value:
                value = subject(scope)
                try:
                    if convert is not None:
                        value = convert(value)  # type: ignore[assignment]
                    return impl(value, *[arg(scope) for arg in args])
                except ExpressionError:
                    raise
                except _FAILURES as exc:
                    raise fail(exc) from None
            return handles_null

        default = None if function.on_null is PROPAGATE else function.on_null

        def call(scope: Scope) -> Value:
            value = subject(scope)
            if value is None:
                return default  # type: ignore[return-value]
            try:
                if convert is not None:
                    value = convert(value)  # type: ignore[assignment]
                    if value is None:  # text that is no number, for instance
                        return default  # type: ignore[return-value]
                arguments = values if constant else [arg(scope) for arg in args]
                for index in typed:
                    if arguments[index] is None:
                        return default  # type: ignore[return-value]
                return impl(value, *arguments)
            except ExpressionError:
                raise
            except _FAILURES as exc:
                raise fail(exc) from None
        return call


class Item(Node):
    """The value being visited by a multi-attribute subject (``anyAttribute(...)``): the root of its chain."""

    __slots__ = ()

    def __init__(self, position: int) -> None:
        self.position, self.type = position, Type.STRING

    def build(self) -> Runner:
        return lambda scope: scope.item  # type: ignore[return-value]


class DynamicAttribute(Node):
    """A subject whose attribute name is itself computed: ``${${attr}}`` or ``${'prefix${b}'}``."""

    __slots__ = ("name",)

    def __init__(self, name: Node, position: int) -> None:
        self.name, self.position, self.type = name, position, Type.STRING

    def build(self) -> Runner:
        name = self.name.build()
        return lambda scope: scope.lookup(render(name(scope)))


class ParameterReference(Node):
    """``#{name}`` inside an expression: the value of a parameter of the component's parameter context
    (null when the context has no such parameter, as in NiFi; flow validation reports the missing reference)."""

    __slots__ = ("name",)

    def __init__(self, name: str, position: int) -> None:
        self.name, self.position, self.type = name, position, Type.STRING

    def build(self) -> Runner:
        name = self.name
        return lambda scope: scope.parameters.get(name)


def _visit(source: Call, chain: Node) -> Callable[[Scope], list[Value]]:
    """A closure giving the chain's result for each value the multi-attribute subject visits."""
    values_of, run = source.build(), chain.build()

    def visit(scope: Scope) -> list[Value]:
        # With nothing to visit NiFi still evaluates the chain once, on null.
        values = values_of(scope) or [None]
        saved, results = scope.item, []
        try:
            for value in values:  # type: ignore[union-attr]
                scope.item = value
                results.append(run(scope))
        finally:
            scope.item = saved
        return results
    return visit


class MultiCall(Node):
    """A boolean chain applied to each value of a multi-attribute subject, combined by any/all."""

    __slots__ = ("source", "chain")

    def __init__(self, source: Call, chain: Node, position: int) -> None:
        self.source, self.chain, self.position = source, chain, position
        self.type = Type.BOOLEAN

    def build(self) -> Runner:
        visit = _visit(self.source, self.chain)
        if self.source.function.combine == "any":
            return lambda scope: any(result is True for result in visit(scope))

        def every(scope: Scope) -> bool:
            results = visit(scope)
            # As in NiFi, a null result fails only the first value.
            return results[0] is True and all(result is not False for result in results)
        return every


class Reduce(Node):
    """``join(delimiter)`` or ``count()`` over the chain's results for each value of an all-values subject."""

    __slots__ = ("source", "chain", "function", "args")

    def __init__(self, source: Call, chain: Node, function: Function, args: list[Node], position: int) -> None:
        self.source, self.chain, self.function, self.args, self.position = source, chain, function, args, position
        self.type = function.result

    def build(self) -> Runner:
        visit = _visit(self.source, self.chain)
        if self.function.name == "count":
            return lambda scope: sum(1 for result in visit(scope) if result is not None and result is not False)
        delimiter = self.args[0].build()
        return lambda scope: render(delimiter(scope)).join(render(result) for result in visit(scope))


class Template(Node):
    """A whole property value: literal text and embedded expressions, rendered to one string."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[str | Node]) -> None:
        self.parts, self.position, self.type = parts, 0, Type.STRING

    def build(self) -> Runner:
        if len(self.parts) == 1 and isinstance(self.parts[0], Node):
            only = self.parts[0].build()
            return lambda scope: render(only(scope))
        runners = [(lambda scope, text=part: text) if isinstance(part, str) else part.build() for part in self.parts]
        return lambda scope: "".join([render(run(scope)) for run in runners])
