"""JsonPath with Jayway's semantics (the library NiFi uses), over jsonpath-ng.

``compile(path)`` gives a cached :class:`JsonPath` whose operations work on parsed JSON (dicts, lists and
scalars, as ``json.loads`` gives them):

* ``read`` follows Jayway's definite/indefinite rule: a *definite* path (only single names and single
  indexes, e.g. ``$.a.b[0]``) gives one value and raises :class:`PathNotFoundError` when nothing is there;
  an *indefinite* path (``..``, ``*``, slices, filters, unions) gives a list, empty when nothing matched.
  A trailing function (``length()``, ``size()``, ``min()``, ``max()``, ``avg()``, ``sum()``,
  ``stddev()``, ``keys()``, ``first()``, ``last()``) is applied to the value a definite path reads, to each
  match of an indefinite one, and, for a path starting ``$..``, to all the matches together (one value).
* ``delete``, ``set``, ``add`` (append to the array at the path) and ``put`` (key into the object at the
  path) change the document in place and return it. Like Jayway they raise :class:`PathNotFoundError` when
  the path matches nothing and :class:`InvalidModificationError` when the target cannot take the change
  (adding to something that is not an array, setting the root, ...).

Filters take Jayway's comparisons (a number equals a string holding it, ``1 == '1'``; ``<``, ``<=``, ``>``,
``>=`` order only two numbers or two strings), ``&&``, ``||``, ``!``, existence (``[?(@.isbn)]``), paths from
the root (``@.price < $.limit``), ``=~ /regex/flags`` (a Java regular expression matching the whole value) and the
``in``, ``nin``, ``subsetof``, ``anyof``, ``noneof``, ``size``, ``empty``, ``contains``, ``===`` and ``!==``
operators (``[?(@.category in ['fiction', 'poetry'])]``, ``[?(@.tags size 2)]``, ``[?(@.isbn === '1')]``; see
:mod:`engine.jsonpath_filters`). Jayway's ``all``, ``exists``, ``type`` and ``matches`` need operands only its Java
API builds (in a filter string Jayway rejects every item with them, but for ``exists`` on a Boolean value, which it
compares), so they are refused with an :class:`InvalidPathError` naming the operator.

An invalid path raises :class:`InvalidPathError` from ``compile``.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import regex
from jsonpath_ng import Child, Descendants, Fields, Index, Root, This
from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.ext import filter as _jsonpath_filter
from jsonpath_ng.ext import parse as _parse

from engine.java_regex import to_python_pattern
from engine.jsonpath_filters import compare as _jayway_compare
from engine.jsonpath_filters import rewrite as _rewrite_relations
from engine.jsonpath_filters import substitute as _substitute_relations

__all__ = ["JsonPath", "compile", "JsonPathError", "InvalidPathError", "PathNotFoundError",
           "InvalidModificationError"]


class JsonPathError(ValueError):
    """Base of the errors this module raises."""


class InvalidPathError(JsonPathError):
    """The path text is not a valid JsonPath."""


class PathNotFoundError(JsonPathError, LookupError):
    """A definite path, or a change, found nothing at the path."""


class InvalidModificationError(JsonPathError):
    """The value at the path cannot take the requested change."""


_FUNCTION = re.compile(r"^(?P<path>.*?)\.(?P<name>length|size|min|max|avg|sum|stddev|keys|first|last)\(\s*\)\s*$")


def _numbers(value: Any) -> list[float]:
    items = value if isinstance(value, list) else []
    numbers = [item for item in items if isinstance(item, (int, float)) and not isinstance(item, bool)]
    if not numbers:
        raise JsonPathError("Aggregation function attempted to calculate value using empty array")
    return numbers


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, (list, dict)) else None


def _stddev(value: Any) -> float:
    numbers = _numbers(value)
    mean = sum(numbers) / len(numbers)
    return math.sqrt(sum((n - mean) ** 2 for n in numbers) / len(numbers))


def _element(position: int):
    def pick(value: Any) -> Any:
        if not isinstance(value, list) or not value:
            raise JsonPathError("Aggregation function attempted to calculate value using empty array")
        return value[position]
    return pick


_FUNCTIONS = {
    "length": _length,
    "size": _length,
    "min": lambda value: float(min(_numbers(value))),
    "max": lambda value: float(max(_numbers(value))),
    "avg": lambda value: float(sum(_numbers(value)) / len(_numbers(value))),
    "sum": lambda value: float(sum(_numbers(value))),
    "stddev": _stddev,
    "keys": lambda value: list(value) if isinstance(value, dict) else None,
    "first": _element(0),
    "last": _element(-1),
}


_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


@functools.lru_cache(maxsize=256)
def _java_search(pattern: str) -> regex.Pattern[str]:
    return regex.compile("(?-f)" + pattern, regex.V1)


# jsonpath-ng evaluates '=~' with re.search; the translated Java patterns need the regex module.
_jsonpath_filter.OPERATOR_MAP["=~"] = lambda value, pattern: isinstance(value, str) and bool(
    _java_search(pattern).search(value))


def _compare(operator: str, left: Any, right: Any) -> bool:
    if operator == "=~":
        return isinstance(right, str) and _jsonpath_filter.OPERATOR_MAP["=~"](left, right)
    return _jayway_compare(operator, left, right)


# jsonpath-ng compares as RFC 9535 does ('1' == 1 is false); Jayway compares as its value nodes do.
_jsonpath_filter._compare = _compare
_REGEX_FILTER = re.compile(r"=~\s*/((?:\\.|[^/\\])*)/([a-zA-Z]*)")


def _regex_filters(path: str) -> str:
    """Rewrite Jayway's ``=~ /regex/flags`` as jsonpath-ng's quoted pattern, anchored as Java's matches() is."""
    out, i, quote = [], 0, None
    while i < len(path):
        char = path[i]
        if quote:
            out.append(char)
            if char == "\\" and i + 1 < len(path):
                out.append(path[i + 1])
                i += 1
            elif char == quote:
                quote = None
            i += 1
            continue
        if char in "'\"":
            quote = char
        elif path.startswith("=~", i):
            found = _REGEX_FILTER.match(path, i)
            if found:
                letters = set(found.group(2))
                flags = sum(bit for letter, bit in _REGEX_FLAGS.items() if letter in letters)
                try:
                    translated = to_python_pattern(found.group(1), flags)
                    pattern = ("(?i)" if "i" in letters else "") + rf"\A(?:{translated})\Z"
                    _java_search(pattern)
                except (ValueError, regex.error) as exc:
                    raise InvalidPathError(f"invalid JSON path {path!r}: bad regular expression: {exc}") from None
                out.append('=~ "' + pattern.replace("\\", "\\\\").replace('"', '\\"') + '"')
                i = found.end()
                continue
        out.append(char)
        i += 1
    return "".join(out)


def _definite(node: Any, leaf: bool = True) -> bool:
    """Jayway's rule: only single property names and single indexes (a leaf may name several properties)."""
    if isinstance(node, (Root, This)):
        return True
    if isinstance(node, Child):
        return _definite(node.left, leaf=False) and _definite(node.right, leaf)
    if isinstance(node, Fields):
        return "*" not in node.fields and (len(node.fields) == 1 or leaf)
    if isinstance(node, Index):
        return len(node.indices) == 1
    return False


def _starts_with_scan(node: Any) -> bool:
    """Whether the path begins ``$..`` (Jayway applies a trailing function to all its matches together)."""
    while isinstance(node, (Child, Descendants)):
        if isinstance(node, Descendants) and isinstance(node.left, Root):
            return True
        node = node.left
    return False


def _leaf(node: Any) -> Any:
    while isinstance(node, Child):
        node = node.right
    return node


def _parent_path(node: Any) -> Any:
    return node.left if isinstance(node, Child) else Root()


class JsonPath:
    """A compiled JsonPath; use :func:`compile` to get one."""

    __slots__ = ("text", "definite", "_expr", "_function", "_merge", "_scan")

    def __init__(self, text: str) -> None:
        self.text = text
        path, function = text, None
        found = _FUNCTION.match(text)
        if found:
            path, function = found.group("path"), found.group("name")
        if not path.strip():
            raise InvalidPathError(f"invalid JSON path {text!r}: the path is empty")
        try:
            relations: dict = {}
            rewritten = _rewrite_relations(_regex_filters(path) if "=~" in path else path, relations, compile)
            self._expr = _parse(rewritten)
            if relations:
                _substitute_relations(self._expr, relations)
        except InvalidPathError:
            raise
        except (JsonPathParserError, JsonPathLexerError, ValueError, TypeError, AttributeError) as exc:
            raise InvalidPathError(f"invalid JSON path {text!r}: {exc}") from None
        self._function = function
        leaf = _leaf(self._expr)
        # A definite path ending in several names reads them merged into one object, as Jayway does.
        self._merge = isinstance(leaf, Fields) and len(leaf.fields) > 1 and "*" not in leaf.fields
        self._scan = _starts_with_scan(self._expr)
        #: Whether ``read`` gives one value (True) or a list of every match (False).
        self.definite = _definite(self._expr) or (function is not None and self._scan)

    def __repr__(self) -> str:
        return f"JsonPath({self.text!r})"

    def read(self, document: Any) -> Any:
        """The value at a definite path, or the list of values an indefinite path matches."""
        if self._function is None:
            return self._read(document, self.definite)
        function = _FUNCTIONS[self._function]
        if self._scan:
            # Jayway turns $..a.f() into $.f($..a): the function sees every match at once.
            matches = self._read(document, False)
            if self._function in ("length", "size"):
                return len([child for match in matches if isinstance(match, (list, dict))
                            for child in (match if isinstance(match, list) else match.values())])
            if self._function == "keys":
                return function(document)
            return function(matches)
        if self.definite:
            return function(self._read(document, True))
        return [function(value) for value in self._read(document, False)]

    def _read(self, document: Any, definite: bool) -> Any:
        if self._merge and definite:
            names = _leaf(self._expr).fields
            parents = [m.value for m in _parent_path(self._expr).find(document)]
            if not parents or not isinstance(parents[0], dict):
                raise PathNotFoundError(f"no results for path {self.text}")
            return {name: parents[0][name] for name in names if name in parents[0]}
        values = [match.value for match in self._expr.find(document)]
        if not definite:
            return values
        if not values:
            raise PathNotFoundError(f"no results for path {self.text}")
        return values[0]

    def _targets(self, document: Any) -> list[tuple[Any, Any]]:
        """(container, key or index) for each match; (None, None) is the document itself."""
        if self._function is not None:
            raise InvalidModificationError(f"cannot change a document through the function path {self.text}")
        matches = self._expr.find(document)
        if not matches:
            raise PathNotFoundError(f"no results for path {self.text}")
        targets = []
        for match in matches:
            if match.context is None:
                targets.append((None, None))
                continue
            parent, step = match.context.value, match.path
            if isinstance(step, Fields):
                targets.extend((parent, name) for name in step.fields)
            elif isinstance(step, Index):
                targets.append((parent, step.indices[0] % len(parent)))
        return targets

    def delete(self, document: Any) -> Any:
        """Remove every match from its container (the document itself cannot be removed)."""
        targets = self._targets(document)
        if (None, None) in targets:
            raise InvalidModificationError("Invalid delete operation: the root cannot be deleted")
        # Later indexes first, so removing one does not move the next.
        seen = set()
        for parent, key in sorted(targets, key=lambda t: t[1] if isinstance(t[1], int) else -1, reverse=True):
            if (id(parent), key) in seen:
                continue
            seen.add((id(parent), key))
            if isinstance(parent, dict):
                parent.pop(key, None)
            else:
                del parent[key]
        return document

    def set(self, document: Any, value: Any) -> Any:
        """Replace every match with ``value`` (a path ending in several names sets each of them)."""
        if self._merge and self.definite:
            for parent in _parent_path(self._expr).find(document):
                if isinstance(parent.value, dict):
                    parent.value.update(dict.fromkeys(_leaf(self._expr).fields, value))
            return document
        for parent, key in self._targets(document):
            if parent is None:
                raise InvalidModificationError("Invalid set operation: the root cannot be set")
            parent[key] = value
        return document

    def add(self, document: Any, value: Any) -> Any:
        """Append ``value`` to every array the path matches."""
        for target in self._values(document):
            if target is None:
                continue
            if not isinstance(target, list):
                raise InvalidModificationError(f"Can only add to an array; {self.text} is not an array")
            target.append(value)
        return document

    def put(self, document: Any, key: str, value: Any) -> Any:
        """Set ``key`` to ``value`` in every object the path matches."""
        if not key:
            raise InvalidModificationError("the key to put can not be null or empty")
        for target in self._values(document):
            if target is None:
                continue
            if not isinstance(target, dict):
                raise InvalidModificationError(f"Can only add properties to a map; {self.text} is not an object")
            target[key] = value
        return document

    def _values(self, document: Any) -> list[Any]:
        targets = self._targets(document)
        if self._merge:
            raise InvalidModificationError(f"cannot add or put to several properties at once ({self.text})")
        return [document if parent is None else parent[key] for parent, key in targets]


@functools.lru_cache(maxsize=1024)
def compile(path: str) -> JsonPath:  # noqa: A001 - the name the callers expect, as re.compile
    """Parse ``path`` once (cached); raises :class:`InvalidPathError` when it is not a valid JsonPath."""
    if not isinstance(path, str):
        raise InvalidPathError(f"a JSON path must be text, not {type(path).__name__}")
    return JsonPath(path)
