"""The escape/unescape functions, with the rules of Apache Commons Text's StringEscapeUtils (as NiFi uses).

Each function takes and returns a string; a null subject is the caller's business.
"""

from __future__ import annotations

import re
from html.entities import codepoint2name

__all__ = ["escape_json", "unescape_json", "escape_xml", "unescape_xml", "escape_csv", "unescape_csv",
           "escape_html3", "unescape_html3", "escape_html4", "unescape_html4"]

_BASIC = {ord('"'): "&quot;", ord("&"): "&amp;", ord("<"): "&lt;", ord(">"): "&gt;"}
# HTML 4.01's entities are Python's table; HTML 3.2 has the basic four and ISO-8859-1's upper half.
_HTML4 = {code: f"&{name};" for code, name in codepoint2name.items()}
_HTML3 = {code: entity for code, entity in _HTML4.items() if code in _BASIC or 0xA0 <= code <= 0xFF}
_HTML4_NAMES = {entity: chr(code) for code, entity in _HTML4.items()}
_HTML3_NAMES = {entity: chr(code) for code, entity in _HTML3.items()}
_XML_NAMES = {"&quot;": '"', "&amp;": "&", "&lt;": "<", "&gt;": ">", "&apos;": "'"}

_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\n": "\\n", "\t": "\\t", "\f": "\\f",
                 "\r": "\\r"}


def _utf16_escape(char: str) -> str:
    code = ord(char)
    if code > 0xFFFF:
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"
    return f"\\u{code:04X}"


def escape_json(text: str) -> str:
    """Escape quotes, backslash, slash and control characters; everything outside printable ASCII becomes \\uXXXX."""
    out = []
    for char in text:
        escaped = _JSON_ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.append(_utf16_escape(char))
    return "".join(out)


_JAVA_ESCAPE = re.compile(r"\\(?:([0-3][0-7]{0,2}|[4-7][0-7]?)|(u+)\+?|(.)|$)", re.DOTALL)
_JAVA_CONTROLS = {"b": "\b", "n": "\n", "t": "\t", "f": "\f", "r": "\r", "\\": "\\", '"': '"', "'": "'"}
_SURROGATES = re.compile("[\ud800-\udfff]")


def unescape_json(text: str) -> str:
    """Undo Java/JSON escapes: octal, \\uXXXX, \\b \\n \\t \\f \\r, \\\\ \\" \\'; any other backslash is dropped."""
    out, pos = [], 0
    while True:
        index = text.find("\\", pos)
        if index < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:index])
        match = _JAVA_ESCAPE.match(text, index)
        octal, unicode, other = match.group(1), match.group(2), match.group(3)
        if octal is not None:
            out.append(chr(int(octal, 8)))
            pos = match.end()
        elif unicode is not None:
            digits = text[match.end():match.end() + 4]
            if len(digits) < 4:
                raise ValueError(f"Less than 4 hex digits in unicode value: '{text[index:]}' due to end of "
                                 "CharSequence")
            if not re.fullmatch(r"[+-]?[0-9a-fA-F]+", digits):
                raise ValueError(f"Unable to parse unicode value: {digits}")
            out.append(chr(int(digits, 16) & 0xFFFF))
            pos = match.end() + 4
        elif other is not None and other in _JAVA_CONTROLS:
            out.append(_JAVA_CONTROLS[other])
            pos = match.end()
        else:
            pos = index + 1  # a lone backslash is dropped and the next character kept
    result = "".join(out)
    if _SURROGATES.search(result):
        # \uD83D\uDE00 names one character as a UTF-16 pair; join such pairs, keep any lone half.
        result = result.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return result


def escape_xml(text: str) -> str:
    """XML 1.0: the five entities, C1 controls as numeric references; characters XML 1.0 forbids are removed."""
    out = []
    for char in text:
        code = ord(char)
        if code in _BASIC:
            out.append(_BASIC[code])
        elif char == "'":
            out.append("&apos;")
        elif (code < 0x20 and char not in "\t\n\r") or code in (0xFFFE, 0xFFFF) or 0xD800 <= code <= 0xDFFF:
            continue
        elif 0x7F <= code <= 0x84 or 0x86 <= code <= 0x9F:
            out.append(f"&#{code};")
        else:
            out.append(char)
    return "".join(out)


def _entity_escaper(table: dict[int, str]):
    def escape(text: str) -> str:
        return text.translate(table)
    return escape


escape_html3 = _entity_escaper(_HTML3)
escape_html3.__doc__ = "Escape with the HTML 3.2 entities (the basic four and ISO-8859-1)."
escape_html4 = _entity_escaper(_HTML4)
escape_html4.__doc__ = "Escape with every HTML 4.01 entity."

_ENTITY = re.compile(r"&(?:[A-Za-z0-9]+|#([xX]?)([0-9a-fA-F]+));")


def _entity_unescaper(names: dict[str, str]):
    def replace(match: re.Match[str]) -> str:
        entity = match.group()
        if match.group(2) is None:
            return names.get(entity, entity)
        digits, hexadecimal = match.group(2), bool(match.group(1))
        if not hexadecimal and not digits.isdigit():
            return entity
        code = int(digits, 16 if hexadecimal else 10)
        return chr(code) if code <= 0x10FFFF else entity

    def unescape(text: str) -> str:
        return _ENTITY.sub(replace, text) if "&" in text else text
    return unescape


unescape_xml = _entity_unescaper(_XML_NAMES)
unescape_xml.__doc__ = "Undo the five XML entities and numeric character references."
unescape_html3 = _entity_unescaper(_HTML3_NAMES)
unescape_html3.__doc__ = "Undo HTML 3.2 entities and numeric character references."
unescape_html4 = _entity_unescaper(_HTML4_NAMES)
unescape_html4.__doc__ = "Undo HTML 4.01 entities and numeric character references."

_CSV_SPECIAL = re.compile('[,"\r\n]')


def escape_csv(text: str) -> str:
    """RFC 4180: a value holding a comma, quote, CR or LF is quoted, its quotes doubled."""
    if not _CSV_SPECIAL.search(text):
        return text
    return '"' + text.replace('"', '""') + '"'


def unescape_csv(text: str) -> str:
    """Undo ``escape_csv``: a quoted value loses its quotes, and doubled quotes are undone if it needed quoting."""
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    inner = text[1:-1]
    return inner.replace('""', '"') if _CSV_SPECIAL.search(inner) else inner
