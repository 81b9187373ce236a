"""RecordPath's standalone functions on Python records, and the checks made when a path is compiled.

Each function follows NiFi's ``org.apache.nifi.record.path.functions`` class of the same name:
most map every value their first argument selects (skipping nulls) and read their other
arguments as "the first value" that argument selects; a value a function computes from a field
keeps that field's name and place, so ``set`` on it writes the field (as NiFi's do).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.record import path_values as pv
from engine.record.path_parser import (
    Call, Compare, FilterCall, Literal, Node, Not, Predicate, RecordPathError,
)

if TYPE_CHECKING:
    from engine.record.path import FieldValue, RecordPath, _Evaluator

__all__ = ["call", "validate", "encode_text"]


def encode_text(text: str, charset: str) -> bytes:
    """Java's ``String.getBytes(charset)``: ``UTF-16`` is big-endian with a byte-order mark."""
    name = charset.upper().replace("_", "-")
    if name == "UTF-16":
        return b"\xfe\xff" + text.encode("utf-16-be")
    return text.encode(name)


def _decode(data: bytes, charset: str | None) -> str:
    name = (charset or "UTF-8").upper().replace("_", "-")
    return data.decode("utf-16" if name == "UTF-16" else name, errors="replace")


def call(ev: _Evaluator, node: Call, ctx: FieldValue) -> list[FieldValue]:
    """The values standalone function ``node`` yields in context ``ctx``."""
    from engine.record.path import FieldValue

    name, args = node.name, node.args
    if name == "concat":
        parts = [_text_or_null(fv.value) for arg in args for fv in ev.select(arg, ctx)]
        return [FieldValue("".join(parts), "concat", None)]
    if name == "join":
        delimiter = ev.first_text(args[0], ctx) or ""
        joined: list[str] = []
        for arg in args[1:]:
            for fv in ev.select(arg, ctx):
                _flatten_text(fv.value, joined)
        return [FieldValue(delimiter.join(joined), "join", None)]
    if name == "coalesce":
        for arg in args:
            first = ev.first(arg, ctx)
            if first is not None and first.value is not None:
                return [first]
        return []
    if name == "count":
        return [FieldValue(len(ev.select(args[0], ctx)), "count", None)]
    if name == "fieldName":
        out = []
        for fv in ev.select(args[0], ctx):
            if fv.name is None:
                raise ev.fail("fieldName() was given a value that is not a field (a literal or a function's result)")
            out.append(fv.derive(fv.name))
        return out
    subject = ev.select(args[0], ctx)
    if name in ("toUpperCase", "toLowerCase", "trim"):
        out = []
        for fv in subject:
            text = pv.to_string(fv.value) or ""
            out.append(fv.derive(text.upper() if name == "toUpperCase" else
                                 text.lower() if name == "toLowerCase" else pv.java_trim(text)))
        return out
    if name in ("padLeft", "padRight"):
        length = ev.first_int(args[1], ctx)
        padding = (ev.first_text(args[2], ctx) if len(args) > 2 else None) or "_"
        return [fv.derive("" if length is None else pv.pad(pv.to_string(fv.value), length, padding, name == "padLeft"))
                for fv in subject]
    if name == "replaceNull":
        out = []
        for fv in subject:
            replacement = ev.first(args[1], ctx) if fv.value is None else None
            out.append(fv.derive(replacement.value) if replacement is not None and replacement.value is not None
                       else fv)
        return out
    return [_map_value(ev, node, fv, ctx) for fv in subject if fv.value is not None]


def _map_value(ev: _Evaluator, node: Call, fv: FieldValue, ctx: FieldValue) -> FieldValue:
    """Functions that skip null values and map each other value of their first argument."""
    name, args, value = node.name, node.args, fv.value
    if name in ("substringBefore", "substringAfter", "substringBeforeLast", "substringAfterLast"):
        search = ev.first_text(args[1], ctx)
        text = pv.to_string(value) or ""
        if not search or search not in text:
            return fv
        function = {"substringBefore": pv.substring_before, "substringAfter": pv.substring_after,
                    "substringBeforeLast": pv.substring_before_last,
                    "substringAfterLast": pv.substring_after_last}[name]
        return fv.derive(function(text, search))
    if name == "substring":
        start, end = ev.first_int(args[1], ctx), ev.first_int(args[2], ctx)
        if start is None or end is None:
            return fv.derive("")
        return fv.derive(pv.substring(pv.to_string(value) or "", start, end))
    if name == "replace":
        search, replacement = ev.first_text(args[1], ctx), ev.first_text(args[2], ctx)
        if search is None or replacement is None:
            return fv
        return fv.derive(pv.java_replace(pv.to_string(value) or "", search, replacement))
    if name == "replaceRegex":
        replacement = ev.first_text(args[2], ctx)
        pattern = ev.path.regex(args[1], ev, ctx)
        if replacement is None or pattern is None:
            return fv
        return fv.derive(pattern.sub(pv.java_replacement(replacement), pv.to_string(value) or ""))
    if name == "toString":
        charset = ev.first_text(args[1], ctx)
        if isinstance(value, (bytes, bytearray)):
            return fv.derive(_decode(bytes(value), charset))
        return fv.derive(pv.to_string(value))
    if name == "toBytes":
        if not isinstance(value, str):
            raise ev.fail(f"toBytes() takes text but {fv.name or 'its argument'} is {type(value).__name__}")
        return fv.derive(encode_text(value, ev.first_text(args[1], ctx) or "UTF-8"))
    if name in ("toDate", "format"):
        return _dates(ev, node, fv, ctx)
    if name == "escapeJson":
        return fv.derive(pv.escape_json(value))
    if name == "unescapeJson":
        for extra in args[1:]:
            ev.first_text(extra, ctx)
        try:
            return fv.derive(pv.unescape_json(value))
        except ValueError as error:
            raise ev.fail(f"unescapeJson() cannot read {fv.name or 'its argument'}: {error}") from None
    if name in ("base64Encode", "base64Decode"):
        try:
            return fv.derive(pv.base64_encode(value) if name == "base64Encode" else pv.base64_decode(value))
        except ValueError as error:
            raise ev.fail(str(error)) from None
    if name == "hash":
        algorithm = ev.first_text(args[1], ctx)
        if not algorithm:
            return fv
        if algorithm.upper() not in pv.HASHES:
            raise ev.fail(f"hash() does not know the algorithm {algorithm!r} (one of {', '.join(pv.HASHES)})")
        return fv.derive(pv.hash_hex(pv.to_string(value) or "", algorithm))
    raise ev.fail(f"{name}() cannot be evaluated")  # unreachable: the parser admits only known functions


def _dates(ev: _Evaluator, node: Call, fv: FieldValue, ctx: FieldValue) -> FieldValue:
    args = node.args
    pattern = ev.first_text(args[1], ctx)
    zone = None
    if len(args) > 2:
        zone_name = ev.first_text(args[2], ctx)
        if not zone_name:
            return fv
        try:
            zone = pv.resolve_zone(zone_name)
        except ValueError as error:
            raise ev.fail(str(error)) from None
    if not pattern:
        return fv
    try:
        if node.name == "toDate":
            parsed = pv.parse_date(fv.value, pattern, zone) if isinstance(fv.value, str) else None
            return fv if parsed is None else fv.derive(parsed)
        formatted = pv.format_date(fv.value, pattern, zone)
    except ValueError as error:
        raise ev.fail(f"{node.name}(): {error}") from None
    return fv if formatted is None else fv.derive(formatted)


def _text_or_null(value: Any) -> str:
    text = pv.to_string(value)
    return "null" if text is None else text


def _flatten_text(value: Any, out: list[str]) -> None:
    if isinstance(value, list) and not pv.is_map(value):
        for element in value:
            _flatten_text(element, out)
    else:
        out.append(_text_or_null(value))


# --- compile-time checks ----------------------------------------------------------------------------

def _children(node: Node) -> list[Node]:
    if isinstance(node, (Call, FilterCall)):
        return list(node.args)
    if isinstance(node, Compare):
        return [node.lhs, node.rhs]
    if isinstance(node, Not):
        return [node.filter]
    if isinstance(node, Predicate):
        return [node.parent, node.filter]
    parent = getattr(node, "parent", None)
    return [parent] if parent is not None else []


def validate(path: RecordPath) -> None:
    """Check what can be checked before any record is seen: literal regular expressions, date
    patterns, time zones and hash algorithms; raises RecordPathError naming the function."""
    pending: list[Node] = [path.tree]
    while pending:
        node = pending.pop()
        pending.extend(_children(node))
        if not isinstance(node, (Call, FilterCall)):
            continue
        name, args = node.name, node.args

        def literal(index: int) -> str | None:
            arg = args[index] if index < len(args) else None
            return str(arg.value) if isinstance(arg, Literal) else None

        try:
            if name in ("matchesRegex", "containsRegex", "replaceRegex") and literal(1) is not None:
                pv.java_regex(literal(1) or "")
            if name in ("toDate", "format"):
                if literal(1):
                    pv.check_date_pattern(literal(1) or "")
                if literal(2):
                    pv.resolve_zone(literal(2) or "")
            if name == "hash" and literal(1) and (literal(1) or "").upper() not in pv.HASHES:
                raise ValueError(f"unknown algorithm {literal(1)!r} (one of {', '.join(pv.HASHES)})")
        except Exception as error:
            raise RecordPathError(f"{name}(): {error}", node.position, path.text) from None
