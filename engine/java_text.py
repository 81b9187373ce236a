"""Values as Java prints them, for the places NiFi's output shows Java's text."""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["java_double"]


def java_double(value: float) -> str:
    """A float as Java's ``Double.toString`` prints it: ``7.0``, ``0.001``, ``1.0E7``, ``1.5E-4``,
    ``-0.0``, ``NaN``, ``Infinity``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(float(value))  # Python's shortest round-trip form, positional in this range as in Java
    sign, digits, exponent = Decimal(repr(float(value))).as_tuple()
    shown = "".join(map(str, digits)).rstrip("0") or "0"
    power = len(digits) + int(exponent) - 1
    return f"{'-' if sign else ''}{shown[0]}.{shown[1:] or '0'}E{power}"
