"""The function library: each function's signature (subject type, parameters, result) and implementation."""

from __future__ import annotations

import base64
import hashlib
import itertools
import math
import random as _random
import re
import socket
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from urllib.parse import quote_plus, unquote_plus

from engine.expression import escaping, instants, json_functions, multi, numbers, standalone, text_functions
from engine.expression.dates import UTC, DatePattern
from engine.expression.types import Type, Value, java_replacement, to_date, to_string, to_whole

__all__ = ["Function", "Scope", "FUNCTIONS", "PROPAGATE", "CALL"]

PROPAGATE = object()  # a null subject makes the result null
CALL = object()  # the implementation handles a null subject itself


class Scope:
    """What an evaluation reads: FlowFile attributes first, then variables; parameters for ``#{name}``; the
    component's state for ``getStateValue``; and the value a multi-attribute subject is visiting."""

    __slots__ = ("attributes", "variables", "parameters", "state", "item")

    def __init__(self, attributes: Mapping[str, str], variables: Mapping[str, str] | None,
                 parameters: Mapping[str, str] | None = None, state: Mapping[str, str] | None = None) -> None:
        self.attributes = attributes
        self.variables = variables or {}
        self.parameters = parameters or {}
        self.state = state
        self.item: object = None

    def lookup(self, name: str) -> str | None:
        """Return the value of ``name``, or None when neither scope has it."""
        value = self.attributes.get(name)
        return self.variables.get(name) if value is None else value


@dataclass(frozen=True)
class Function:
    """One expression-language function. ``subject`` is None for functions that start an expression."""

    name: str
    impl: Callable[..., Value]
    subject: Type | None
    result: Type
    params: tuple[Type, ...] = ()
    optional: tuple[Type, ...] = ()
    variadic: Type | None = None
    on_null: object = PROPAGATE
    combine: str | None = None  # "any" or "all" for multi-attribute subjects
    reducer: bool = False  # join and count: over a multi-attribute subject they end the expression
    scoped: bool = False  # the implementation takes the Scope after the subject
    standalone: Callable[..., Value] | None = None  # the implementation when used without a subject
    lenient_arguments: bool = False  # an expression argument that does not convert arrives as its ValueError

    @property
    def arity(self) -> str:
        """The accepted argument count in words, for error messages."""
        low, high = len(self.params), len(self.params) + len(self.optional)
        if self.variadic is not None:
            return f"at least {low} argument{'s' * (low != 1)}"
        if low == high:
            return "no arguments" if low == 0 else f"{low} argument{'s' * (low != 1)}"
        return f"{low} to {high} arguments"

    def accepts(self, count: int) -> bool:
        """Whether ``count`` arguments fit this function's signature."""
        low = len(self.params)
        return count >= low if self.variadic is not None else low <= count <= low + len(self.optional)

    def param_type(self, index: int) -> Type:
        """The type of argument ``index`` (0-based)."""
        fixed = self.params + self.optional
        return fixed[index] if index < len(fixed) else self.variadic  # type: ignore[return-value]


def _substring(subject: str, start: int, end: int | None = None) -> str:
    # NiFi gives the empty string for a null subject and for any range Java's substring rejects.
    stop = len(subject) if end is None else end
    return subject[start:stop] if 0 <= start <= stop <= len(subject) else ""


def _before(subject: str, search: str) -> str:
    index = subject.find(search) if search else -1
    return subject if index < 0 else subject[:index]


def _before_last(subject: str, search: str) -> str:
    index = subject.rfind(search)
    return subject if index < 0 else subject[:index]


def _after(subject: str, search: str) -> str:
    index = subject.find(search)
    return subject if index < 0 else subject[index + len(search):]


def _after_last(subject: str, search: str) -> str:
    index = subject.rfind(search)
    return subject if index < 0 or index >= len(subject) else subject[index + len(search):]


def _regex_replace(count: int) -> Callable[..., str]:
    def replace(subject: str, regex, replacement: str) -> str:
        return regex.sub(java_replacement(replacement, regex.groups), subject, count=count)
    return replace


MAX_PAD_LENGTH = 16 * 1024 * 1024
_INT_MAX = 2**31 - 1


def _pad(left: bool) -> Callable[..., str]:
    def pad(subject: str, length: Value, padding: str = "_") -> str:
        width = to_whole(length)
        # NiFi leaves the subject alone for a null, non-positive or beyond-int length.
        if width is None or width <= 0 or width > _INT_MAX:
            return subject
        missing = width - len(subject)
        if missing <= 0:
            return subject
        if width > MAX_PAD_LENGTH:
            raise ValueError(f"padding to {width} characters exceeds the limit of {MAX_PAD_LENGTH}; "
                             "use a smaller length")
        padding = padding or "_"
        fill = (padding * (missing // len(padding) + 1))[:missing]
        return fill + subject if left else subject + fill
    return pad


def _is_empty(subject: Value) -> bool:
    text = to_string(subject)
    return text is None or text_functions.java_is_blank(text)


def _equals(subject: Value, other: Value) -> bool:
    # A null on either side is unequal to everything, itself included, as in NiFi.
    if subject is None or other is None:
        return False
    return subject == other if type(subject) is type(other) else to_string(subject) == to_string(other)


def _equals_ignore_case(subject: Value, other: Value) -> bool:
    left, right = to_string(subject), to_string(other)
    return left is not None and right is not None and left.lower() == right.lower()


def _long(value: int | float) -> int | float:
    if isinstance(value, int) and not -2**63 <= value < 2**63:
        return (value + 2**63) % 2**64 - 2**63  # whole numbers are Java longs and wrap around
    return value


def _divide(left: int | float, right: int | float) -> int | float:
    if isinstance(left, int) and isinstance(right, int):
        if right == 0:
            raise ValueError("division by zero")
        # Whole-number division truncates toward zero, as in Java.
        quotient = abs(left) // abs(right)
        return _long(quotient if (left < 0) == (right < 0) else -quotient)
    if right == 0:
        # Java's double division: a signed infinity, or NaN for 0/0.
        return math.nan if left == 0 or math.isnan(left) else math.copysign(math.inf, left) * math.copysign(1, right)
    return left / right


def _mod(left: int | float, right: int | float) -> int | float:
    if isinstance(left, int) and isinstance(right, int):
        if right == 0:
            raise ValueError("division by zero")
        return left - right * _divide(left, right)  # sign follows the dividend, as in Java
    if right == 0 or math.isinf(left):
        return math.nan
    return math.fmod(left, right)


def _url_encode(subject: str) -> str:
    return quote_plus(subject, safe="*").replace("~", "%7E")


_BAD_PERCENT = re.compile(r"%(?![0-9a-fA-F]{2})")


def _url_decode(subject: str) -> str:
    # Java's URLDecoder refuses a % that does not start two hex digits; Python's would keep it.
    bad = _BAD_PERCENT.search(subject)
    if bad is not None:
        raise ValueError(f"illegal escape {subject[bad.start():bad.start() + 3]!r} at offset {bad.start()}: "
                         "a % must be followed by two hex digits")
    return unquote_plus(subject, errors="replace")


def _base64_decode(subject: str) -> str:
    if len(subject) % 4 in (2, 3) and not subject.endswith("="):
        subject += "=" * (4 - len(subject) % 4)  # Java's decoder does not require the padding
    try:
        decoded = base64.b64decode(subject, validate=True)
    except ValueError as exc:
        raise ValueError(f"invalid Base64 value: {exc}") from None
    return decoded.decode("utf-8", errors="replace")


# Java's MessageDigest names (any case) and the hashlib algorithm each one is.
_DIGESTS = {
    "MD5": "md5", "SHA": "sha1", "SHA1": "sha1", "SHA-1": "sha1", "SHA-224": "sha224", "SHA-256": "sha256",
    "SHA-384": "sha384", "SHA-512": "sha512", "SHA-512/224": "sha512_224", "SHA-512/256": "sha512_256",
    "SHA3-224": "sha3_224", "SHA3-256": "sha3_256", "SHA3-384": "sha3_384", "SHA3-512": "sha3_512",
}


def _hash(subject: str, algorithm: str) -> str:
    name = _DIGESTS.get(algorithm.upper())
    if name is None:
        raise ValueError(f"Invalid hash algorithm: {algorithm} not in set [{', '.join(_DIGESTS)}]")
    return hashlib.new(name, subject.encode("utf-8")).hexdigest()


def _to_date(subject: Value, pattern: DatePattern | None = None, zone: tzinfo = UTC) -> datetime | None:
    if pattern is None or not isinstance(subject, str):
        return to_date(subject)
    return pattern.parse(subject.strip(), zone)


def _now(scope: Scope) -> datetime:
    now = datetime.now(timezone.utc)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)  # millisecond precision, as a Java Date


def _format(subject: datetime, pattern: DatePattern, zone: tzinfo = UTC) -> str:
    return pattern.format(subject.astimezone(zone))


_counter = itertools.count()
_counter_lock = threading.Lock()


def _next_int(scope: Scope) -> int:
    with _counter_lock:
        return next(_counter)


def _hostname(scope: Scope, fqdn: bool = False) -> str:
    return socket.getfqdn() if fqdn else socket.gethostname()


def _ip(scope: Scope) -> str:
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


S, N, B, D, A = Type.STRING, Type.NUMBER, Type.BOOLEAN, Type.DATE, Type.ANY
W, I, R, P, Z = Type.WHOLE, Type.INSTANT, Type.REGEX, Type.DATE_PATTERN, Type.ZONE
J = Type.JSON_PATH

_LIBRARY = [
    # Expressions that start without a subject.
    Function("now", _now, None, D),
    Function("UUID", lambda scope: str(uuid.uuid4()), None, S),
    Function("nextInt", _next_int, None, N),
    Function("random", lambda scope: _random.getrandbits(63), None, N),
    Function("hostname", _hostname, None, S, optional=(B,)),
    Function("ip", _ip, None, S),
    Function("literal", lambda scope, value: to_string(value), None, S, params=(A,)),
    Function("anyAttribute", multi.named, None, Type.MULTI, params=(S,), variadic=S, combine="any"),
    Function("allAttributes", multi.named, None, Type.MULTI, params=(S,), variadic=S, combine="all"),
    Function("anyMatchingAttribute", multi.matching, None, Type.MULTI, params=(R,), variadic=R, combine="any"),
    Function("allMatchingAttributes", multi.matching, None, Type.MULTI, params=(R,), variadic=R, combine="all"),
    Function("anyDelineatedValue", multi.delineated, None, Type.MULTI, params=(A, A), combine="any"),
    Function("allDelineatedValues", multi.delineated, None, Type.MULTI, params=(A, A), combine="all"),
    Function("join", multi.join_single, S, S, params=(S,), on_null=CALL, reducer=True),
    Function("count", multi.count_single, A, W, on_null=CALL, reducer=True),
    Function("getUri", standalone.get_uri, None, S, params=(A,) * 7),
    Function("thread", standalone.thread_name, None, S),
    Function("getStateValue", standalone.get_state_value, None, S, params=(S,)),
    # Strings.
    Function("toUpper", str.upper, S, S),
    Function("toLower", str.lower, S, S),
    Function("trim", text_functions.java_trim, S, S),
    Function("length", lambda s: 0 if s is None else len(s), S, N, on_null=CALL),
    Function("substring", _substring, S, S, params=(W,), optional=(W,), on_null=""),
    Function("substringBefore", _before, S, S, params=(S,), on_null=""),
    Function("substringBeforeLast", _before_last, S, S, params=(S,), on_null=""),
    Function("substringAfter", _after, S, S, params=(S,), on_null=""),
    Function("substringAfterLast", _after_last, S, S, params=(S,), on_null=""),
    Function("indexOf", lambda s, search: s.find(search), S, W, params=(S,), on_null=-1),
    Function("lastIndexOf", lambda s, search: s.rfind(search), S, W, params=(S,), on_null=-1),
    Function("append", lambda s, other: (s or "") + other, S, S, params=(S,), on_null=CALL),
    Function("prepend", lambda s, other: other + (s or ""), S, S, params=(S,), on_null=CALL),
    Function("replace", lambda s, old, new: s.replace(old, new), S, S, params=(S, S)),
    Function("replaceFirst", _regex_replace(1), S, S, params=(Type.REGEX, S)),
    Function("replaceAll", _regex_replace(0), S, S, params=(Type.REGEX, S)),
    Function("replaceNull", lambda s, default: default if s is None else s, A, A, params=(A,), on_null=CALL),
    Function("replaceEmpty", lambda s, default: default if _is_empty(s) else s, A, A, params=(A,), on_null=CALL),
    Function("padLeft", _pad(left=True), S, S, params=(A,), optional=(S,)),
    Function("padRight", _pad(left=False), S, S, params=(A,), optional=(S,)),
    Function("evaluateELString", standalone.evaluate_el_string, S, S, scoped=True),
    Function("toString", to_string, A, S),
    # Encodings.
    Function("urlEncode", _url_encode, S, S),
    Function("urlDecode", _url_decode, S, S),
    Function("base64Encode", lambda s: base64.b64encode(s.encode("utf-8")).decode("ascii"), S, S),
    Function("base64Decode", _base64_decode, S, S),
    Function("hash", _hash, S, S, params=(S,)),
    # Booleans.
    Function("isNull", lambda s: s is None, A, B, on_null=CALL),
    Function("notNull", lambda s: s is not None, A, B, on_null=CALL),
    Function("isEmpty", _is_empty, A, B, on_null=CALL),
    Function("equals", _equals, A, B, params=(A,), on_null=CALL),
    Function("equalsIgnoreCase", _equals_ignore_case, A, B, params=(A,), on_null=CALL),
    Function("contains", lambda s, search: search in s, S, B, params=(S,), on_null=False),
    Function("startsWith", str.startswith, S, B, params=(S,), on_null=False),
    Function("endsWith", str.endswith, S, B, params=(S,), on_null=False),
    Function("matches", lambda s, regex: regex.fullmatch(s) is not None, S, B, params=(Type.REGEX,), on_null=False),
    Function("find", lambda s, regex: regex.search(s) is not None, S, B, params=(Type.REGEX,), on_null=False),
    Function("in", lambda s, *values: s in values, S, B, params=(S,), variadic=S, on_null=False),
    Function("not", lambda s: not s, B, B),
    # As in NiFi, only a false (true) subject decides and (or); a null one defers to the argument.
    Function("and", lambda s, other: False if s is False else other, B, B, params=(B,), on_null=CALL),
    Function("or", lambda s, other: True if s is True else other, B, B, params=(B,), on_null=CALL),
    Function("gt", lambda s, other: s > other, N, B, params=(N,), on_null=False),
    Function("ge", lambda s, other: s >= other, N, B, params=(N,), on_null=False),
    Function("lt", lambda s, other: s < other, N, B, params=(N,), on_null=False),
    Function("le", lambda s, other: s <= other, N, B, params=(N,), on_null=False),
    Function("ifElse", lambda s, then, other: then if s is True else other, B, S, params=(S, S), on_null=CALL),
    # Numbers.
    Function("toNumber", lambda s: s, W, W),
    Function("toDecimal", lambda s: s, Type.DECIMAL, Type.DECIMAL),
    Function("plus", lambda s, other: _long(s + other), N, N, params=(N,)),
    Function("minus", lambda s, other: _long(s - other), N, N, params=(N,)),
    Function("multiply", lambda s, other: _long(s * other), N, N, params=(N,)),
    Function("divide", _divide, N, N, params=(N,)),
    Function("mod", _mod, N, N, params=(N,)),
    Function("math", numbers.math_function, N, N, params=(S,), optional=(N,), standalone=numbers.math_subjectless),
    Function("toRadix", numbers.to_radix, W, S, params=(W,), optional=(W,)),
    Function("fromRadix", numbers.from_radix, S, W, params=(W,)),
    # Dates and instants.
    Function("toDate", _to_date, A, D, optional=(P, Z)),
    Function("format", _format, D, S, params=(P,), optional=(Z,)),
    Function("isValidDate", instants.is_valid_date, S, B, params=(P,), optional=(Z,), on_null=False,
             lenient_arguments=True),
    Function("plusDuration", instants.plus_duration, D, D, params=(Type.AMOUNT,), optional=(Z,)),
    Function("minusDuration", instants.minus_duration, D, D, params=(Type.AMOUNT,), optional=(Z,)),
    Function("toInstant", instants.to_instant_function, A, I, params=(P, Z)),
    Function("formatInstant", instants.format_instant, I, S, params=(P,), optional=(Z,)),
    Function("plusInstantDuration", instants.plus_instant_duration, I, I, params=(Type.AMOUNT,)),
    Function("minusInstantDuration", instants.minus_instant_duration, I, I, params=(Type.AMOUNT,)),
    Function("isValidInstant", instants.is_valid_instant, S, B, on_null=False),
    Function("toMicros", instants.to_micros, I, W),
    Function("toNanos", instants.to_nanos, I, W),
    # Delimited lists, repetition, pattern mapping and name-based UUIDs (text_functions.py).
    Function("getDelimitedField", text_functions.get_delimited_field, S, S, params=(A,), optional=(S, S, S, B),
             on_null=""),
    Function("trimDelimitedList", text_functions.trim_delimited_list, S, S, params=(S,), on_null=""),
    Function("compactDelimitedList", text_functions.compact_delimited_list, S, S, params=(S,), on_null=""),
    Function("unique", text_functions.unique, S, S, params=(S,), on_null=""),
    Function("repeat", text_functions.repeat, S, S, params=(N,), optional=(N,), on_null=""),
    Function("replaceByPattern", text_functions.replace_by_pattern, S, S, params=(Type.PATTERN_MAPPING,)),
    Function("UUID3", text_functions.uuid3, S, S, params=(A,)),
    Function("UUID5", text_functions.uuid5, S, S, params=(A,)),
    # JSON (json_functions.py over engine/jsonpath.py).
    Function("isJson", json_functions.is_json, A, B, on_null=False),
    Function("jsonPath", json_functions.json_path, S, S, params=(J,), on_null=CALL,
             lenient_arguments=True),
    Function("jsonPathDelete", json_functions.json_path_delete, S, S, params=(J,), on_null=CALL,
             lenient_arguments=True),
    Function("jsonPathSet", json_functions.json_path_set, S, S, params=(J, A), on_null=CALL,
             lenient_arguments=True),
    Function("jsonPathAdd", json_functions.json_path_add, S, S, params=(J, A), on_null=CALL,
             lenient_arguments=True),
    Function("jsonPathPut", json_functions.json_path_put, S, S, params=(J, A, A), on_null=CALL,
             lenient_arguments=True),
    # Escaping with Commons Text's rules (escaping.py); a null subject gives the empty string.
    Function("escapeJson", escaping.escape_json, S, S, on_null=""),
    Function("escapeXml", escaping.escape_xml, S, S, on_null=""),
    Function("escapeCsv", escaping.escape_csv, S, S, on_null=""),
    Function("escapeHtml3", escaping.escape_html3, S, S, on_null=""),
    Function("escapeHtml4", escaping.escape_html4, S, S, on_null=""),
    Function("unescapeJson", escaping.unescape_json, S, S, on_null=""),
    Function("unescapeXml", escaping.unescape_xml, S, S, on_null=""),
    Function("unescapeCsv", escaping.unescape_csv, S, S, on_null=""),
    Function("unescapeHtml3", escaping.unescape_html3, S, S, on_null=""),
    Function("unescapeHtml4", escaping.unescape_html4, S, S, on_null=""),
]

FUNCTIONS: dict[str, Function] = {function.name: function for function in _LIBRARY}
