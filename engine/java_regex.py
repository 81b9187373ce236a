"""Java regular expressions and replacement strings (as NiFi users write them), compiled with ``regex``.

A Java pattern (java.util.regex.Pattern's syntax and meaning) is translated into the ``regex``
module's version-1 syntax, which has what Java has and ``re`` lacks: Unicode properties, scripts
and blocks, nested classes with intersection, scoped inline flags and grapheme clusters. The
translation gives Java's meanings where the two differ: ASCII ``\\w \\d \\s`` and POSIX classes
(Unicode with ``(?U)``), Java's line terminators for ``.``, ``^``, ``$`` and ``\\Z`` (only ``\\n``
with ``(?d)``), Java's ``\\h``/``\\v``, ``\\Q...\\E``, ``(?x)`` comments also inside classes, and
ASCII-only case folding of letters and classes unless ``(?u)``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

from engine.java_properties import property_set

__all__ = ["java_regex", "java_replacement", "to_python_pattern", "UNICODE_CASE", "UNICODE_CHARACTER_CLASS",
           "UNIX_LINES"]

# Java's Pattern flags that ``re`` has no bit for; pass them to java_regex with the ``re`` ones.
UNICODE_CASE = 1 << 28
UNICODE_CHARACTER_CLASS = 1 << 29
UNIX_LINES = 1 << 27

_TERMINATORS = r"\n\r\x85\u2028\u2029"
_FLAG_LETTERS = "idmsuxU"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "a": "\a", "e": "\x1b"}
_QUANTIFIER = re.compile(r"\{(\d+)(,(\d*))?\}")
_NAMED_GROUP = re.compile(r"\?<([A-Za-z][A-Za-z0-9]*)>")
_INLINE_FLAGS = re.compile(rf"\?([{_FLAG_LETTERS}]*)(?:-([{_FLAG_LETTERS}]*))?([:)])")


def _char(code: int) -> str:
    """One code point written so that it is literal both inside and outside a ``regex`` set."""
    char = chr(code)
    if char.isalnum() and code < 128:
        return char
    return f"\\U{code:08x}"


class _Translator:
    """One pass over a Java pattern, tracking its inline flags group by group, emitting ``regex`` syntax."""

    def __init__(self, pattern: str, flags: set[str]) -> None:
        self.src = pattern
        self.pos = 0
        self.flags = flags
        self.stack: list[set[str]] = []
        self.groups = 0

    def error(self, message: str) -> ValueError:
        return ValueError(f"invalid regular expression {self.src!r}: {message} near index {self.pos}")

    def peek(self, text: str) -> bool:
        return self.src.startswith(text, self.pos)

    def more(self) -> bool:
        return self.pos < len(self.src)

    def skip_comments(self) -> None:
        """With ``(?x)``, whitespace and ``#`` to the end of the line are not part of the pattern."""
        while "x" in self.flags and self.more():
            char = self.src[self.pos]
            if char.isspace():
                self.pos += 1
            elif char == "#":
                while self.more() and self.src[self.pos] not in "\n\r":
                    self.pos += 1
            else:
                return

    # --- outside classes -----------------------------------------------------------------------

    def translate(self) -> str:
        out: list[str] = []
        while True:
            self.skip_comments()
            if not self.more():
                break
            char = self.src[self.pos]
            if char == "\\":
                escaped = self.escape(inside=False)
                out.append(self.literal(escaped) if isinstance(escaped, int) else escaped)
            elif char == "(":
                out.append(self.group_open())
            elif char == ")":
                if not self.stack:
                    raise self.error("unmatched closing ')'")
                self.flags = self.stack.pop()
                self.pos += 1
                out.append(")")
            elif char == "[":
                body = "[" + self.char_class() + "]"
                if self.ascii_folding() and "\\p" not in body and "\\P" not in body:
                    body = f"(?-i:{body})"  # ASCII letters got their other case explicitly
                out.append(body)
            elif char == ".":
                self.pos += 1
                out.append("(?s:.)" if "s" in self.flags else "[^\\n]" if "d" in self.flags else f"[^{_TERMINATORS}]")
            elif char == "^":
                self.pos += 1
                out.append(self.caret())
            elif char == "$":
                self.pos += 1
                out.append(self.dollar())
            elif char == "{":
                found = _QUANTIFIER.match(self.src, self.pos)
                if not found or not out:
                    raise self.error("illegal repetition")
                if found.group(3) and int(found.group(3)) < int(found.group(1)):
                    raise self.error("illegal repetition range")
                out.append(found.group(0))
                self.pos = found.end()
            elif char in "*+?|":
                out.append(char)
                self.pos += 1
            else:
                self.pos += 1
                out.append(self.literal(ord(char)))
        if self.stack:
            raise self.error("unclosed group")
        # A reference to a group the pattern does not have is no error in Java; it never matches.
        return re.sub("\x00(\\d+)\x00", lambda m: f"(?:\\{m.group(1)})" if int(m.group(1)) <= self.groups
                      else "(?!)", "".join(out))

    def ascii_folding(self) -> bool:
        """Case-insensitive without UNICODE_CASE: Java folds the case of US-ASCII letters only."""
        return "i" in self.flags and "u" not in self.flags and "U" not in self.flags

    def literal(self, code: int) -> str:
        text = _char(code)
        if self.ascii_folding() and code > 127 and chr(code).lower() != chr(code).upper():
            return f"(?-i:{text})"
        return text

    def class_range(self, low: int, high: int) -> str:
        """A class range (or single character), with the other case of its ASCII letters when folding ASCII."""
        parts = [(low, high)]
        if self.ascii_folding():
            for start, end, shift in ((ord("a"), ord("z"), -32), (ord("A"), ord("Z"), 32)):
                if low <= end and high >= start:
                    parts.append((max(low, start) + shift, min(high, end) + shift))
        return "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in parts)

    def caret(self) -> str:
        if "m" not in self.flags:
            return r"\A"
        if "d" in self.flags:
            return r"(?:\A|(?<=\n)(?!\Z))"
        return r"(?:\A|(?<=[\n\x85\u2028\u2029]|\r(?!\n))(?!\Z))"

    def dollar(self) -> str:
        if "d" in self.flags:
            return r"(?=\n|\Z)" if "m" in self.flags else r"(?=\n?\Z)"
        if "m" in self.flags:
            return rf"(?<!\r(?=\n))(?=[{_TERMINATORS}]|\Z)"
        return rf"(?<!\r(?=\n))(?=(?:\r\n|[{_TERMINATORS}])?\Z)"

    def group_open(self) -> str:
        self.pos += 1
        saved = set(self.flags)
        if not self.peek("?"):
            self.groups += 1
            self.stack.append(saved)
            return "("
        for java, python in (("?:", "(?:"), ("?=", "(?="), ("?!", "(?!"), ("?<=", "(?<="), ("?<!", "(?<!"),
                             ("?>", "(?>")):
            if self.peek(java):
                self.pos += len(java)
                self.stack.append(saved)
                return python
        named = _NAMED_GROUP.match(self.src, self.pos)
        if named:
            self.pos = named.end()
            self.groups += 1
            self.stack.append(saved)
            return f"(?P<{named.group(1)}>"
        found = _INLINE_FLAGS.match(self.src, self.pos)
        if not found:
            raise self.error("unknown inline modifier or group construct")
        self.pos = found.end()
        on, off = set(found.group(1)), set(found.group(2) or "")
        flags = (self.flags | on) - off
        case = "(?i" if "i" in on else "(?-i" if "i" in off else ""
        if found.group(3) == ")":
            self.flags = flags
            return case + ")" if case else ""
        self.stack.append(saved)
        self.flags = flags
        return (case or "(?") + ":"

    # --- escapes ---------------------------------------------------------------------------------

    def escape(self, inside: bool) -> int | str:
        """Translate the escape at ``pos``: the code point of a single character, else a set item
        (inside a class) or an expression (outside)."""
        self.pos += 1
        if not self.more():
            raise self.error("unexpected end of pattern after '\\'")
        char = self.src[self.pos]
        self.pos += 1
        code = self.escaped_code(char)
        if code is not None:
            return code
        if char in "pP":
            item = self.property(char == "P")
            return item if inside else "[" + item + "]"
        shorthand = self.shorthand(char)
        if shorthand is not None:
            return shorthand if inside else "[" + shorthand + "]"
        if char == "Q":
            end = self.src.find("\\E", self.pos)
            end = len(self.src) if end < 0 else end
            text, self.pos = self.src[self.pos:end], min(end + 2, len(self.src))
            if inside:
                return "".join(self.class_range(ord(c), ord(c)) for c in text)
            return "".join(self.literal(ord(c)) for c in text)
        if inside:
            raise self.error(f"illegal escape \\{char} in a character class")
        # Java 19+: \b agrees with \w, so it is an ASCII word boundary unless UNICODE_CHARACTER_CLASS.
        word = "[a-zA-Z0-9_]"
        boundary = r"\b" if "U" in self.flags else f"(?:(?<={word})(?!{word})|(?<!{word})(?={word}))"
        not_boundary = r"\B" if "U" in self.flags else f"(?:(?<={word})(?={word})|(?<!{word})(?!{word}))"
        anchors = {"A": r"\A", "z": r"\Z", "b": boundary, "B": not_boundary, "G": r"\G", "X": r"\X",
                   "Z": r"(?=\n?\Z)" if "d" in self.flags else rf"(?<!\r(?=\n))(?=(?:\r\n|[{_TERMINATORS}])?\Z)",
                   "R": r"(?>\r\n|[\n\x0b\f\r\x85\u2028\u2029])"}
        if char in anchors:
            return anchors[char]
        if char.isdigit():
            number = char
            while self.more() and self.src[self.pos].isdigit() and int(number + self.src[self.pos]) <= self.groups:
                number += self.src[self.pos]
                self.pos += 1
            return f"\x00{number}\x00"  # resolved when the number of groups is known
        if char == "k":
            found = re.compile(r"<([A-Za-z][A-Za-z0-9]*)>").match(self.src, self.pos)
            if not found:
                raise self.error("\\k is not followed by <name>")
            self.pos = found.end()
            return f"(?P={found.group(1)})"
        raise self.error(f"illegal or unsupported escape sequence \\{char}")

    def escaped_code(self, char: str) -> int | None:
        """The code point of a character escape (``\\t``, ``\\0nn``, ``\\x{h..h}``, ``\\cX``, ...), else None."""
        if char in _SIMPLE_ESCAPES:
            return ord(_SIMPLE_ESCAPES[char])
        if not char.isalnum():
            return ord(char)
        src = self.src
        if char == "0":
            digits = re.compile(r"[0-3][0-7]{0,2}|[4-7][0-7]?").match(src, self.pos)
            if not digits:
                raise self.error("illegal octal escape sequence")
            self.pos = digits.end()
            return int(digits.group(0), 8)
        if char == "x":
            found = re.compile(r"\{([0-9a-fA-F]+)\}|[0-9a-fA-F]{2}").match(src, self.pos)
            if not found or int(found.group(1) or found.group(0), 16) > 0x10FFFF:
                raise self.error("illegal hexadecimal escape sequence")
            self.pos = found.end()
            return int(found.group(1) or found.group(0), 16)
        if char == "u":
            found = re.compile(r"[0-9a-fA-F]{4}").match(src, self.pos)
            if not found:
                raise self.error("illegal Unicode escape sequence")
            self.pos = found.end()
            code = int(found.group(0), 16)
            low = re.compile(r"\\u([dD][c-fC-F][0-9a-fA-F]{2})").match(src, self.pos)
            if 0xD800 <= code <= 0xDBFF and low:  # a surrogate pair is one code point
                self.pos = low.end()
                return 0x10000 + ((code - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
            return code
        if char == "c":
            if not self.more():
                raise self.error("illegal control escape sequence")
            self.pos += 1
            return ord(src[self.pos - 1]) ^ 64
        if char == "N":
            found = re.compile(r"\{([^}]*)\}").match(src, self.pos)
            try:
                code = ord(unicodedata.lookup(found.group(1))) if found else None
            except KeyError:
                code = None
            if code is None:
                raise self.error("unknown character name in \\N{...}")
            self.pos = found.end()  # type: ignore[union-attr]
            return code
        return None

    def shorthand(self, char: str) -> str | None:
        """Java's predefined classes as a set item."""
        unicode = "U" in self.flags
        sets = {
            "d": r"\p{Nd}" if unicode else "0-9",
            "w": r"\p{Alphabetic}\p{Mn}\p{Me}\p{Mc}\p{Nd}\p{Pc}\p{Join_Control}" if unicode else "a-zA-Z_0-9",
            "s": r"\p{White_Space}" if unicode else r" \t\n\x0b\f\r",
            "h": r" \t\xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000",
            "v": r"\n\x0b\f\r\x85\u2028\u2029",
        }
        if char in sets:
            return "[" + sets[char] + "]"
        if char.lower() in sets:
            return "[^" + sets[char.lower()] + "]"
        return None

    def property(self, negated: bool) -> str:
        if self.peek("{"):
            end = self.src.find("}", self.pos)
            if end < 0:
                raise self.error("unclosed character family")
            name, self.pos = self.src[self.pos + 1:end], end + 1
        elif self.more():
            name, self.pos = self.src[self.pos], self.pos + 1
        else:
            raise self.error("illegal character family")
        item = property_set(name, "U" in self.flags)
        if item is None:
            raise self.error(f"unknown character property name {{{name}}}")
        return "[^" + item + "]" if negated else "[" + item + "]"

    # --- character classes -------------------------------------------------------------------------

    def char_class(self) -> str:
        """Translate a Java class starting at ``[`` into a ``regex`` version-1 set body (without brackets)."""
        self.pos += 1
        negated = self.peek("^")
        if negated:
            self.pos += 1
        operands: list[str] = []
        items: list[str] = []
        first = True
        while True:
            self.skip_comments()
            if not self.more():
                raise self.error("unclosed character class")
            char = self.src[self.pos]
            if char == "]" and not first:
                self.pos += 1
                break
            first = False
            if self.peek("&&"):
                self.pos += 2
                operands.append("".join(items))
                items = []
                continue
            if char == "[":
                items.append("[" + self.char_class() + "]")
                continue
            start = self.class_atom()
            self.skip_comments()
            if isinstance(start, int) and self.peek("-") and not self.src.startswith("]", self.pos + 1) \
                    and not self.src.startswith("[", self.pos + 1):
                self.pos += 1
                self.skip_comments()
                end = self.class_atom()
                if not isinstance(end, int) or end < start:
                    raise self.error("illegal character range")
                items.append(self.class_range(start, end))
            else:
                items.append(self.class_range(start, start) if isinstance(start, int) else start)
        operands.append("".join(items))
        body = "&&".join(f"[{operand}]" for operand in operands if operand)
        if not body:
            raise self.error("empty character class")
        return ("^" if negated else "") + body

    def class_atom(self) -> int | str:
        """One class member: the code point of a single character, else a set item."""
        if not self.more():
            raise self.error("unclosed character class")
        char = self.src[self.pos]
        if char != "\\":
            self.pos += 1
            return ord(char)
        return self.escape(inside=True)


def _initial_flags(flags: int) -> set[str]:
    letters = set()
    for bit, letter in ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"),
                        (UNICODE_CASE, "u"), (UNICODE_CHARACTER_CLASS, "U"), (UNIX_LINES, "d")):
        if flags & bit:
            letters.add(letter)
    return letters


def _translate(pattern: str, flags: int = 0) -> str:
    return _Translator(pattern, _initial_flags(flags)).translate()


def to_python_pattern(pattern: str, flags: int = 0) -> str:
    """The ``regex`` (version 1) pattern with the meaning of a Java pattern; ValueError when it is invalid.

    ``flags`` as for java_regex; IGNORECASE must still be given to ``regex.compile`` (or as ``(?i)``)."""
    return _translate(pattern, flags)


@lru_cache(maxsize=512)
def java_regex(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """Compile a Java regular expression; ValueError naming the pattern when it is invalid.

    ``flags`` are ``re`` flags (IGNORECASE, MULTILINE, DOTALL, VERBOSE; ASCII is Java's default anyway)
    plus UNICODE_CASE, UNICODE_CHARACTER_CLASS and UNIX_LINES.
    """
    translated = _translate(pattern, flags)
    compiled_flags = regex.V1 | (regex.IGNORECASE if flags & re.IGNORECASE else 0)
    try:
        # Java folds case one character at a time (simple case folding), never 'ß' to 'ss'.
        return regex.compile("(?-f)" + translated, compiled_flags)
    except regex.error as exc:
        # exc.msg without its position, which is one in the translation, not in the user's pattern
        raise ValueError(f"invalid regular expression {pattern!r}: {exc.msg}") from None


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
