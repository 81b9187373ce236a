"""RecordPath text to a tree: NiFi's RecordPath grammar (``RecordPathLexer.g``, ``RecordPathParser.g``).

The tree is the one thing both back ends read: ``engine.record.path`` evaluates it on Python
records, ``engine.record.path_sql`` turns it into Spark SQL. A path is a chain of segments, each
holding the segment before it (``parent``); the chain starts at ``Root`` (``/``) or ``Context``
(``.``, the field a predicate or a relative replacement path is evaluated against).

Grammar (NiFi's, with the leniencies noted)::

    top        := filter EOF
    filter     := FILTER_FN '(' args ')' | operation
    operation  := expression (OP expression)?          OP: = != < <= > >=
    expression := path | NUMBER | STRING | NAME '(' args ')'
    path       := '/' | ('/' | '//') step-chain | ('.' | '..') step-chain?
    step       := '/' (NAME | STRING | '*' | '.' | '..') | '//' (NAME | STRING | '*') | '[' selector ']'
    selector   := '*' | STRING (',' STRING)* | index (',' index)* | filter
    index      := NUMBER ('..' NUMBER)?

Leniencies: a filter function may appear wherever an expression may (it yields booleans, as
NiFi's does at the top of a path), any argument may be a filter or a comparison, and a field
named like a filter function (``/contains``) needs no quotes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

__all__ = [
    "RecordPathError", "parse", "Node", "Segment", "FilterNode",
    "Root", "Context", "Child", "WildcardChild", "Descendant", "WildcardDescendant", "Parent", "Current",
    "Index", "MapKeys", "WildcardIndex", "Predicate", "Literal", "Call", "Compare", "FilterCall", "Not",
    "FILTER_FUNCTIONS", "FUNCTION_ARITY", "UNSUPPORTED_FUNCTIONS",
]

#: Functions that test values: in a predicate they keep or drop the field, elsewhere they yield booleans.
FILTER_FUNCTIONS = frozenset({"contains", "containsRegex", "endsWith", "startsWith", "isBlank", "isEmpty",
                              "matchesRegex", "not"})

#: name -> (least, most) arguments; ``None`` for "any number".
FUNCTION_ARITY: dict[str, tuple[int, int | None]] = {
    "substring": (3, 3), "substringBefore": (2, 2), "substringAfter": (2, 2), "substringBeforeLast": (2, 2),
    "substringAfterLast": (2, 2), "replace": (3, 3), "replaceRegex": (3, 3), "replaceNull": (2, 2),
    "concat": (0, None), "join": (2, None), "coalesce": (0, None), "fieldName": (1, 1), "toUpperCase": (1, 1),
    "toLowerCase": (1, 1), "trim": (1, 1), "toString": (2, 2), "toBytes": (2, 2), "toDate": (2, 3),
    "format": (2, 3), "padLeft": (2, 3), "padRight": (2, 3), "escapeJson": (1, 1), "unescapeJson": (1, 3),
    "base64Encode": (1, 1), "base64Decode": (1, 1), "hash": (2, 2), "count": (1, 1),
    "contains": (2, 2), "containsRegex": (2, 2), "endsWith": (2, 2), "startsWith": (2, 2), "isBlank": (1, 1),
    "isEmpty": (1, 1), "matchesRegex": (2, 2), "not": (1, 1),
}

#: NiFi functions Flowsite does not implement.
UNSUPPORTED_FUNCTIONS = frozenset({"anchored", "arrayOf", "mapOf", "recordOf", "uuid5", "toNumber", "add",
                                   "subtract", "multiply", "divide"})

_OPERATORS = ("<=", ">=", "!=", "<", ">", "=")
_NAME_STOP_FIRST = set("/[]*\"',\t\r\n0123456789 .-=?<>()!")
_NAME_STOP = set("/[]*\"',\t\r\n=?<> ()")


class RecordPathError(ValueError):
    """An invalid RecordPath, or one a back end cannot run.

    ``position`` is the 0-based offset into ``path`` of the construct at fault (``None`` when the
    fault is not at one place).
    """

    def __init__(self, message: str, position: int | None = None, path: str | None = None) -> None:
        where = ""
        if path is not None:
            where = f" (at position {position} of {path!r})" if position is not None else f" (in {path!r})"
        super().__init__(message + where)
        self.message = message
        self.position = position
        self.path = path


# --- the tree -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Root:
    """``/``: the record itself."""


@dataclass(frozen=True)
class Context:
    """``.`` at the start of a relative path: the context field (a predicate's subject)."""


@dataclass(frozen=True)
class Child:
    """``/name``: the named field of each record the parent selects (a field that is absent or null
    still yields one value, ``None``, as in NiFi)."""
    parent: Segment
    name: str


@dataclass(frozen=True)
class WildcardChild:
    """``/*``: every non-null field of each record."""
    parent: Segment


@dataclass(frozen=True)
class Descendant:
    """``//name``: every non-null field called ``name`` at any depth (records and arrays of records)."""
    parent: Segment
    name: str


@dataclass(frozen=True)
class WildcardDescendant:
    """``//*``: every non-null field at any depth."""
    parent: Segment


@dataclass(frozen=True)
class Parent:
    """``..``: the field that holds each selected field."""
    parent: Segment


@dataclass(frozen=True)
class Current:
    """``/.`` inside a path: the selected fields themselves."""
    parent: Segment


@dataclass(frozen=True)
class Index:
    """``[0]``, ``[-1]``, ``[0, 2]``, ``[1..-1]``: array elements. ``single`` is one plain index
    (NiFi treats ``[i]`` and ``[i, ...]`` slightly differently for negative indices)."""
    parent: Segment
    ranges: tuple[tuple[int, int], ...]
    single: bool


@dataclass(frozen=True)
class MapKeys:
    """``['key']``, ``['a', 'b']``: map entries by key."""
    parent: Segment
    keys: tuple[str, ...]


@dataclass(frozen=True)
class WildcardIndex:
    """``[*]``: every element of an array, every entry of a map."""
    parent: Segment


@dataclass(frozen=True)
class Predicate:
    """``[filter]``: keeps each selected field for which the filter holds."""
    parent: Segment
    filter: FilterNode


@dataclass(frozen=True)
class Literal:
    """A string (``'text'`` or ``"text"``) or an integer."""
    value: str | int


@dataclass(frozen=True)
class Call:
    """A standalone function: ``substringAfter(/name, ' ')``."""
    name: str
    args: tuple[Node, ...]
    position: int


@dataclass(frozen=True)
class Compare:
    """``lhs op rhs``: the fields of ``lhs`` that compare true with the first non-null value of ``rhs``."""
    op: str
    lhs: Node
    rhs: Node
    position: int


@dataclass(frozen=True)
class FilterCall:
    """``contains(., 'x')`` and the other filter functions except ``not``."""
    name: str
    args: tuple[Node, ...]
    position: int


@dataclass(frozen=True)
class Not:
    """``not(filter)``."""
    filter: FilterNode
    position: int


Segment = Union[Root, Context, Child, WildcardChild, Descendant, WildcardDescendant, Parent, Current, Index,
                MapKeys, WildcardIndex, Predicate]
FilterNode = Union[Compare, FilterCall, Not]
Node = Union[Segment, Literal, Call, FilterNode]


# --- tokens ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Token:
    kind: str      # one of / // [ ] ( ) , .. . * OP NUMBER STRING NAME EOF
    text: str
    pos: int

    def describe(self) -> str:
        return "the end of the path" if self.kind == "EOF" else repr(self.text)


_ESCAPES = {'"': '"', "'": "'", "r": "\r", "n": "\n", "t": "\t", "\\": "\\\\"}


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in " \t\r\n\f":
            i += 1
        elif text.startswith("//", i):
            tokens.append(_Token("//", "//", i))
            i += 2
        elif text.startswith("..", i):
            tokens.append(_Token("..", "..", i))
            i += 2
        elif char in "/[](),.*":
            tokens.append(_Token(char, char, i))
            i += 1
        elif any(text.startswith(op, i) for op in _OPERATORS):
            op = next(op for op in _OPERATORS if text.startswith(op, i))
            tokens.append(_Token("OP", op, i))
            i += len(op)
        elif char.isdigit() or (char == "-" and i + 1 < n and text[i + 1].isdigit()):
            end = i + 1
            while end < n and text[end].isdigit():
                end += 1
            tokens.append(_Token("NUMBER", text[i:end], i))
            i = end
        elif char in "'\"":
            value, end = _read_string(text, i)
            tokens.append(_Token("STRING", value, i))
            i = end
        elif char not in _NAME_STOP_FIRST:
            end = i + 1
            while end < n and text[end] not in _NAME_STOP and not text.startswith("!=", end):
                end += 1
            tokens.append(_Token("NAME", text[i:end], i))
            i = end
        else:
            raise RecordPathError(f"unexpected character {char!r}", i, text)
    tokens.append(_Token("EOF", "", n))
    return tokens


def _read_string(text: str, start: int) -> tuple[str, int]:
    quote = text[start]
    out: list[str] = []
    i = start + 1
    while i < len(text):
        char = text[i]
        if char == quote:
            return "".join(out), i + 1
        if char == "\\" and i + 1 < len(text):
            following = text[i + 1]
            out.append(_ESCAPES.get(following, "\\" + following))
            i += 2
            continue
        out.append(char)
        i += 1
    raise RecordPathError(f"the string starting here has no closing {quote}", start, text)


# --- the parser -----------------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.i]

    def peek(self, ahead: int = 1) -> _Token:
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def take(self) -> _Token:
        token = self.token
        self.i += 1
        return token

    def fail(self, expected: str, token: _Token | None = None) -> RecordPathError:
        token = token or self.token
        return RecordPathError(f"expected {expected} but found {token.describe()}", token.pos, self.text)

    def expect(self, kind: str, expected: str) -> _Token:
        if self.token.kind != kind:
            raise self.fail(expected)
        return self.take()

    # top level

    def parse(self) -> Node:
        if self.token.kind == "EOF":
            raise RecordPathError("the RecordPath is empty", 0, self.text)
        node = self.filter_or_operation()
        if self.token.kind != "EOF":
            raise self.fail("the end of the path, an operator (= != < <= > >=) or a '/' step")
        return node

    def filter_or_operation(self) -> Node:
        if self.token.kind == "NAME" and self.token.text in FILTER_FUNCTIONS and self.peek().kind == "(":
            return self.function()
        lhs = self.expression()
        if self.token.kind == "OP":
            op = self.take()
            rhs = self.expression()
            return Compare(op.text, lhs, rhs, op.pos)
        return lhs

    def expression(self) -> Node:
        token = self.token
        if token.kind == "STRING":
            self.take()
            return Literal(token.text)
        if token.kind == "NUMBER":
            self.take()
            return Literal(int(token.text))
        if token.kind == "NAME" and self.peek().kind == "(":
            return self.function()
        if token.kind in ("/", "//"):
            return self.absolute_path()
        if token.kind in (".", ".."):
            return self.relative_path()
        if token.kind == "NAME":
            raise RecordPathError(f"expected a path, a literal or a function call but found the name {token.text!r} "
                                  f"(a field is written /{token.text}, a string '{token.text}')", token.pos, self.text)
        raise self.fail("a path (/field, ./field), a quoted string, a number or a function call")

    def function(self) -> Node:
        name_token = self.take()
        name = name_token.text
        self.expect("(", f"'(' after the function name {name!r}")
        args: list[Node] = []
        if self.token.kind != ")":
            args.append(self.filter_or_operation())
            while self.token.kind == ",":
                self.take()
                args.append(self.filter_or_operation())
        self.expect(")", f"',' or ')' in the arguments of {name}()")
        self.check_arity(name, len(args), name_token.pos)
        if name == "not":
            if not isinstance(args[0], (Compare, FilterCall, Not)):
                raise RecordPathError("not() takes a filter function or a comparison", name_token.pos, self.text)
            return Not(args[0], name_token.pos)
        if name in FILTER_FUNCTIONS:
            return FilterCall(name, tuple(args), name_token.pos)
        return Call(name, tuple(args), name_token.pos)

    def check_arity(self, name: str, count: int, pos: int) -> None:
        if name in UNSUPPORTED_FUNCTIONS:
            raise RecordPathError(f"the NiFi function {name}() is not supported by Flowsite", pos, self.text)
        if name not in FUNCTION_ARITY:
            raise RecordPathError(f"unknown function {name}() (see docs/record-path.md for the functions)", pos,
                                  self.text)
        least, most = FUNCTION_ARITY[name]
        if count < least or (most is not None and count > most):
            if most is None:
                wanted = f"at least {least}"
            elif least == most:
                wanted = str(least)
            else:
                wanted = f"{least} to {most}"
            plural = "" if wanted == "1" else "s"
            raise RecordPathError(f"{name}() takes {wanted} argument{plural} but got {count}", pos, self.text)

    # paths

    def absolute_path(self) -> Segment:
        if self.token.kind == "/" and self.peek().kind not in ("NAME", "STRING", "*", ".", ".."):
            self.take()
            node: Segment = Root()
            if self.token.kind == "[":
                raise self.fail("a field name after '/'")
            return node
        return self.steps(Root())

    def relative_path(self) -> Segment:
        token = self.take()
        node: Segment = Context() if token.kind == "." else Parent(Context())
        return self.steps(node)

    def steps(self, node: Segment) -> Segment:
        while True:
            kind = self.token.kind
            if kind == "/":
                self.take()
                token = self.token
                if token.kind in ("NAME", "STRING"):
                    self.take()
                    node = Child(node, token.text)
                elif token.kind == "*":
                    self.take()
                    node = WildcardChild(node)
                elif token.kind == ".":
                    self.take()
                    node = Current(node)
                elif token.kind == "..":
                    self.take()
                    node = Parent(node)
                else:
                    raise self.fail("a field name, '*', '.' or '..' after '/'")
            elif kind == "//":
                self.take()
                token = self.token
                if token.kind in ("NAME", "STRING"):
                    self.take()
                    node = Descendant(node, token.text)
                elif token.kind == "*":
                    self.take()
                    node = WildcardDescendant(node)
                else:
                    raise self.fail("a field name or '*' after '//'")
            elif kind == "[":
                node = self.bracket(node)
            else:
                return node

    def bracket(self, node: Segment) -> Segment:
        self.take()
        first, second = self.token, self.peek()
        if first.kind == "*" and second.kind == "]":
            self.i += 2
            return WildcardIndex(node)
        if first.kind in ("]", "EOF"):
            raise self.fail("an array index, a quoted map key, '*' or a predicate after '['")
        if first.kind == "STRING" and second.kind != "OP":
            keys = [self.take().text]
            while self.token.kind == ",":
                self.take()
                keys.append(self.expect("STRING", "a quoted map key after ','").text)
            self.expect("]", "',' or ']' after a map key")
            return MapKeys(node, tuple(keys))
        if first.kind == "NUMBER" and second.kind != "OP":
            single = second.kind == "]"
            ranges = [self.index_range()]
            while self.token.kind == ",":
                self.take()
                ranges.append(self.index_range())
            self.expect("]", "',' or ']' after an array index")
            return Index(node, tuple(ranges), single)
        start = self.token
        condition = self.filter_or_operation()
        if not isinstance(condition, (Compare, FilterCall, Not)):
            raise RecordPathError("a predicate must be a comparison (such as ./state = 'NY') or a filter function "
                                  "(such as contains(., 'x'))", start.pos, self.text)
        self.expect("]", "']' to close the predicate")
        return Predicate(node, condition)

    def index_range(self) -> tuple[int, int]:
        low = int(self.expect("NUMBER", "an array index").text)
        if self.token.kind == "..":
            self.take()
            high = int(self.expect("NUMBER", "the end of an index range (a number) after '..'").text)
            return low, high
        return low, low


def parse(text: str) -> Node:
    """Parse RecordPath ``text`` into its tree; raises RecordPathError naming the position."""
    if not isinstance(text, str):
        raise RecordPathError(f"a RecordPath is text, not {type(text).__name__}")
    return _Parser(text).parse()
