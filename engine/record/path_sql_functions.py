"""RecordPath's functions in Spark SQL: each mirrors ``engine.record.path_functions`` (NiFi's semantics).

A function that maps values (``toUpperCase``, ``substringAfter``, ...) becomes the matching Spark
expression applied to each branch it reads; its other arguments are "the first value" they
select, computed once in the calling context. Parts with no Spark form raise RecordPathError
``cannot run on Spark: ...``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Callable

import pyarrow as pa

from engine.record import path_values as pv
from engine.record.path_parser import Call, FilterCall, Literal, Node, RecordPathError
from engine.record.path_sql import (
    Branch, all_of, compatible, is_binary, is_list, is_numeric, is_string, element_type, sql_string, to_text,
)

if TYPE_CHECKING:
    from engine.record.path_sql import SqlCompiler

__all__ = ["call_sql", "filter_test"]

_JAVA_TRIM = sql_string(r"^[\x00-\x20]+|[\x00-\x20]+\z")
_JAVA_BLANK = sql_string(r"^\p{javaWhitespace}*\z")
_SQL_HASHES = {"MD5": "md5({})", "SHA-1": "sha1({})", "SHA": "sha1({})", "SHA-224": "sha2({}, 224)",
               "SHA-256": "sha2({}, 256)", "SHA-384": "sha2({}, 384)", "SHA-512": "sha2({}, 512)"}
_ZONE_LETTERS = re.compile(r"[zZXxOV]+")

Test = Callable[[str, "pa.DataType | None"], str]


def _literal_text(node: Node) -> str | None:
    return str(node.value) if isinstance(node, Literal) else None


def _first_text(c: SqlCompiler, node: Node, ctx: Branch) -> str:
    value, t = c.first(node, ctx)
    return value if is_string(t) else to_text(value, t)


def _first_int(c: SqlCompiler, node: Node, ctx: Branch) -> str:
    if isinstance(node, Literal) and isinstance(node.value, int):
        return str(node.value)
    value, t = c.first(node, ctx)
    if is_numeric(t):
        return f"CAST({value} AS INT)"
    if t is None or is_string(t):
        return f"try_cast({to_text(value, t)} AS INT)"
    return "CAST(NULL AS INT)"


def _texts(c: SqlCompiler, branches: list[Branch], ctx: Branch, separator: str) -> list[str]:
    """SQL parts giving the text of every value, nulls as ``null`` (consecutive arrays joined)."""
    parts: list[str] = []
    run: list[Branch] = []

    def flush() -> None:
        if run:
            parts.append(f"array_join({c.array_in(list(run), ctx)}, {separator}, 'null')")
            run.clear()

    for b in branches:
        text = replace(b, value=to_text(b.value, b.type), type=pa.string())
        if c.is_scalar_in(b, ctx):
            flush()
            value = f"coalesce({text.value}, 'null')"
            parts.append(f"CASE WHEN {all_of(b.conds)} THEN {value} END" if b.conds else value)
        else:
            run.append(text)
    flush()
    return parts


def call_sql(c: SqlCompiler, node: Call, ctx: Branch) -> list[Branch]:
    """The branches standalone function ``node`` yields in context ``ctx``."""
    name, args = node.name, node.args
    if name == "concat":
        parts = [f"coalesce({p}, '')" for arg in args for p in _texts(c, c.select(arg, ctx), ctx, "''")]
        value = f"concat({', '.join(parts)})" if parts else "''"
        return [Branch(value, pa.string(), "concat", None, ctx.frames)]
    if name == "join":
        delimiter = f"coalesce({_first_text(c, args[0], ctx)}, '')"
        values: list[Branch] = []
        for arg in args[1:]:
            for b in c.select(arg, ctx):
                if is_list(b.type):
                    var = c.new_var()
                    texts = f"transform({b.value}, {var} -> {to_text(var, element_type(b.type))})"
                    b = c.expand(b, f"IF({b.value} IS NULL, array(CAST(NULL AS STRING)), {texts})", pa.string())
                values.append(b)
        texts = [replace(b, value=to_text(b.value, b.type), type=pa.string()) for b in values]
        value = f"array_join({c.array_in(texts, ctx)}, {delimiter}, 'null')"
        return [Branch(value, pa.string(), "join", None, ctx.frames)]
    if name == "coalesce":
        if not args:
            return []
        firsts = [c.first(arg, ctx) for arg in args]
        kinds = [t for _, t in firsts]
        if any(not compatible(a, b) for a in kinds for b in kinds):
            raise c.fail(f"coalesce() of values of different types ({', '.join(map(str, kinds))})")
        value = f"coalesce({', '.join(v for v, _ in firsts)})"
        kind = next((t for t in kinds if t is not None and not pa.types.is_null(t)), None)
        return [Branch(value, kind, None, None, ctx.frames, (f"{value} IS NOT NULL",))]
    if name == "count":
        counts = []
        for b in c.select(args[0], ctx):
            if c.is_scalar_in(b, ctx):
                counts.append(f"IF({all_of(b.conds)}, 1, 0)" if b.conds else "1")
            else:
                counts.append(f"size({c.array_in([b], ctx)})")
        value = f"CAST({' + '.join(counts) or '0'} AS BIGINT)"
        return [Branch(value, pa.int64(), "count", None, ctx.frames)]
    if name == "fieldName":
        out = []
        for b in c.select(args[0], ctx):
            if b.name is None:
                raise c.fail("fieldName() of a value whose field name is known only per record")
            out.append(replace(b, value=sql_string(b.name), type=pa.string()))
        return out
    if name == "unescapeJson":
        raise c.fail("unescapeJson() gives a value whose type is known only once the JSON is read; Spark needs "
                     "it beforehand")
    subject = c.select(args[0], ctx)
    return [_map(c, node, b, ctx) for b in subject]


def _map(c: SqlCompiler, node: Call, b: Branch, ctx: Branch) -> Branch:
    """``node`` applied to one branch of its first argument."""
    name, args = node.name, node.args
    text = to_text(b.value, b.type)
    not_null = b.conds + (f"{b.value} IS NOT NULL",)

    def string(value: str, skip_null: bool = True) -> Branch:
        return replace(b, value=value, type=pa.string(), conds=not_null if skip_null else b.conds)

    if name in ("toUpperCase", "toLowerCase"):
        return string(f"{'upper' if name == 'toUpperCase' else 'lower'}(coalesce({text}, ''))", skip_null=False)
    if name == "trim":
        return string(f"regexp_replace(coalesce({text}, ''), {_JAVA_TRIM}, '')", skip_null=False)
    if name in ("padLeft", "padRight"):
        length = _first_int(c, args[1], ctx)
        padding = f"coalesce(nullif({_first_text(c, args[2], ctx)}, ''), '_')" if len(args) > 2 else "'_'"
        function = "lpad" if name == "padLeft" else "rpad"
        return string(f"CASE WHEN {length} IS NULL THEN '' WHEN {text} IS NULL THEN NULL "
                      f"WHEN char_length({text}) >= {length} THEN {text} "
                      f"ELSE {function}({text}, {length}, {padding}) END", skip_null=False)
    if name == "replaceNull":
        replacement, kind = c.first(args[1], ctx)
        if not compatible(b.type, kind):
            raise c.fail(f"replaceNull() would mix {b.type} and {kind}; Spark needs one type")
        return replace(b, value=f"coalesce({b.value}, {replacement})")
    if name == "substring":
        start, end = _first_int(c, args[1], ctx), _first_int(c, args[2], ctx)
        length = f"char_length({text})"
        begin = f"IF({start} < 0, {length} + 1 + {start}, {start})"
        stop = f"IF({end} < 0, {length} + 1 + {end}, {end})"
        return string(f"CASE WHEN {start} IS NULL OR {end} IS NULL OR {stop} <= {begin} OR {begin} < 0 "
                      f"OR {begin} > {length} THEN '' "
                      f"ELSE substr({text}, {begin} + 1, least({stop}, {length}) - {begin}) END")
    if name in ("substringBefore", "substringAfter", "substringBeforeLast", "substringAfterLast"):
        search = _first_text(c, args[1], ctx)
        after_last = f"substring_index({text}, {search}, -1)"
        found = {
            "substringBefore": f"substr({text}, 1, instr({text}, {search}) - 1)",
            "substringAfter": f"substr({text}, instr({text}, {search}) + char_length({search}))",
            "substringAfterLast": after_last,
            "substringBeforeLast": f"substr({text}, 1, char_length({text}) - char_length({after_last}) "
                                   f"- char_length({search}))",
        }[name]
        return string(f"CASE WHEN {search} IS NULL OR {search} = '' OR instr({text}, {search}) = 0 THEN {text} "
                      f"ELSE {found} END")
    if name == "replace":
        search, replacement = _literal_text(args[1]), _literal_text(args[2])
        if search == "" and replacement is not None:
            quoted = replacement.replace("\\", "\\\\").replace("$", "\\$")
            return string(f"regexp_replace({text}, '', {sql_string(quoted)})")
        search_sql, replacement_sql = _first_text(c, args[1], ctx), _first_text(c, args[2], ctx)
        return string(f"CASE WHEN {search_sql} IS NULL OR {replacement_sql} IS NULL THEN {text} "
                      f"ELSE replace({text}, {search_sql}, {replacement_sql}) END")
    if name == "replaceRegex":
        regex = _first_text(c, args[1], ctx)
        replacement = _first_text(c, args[2], ctx)
        return string(f"CASE WHEN {regex} IS NULL OR {replacement} IS NULL THEN {text} "
                      f"ELSE regexp_replace({text}, {regex}, {replacement}) END")
    if name == "toString":
        if is_binary(b.type):
            return string(f"decode({b.value}, coalesce({_first_text(c, args[1], ctx)}, 'UTF-8'))")
        return string(text)
    if name == "toBytes":
        if b.type is not None and not is_string(b.type) and not pa.types.is_null(b.type):
            raise c.fail(f"toBytes() takes text but {b.name or 'its argument'} is {b.type}")
        charset = f"coalesce({_first_text(c, args[1], ctx)}, 'UTF-8')"
        return replace(b, value=f"encode({b.value}, {charset})", type=pa.binary(), conds=not_null)
    if name == "escapeJson":
        json = f"to_json(array({b.value}), map('ignoreNullFields', 'false'))"
        return string(f"substr({json}, 2, char_length({json}) - 2)")
    if name == "base64Encode":
        if is_binary(b.type):
            return replace(b, value=f"encode(base64({b.value}), 'UTF-8')", conds=not_null)
        if b.type is not None and not is_string(b.type):
            raise c.fail(f"base64Encode() takes text or bytes, not {b.type}")
        return string(f"base64(encode({b.value}, 'UTF-8'))")
    if name == "base64Decode":
        if is_binary(b.type):
            return replace(b, value=f"unbase64(CAST({b.value} AS STRING))", conds=not_null)
        if b.type is not None and not is_string(b.type):
            raise c.fail(f"base64Decode() takes text or bytes, not {b.type}")
        return string(f"decode(unbase64({b.value}), 'UTF-8')")
    if name == "hash":
        algorithm = _literal_text(args[1])
        if algorithm is None:
            raise c.fail("hash() needs the algorithm as a literal ('SHA-256')")
        return string(_SQL_HASHES[algorithm.upper()].format(text))
    if name == "toDate":
        return _to_date(c, node, b)
    if name == "format":
        return _format(c, node, b)
    raise c.fail(f"{name}() has no Spark SQL form")


def _date_args(c: SqlCompiler, node: Call) -> tuple[str, str | None, bool]:
    pattern = _literal_text(node.args[1])
    zone = _literal_text(node.args[2]) if len(node.args) > 2 else None
    if pattern is None or (len(node.args) > 2 and zone is None):
        raise c.fail(f"{node.name}() needs its pattern and time zone as literals")
    if zone is None:
        return pattern, None, False
    region, fixed = pv.spark_zone(zone)
    return pattern, region, fixed


def _to_date(c: SqlCompiler, node: Call, b: Branch) -> Branch:
    if b.type is not None and not is_string(b.type) and not pa.types.is_null(b.type):
        return b
    pattern, zone, _ = _date_args(c, node)
    parsed = f"try_to_timestamp({b.value}, {sql_string(pattern)})"
    if zone is not None:
        parsed = f"to_utc_timestamp(from_utc_timestamp({parsed}, current_timezone()), {sql_string(zone)})"
    return replace(b, value=parsed, type=pa.timestamp("us", tz="UTC"), conds=b.conds + (f"{b.value} IS NOT NULL",))


def _format(c: SqlCompiler, node: Call, b: Branch) -> Branch:
    t = b.type
    if is_string(t):
        return b
    if t is not None and pa.types.is_date(t):
        moment = f"timestamp_millis(CAST(unix_date({b.value}) AS BIGINT) * 86400000)"
    elif is_numeric(t):
        moment = f"timestamp_millis(CAST({b.value} AS BIGINT))"
    elif t is None or pa.types.is_timestamp(t):
        moment = b.value
    else:
        return replace(b, conds=b.conds + (f"{b.value} IS NOT NULL",))
    pattern, zone, fixed = _date_args(c, node)
    if zone is not None:
        if _has_zone_letter(pattern):
            if not fixed:
                raise c.fail("format() with a zone letter in the pattern is supported for fixed offsets "
                             "(GMT+8:00), not for region zones")
            pattern = _fixed_zone_pattern(pattern, zone)
        moment = f"to_utc_timestamp(from_utc_timestamp({moment}, {sql_string(zone)}), current_timezone())"
    return replace(b, value=f"date_format({moment}, {sql_string(pattern)})", type=pa.string(),
                   conds=b.conds + (f"{b.value} IS NOT NULL",))


def _split_quoted(pattern: str) -> list[tuple[bool, str]]:
    parts = re.split(r"('(?:[^']|'')*')", pattern)
    return [(part.startswith("'"), part) for part in parts if part]


def _has_zone_letter(pattern: str) -> bool:
    return any(not quoted and _ZONE_LETTERS.search(part) for quoted, part in _split_quoted(pattern))


def _fixed_zone_pattern(pattern: str, zone: str) -> str:
    """The pattern with its zone letters replaced by the fixed offset's text (Spark prints only its own zone)."""
    sign, hours, minutes = ("+", "00", "00") if zone == "UTC" else (zone[0], zone[1:3], zone[4:6])

    def offset(match: re.Match[str]) -> str:
        letters = match.group(0)
        letter, count = letters[0], len(letters)
        if letter == "Z" and count <= 3:
            text = f"{sign}{hours}{minutes}"
        elif letter in "Xx" and count in (1, 2, 3):
            if letter == "X" and sign + hours + minutes == "+0000":
                text = "Z"
            else:
                text = f"{sign}{hours}" + ("" if count == 1 else f":{minutes}" if count == 3 else minutes)
        else:
            raise RecordPathError(f"cannot run on Spark: format() with the zone letters {letters!r}")
        return f"'{text}'"

    return "".join(part if quoted else _ZONE_LETTERS.sub(offset, part) for quoted, part in _split_quoted(pattern))


def filter_test(c: SqlCompiler, node: FilterCall, ctx: Branch) -> Test:
    """The SQL test filter function ``node`` applies to one value (its other arguments read in ``ctx``)."""
    name, args = node.name, node.args
    if name == "isEmpty":
        return lambda v, t: f"({v} IS NULL OR {to_text(v, t)} = '')"
    if name == "isBlank":
        return lambda v, t: f"({v} IS NULL OR regexp_like({to_text(v, t)}, {_JAVA_BLANK}))"
    if name in ("matchesRegex", "containsRegex"):
        literal = _literal_text(args[1])
        if literal is not None:
            regex = sql_string(f"^(?:{literal})\\z" if name == "matchesRegex" else literal)
        else:
            regex = _first_text(c, args[1], ctx)
            if name == "matchesRegex":
                regex = f"concat('^(?:', {regex}, {sql_string(')' + chr(92) + 'z')})"
        return lambda v, t: f"regexp_like({to_text(v, t)}, {regex})"
    search = _first_text(c, args[1], ctx)
    function = {"contains": "contains", "startsWith": "startswith", "endsWith": "endswith"}[name]
    return lambda v, t: f"{function}({to_text(v, t)}, {search})"
