"""Java regular expressions and replacement strings (as NiFi users write them) for Python's ``re``."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["java_regex", "java_replacement", "to_python_pattern"]

_NAMED_GROUP = re.compile(r"\(\?<([A-Za-z][A-Za-z0-9]*)>")


def to_python_pattern(pattern: str) -> str:
    """Translate Java's named groups ``(?<name>...)`` into Python's ``(?P<name>...)``.

    Possessive quantifiers and atomic groups need no translation (Python 3.11 has them).
    """
    return _NAMED_GROUP.sub(r"(?P<\1>", pattern)


@lru_cache(maxsize=512)
def java_regex(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """Compile a Java regular expression with Python's ``re``; raises ValueError naming the pattern."""
    try:
        return re.compile(to_python_pattern(pattern), flags)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None


def java_replacement(replacement: str, groups: int) -> str:
    """Translate a Java replacement (``$1``, ``${name}``, ``\\$``) into a Python ``re.sub`` template."""
    out = []
    i = 0
    while i < len(replacement):
        char = replacement[i]
        if char == "\\" and i + 1 < len(replacement):
            out.append(replacement[i + 1].replace("\\", "\\\\"))
            i += 2
        elif char == "$" and i + 1 < len(replacement) and replacement[i + 1].isdigit():
            number = replacement[i + 1]
            i += 2
            # Java extends the group number digit by digit while the longer number is still a group.
            while i < len(replacement) and replacement[i].isdigit() and int(number + replacement[i]) <= groups:
                number += replacement[i]
                i += 1
            out.append(f"\\g<{number}>")
        elif char == "$" and replacement.startswith("{", i + 1) and "}" in replacement[i + 2:]:
            end = replacement.index("}", i + 2)
            out.append(f"\\g<{replacement[i + 2:end]}>")
            i = end + 1
        else:
            out.append("\\\\" if char == "\\" else char)
            i += 1
    return "".join(out)
