"""``math`` (java.lang.Math's static methods called by name), ``toRadix`` and ``fromRadix``."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.expression.functions import Scope

__all__ = ["math_function", "math_subjectless", "to_radix", "from_radix"]

_LONG_MIN, _LONG_MAX = -2**63, 2**63 - 1
_INT_MIN, _INT_MAX = -2**31, 2**31 - 1
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_RADIX_TEXT = re.compile(r"[+-]?[0-9A-Za-z]+")


def _long(value: int) -> int:
    return (value - _LONG_MIN) % 2**64 + _LONG_MIN  # wraps around as Java's long arithmetic does


def _exact(value: int, bounds: tuple[int, int] = (_LONG_MIN, _LONG_MAX)) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise ArithmeticError(f"{'integer' if bounds[1] == _INT_MAX else 'long'} overflow")
    return value


def _java_round(value: float) -> int:
    if math.isnan(value):
        return 0
    if math.isinf(value):
        return _LONG_MAX if value > 0 else _LONG_MIN
    return max(_LONG_MIN, min(_LONG_MAX, math.floor(value + 0.5)))


def _java_rint(value: float) -> float:
    return value if math.isinf(value) or math.isnan(value) else float(round(value))  # half to even, as rint


def _signum(value: float) -> float:
    return value if value == 0 or math.isnan(value) else math.copysign(1.0, value)


def _ulp(value: float) -> float:
    return math.ulp(value)


def _get_exponent(value: float) -> int:
    if math.isnan(value) or math.isinf(value):
        return 1024
    if value == 0:
        return -1023
    exponent = math.frexp(value)[1] - 1
    return max(exponent, -1023)


def _floor_div(left: int, right: int) -> int:
    if right == 0:
        raise ArithmeticError("/ by zero")
    return _long(left // right)


def _floor_mod(left: int, right: int) -> int:
    if right == 0:
        raise ArithmeticError("/ by zero")
    return left % right


def _ceil_div(left: int, right: int) -> int:
    if right == 0:
        raise ArithmeticError("/ by zero")
    return _long(-(-left // right))


def _safe(function: Callable[..., float]) -> Callable[..., float]:
    def call(*args: float) -> float:
        try:
            return function(*args)
        except ValueError:
            return math.nan  # Java returns NaN where Python's math raises a domain error
        except OverflowError:
            return math.inf
    return call


def _log(value: float) -> float:
    if value == 0:
        return -math.inf
    return math.log(value) if value > 0 else math.nan


def _log10(value: float) -> float:
    if value == 0:
        return -math.inf
    return math.log10(value) if value > 0 else math.nan


def _pow(base: float, exponent: float) -> float:
    try:
        result = math.pow(base, exponent)
    except ValueError:
        return math.nan
    except OverflowError:
        return math.inf if base > 0 or float(exponent).is_integer() and exponent % 2 == 0 else -math.inf
    return result


# Java's Math methods by (name, parameter kinds): "d" double, "l" long, "i" int.
_METHODS: dict[tuple[str, str], Callable[..., int | float]] = {
    ("random", ""): random.random,
    ("abs", "d"): abs, ("abs", "l"): lambda x: _long(abs(x)), ("absExact", "l"): lambda x: _exact(abs(x)),
    ("acos", "d"): _safe(math.acos), ("asin", "d"): _safe(math.asin), ("atan", "d"): math.atan,
    ("cbrt", "d"): math.cbrt,
    ("ceil", "d"): lambda x: x if math.isinf(x) or math.isnan(x) else float(math.ceil(x)),
    ("floor", "d"): lambda x: x if math.isinf(x) or math.isnan(x) else float(math.floor(x)),
    ("cos", "d"): _safe(math.cos), ("cosh", "d"): _safe(math.cosh), ("exp", "d"): _safe(math.exp),
    ("expm1", "d"): _safe(math.expm1), ("getExponent", "d"): _get_exponent, ("log", "d"): _log,
    ("log10", "d"): _log10, ("log1p", "d"): _safe(math.log1p), ("nextDown", "d"): lambda x: math.nextafter(x, -math.inf),
    ("nextUp", "d"): lambda x: math.nextafter(x, math.inf), ("rint", "d"): _java_rint, ("round", "d"): _java_round,
    ("signum", "d"): _signum, ("sin", "d"): _safe(math.sin), ("sinh", "d"): _safe(math.sinh),
    ("sqrt", "d"): _safe(math.sqrt), ("tan", "d"): _safe(math.tan), ("tanh", "d"): math.tanh,
    ("toDegrees", "d"): math.degrees, ("toRadians", "d"): math.radians, ("ulp", "d"): _ulp,
    ("negateExact", "l"): lambda x: _exact(-x), ("incrementExact", "l"): lambda x: _exact(x + 1),
    ("decrementExact", "l"): lambda x: _exact(x - 1), ("toIntExact", "l"): lambda x: _exact(x, (_INT_MIN, _INT_MAX)),
    ("atan2", "dd"): math.atan2, ("copySign", "dd"): math.copysign, ("hypot", "dd"): math.hypot,
    ("IEEEremainder", "dd"): _safe(math.remainder), ("max", "dd"): max, ("min", "dd"): min,
    ("nextAfter", "dd"): math.nextafter, ("pow", "dd"): _pow, ("scalb", "di"): _safe(math.ldexp),
    ("addExact", "ll"): lambda x, y: _exact(x + y), ("subtractExact", "ll"): lambda x, y: _exact(x - y),
    ("multiplyExact", "ll"): lambda x, y: _exact(x * y), ("floorDiv", "ll"): _floor_div, ("floorMod", "ll"): _floor_mod,
    ("ceilDiv", "ll"): _ceil_div, ("max", "ll"): max, ("min", "ll"): min,
    ("multiplyHigh", "ll"): lambda x, y: (x * y) >> 64,
}


def _kind(value: int | float) -> str:
    return "d" if isinstance(value, float) else "l"


def _call(method: str, kinds: str, args: list[int | float]) -> int | float:
    function = _METHODS.get((method, kinds))
    if function is None and kinds.endswith("l") and len(kinds) == 2:
        # NiFi retries with an int second parameter (Math.scalb(double, int)).
        function = _METHODS.get((method, kinds[0] + "i"))
        if function is not None:
            args = [args[0], (int(args[1]) - _INT_MIN) % 2**32 + _INT_MIN]  # Java's intValue() wraps
    if function is None:
        names = {"d": "double", "l": "long"}
        types = ", ".join(names[kind] for kind in kinds) or "no arguments"
        raise ValueError(f"java.lang.Math has no method {method!r} taking ({types}); use toNumber() or toDecimal() "
                         "to pass a long or a double")
    return function(*args)


def math_function(subject: int | float, method: str, argument: int | float | None = None) -> int | float:
    """``math(method[, argument])`` on a Number (Java long) or Decimal (Java double) subject."""
    if argument is None:
        return _call(method, _kind(subject), [subject])
    return _call(method, _kind(subject) + _kind(argument), [subject, argument])


def math_subjectless(scope: Scope, method: str, argument: int | float | None = None) -> int | float | None:
    """``${math('random')}``: a method of java.lang.Math without parameters."""
    if argument is not None:
        raise ValueError(f"a subjectless math({method!r}) takes no second argument")
    return _call(method, "", [])


def to_radix(subject: int, radix: int, width: int | None = None) -> str:
    """``toRadix(radix[, width])``: the whole number in base ``radix`` (2 to 36, lower-case digits), left-padded
    with zeros to ``width`` characters."""
    if not 2 <= radix <= 36:
        radix = 10  # Java's Long.toString falls back to base 10
    magnitude, digits = abs(subject), []
    while True:
        magnitude, digit = divmod(magnitude, radix)
        digits.append(_DIGITS[digit])
        if not magnitude:
            break
    text = ("-" if subject < 0 else "") + "".join(reversed(digits))
    if width is not None and width > len(text):
        text = "0" * (width - len(text)) + text
    return text


def from_radix(subject: str, radix: int) -> int:
    """``fromRadix(radix)``: the text read as a whole number in base ``radix`` (2 to 36), as Long.parseLong."""
    if not 2 <= radix <= 36:
        raise ValueError(f"radix {radix} is outside 2 to 36")
    if not _RADIX_TEXT.fullmatch(subject) or any(
            _DIGITS.find(char) < 0 or _DIGITS.find(char) >= radix for char in subject.lstrip("+-").lower()):
        raise ValueError(f"{subject!r} is not a number in base {radix}")
    value = int(subject, radix)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise ValueError(f"{subject!r} in base {radix} is outside the range of a long")
    return value
