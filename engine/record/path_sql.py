"""RecordPath as Spark SQL: an expression over a table whose columns are the record's top-level fields.

The compiler walks the same tree the Python evaluator does, keeping NiFi's semantics by tracking,
for every value a path can select, a *branch*: its SQL, its Arrow type, its field name, its parent
branch, the conditions under which it exists (a predicate, an index in bounds, a non-null field
under ``/*``) and the arrays it iterates over (``[*]``, ``[0..2]``, ``//name`` inside arrays of
records). Absent and null are told apart while compiling (``isEmpty`` and ``count`` need it);
the expression a path gives is:

* one value (NULL when the path selects nothing) when it selects at most one per record:
  ``/a/b`` → ``` `a`.`b` ```, ``/a[0]`` → ``try_element_at(`a`, 1)``, ``/m['k']`` →
  ``try_element_at(`m`, 'k')``, ``/a[./x = 'y']`` → ``CASE WHEN ... THEN `a` END``;
* an array of the values, in NiFi's order, when it may select several: ``/a[*]/b`` →
  ``transform(`a`, e -> e.`b`)``, ``/*``, ``//name``, ``[0, 2]``, ``[1..-1]``.

``select_sql`` gives the expression (``engine.record.path_update`` the SQL that sets a path;
functions are in ``engine.record.path_sql_functions``). Only SQL text is produced: nothing imports pyspark.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

import pyarrow as pa

from engine.record.path_parser import (
    Call, Child, Compare, Context, Current, Descendant, FilterCall, FilterNode, Index, Literal, MapKeys, Node, Not,
    Parent, Predicate, RecordPathError, Root, WildcardChild, WildcardDescendant, WildcardIndex,
)

if TYPE_CHECKING:
    from engine.record.path import RecordPath
    from engine.record.schema import RecordSchema

__all__ = [
    "SqlValue", "select_sql", "sql_string", "quote", "Branch", "Frame", "SqlCompiler", "to_text", "compare_sql",
    "all_of", "compatible", "deref", "element_type", "is_binary", "is_list", "is_map_type", "is_numeric",
    "is_string", "is_struct", "struct_fields",
]


def quote(name: str) -> str:
    """A Spark SQL identifier: ``name`` in backticks."""
    return "`" + name.replace("`", "``") + "`"


def sql_string(text: str) -> str:
    """A Spark SQL string literal (escaped so that Spark's ``${var}`` substitution leaves it alone)."""
    body = text.replace("\\", "\\\\").replace("'", "\\'").replace("${", "$\\{")
    return f"'{body}'"


@dataclass(frozen=True)
class SqlValue:
    """The Spark SQL of a RecordPath: ``sql``; ``is_array`` when it is an array of the selected values;
    ``type``, the Arrow type of one value (``None`` when unknown)."""
    sql: str
    is_array: bool
    type: pa.DataType | None


@dataclass(frozen=True, eq=False)
class Frame:
    """An array a branch iterates over: ``base`` (SQL in the enclosing scope), bound to lambda ``var``."""
    base: str
    var: str


@dataclass(frozen=True)
class Branch:
    """One value (per record, or per element of ``frames``) a path selects; see the module docstring."""
    value: str
    type: pa.DataType | None
    name: str | None
    parent: Branch | None
    frames: tuple[Frame, ...] = ()
    conds: tuple[str, ...] = ()
    is_root: bool = False

    def scalar_view(self) -> Branch:
        """The branch as a predicate's context sees it: this one value, already known to exist."""
        return replace(self, conds=())


# --- types -----------------------------------------------------------------------------------------

def is_struct(t: pa.DataType | None) -> bool:
    """A record type."""
    return t is not None and pa.types.is_struct(t)


def is_list(t: pa.DataType | None) -> bool:
    """An array type."""
    return t is not None and (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t))


def is_map_type(t: pa.DataType | None) -> bool:
    """A map type."""
    return t is not None and pa.types.is_map(t)


def is_string(t: pa.DataType | None) -> bool:
    """A text type."""
    return t is not None and (pa.types.is_string(t) or pa.types.is_large_string(t))


def is_numeric(t: pa.DataType | None) -> bool:
    """An integer, floating-point or decimal type."""
    return t is not None and (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t))


def is_binary(t: pa.DataType | None) -> bool:
    """A bytes type."""
    return t is not None and (pa.types.is_binary(t) or pa.types.is_large_binary(t)
                              or pa.types.is_fixed_size_binary(t))


def element_type(t: pa.DataType | None) -> pa.DataType | None:
    """The type of an array's elements or a map's values (``None`` for other types)."""
    if is_list(t):
        return t.value_type
    if is_map_type(t):
        return t.item_type
    return None


def struct_fields(t: pa.DataType) -> list[pa.Field]:
    """The fields of a record type, in order."""
    return [t.field(i) for i in range(t.num_fields)]


def _category(t: pa.DataType | None) -> str | None:
    if t is None or pa.types.is_null(t):
        return None
    if is_numeric(t):
        return "number"
    if is_string(t):
        return "string"
    return str(t)


def compatible(a: pa.DataType | None, b: pa.DataType | None) -> bool:
    """Whether Spark can hold values of both types in one array (unknown types are assumed to fit)."""
    return _category(a) is None or _category(b) is None or _category(a) == _category(b) or a == b


def all_of(conds: tuple[str, ...] | list[str]) -> str:
    """The SQL conjunction of ``conds`` (at least one)."""
    return " AND ".join(f"({c})" for c in conds) if len(conds) > 1 else conds[0]


def deref(expr: str, name: str) -> str:
    """SQL of field ``name`` of the record ``expr``."""
    simple = expr.startswith("`") or expr.replace("_", "").isalnum()
    return f"{expr if simple else '(' + expr + ')'}.{quote(name)}"


def to_text(value: str, t: pa.DataType | None) -> str:
    """SQL giving NiFi's text of a value (``path_values.to_string``)."""
    if is_string(t):
        return value
    if t is not None and pa.types.is_timestamp(t):
        return f"CAST(unix_millis({value}) AS STRING)"
    if t is not None and pa.types.is_date(t):
        return f"CAST(CAST(unix_date({value}) AS BIGINT) * 86400000 AS STRING)"
    return f"CAST({value} AS STRING)"


def _to_number(value: str, t: pa.DataType | None) -> str:
    if is_numeric(t):
        return value
    if t is not None and pa.types.is_timestamp(t):
        return f"unix_millis({value})"
    if t is not None and pa.types.is_date(t):
        return f"CAST(unix_date({value}) AS BIGINT) * 86400000"
    if t is None or is_string(t) or is_binary(t):
        return f"try_cast({to_text(value, t)} AS DOUBLE)"
    return "CAST(NULL AS DOUBLE)"


def compare_sql(op: str, lhs: str, lt: pa.DataType | None, rhs: str, rt: pa.DataType | None) -> str:
    """``path_values.test_compare`` in SQL (NULL-safe: the caller wraps it in ``coalesce(.., false)``)."""
    if op in ("=", "!="):
        if is_numeric(lt) and is_numeric(rt):
            return f"{lhs} {'=' if op == '=' else '!='} {rhs}"
        if is_numeric(lt) or is_numeric(rt) or lt is None or rt is None:
            if op == "!=" and (is_numeric(lt) or is_numeric(rt)):
                return "false"
            return f"{to_text(lhs, lt)} {'=' if op == '=' else '!='} {to_text(rhs, rt)}"
        if _category(lt) == _category(rt):
            return f"{lhs} {'=' if op == '=' else '!='} {rhs}"
        return "false" if op == "=" else f"{lhs} IS NOT NULL"
    return f"{_to_number(lhs, lt)} {op} {_to_number(rhs, rt)}"


# --- the compiler ----------------------------------------------------------------------------------

class SqlCompiler:
    """Compiles one RecordPath's tree against one schema; ``select`` gives a node's branches."""

    def __init__(self, path: RecordPath, schema: pa.Schema | RecordSchema | None) -> None:
        self.path = path
        arrow = getattr(schema, "arrow", schema)
        self.schema: pa.Schema | None = arrow
        self._vars = itertools.count(1)
        if arrow is not None:
            struct = pa.struct(list(arrow))
            fields = ", ".join(f"{sql_string(f.name)}, {quote(f.name)}" for f in arrow)
            self.root = Branch(f"named_struct({fields})", struct, "root", None, is_root=True)
        else:
            self.root = Branch("struct(*)", None, "root", None, is_root=True)

    def fail(self, message: str) -> RecordPathError:
        """The error for a part of the path Spark cannot run."""
        return RecordPathError(f"cannot run on Spark: {message}", path=self.path.text)

    def new_var(self) -> str:
        """A lambda variable name not used elsewhere in this compilation."""
        return f"__rp{next(self._vars)}"

    def need_type(self, branch: Branch, what: str) -> pa.DataType:
        """``branch``'s type; raises when the schema was not given."""
        if branch.type is None:
            raise self.fail(f"{what} needs the record schema (pass schema=)")
        return branch.type

    # selections

    def select(self, node: Node, ctx: Branch) -> list[Branch]:
        """The branches ``node`` selects when evaluated with context ``ctx``."""
        if isinstance(node, Root):
            return [self.root]
        if isinstance(node, Context):
            return [ctx.scalar_view()]
        if isinstance(node, Literal):
            value = sql_string(node.value) if isinstance(node.value, str) else str(node.value)
            return [Branch(value, pa.string() if isinstance(node.value, str) else pa.int32(), None, None,
                           ctx.frames)]
        if isinstance(node, Call):
            from engine.record.path_sql_functions import call_sql

            return call_sql(self, node, ctx)
        if isinstance(node, (Compare, FilterCall, Not)):
            return self.booleans(node, ctx)
        parents = self.select(node.parent, ctx)
        out: list[Branch] = []
        for branch in parents:
            out.extend(self.step(node, branch, ctx))
        return out

    def step(self, node: Node, b: Branch, ctx: Branch) -> list[Branch]:
        """The branches one path segment selects from branch ``b``."""
        if isinstance(node, Child):
            return [self.child(b, node.name)]
        if isinstance(node, Current):
            return [b]
        if isinstance(node, Parent):
            if b.parent is None:
                return []
            return [replace(b.parent, frames=b.frames, conds=b.conds)]
        if isinstance(node, Predicate):
            return [replace(b, conds=b.conds + (self.condition(node.filter, b.scalar_view(), False),))]
        if isinstance(node, WildcardChild):
            t = self.need_type(b, "/*")
            if not is_struct(t):
                return []
            return [self.child(b, f.name, not_null=True) for f in struct_fields(t)]
        if isinstance(node, (Descendant, WildcardDescendant)):
            self.need_type(b, "//")
            return self.descendants(b, node.name if isinstance(node, Descendant) else None)
        if isinstance(node, Index):
            return self.index(node, b)
        if isinstance(node, MapKeys):
            keyed = [self.map_key(b, key) for key in node.keys]
            return [k for k in keyed if k is not None]
        if isinstance(node, WildcardIndex):
            if is_struct(b.type):
                whole = () if b.is_root else (f"{b.value} IS NOT NULL",)
                return [replace(self.child(b, f.name), conds=b.conds + whole) for f in struct_fields(b.type)]
            if is_map_type(b.type):
                return [self.expand(b, f"map_values({b.value})", b.type.item_type)]
            if b.type is None or is_list(b.type):
                return [self.expand(b, b.value, element_type(b.type))]
            return []
        raise self.fail(f"unexpected {type(node).__name__}")  # unreachable

    def child(self, b: Branch, name: str, not_null: bool = False) -> Branch:
        """Field ``name`` of ``b`` (NULL when ``b`` is no record with that field, as NiFi's missing child)."""
        t = b.type
        if b.is_root and self.schema is None:
            value, field_type = quote(name), None
        elif t is None:
            value, field_type = deref(b.value, name), None
        elif is_struct(t) and t.get_field_index(name) >= 0:
            value = quote(name) if b.is_root else deref(b.value, name)
            field_type = t.field(name).type
        else:
            value, field_type = "NULL", pa.null()
        conds = b.conds + ((f"{value} IS NOT NULL",) if not_null else ())
        return Branch(value, field_type, name, b, b.frames, conds)

    def map_key(self, b: Branch, key: str) -> Branch | None:
        """Map entry ``key`` of ``b`` (a record's field, leniently); ``None`` when ``b`` can have none."""
        if is_struct(b.type) or (b.is_root and self.schema is None):
            whole = () if b.is_root else (f"{b.value} IS NOT NULL",)
            return replace(self.child(b, key), name=b.name, parent=b, conds=b.conds + whole)
        if is_map_type(b.type):
            value = f"try_element_at({b.value}, {sql_string(key)})"
            return Branch(value, b.type.item_type, b.name, b, b.frames, b.conds + (f"{b.value} IS NOT NULL",))
        if b.type is None:
            return Branch(f"{b.value}[{sql_string(key)}]", None, b.name, b, b.frames, b.conds)
        return None

    def expand(self, b: Branch, array: str, element: pa.DataType | None, parent: Branch | None = None) -> Branch:
        """A branch for each element of ``array`` (SQL over ``b``'s scope)."""
        base = f"CASE WHEN {all_of(b.conds)} THEN {array} END" if b.conds else array
        frame = Frame(base, self.new_var())
        return Branch(frame.var, element, b.name, parent or b, b.frames + (frame,))

    def index(self, node: Index, b: Branch) -> list[Branch]:
        """Array elements by index: one branch for ``[i]``, an expanded one for lists and ranges."""
        if not (b.type is None or is_list(b.type)):
            return []
        element = element_type(b.type)
        size = f"size({b.value})"
        if node.single:
            wanted = node.ranges[0][0]
            cond = f"{size} > {wanted}" if wanted >= 0 else f"{size} >= {-wanted}"
            value = f"try_element_at({b.value}, {wanted + 1 if wanted >= 0 else wanted})"
            return [Branch(value, element, b.name, b, b.frames, b.conds + (cond,))]
        pieces = []
        for low, high in node.ranges:
            start = str(low) if low >= 0 else f"({size} {low})"
            stop = str(high) if high >= 0 else f"({size} {high})"
            pieces.append(f"IF({size} > {abs(low)}, slice({b.value}, {start} + 1, "
                          f"greatest(least({stop}, {size} - 1) - {start} + 1, 0)), array())")
        array = pieces[0] if len(pieces) == 1 else f"concat({', '.join(pieces)})"
        return [self.expand(b, array, element)]

    def descendants(self, b: Branch, name: str | None) -> list[Branch]:
        """Every non-null field called ``name`` (any, for ``None``) under ``b``, in NiFi's order."""
        if not is_struct(b.type):
            return []
        out: list[Branch] = []
        for field in struct_fields(b.type):
            child = self.child(b, field.name, not_null=True)
            if name is None or field.name == name:
                out.append(child)
            if is_struct(field.type):
                out.extend(self.descendants(child, name))
            elif is_list(field.type) and is_struct(field.type.value_type):
                element = self.expand(child, child.value, field.type.value_type, parent=b)
                out.extend(self.descendants(replace(element, name=field.name), name))
        return out

    # arrays of branches

    def materialize(self, branches: list[Branch], level: int) -> str:
        """An array (SQL in the scope of ``level`` frames) of the branches' values, in NiFi's order."""
        items: list[str] = []
        i = 0
        while i < len(branches):
            b = branches[i]
            if len(b.frames) <= level:
                items.append(f"IF({all_of(b.conds)}, array({b.value}), array())" if b.conds else f"array({b.value})")
                i += 1
                continue
            frame = b.frames[level]
            j = i + 1
            while j < len(branches) and len(branches[j].frames) > level and branches[j].frames[level] is frame:
                j += 1
            run = branches[i:j]
            if len(run) == 1 and len(b.frames) == level + 1:
                base = f"filter({frame.base}, {frame.var} -> {all_of(b.conds)})" if b.conds else frame.base
                array = base if b.value == frame.var else f"transform({base}, {frame.var} -> {b.value})"
            else:
                array = f"flatten(transform({frame.base}, {frame.var} -> {self.materialize(run, level + 1)}))"
            items.append(f"coalesce({array}, array())")
            i = j
        types = [b.type for b in branches]
        for a, c in itertools.combinations(types, 2):
            if not compatible(a, c):
                raise self.fail(f"the path selects values of different types ({a}, {c}) that one Spark array "
                                f"cannot hold")
        if not items:
            return "array()"
        return items[0] if len(items) == 1 else f"concat({', '.join(items)})"

    def array_in(self, branches: list[Branch], ctx: Branch) -> str:
        """The branches' values as one array in the scope of ``ctx``."""
        runs: list[tuple[int, list[Branch]]] = []
        for b in branches:
            level = _common_prefix(b.frames, ctx.frames)
            if runs and runs[-1][0] == level:
                runs[-1][1].append(b)
            else:
                runs.append((level, [b]))
        items = [self.materialize(run, level) for level, run in runs]
        if not items:
            return "array()"
        return items[0] if len(items) == 1 else f"concat({', '.join(items)})"

    def is_scalar_in(self, b: Branch, ctx: Branch) -> bool:
        """Whether ``b`` is one value in the scope of ``ctx`` (it iterates over no array of its own)."""
        return _common_prefix(b.frames, ctx.frames) == len(b.frames)

    def first(self, node: Node, ctx: Branch, non_null: bool = False) -> tuple[str, pa.DataType | None]:
        """SQL of the first value ``node`` selects in ``ctx`` (NULL when none), and its type."""
        branches = self.select(node, ctx)
        if not branches:
            return "NULL", pa.null()
        if len(branches) == 1 and self.is_scalar_in(branches[0], ctx):
            b = branches[0]
            return (f"CASE WHEN {all_of(b.conds)} THEN {b.value} END" if b.conds else b.value), b.type
        array = self.array_in(branches, ctx)
        if non_null:
            var = self.new_var()
            array = f"filter({array}, {var} -> {var} IS NOT NULL)"
        return f"try_element_at({array}, 1)", branches[0].type

    def any_value(self, branches: list[Branch], ctx: Branch, test: Callable[[str, pa.DataType | None], str],
                  invert: bool) -> str:
        """SQL true when ``test`` holds (or fails, inverted) for at least one value of ``branches``."""
        parts = []
        for b in branches:
            if self.is_scalar_in(b, ctx):
                outcome = f"coalesce({test(b.value, b.type)}, false)"
                outcome = f"NOT {outcome}" if invert else outcome
                parts.append(f"({all_of(b.conds)}) AND {outcome}" if b.conds else outcome)
            else:
                var = self.new_var()
                outcome = f"coalesce({test(var, b.type)}, false)"
                array = self.array_in([b], ctx)
                parts.append(f"exists({array}, {var} -> {'NOT ' if invert else ''}{outcome})")
        if not parts:
            return "false"
        return " OR ".join(f"({p})" for p in parts) if len(parts) > 1 else parts[0]

    # filters

    def condition(self, node: FilterNode, ctx: Branch, invert: bool) -> str:
        """SQL true when filter ``node`` lets the context field through (NiFi's predicate)."""
        if isinstance(node, Not):
            return self.condition(node.filter, ctx, not invert)
        if isinstance(node, Compare):
            rhs, rt = self.first(node.rhs, ctx, non_null=True)
            lhs = self.select(node.lhs, ctx)
            anyone = self.any_value(lhs, ctx, lambda v, t: compare_sql(node.op, v, t, rhs, rt), invert)
            return f"({rhs}) IS NOT NULL AND ({anyone})"
        from engine.record.path_sql_functions import filter_test

        test = filter_test(self, node, ctx)
        return self.any_value(self.select(node.args[0], ctx), ctx, test, invert)

    def booleans(self, node: FilterNode, ctx: Branch) -> list[Branch]:
        """A filter used as a value: one boolean per value of its subject."""
        if isinstance(node, Not):
            return [replace(b, value=f"NOT ({b.value})") for b in self.booleans(node.filter, ctx)]
        if isinstance(node, Compare):
            rhs, rt = self.first(node.rhs, ctx, non_null=True)
            return [Branch(f"coalesce({compare_sql(node.op, b.value, b.type, rhs, rt)}, false)", pa.bool_(), node.op,
                           None, b.frames, b.conds + (f"({rhs}) IS NOT NULL",))
                    for b in self.select(node.lhs, ctx)]
        from engine.record.path_sql_functions import filter_test

        test = filter_test(self, node, ctx)
        return [Branch(f"coalesce({test(b.value, b.type)}, false)", pa.bool_(), node.name, None, b.frames, b.conds)
                for b in self.select(node.args[0], ctx)]


def _common_prefix(a: tuple[Frame, ...], b: tuple[Frame, ...]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x is not y:
            break
        n += 1
    return n


def select_sql(path: RecordPath, schema: Any) -> SqlValue:
    """The Spark SQL selecting ``path`` (see ``RecordPath.sql_value``)."""
    compiler = SqlCompiler(path, schema)
    branches = compiler.select(path.tree, compiler.root)
    if len(branches) == 1 and not branches[0].frames:
        b = branches[0]
        sql = f"CASE WHEN {all_of(b.conds)} THEN {b.value} END" if b.conds else b.value
        return SqlValue(sql, False, b.type)
    element = next((b.type for b in branches if b.type is not None and not pa.types.is_null(b.type)), None)
    return SqlValue(compiler.materialize(branches, 0), True, element)
