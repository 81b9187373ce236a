"""Compile a property value once, evaluate it per FlowFile."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from engine.expression.functions import Scope
from engine.expression.parser import parse

__all__ = ["CompiledExpression", "compile_expression", "evaluate"]


class CompiledExpression:
    """A parsed, type-checked property value. Immutable, so one instance can serve many threads."""

    __slots__ = ("text", "is_literal", "_template", "_literal", "_run")

    def __init__(self, text: str) -> None:
        self.text = text
        self._template = parse(text)
        self.is_literal = all(isinstance(part, str) for part in self._template.parts)
        self._literal = "".join(self._template.parts) if self.is_literal else None  # type: ignore[arg-type]
        self._run = self._template.build()

    def evaluate(self, attributes: Mapping[str, str], variables: Mapping[str, str] | None = None,
                 parameters: Mapping[str, str] | None = None, state: Mapping[str, str] | None = None) -> str:
        """Return the property value with every ``${...}`` replaced by its result.

        Names resolve against ``attributes`` first, then ``variables``; missing names are null. ``#{name}`` inside
        an expression reads ``parameters``; ``getStateValue(key)`` reads ``state``.
        """
        if self._literal is not None:
            return self._literal
        return self._run(Scope(attributes, variables, parameters, state))  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"CompiledExpression({self.text!r})"


@lru_cache(maxsize=1024)
def compile_expression(text: str) -> CompiledExpression:
    """Parse and check ``text``; raises ExpressionError with the offending position. Results are cached."""
    return CompiledExpression(text)


def evaluate(text: str, attributes: Mapping[str, str], variables: Mapping[str, str] | None = None,
             parameters: Mapping[str, str] | None = None, state: Mapping[str, str] | None = None) -> str:
    """Compile (cached) and evaluate ``text`` in one call."""
    return compile_expression(text).evaluate(attributes, variables, parameters, state)
