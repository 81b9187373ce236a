"""Parameters in property values: ``#{name}`` is replaced by the value of a parameter of the
process group's parameter context (contexts may inherit others, first match wins); ``##{x}``
is an escaped, literal ``#{x}``. Names with characters other than letters, digits, spaces,
``.``, ``-`` and ``_`` are quoted: ``#{'odd/name'}``. A reference inside an expression
(``${#{name}:toUpper()}``) is left in place for the expression, which reads the parameter's value
as a value (``ParameterValues``), as NiFi's expression-aware parameter parser does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Mapping

from engine.expression.parser import expression_ranges
from engine.flow.model import Parameter, ParameterContextConfig

__all__ = ["ParameterError", "ParameterResolver", "ParameterValues", "references", "substitute"]

_REFERENCE = re.compile(r"(#+)\{([A-Za-z0-9 ._-]+|'[^']*')\}")


class ParameterError(LookupError):
    """A reference to a parameter that no context in reach defines."""


def _name(token: str) -> str:
    return token[1:-1] if token.startswith("'") else token


def references(value: str) -> list[str]:
    """The parameter names ``value`` refers to (escaped references excluded)."""
    return [_name(match.group(2)) for match in _REFERENCE.finditer(value) if len(match.group(1)) % 2 == 1]


@dataclass
class ParameterResolver:
    """Finds parameters in a context and the contexts it inherits from."""

    contexts: Mapping[str, ParameterContextConfig]

    def find(self, context_name: str | None, name: str) -> Parameter | None:
        """The parameter ``name`` as seen from ``context_name`` (None when not defined)."""
        seen: set[str] = set()
        pending = [context_name] if context_name else []
        while pending:
            current = pending.pop(0)
            if current in seen or current not in self.contexts:
                continue
            seen.add(current)
            context = self.contexts[current]
            if name in context.parameters:
                return context.parameters[name]
            pending[0:0] = context.inherited
        return None


def substitute(value: str | None, context_name: str | None, resolver: ParameterResolver) -> str | None:
    """``value`` with its parameter references replaced; raises ParameterError naming a missing one."""
    if value is None or "#" not in value:
        return value
    expressions = expression_ranges(value) if "${" in value else []

    def replace(match: re.Match[str]) -> str:
        hashes, token = match.group(1), match.group(2)
        inside = any(start <= match.start() < end for start, end in expressions)
        if len(hashes) % 2 == 0:
            return match.group(0) if inside else "#" * (len(hashes) // 2) + "{" + token + "}"
        name = _name(token)
        parameter = resolver.find(context_name, name)
        if parameter is None:
            where = f"parameter context {context_name!r}" if context_name else "no parameter context (none is set)"
            raise ParameterError(f"references parameter {name!r}, which is not defined in {where}")
        if inside:
            return match.group(0)
        return "#" * (len(hashes) // 2) + (parameter.value or "")

    return _REFERENCE.sub(replace, value)


class ParameterValues(Mapping[str, str]):
    """The parameters seen from one context, as ``#{name}`` inside an expression reads them."""

    def __init__(self, resolver: ParameterResolver, context_name: str | None) -> None:
        self._resolver = resolver
        self._context_name = context_name

    def __getitem__(self, name: str) -> str:
        parameter = self._resolver.find(self._context_name, name)
        if parameter is None:
            raise KeyError(name)
        return parameter.value or ""

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for context in self._resolver.contexts.values():
            for name in context.parameters:
                if name not in seen and name in self:
                    seen.add(name)
                    yield name

    def __len__(self) -> int:
        return sum(1 for _ in self)
