"""Jayway's filter operators that jsonpath-ng lacks, for engine/jsonpath.py: ``in``, ``nin``, ``subsetof``,
``anyof``, ``noneof``, ``size``, ``empty``, ``contains`` and the type-aware ``===`` and ``!==``; Jayway's ``all``,
``exists``, ``type`` and ``matches`` are refused with a message saying why (see the end).

jsonpath-ng has none of them, so :func:`rewrite` takes each relation that uses one (``@.tags anyof ['a']``) out
of the path's filters and leaves in its place a placeholder existence test that jsonpath-ng parses;
:func:`substitute` then puts a :class:`Relation` where the placeholder landed in the parsed path.

The operators behave as Jayway's evaluators do. A side is a literal (a quoted string, a number, ``true``,
``false``, ``null`` or a JSON array or object; strings may be single-quoted) or a path from the current item
(``@``) or the document (``$``). A definite path gives its value, an indefinite one the list of its matches, and
a path that finds nothing a value equal to nothing. Values compare as Jayway's value nodes do: a number equals a
string holding the same number (``1`` equals ``'1'``), a Boolean only a Boolean, null only null; arrays and
objects equal arrays and objects with the same content (where Jayway fails on them).

* ``L in R`` / ``L nin R``: whether ``L`` equals (does not equal) an element of the array ``R``; ``nin`` is the
  exact negation, so a missing ``L`` is ``nin`` every array.
* ``L subsetof R``, ``L anyof R``, ``L noneof R``: every element, some element, no element of the array ``L``
  equals an element of the array ``R``; false when either side is not an array (a literal that is not an array
  is refused when the path is compiled).
* ``L size N``: the string ``L`` has ``N`` characters (UTF-16 units, as Java counts), or the array ``L`` has
  ``N`` elements.
* ``L empty true|false``: whether the string, array or object ``L`` is empty; false for anything else (and
  when a path on the right gives something other than true or false).
* ``L contains R``: the string ``L`` contains the string ``R``, or the array ``L`` has an element equal to ``R``;
  false for anything else.
* ``L === R`` / ``L !== R``: equality (its negation) that also needs both sides of the same kind, as Jayway's
  value-node classes: ``1 === '1'`` is false where ``1 == '1'`` is true; a missing value is ``!==`` everything.

Operator names are case-insensitive, as Jayway's are. ``!(L op R)`` negates a relation; like Jayway,
``!@.a in [...]`` is the same as ``@.a in [...]`` (the ``!`` only negates an existence test).

Jayway's parser also reads ``all``, ``exists``, ``type`` and ``matches``, but their evaluators need what only its
Java Criteria API builds (a value list, an existence-check path, a Java class, a Java Predicate). In a filter
string ``all``, ``type`` and ``matches`` throw on every item, which Jayway takes as the item not matching, and
``exists`` compares the left value with the Boolean on the right, throwing (no match) for any other value, or
failing the whole read when neither side is a Boolean: NiFi silently finds nothing (with ``exists``, only the
items whose value is that Boolean). :func:`rewrite` refuses them instead, with a message naming the operator and
what to write: ``R subsetof L`` for ``L all R``, ``[?(@.a)]`` or ``[?(!@.a)]`` for existence.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Callable

from jsonpath_ng import DatumInContext, JSONPath, Root
from jsonpath_ng.ext.filter import And, Expression, Filter, Or

__all__ = ["OPERATORS", "UNSUPPORTED_OPERATORS", "Relation", "compare", "rewrite", "substitute"]

OPERATORS = ("in", "nin", "subsetof", "anyof", "noneof", "size", "empty", "contains")
SYMBOL_OPERATORS = ("===", "!==")
#: Operators Jayway reads in a filter string but cannot evaluate there, with why and what to write instead.
UNSUPPORTED_OPERATORS = {
    "all": "Jayway evaluates it only for a value list built in Java and rejects every item of a filter string; "
           "to keep items whose array L holds every element of R, write R subsetof L (['a','b'] subsetof @.tags)",
    "exists": "Jayway does not test existence with it in a filter string, but compares the left value with the "
              "Boolean on the right and rejects every item whose value is not a Boolean; write [?(@.a)] for a "
              "value that exists, [?(!@.a)] for one that does not, or @.a == true to compare",
    "type": "it takes a Java class, which only Jayway's Java Criteria API can give, and Jayway rejects every item "
            "of a filter string that uses it",
    "matches": "it takes a Java Predicate, which only Jayway's Java Criteria API can give, and Jayway rejects "
               "every item of a filter string that uses it; write the condition itself (with && and ||), or "
               "=~ /regex/ for a regular expression",
}

_MARKER = "__flowsite_jayway_relation_{}__"
_OPERATOR_WORDS = OPERATORS + tuple(UNSUPPORTED_OPERATORS)
_ANY_OPERATOR = re.compile(r"(?i)(?<![\w@$.\-])(?:" + "|".join(_OPERATOR_WORDS) + r")(?![\w\-])|===|!==")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_JAVA_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_]\w*")
_NAME_CHAR = re.compile(r"[\w.*\-]")
_LITERAL_WORDS = {"true": True, "false": False, "null": None}
_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Undefined:
    """What a path that finds nothing gives: equal to nothing (Jayway's UndefinedNode)."""

    def __repr__(self) -> str:
        return "UNDEFINED"


UNDEFINED = _Undefined()


# ---- evaluation ----------------------------------------------------------------------------------------------

def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _decimal(value: int | float | str) -> Decimal:
    return Decimal(repr(value) if isinstance(value, float) else value)


def _java_number_text(number: int | float) -> str:
    return str(number) if isinstance(number, int) else repr(number)


def _equal(left: Any, right: Any) -> bool:
    """Jayway's value-node equality (``left.equals(right)``)."""
    if left is UNDEFINED or right is UNDEFINED:
        return False
    if isinstance(left, bool) or isinstance(right, bool):
        return left is right
    if left is None or right is None:
        return left is None and right is None
    if _is_number(left):
        if _is_number(right):
            return left == right
        if isinstance(right, str) and _JAVA_DECIMAL.fullmatch(right):
            return _decimal(left) == _decimal(right)
        return False
    if isinstance(left, str):
        if isinstance(right, str):
            return left == right
        return _is_number(right) and left == _java_number_text(right)
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(_json_equal(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    return False


def _json_equal(left: Any, right: Any) -> bool:
    """Equality of values inside an array or object: same JSON type and value."""
    if isinstance(left, bool) or isinstance(right, bool) or left is None or right is None:
        return left is right
    if _is_number(left) and _is_number(right):
        return left == right
    if type(left) is not type(right):
        return False
    return _equal(left, right) if isinstance(left, (list, dict)) else left == right


_ORDERINGS: dict[str, Callable[[Any, Any], bool]] = {
    "<": lambda left, right: left < right,
    "<=": lambda left, right: left <= right,
    ">": lambda left, right: left > right,
    ">=": lambda left, right: left >= right,
}


def compare(operator: str, left: Any, right: Any) -> bool:
    """Jayway's ``==``, ``!=``, ``<``, ``<=``, ``>`` and ``>=``: equality as value nodes (``1 == '1'``), ordering
    only between two numbers or two strings (false otherwise)."""
    if operator in ("==", "="):
        return _equal(left, right)
    if operator == "!=":
        return not _equal(left, right)
    both_numbers = _is_number(left) and _is_number(right)
    return (both_numbers or isinstance(left, str) and isinstance(right, str)) and _ORDERINGS[operator](left, right)


def _contains(items: list, value: Any) -> bool:
    return any(_equal(value, item) for item in items)


def _in(left: Any, right: Any) -> bool:
    return isinstance(right, list) and _contains(right, left)


def _both_arrays(test: Callable[[list, list], bool]) -> Callable[[Any, Any], bool]:
    def evaluate(left: Any, right: Any) -> bool:
        return isinstance(left, list) and isinstance(right, list) and test(left, right)
    return evaluate


def _size(left: Any, right: Any) -> bool:
    if not _is_number(right):
        return False
    if isinstance(left, str):
        return len(left.encode("utf-16-le")) // 2 == int(right)
    return isinstance(left, list) and len(left) == int(right)


def _empty(left: Any, right: Any) -> bool:
    return isinstance(right, bool) and isinstance(left, (str, list, dict)) and (len(left) == 0) == right


def _contains_operator(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return right in left
    return isinstance(left, list) and _contains(left, right)


def _kind(value: Any) -> str:
    """The Jayway value-node class a value would have (arrays and objects are both JSON nodes)."""
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if _is_number(value):
        return "number"
    return "string" if isinstance(value, str) else "json"


def _strict_equal(left: Any, right: Any) -> bool:
    return _kind(left) == _kind(right) and _equal(left, right)


_EVALUATORS: dict[str, Callable[[Any, Any], bool]] = {
    "in": _in,
    "nin": lambda left, right: not _in(left, right),
    "subsetof": _both_arrays(lambda left, right: all(_contains(right, item) for item in left)),
    "anyof": _both_arrays(lambda left, right: any(_contains(right, item) for item in left)),
    "noneof": _both_arrays(lambda left, right: not any(_contains(right, item) for item in left)),
    "size": _size,
    "empty": _empty,
    "contains": _contains_operator,
    "===": _strict_equal,
    "!==": lambda left, right: not _strict_equal(left, right),
}


class _Operand:
    """One side of a relation: a literal value, or a compiled path read from the item or the document."""

    __slots__ = ("text", "path", "value")

    def __init__(self, text: str, path: Any = None, value: Any = None) -> None:
        self.text, self.path, self.value = text, path, value

    def evaluate(self, datum: Any) -> Any:
        if self.path is None:
            return self.value
        try:
            return self.path.read(datum)
        except LookupError:
            return UNDEFINED


class Relation(JSONPath):
    """A filter term ``left operator right`` with one of the operators of this module (jsonpath-ng node)."""

    def __init__(self, left: _Operand, operator: str, right: _Operand, negated: bool = False) -> None:
        self.operator, self.negated = operator, negated
        self._left, self._right = left, right
        self._evaluate = _EVALUATORS[operator]
        # jsonpath-ng's Filter links each candidate to the document only when a term has a Root among its
        # left/right; a side that reads the document needs that link.
        self.left = Root() if left.path is not None and "$" in left.text else None
        self.right = Root() if right.path is not None and "$" in right.text else None

    def find(self, datum: Any) -> list:
        # A linked candidate is passed whole so that a side's ``$`` reaches the document.
        item = datum if isinstance(datum, DatumInContext) and datum.context is not None else \
            getattr(datum, "value", datum)
        matched = self._evaluate(self._left.evaluate(item), self._right.evaluate(item))
        return [DatumInContext.wrap(datum)] if matched != self.negated else []

    def negate(self) -> Relation:
        return Relation(self._left, self.operator, self._right, not self.negated)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Relation) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def __str__(self) -> str:
        text = f"{self._left.text} {self.operator} {self._right.text}"
        return f"!({text})" if self.negated else text

    def __repr__(self) -> str:
        return f"Relation({self})"


# ---- literals ------------------------------------------------------------------------------------------------

def _unescape(body: str) -> str:
    """A quoted literal's text with Java-style escapes (``\\'``, ``\\n``, ``\\u00e9``, ...) resolved."""
    def replace(found: re.Match) -> str:
        escaped = found.group(1)
        if escaped.startswith("u"):
            return chr(int(escaped[1:], 16))
        return _ESCAPES.get(escaped, escaped)
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, body, flags=re.S)


_LITERAL_TOKEN = re.compile(r"""\s*(?:('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)"""
                            r"""|(true|false|null)(?!\w)|([\[\]{}:,]))""", re.S)


def _literal(text: str) -> Any:
    """Parse a filter literal: a quoted string, a number, true, false, null, or a JSON array or object."""
    tokens, position = [], 0
    while position < len(text.rstrip()):
        found = _LITERAL_TOKEN.match(text, position)
        if not found:
            raise ValueError(f"cannot read the value {text.strip()!r}")
        tokens.append(found)
        position = found.end()
    value, used = _literal_value(tokens, 0, text)
    if used != len(tokens):
        raise ValueError(f"cannot read the value {text.strip()!r}")
    return value


def _literal_value(tokens: list[re.Match], index: int, text: str) -> tuple[Any, int]:
    if index >= len(tokens):
        raise ValueError(f"cannot read the value {text.strip()!r}")
    string, number, word, punct = tokens[index].groups()
    if string is not None:
        return _unescape(string[1:-1]), index + 1
    if number is not None:
        return (float(number) if any(c in number for c in ".eE") else int(number)), index + 1
    if word is not None:
        return _LITERAL_WORDS[word], index + 1
    if punct not in "[{":
        raise ValueError(f"cannot read the value {text.strip()!r}")
    closing, items, index = ("]" if punct == "[" else "}"), [], index + 1
    while index < len(tokens) and tokens[index].group(4) != closing:
        if items:
            if tokens[index].group(4) != ",":
                raise ValueError(f"cannot read the value {text.strip()!r}")
            index += 1
        if punct == "{":
            key, index = _literal_value(tokens, index, text)
            if not isinstance(key, str) or index >= len(tokens) or tokens[index].group(4) != ":":
                raise ValueError(f"cannot read the value {text.strip()!r}")
            index += 1
            value, index = _literal_value(tokens, index, text)
            items.append((key, value))
        else:
            value, index = _literal_value(tokens, index, text)
            items.append(value)
    if index >= len(tokens):
        raise ValueError(f"cannot read the value {text.strip()!r}")
    return (dict(items) if punct == "{" else items), index + 1


# ---- rewriting -----------------------------------------------------------------------------------------------

def _after_quoted(text: str, start: int) -> int:
    """The index just past the string literal opening at ``start``."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    raise ValueError(f"the string {text[start:start + 20]!r} is not closed")


def _closing(text: str, start: int) -> int:
    """The index of the bracket that closes the one at ``start`` (quoted text skipped)."""
    opening = text[start]
    closing, depth, i = {"[": "]", "{": "}"}[opening], 0, start
    while i < len(text):
        char = text[i]
        if char in "'\"":
            i = _after_quoted(text, i)
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError(f"the {opening!r} of {text[start:start + 20]!r} is not closed")


def _path_end(text: str, start: int) -> int:
    """The index just past the path starting at ``start`` (``@`` or ``$``), as Jayway's filter reader ends it."""
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == "[":
            i = _closing(text, i) + 1
        elif char == "(" and _NAME_CHAR.match(text[i - 1]) and text[i + 1:].lstrip().startswith(")"):
            i = text.index(")", i) + 1
        elif _NAME_CHAR.match(char):
            i += 1
        else:
            break
    return i


def _tokens(body: str) -> list[list[str]]:
    """The filter body as [kind, text] pairs whose texts join back into it."""
    tokens, i = [], 0
    while i < len(body):
        char = body[i]
        number, word = _NUMBER.match(body, i), _WORD.match(body, i)
        if char.isspace():
            end, kind = i + len(body[i:]) - len(body[i:].lstrip()), "space"
        elif char in "'\"":
            end, kind = _after_quoted(body, i), "literal"
        elif char in "@$":
            end, kind = _path_end(body, i), "path"
        elif char in "[{":
            end, kind = _closing(body, i) + 1, "literal"
        elif body.startswith(SYMBOL_OPERATORS, i):
            end, kind = i + 3, "operator"
        elif number:
            end, kind = number.end(), "literal"
        elif word:
            end = word.end()
            kind = ("literal" if word.group() in _LITERAL_WORDS
                    else "operator" if word.group().lower() in _OPERATOR_WORDS else "word")
        else:
            end, kind = i + 1, "punct"
        tokens.append([kind, body[i:end]])
        i = end
    return tokens


def _neighbour(tokens: list[list[str]], index: int, step: int) -> int | None:
    index += step
    while 0 <= index < len(tokens):
        if tokens[index][0] != "space":
            return index
        index += step
    return None


def _operand(token: list[str] | None, operator: str, compile_path: Callable[[str], Any]) -> _Operand:
    if token is None or token[0] not in ("path", "literal"):
        raise ValueError(f"the {operator} operator needs a path or a value on each side")
    if token[0] == "path":
        return _Operand(token[1], path=compile_path(token[1]))
    return _Operand(token[1], value=_literal(token[1]))


def _refuse_unsupported(operator: str) -> None:
    """Refuse an operator Jayway reads but cannot evaluate in a filter string (see UNSUPPORTED_OPERATORS)."""
    if operator in UNSUPPORTED_OPERATORS:
        raise ValueError(f"the {operator} operator cannot be used in a filter string: "
                         f"{UNSUPPORTED_OPERATORS[operator]}")


def _check_literals(operator: str, left: _Operand, right: _Operand) -> None:
    """Refuse literal sides the operator cannot use, as Jayway fails on them."""
    def literal(operand: _Operand, test: Callable[[Any], bool]) -> bool:
        return operand.path is None and not test(operand.value)
    if operator in ("in", "nin") and literal(right, lambda v: isinstance(v, list)):
        raise ValueError(f"the right side of {operator} must be an array or a path, not {right.text}")
    if operator in ("subsetof", "anyof", "noneof") and (literal(left, lambda v: isinstance(v, list))
                                                       or literal(right, lambda v: isinstance(v, list))):
        raise ValueError(f"both sides of {operator} must be arrays or paths")
    if operator == "size" and literal(right, _is_number):
        raise ValueError(f"the right side of size must be a number or a path, not {right.text}")
    if operator == "empty" and literal(right, lambda v: isinstance(v, bool)):
        raise ValueError(f"the right side of empty must be true or false, not {right.text}")


def _rewrite_filter(body: str, relations: dict[str, Relation], compile_path: Callable[[str], Any]) -> str:
    tokens = _tokens(body)
    while True:
        at = next((i for i, token in enumerate(tokens) if token[0] == "operator"), None)
        if at is None:
            break
        operator = tokens[at][1].lower()
        _refuse_unsupported(operator)
        before, after = _neighbour(tokens, at, -1), _neighbour(tokens, at, 1)
        left = _operand(tokens[before] if before is not None else None, operator, compile_path)
        right = _operand(tokens[after] if after is not None else None, operator, compile_path)
        _check_literals(operator, left, right)
        bang = _neighbour(tokens, before, -1)
        if bang is not None and tokens[bang][1] == "!":
            # Jayway reads "!@.a in [...]" as "@.a in [...]": a "!" before a path only negates an existence test.
            if left.path is None:
                raise ValueError(f"'!' cannot stand before the value {left.text}; write !({left.text} {operator} ...)")
            tokens[bang] = ["space", ""]
        name = _MARKER.format(len(relations))
        relations[name] = Relation(left, operator, right)
        tokens[before:after + 1] = [["relation", "@." + name]]
    # !(L op R): jsonpath-ng negates only a bare path, so drop the parentheses.
    for i, token in enumerate(tokens):
        if token[0] != "relation":
            continue
        opening, closing = _neighbour(tokens, i, -1), _neighbour(tokens, i, 1)
        bang = _neighbour(tokens, opening, -1) if opening is not None else None
        if bang is not None and closing is not None and tokens[opening][1] == "(" and tokens[closing][1] == ")" \
                and tokens[bang][1] == "!":
            tokens[opening] = tokens[closing] = ["space", ""]
    for token in tokens:
        if token[0] == "path":
            token[1] = rewrite(token[1], relations, compile_path)
    return "".join(text for _, text in tokens)


def rewrite(path: str, relations: dict[str, Relation], compile_path: Callable[[str], Any]) -> str:
    """``path`` with each relation using one of these operators replaced by a placeholder, recorded in ``relations``.

    ``compile_path`` compiles a side that is a path (it must give an object with ``read(item)``, raising
    LookupError when a definite path finds nothing). Raises ValueError when an operator is misused.
    """
    if "?" not in path or not _ANY_OPERATOR.search(path):
        return path
    out, i = [], 0
    while i < len(path):
        char = path[i]
        if char in "'\"":
            end = _after_quoted(path, i)
            out.append(path[i:end])
            i = end
        elif char == "[" and path[i + 1:].lstrip().startswith("?"):
            end, mark = _closing(path, i), path.index("?", i)
            out.append(path[i:mark + 1] + _rewrite_filter(path[mark + 1:end], relations, compile_path) + "]")
            i = end + 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _marker(term: Any) -> str | None:
    target = getattr(term, "target", None)
    fields = getattr(getattr(target, "right", None), "fields", ())
    return fields[0] if len(fields) == 1 else None


def _replace(term: Any, relations: dict[str, Relation], used: set[str]) -> Any:
    name = _marker(term) if isinstance(term, Expression) else None
    if name in relations:
        if term.op not in (None, "!"):
            raise ValueError(f"the result of {relations[name]} cannot be compared with {term.op}")
        used.add(name)
        return relations[name] if term.op is None else relations[name].negate()
    _walk(term, relations, used)
    return term


def _walk(node: Any, relations: dict[str, Relation], used: set[str]) -> None:
    if isinstance(node, Filter):
        node.expressions = [_replace(term, relations, used) for term in node.expressions]
    elif isinstance(node, (And, Or)):
        node.operands = [_replace(term, relations, used) for term in node.operands]
    for attribute in ("left", "right", "target", "value"):
        child = getattr(node, attribute, None)
        if isinstance(child, JSONPath) and not isinstance(child, Relation):
            _walk(child, relations, used)


def substitute(expression: JSONPath, relations: dict[str, Relation]) -> None:
    """Put each recorded relation where its placeholder landed in the parsed ``expression``."""
    used: set[str] = set()
    _walk(expression, relations, used)
    if len(used) != len(relations):
        raise ValueError("an in, nin, subsetof, anyof, noneof, size, empty, contains, === or !== relation must be "
                         "a whole filter term")
