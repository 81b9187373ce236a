"""Java's ``\\p{...}`` character families as ``regex`` (version 1) set bodies.

Names resolve as java.util.regex.Pattern resolves them: ``key=value`` (script/sc, block/blk,
general_category/gc), ``In`` + block, ``Is`` + binary property, category or script, and bare names
for categories, POSIX classes (ASCII unless UNICODE_CHARACTER_CLASS) and java.lang.Character
predicates (``javaLowerCase``...).
"""

from __future__ import annotations

import re
from functools import lru_cache

import regex

__all__ = ["property_set"]

_CATEGORIES = {
    "L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No", "Z", "Zs", "Zl", "Zp",
    "C", "Cc", "Cf", "Co", "Cs", "Cn", "P", "Pd", "Ps", "Pe", "Pc", "Po", "Pi", "Pf", "S", "Sm", "Sc", "Sk",
    "So", "LC",
}

_PUNCT = r"!-/:-@\[-`{-~"

_POSIX_ASCII = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": r"\x00-\x7f", "Alpha": "a-zA-Z", "Digit": "0-9",
    "Alnum": "a-zA-Z0-9", "Punct": _PUNCT, "Graph": r"!-~", "Print": r" -~", "Blank": r" \t",
    "Cntrl": r"\x00-\x1f\x7f", "XDigit": "0-9a-fA-F", "Space": r" \t\n\x0b\f\r",
}

_GRAPH = r"[^\p{White_Space}\p{Cc}\p{Cs}\p{Cn}]"
_BLANK = r"[\p{White_Space}]--[\p{Zl}\p{Zp}\n\x0b\f\r\x85]"

# Unicode binary properties (after ``Is``) and the POSIX classes under UNICODE_CHARACTER_CLASS.
_UNICODE = {
    "ALPHABETIC": r"\p{Alphabetic}", "ASSIGNED": r"\P{Cn}", "CONTROL": r"\p{Cc}", "EMOJI": r"\p{Emoji}",
    "EMOJI_PRESENTATION": r"\p{Emoji_Presentation}", "EMOJI_MODIFIER": r"\p{Emoji_Modifier}",
    "EMOJI_MODIFIER_BASE": r"\p{Emoji_Modifier_Base}", "EMOJI_COMPONENT": r"\p{Emoji_Component}",
    "EXTENDED_PICTOGRAPHIC": r"\p{Extended_Pictographic}", "HEX_DIGIT": r"\p{Hex_Digit}",
    "IDEOGRAPHIC": r"\p{Ideographic}", "JOIN_CONTROL": r"\p{Join_Control}", "LETTER": r"\p{L}",
    "LOWERCASE": r"\p{Lowercase}", "NONCHARACTER_CODE_POINT": r"\p{Noncharacter_Code_Point}",
    "TITLECASE": r"\p{Lt}", "PUNCTUATION": r"\p{P}", "UPPERCASE": r"\p{Uppercase}",
    "WHITE_SPACE": r"\p{White_Space}", "DIGIT": r"\p{Nd}", "ALNUM": r"\p{Alphabetic}\p{Nd}",
    "BLANK": _BLANK, "GRAPH": _GRAPH, "PRINT": rf"[{_GRAPH}{_BLANK}]--[\p{{Cc}}]",
    "WORD": r"\p{Alphabetic}\p{Mn}\p{Me}\p{Mc}\p{Nd}\p{Pc}\p{Join_Control}",
}
_UNICODE_ALIASES = {"HEXDIGIT": "HEX_DIGIT", "JOINCONTROL": "JOIN_CONTROL", "WHITESPACE": "WHITE_SPACE",
                    "NONCHARACTERCODEPOINT": "NONCHARACTER_CODE_POINT"}

_POSIX_UNICODE = {
    "Lower": "LOWERCASE", "Upper": "UPPERCASE", "Alpha": "ALPHABETIC", "Digit": "DIGIT", "Alnum": "ALNUM",
    "Punct": "PUNCTUATION", "Graph": "GRAPH", "Print": "PRINT", "Blank": "BLANK", "Cntrl": "CONTROL",
    "Space": "WHITE_SPACE",
}

_IGNORABLE = r"\x00-\x08\x0e-\x1b\x7f-\x9f\p{Cf}"
_JAVA = {
    "javaLowerCase": r"\p{Lowercase}", "javaUpperCase": r"\p{Uppercase}", "javaTitleCase": r"\p{Lt}",
    "javaDigit": r"\p{Nd}", "javaDefined": r"\P{Cn}", "javaLetter": r"\p{L}", "javaLetterOrDigit": r"\p{L}\p{Nd}",
    "javaAlphabetic": r"\p{Alphabetic}", "javaIdeographic": r"\p{Ideographic}",
    "javaISOControl": r"\x00-\x1f\x7f-\x9f", "javaMirrored": r"\p{Bidi_Mirrored}",
    "javaSpaceChar": r"\p{Zs}\p{Zl}\p{Zp}",
    # Character.isWhitespace: space separators except the no-break ones, and the ASCII/FS-US controls.
    "javaWhitespace": r"[[\p{Zs}\p{Zl}\p{Zp}]--[\xa0\u2007\u202f]][\t\n\x0b\f\r\x1c-\x1f]",
    "javaIdentifierIgnorable": _IGNORABLE,
    "javaJavaIdentifierStart": r"\p{L}\p{Nl}\p{Sc}\p{Pc}",
    "javaJavaIdentifierPart": rf"\p{{L}}\p{{Sc}}\p{{Pc}}\p{{Nd}}\p{{Nl}}\p{{Mc}}\p{{Mn}}{_IGNORABLE}",
    "javaUnicodeIdentifierStart": r"\p{ID_Start}",
    "javaUnicodeIdentifierPart": rf"\p{{ID_Continue}}{_IGNORABLE}",
}

_NAME = re.compile(r"[A-Za-z0-9_ \-]+")


@lru_cache(maxsize=256)
def _known(kind: str, value: str) -> str | None:
    """``\\p{kind=value}`` when the regex module knows that script or block, else None."""
    item = rf"\p{{{kind}={value}}}"
    try:
        regex.compile(item)
    except regex.error:
        return None
    return item


def _unicode_property(name: str) -> str | None:
    key = name.upper().replace(" ", "_")
    key = _UNICODE_ALIASES.get(key, key)
    return _UNICODE.get(key)


def _category(name: str, unicode: bool) -> str | None:
    if name in _CATEGORIES:
        return rf"\p{{{name}}}"
    if name == "LD":
        return r"\p{L}\p{Nd}"
    if name == "L1":
        return r"\x00-\xff"
    if name == "all":
        return r"\x00-\U0010ffff"
    if name in _POSIX_ASCII:
        if unicode and name in _POSIX_UNICODE:
            return _UNICODE[_POSIX_UNICODE[name]]
        if unicode and name == "XDigit":
            return r"\p{Nd}\p{Hex_Digit}"
        return _POSIX_ASCII[name]
    return _JAVA.get(name)


def property_set(name: str, unicode: bool) -> str | None:
    """The set body for ``\\p{name}`` (``unicode``: UNICODE_CHARACTER_CLASS is on), or None when Java
    knows no such family."""
    if "=" in name:
        key, value = name.split("=", 1)
        key = key.lower()
        if not _NAME.fullmatch(value):
            return None
        if key in ("sc", "script"):
            return _known("Script", value)
        if key in ("blk", "block"):
            return _known("Block", value)
        if key in ("gc", "general_category"):
            return _category(value, unicode)
        return None
    if name.startswith("In") and _NAME.fullmatch(name[2:]):
        return _known("Block", name[2:])
    if name.startswith("Is") and _NAME.fullmatch(name[2:]):
        rest = name[2:]
        return _unicode_property(rest) or _category(rest, unicode) or _known("Script", rest)
    return _category(name, unicode)
