"""Setting the fields a RecordPath selects, in Spark SQL (UpdateRecord on Spark).

``update_columns(path, value, schema)`` gives, for each top-level column the path reaches, the
SQL of that column's new value: the column rebuilt with the selected field(s) set, everything
else unchanged. Spark SQL has no ``withField``, so a record is rebuilt with ``named_struct``, an
array with ``transform``, a map with ``transform_values``/``map_concat``:

* ``/name`` → the new value; ``/address/city`` → ``CASE WHEN `address` IS NULL THEN NULL ELSE
  named_struct('street', `address`.`street`, 'city', <value>) END``; a field the schema lacks is
  added (as NiFi adds it), a field of a null record is left alone (as NiFi does);
* ``/a[0]``, ``/a[-1]``, ``/a[0, 2]``, ``/a[1..-1]``, ``/a[*]`` → ``transform(`a`, (e, i) -> ...)``;
* ``/m['k']`` → the entry replaced, or added when absent; ``/m[*]`` → every value;
* predicates (``/a[./x = 'y']/b``), ``/*`` and ``//name``: the condition is applied where the
  value is set, ``CASE WHEN <condition> THEN <value> ELSE <old value> END``, so where it holds
  for only some values the new value must have the field's type (or one Spark converts to it).

``value`` is SQL text (the same for every field set), a callable given the SQL of the field's
current value, or a RecordPath: an absolute one is evaluated on the record, a relative one
against each field set (``.`` is that field, ``..`` its parent), as NiFi's UpdateRecord does
with "Record Path Value". Not supported, with an error saying so: a function or a relative path
as destination, ``..`` after a wildcard, predicate or ``//`` step, replacing the whole record,
and a replacement that selects several values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from engine.record.path_parser import (
    Child, Context, Current, Descendant, Index, MapKeys, Node, Parent, Predicate, Root, WildcardChild,
    WildcardDescendant, WildcardIndex,
)
from engine.record.path_sql import (
    Branch, Frame, SqlCompiler, all_of, deref, is_list, is_map_type, is_struct, struct_fields, quote, sql_string,
)

if TYPE_CHECKING:
    from engine.record.path import RecordPath

__all__ = ["update_columns"]

_NAVIGATION = (Child, MapKeys, Index)


def _nullable(sql: str) -> str:
    """``sql`` as a value Spark sees as nullable: a literal in a record that may be null would
    otherwise make a non-nullable field that Arrow refuses when the record is null."""
    return f"IF(true, {sql}, NULL)"


def _steps(compiler: SqlCompiler, path: RecordPath) -> list[Node]:
    chain: list[Node] = []
    node: Any = path.tree
    while not isinstance(node, (Root, Context)):
        if not hasattr(node, "parent"):
            raise compiler.fail("a destination must be a path to fields, not a function or a literal")
        chain.append(node)
        node = node.parent
    if isinstance(node, Context):
        raise compiler.fail("a destination must be an absolute path (starting with /)")
    steps: list[Node] = []
    for step in reversed(chain):
        if isinstance(step, Current):
            continue
        if isinstance(step, Parent):
            last = steps[-1] if steps else None
            if not isinstance(last, _NAVIGATION) or (isinstance(last, Index) and not last.single) \
                    or (isinstance(last, MapKeys) and len(last.keys) > 1):
                raise compiler.fail("'..' in a destination is supported only right after a field, one index or "
                                    "one map key")
            steps.pop()
            continue
        steps.append(step)
    if not steps:
        raise compiler.fail("replacing the whole record is not supported; set its fields")
    return steps


def _contains(t: pa.DataType, name: str | None) -> bool:
    if is_list(t):
        t = t.value_type
    if not is_struct(t):
        return False
    return any(name is None or f.name == name or _contains(f.type, name) for f in struct_fields(t))


class _Rebuilder:
    def __init__(self, compiler: SqlCompiler, value: Any) -> None:
        self.c = compiler
        self.value = value

    def new_value(self, loc: Branch) -> str:
        """SQL of the value to set at ``loc`` (see the module docstring for the forms of ``value``)."""
        from engine.record.path import RecordPath

        value = self.value
        if isinstance(value, str):
            return value
        if isinstance(value, RecordPath):
            sub = SqlCompiler(value, self.c.schema)
            sub._vars = self.c._vars
            ctx = sub.root if value.is_absolute else loc.scalar_view()
            branches = sub.select(value.tree, ctx)
            if not branches:
                return "NULL"
            if len(branches) != 1 or not sub.is_scalar_in(branches[0], ctx):
                raise self.c.fail(f"the replacement path {value.text!r} selects several values")
            b = branches[0]
            return f"CASE WHEN {all_of(b.conds)} THEN {b.value} END" if b.conds else b.value
        return str(value(loc.value))

    def leaf(self, loc: Branch, conds: list[str]) -> str:
        """The new value at ``loc``, or its old one where the conditions on the way do not hold."""
        new = self.new_value(loc)
        return f"CASE WHEN {all_of(conds)} THEN {new} ELSE {loc.value} END" if conds else new

    def struct_with(self, loc: Branch, replacements: dict[str, str], added: tuple[str, str] | None = None) -> str:
        """The record ``loc`` rebuilt with some fields replaced (and one added); null stays null."""
        assert loc.type is not None
        parts = [f"{sql_string(f.name)}, " + (_nullable(replacements[f.name]) if f.name in replacements
                                               else deref(loc.value, f.name))
                 for f in struct_fields(loc.type)]
        if added is not None:
            parts.append(f"{sql_string(added[0])}, {_nullable(added[1])}")
        return f"CASE WHEN {loc.value} IS NULL THEN NULL ELSE named_struct({', '.join(parts)}) END"

    def child(self, loc: Branch, name: str) -> Branch:
        field_type = loc.type.field(name).type
        return Branch(deref(loc.value, name), field_type, name, loc, loc.frames)

    def element(self, loc: Branch, var: str, kind: pa.DataType, parent: Branch | None = None) -> Branch:
        return Branch(var, kind, loc.name, parent or loc, loc.frames + (Frame(loc.value, var),))

    def rebuild(self, loc: Branch, steps: list[Node], conds: list[str]) -> str:
        """The SQL of ``loc``'s value with the fields ``steps`` lead to set."""
        if not steps:
            return self.leaf(loc, conds)
        step, rest = steps[0], steps[1:]
        t = loc.type
        if t is None:
            raise self.c.fail("update_sql needs the record schema")
        if isinstance(step, Current):
            return self.rebuild(loc, rest, conds)
        if isinstance(step, Predicate):
            condition = self.c.condition(step.filter, loc.scalar_view(), False)
            return self.rebuild(loc, rest, conds + [condition])
        if isinstance(step, (Child, MapKeys)) and is_struct(t):
            names = [step.name] if isinstance(step, Child) else list(step.keys)
            replacements: dict[str, str] = {}
            added = None
            for name in names:
                if t.get_field_index(name) >= 0:
                    replacements[name] = self.rebuild(self.child(loc, name), rest, conds)
                elif not rest and not conds:
                    added = (name, self.leaf(Branch("NULL", pa.null(), name, loc, loc.frames), conds))
            return self.struct_with(loc, replacements, added) if replacements or added else loc.value
        if isinstance(step, MapKeys) and is_map_type(t):
            return self.map_keys(loc, step.keys, rest, conds)
        if isinstance(step, WildcardChild) or (isinstance(step, WildcardIndex) and is_struct(t)):
            if not is_struct(t):
                return loc.value
            replacements = {}
            for f in struct_fields(t):
                child = self.child(loc, f.name)
                extra = [f"{child.value} IS NOT NULL"] if isinstance(step, WildcardChild) else []
                replacements[f.name] = self.rebuild(child, rest, conds + extra)
            return self.struct_with(loc, replacements)
        if isinstance(step, (Descendant, WildcardDescendant)):
            return self.descend(loc, step.name if isinstance(step, Descendant) else None, rest, conds)
        if isinstance(step, (Index, WildcardIndex)) and is_list(t):
            var, position = self.c.new_var(), self.c.new_var()
            element = self.element(loc, var, t.value_type)
            selected = list(conds)
            if isinstance(step, Index):
                selected.append(self.positions(step, loc.value, position))
            return f"transform({loc.value}, ({var}, {position}) -> {self.rebuild(element, rest, selected)})"
        if isinstance(step, WildcardIndex) and is_map_type(t):
            key, var = self.c.new_var(), self.c.new_var()
            element = self.element(loc, var, t.item_type)
            return f"transform_values({loc.value}, ({key}, {var}) -> {self.rebuild(element, rest, conds)})"
        return loc.value

    def positions(self, step: Index, array: str, position: str) -> str:
        """SQL true for the element positions an index step selects (NiFi's rules for negatives)."""
        size = f"size({array})"
        if step.single:
            wanted = step.ranges[0][0]
            return f"{position} = {wanted}" if wanted >= 0 else f"{position} = {size} - {-wanted}"
        options = []
        for low, high in step.ranges:
            start = str(low) if low >= 0 else f"{size} - {-low}"
            stop = str(high) if high >= 0 else f"{size} - {-high}"
            options.append(f"({size} > {abs(low)} AND {position} >= {start} AND {position} <= {stop})")
        return " OR ".join(options)

    def map_keys(self, loc: Branch, keys: tuple[str, ...], rest: list[Node], conds: list[str]) -> str:
        """The map ``loc`` with the entries ``keys`` set (added when absent and nothing follows)."""
        current = loc.value
        for key in keys:
            literal = sql_string(key)
            entry_key, var = self.c.new_var(), self.c.new_var()
            element = self.element(Branch(current, loc.type, loc.name, loc.parent, loc.frames), var,
                                   loc.type.item_type, parent=loc)
            replaced = (f"transform_values({current}, ({entry_key}, {var}) -> CASE WHEN {entry_key} = {literal} "
                        f"THEN {self.rebuild(element, rest, conds)} ELSE {var} END)")
            if rest:
                current = replaced
                continue
            missing = Branch("NULL", loc.type.item_type, loc.name, loc, loc.frames)
            added = f"map_concat({current}, map({literal}, {self.new_value(missing)}))"
            guard = all_of(conds) if conds else "true"
            current = (f"CASE WHEN {current} IS NULL THEN NULL WHEN array_contains(map_keys({current}), {literal}) "
                       f"THEN {replaced} WHEN {guard} THEN {added} ELSE {current} END")
        return current

    def descend(self, loc: Branch, name: str | None, rest: list[Node], conds: list[str]) -> str:
        """The record ``loc`` with every field ``name`` at any depth set (inside arrays of records too)."""
        if not is_struct(loc.type):
            return loc.value
        replacements = {}
        for f in struct_fields(loc.type):
            child = self.child(loc, f.name)
            if name is None or f.name == name:
                replacements[f.name] = self.rebuild(child, rest, conds + [f"{child.value} IS NOT NULL"])
            elif is_struct(f.type) and _contains(f.type, name):
                replacements[f.name] = self.descend(child, name, rest, conds)
            elif is_list(f.type) and _contains(f.type, name):
                var = self.c.new_var()
                element = self.element(child, var, f.type.value_type, parent=loc)
                replacements[f.name] = f"transform({child.value}, {var} -> {self.descend(element, name, rest, conds)})"
        return self.struct_with(loc, replacements) if replacements else loc.value


def update_columns(path: RecordPath, value: Any, schema: Any) -> list[tuple[str, str]]:
    """``[(column, new SQL)]`` for the top-level columns ``path`` sets to ``value`` (see the module docstring)."""
    compiler = SqlCompiler(path, schema)
    if compiler.schema is None:
        raise compiler.fail("update_sql needs the record schema")
    steps = _steps(compiler, path)
    rebuilder = _Rebuilder(compiler, value)
    first, rest = steps[0], steps[1:]
    columns: list[tuple[str, str]] = []
    root = compiler.root
    fields = {f.name: f for f in compiler.schema}

    def column(name: str) -> Branch:
        return Branch(quote(name), fields[name].type, name, root)

    if isinstance(first, (Child, MapKeys)):
        for name in [first.name] if isinstance(first, Child) else list(first.keys):
            if name in fields:
                columns.append((name, rebuilder.rebuild(column(name), rest, [])))
            elif not rest:
                columns.append((name, rebuilder.leaf(Branch("NULL", pa.null(), name, root), [])))
    elif isinstance(first, (WildcardChild, WildcardIndex)):
        for name in fields:
            guard = [f"{quote(name)} IS NOT NULL"] if isinstance(first, WildcardChild) else []
            columns.append((name, rebuilder.rebuild(column(name), rest, guard)))
    elif isinstance(first, (Descendant, WildcardDescendant)):
        wanted = first.name if isinstance(first, Descendant) else None
        for name, field in fields.items():
            if wanted is None or name == wanted:
                columns.append((name, rebuilder.rebuild(column(name), rest, [f"{quote(name)} IS NOT NULL"])))
            elif _contains(field.type, wanted):
                loc = column(name)
                if is_list(field.type):
                    var = compiler.new_var()
                    element = rebuilder.element(loc, var, field.type.value_type, parent=root)
                    columns.append((name, f"transform({loc.value}, {var} -> "
                                          f"{rebuilder.descend(element, wanted, rest, [])})"))
                else:
                    columns.append((name, rebuilder.descend(loc, wanted, rest, [])))
    return [(name, sql) for name, sql in columns if sql != quote(name)]
