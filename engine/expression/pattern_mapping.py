"""replaceByPattern's rules (``pattern:replacement`` pairs separated by commas), read as NiFi reads them."""

from __future__ import annotations

import re

from engine.java_regex import java_regex

__all__ = ["java_trim", "mapping_rules"]

_TRIMMED = "".join(chr(code) for code in range(0x21))


def java_trim(text: str) -> str:
    """Java's String.trim: strip every character up to and including the space (controls too)."""
    return text.strip(_TRIMMED)


def _java_split(text: str, separator: str) -> list[str]:
    """Java's String.split with a literal separator: trailing empty strings are dropped."""
    parts = text.split(separator)
    while len(parts) > 1 and not parts[-1]:
        parts.pop()
    return [] if parts == [""] and text else parts


def mapping_rules(rules: str) -> list[tuple[re.Pattern[str], str]]:
    """The (pattern, replacement) rules; ValueError for a rule without ``:``. A rule whose pattern is blank or
    does not compile is skipped, as NiFi skips it."""
    compiled = []
    if not rules.strip():
        return compiled
    for mapping in _java_split(rules, ","):
        parts = _java_split(java_trim(mapping), ":")
        if len(parts) < 2:
            raise ValueError(f"mapping rule {mapping!r} is not of the form pattern:replacement")
        pattern, replacement = parts[0], parts[1]
        if not pattern.strip() or not replacement.strip():
            continue
        try:
            compiled.append((java_regex(pattern), replacement))
        except (re.error, ValueError):
            continue
    return compiled
