"""NiFi's RecordPath: select (and set) fields of records, in Python and as Spark SQL.

``compile_record_path('/address/city')`` parses a path once (raising ``RecordPathError`` that
names the position and what was expected); the ``RecordPath`` it returns runs on two back ends
that agree with each other:

* ``path.evaluate(record)`` on a Python record (a dict, as ``pyarrow.Table.to_pylist()`` gives
  one) returns the selected ``FieldValue``s, each with its ``value``, field ``name``, ``parent``
  and a ``set(value)`` that writes the record (what UpdateRecord needs);
* ``path.to_sql(schema)`` is a Spark SQL expression selecting the path's value over a table whose
  columns are the record's top-level fields, and ``path.update_sql(value, schema)`` the new
  expression of the top-level column that holds the path (see ``engine.record.path_sql``).

The supported subset, with NiFi's semantics and where Flowsite differs, is in docs/record-path.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Union

from engine.record import path_values as pv
from engine.record.path_parser import (
    Call, Child, Compare, Context, Current, Descendant, FilterCall, FilterNode, Index, Literal, MapKeys, Node, Not,
    Parent, Predicate, RecordPathError, Root, WildcardChild, WildcardDescendant, WildcardIndex, parse,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from engine.record.path_sql import SqlValue
    from engine.record.schema import RecordSchema

__all__ = ["RecordPath", "FieldValue", "RecordPathError", "compile_record_path"]

_NO_SLOT = object()


class FieldValue:
    """One field a RecordPath selected.

    ``value`` is the field's value (``None`` for a null or absent field), ``name`` its field name
    (an array element or map entry carries its array's or map's name, as in NiFi), ``parent`` the
    FieldValue of the field that holds it (``None`` for the record itself and for computed values).
    """

    __slots__ = ("value", "name", "parent", "_holder", "_key")

    def __init__(self, value: Any, name: str | None, parent: FieldValue | None,
                 holder: Any = _NO_SLOT, key: Any = None) -> None:
        self.value = value
        self.name = name
        self.parent = parent
        self._holder = holder
        self._key = key

    def derive(self, value: Any) -> FieldValue:
        """A computed value that stands for this field (NiFi's functions keep the field they read)."""
        return FieldValue(value, self.name, self.parent, self._holder, self._key)

    def set(self, value: Any) -> None:
        """Write ``value`` into the record at this field: a field of a record (added when absent), an
        array element, a map entry (added when absent), or the whole record (``value`` a dict).

        Like NiFi, setting a field of a record that is null does nothing.
        """
        holder, key = self._holder, self._key
        if holder is _NO_SLOT:
            raise RecordPathError(f"cannot set {self.name or 'a computed value'}: it is not a field of the record")
        if key is _ROOT:
            if not isinstance(value, dict) or not isinstance(holder, dict):
                raise RecordPathError("the whole record can only be replaced by a record (a dict)")
            holder.clear()
            holder.update(value)
        elif isinstance(holder, dict):
            holder[key] = value
        elif isinstance(holder, list) and isinstance(key, int):
            holder[key] = value
        elif isinstance(holder, list):
            for position, (entry_key, _) in enumerate(holder):
                if entry_key == key:
                    holder[position] = (key, value)
                    break
            else:
                holder.append((key, value))
        else:
            return
        self.value = value

    def __repr__(self) -> str:
        return f"FieldValue(name={self.name!r}, value={self.value!r})"


_ROOT = object()


def _field(value: Any, name: str | None, parent: FieldValue, holder: Any, key: Any) -> FieldValue:
    return FieldValue(value, name, parent, holder if isinstance(holder, (dict, list)) else None, key)


class _Evaluator:
    """Evaluates a tree on one record; ``select`` returns the FieldValues a node yields in a context."""

    def __init__(self, path: RecordPath, root: FieldValue) -> None:
        self.path = path
        self.root = root

    def fail(self, message: str) -> RecordPathError:
        return RecordPathError(message, path=self.path.text)

    # segments

    def select(self, node: Node, ctx: FieldValue) -> list[FieldValue]:
        method: Callable[[Any, FieldValue], list[FieldValue]] = getattr(self, "_" + type(node).__name__)
        return method(node, ctx)

    def _Root(self, node: Root, ctx: FieldValue) -> list[FieldValue]:
        return [self.root]

    def _Context(self, node: Context, ctx: FieldValue) -> list[FieldValue]:
        return [ctx]

    def _Child(self, node: Child, ctx: FieldValue) -> list[FieldValue]:
        out = []
        for fv in self.select(node.parent, ctx):
            record = fv.value
            value = record.get(node.name) if isinstance(record, dict) else None
            out.append(_field(value, node.name, fv, record if isinstance(record, dict) else None, node.name))
        return out

    def _WildcardChild(self, node: WildcardChild, ctx: FieldValue) -> list[FieldValue]:
        out = []
        for fv in self.select(node.parent, ctx):
            if isinstance(fv.value, dict):
                out.extend(_field(v, k, fv, fv.value, k) for k, v in fv.value.items() if v is not None)
        return out

    def _Descendant(self, node: Descendant, ctx: FieldValue) -> list[FieldValue]:
        return [found for fv in self.select(node.parent, ctx) for found in self._descend(fv, node.name)]

    def _WildcardDescendant(self, node: WildcardDescendant, ctx: FieldValue) -> list[FieldValue]:
        return [found for fv in self.select(node.parent, ctx) for found in self._descend(fv, None)]

    def _descend(self, fv: FieldValue, name: str | None) -> list[FieldValue]:
        record = fv.value
        if not isinstance(record, dict):
            return []
        out: list[FieldValue] = []
        for key, value in record.items():
            if value is None:
                continue
            child = _field(value, key, fv, record, key)
            if name is None or key == name:
                out.append(child)
            if isinstance(value, dict):
                out.extend(self._descend(child, name))
            elif isinstance(value, list) and value and all(isinstance(e, dict) for e in value):
                for position, element in enumerate(value):
                    out.extend(self._descend(_field(element, key, fv, value, position), name))
        return out

    def _Parent(self, node: Parent, ctx: FieldValue) -> list[FieldValue]:
        return [fv.parent for fv in self.select(node.parent, ctx) if fv.parent is not None]

    def _Current(self, node: Current, ctx: FieldValue) -> list[FieldValue]:
        return self.select(node.parent, ctx)

    def _Index(self, node: Index, ctx: FieldValue) -> list[FieldValue]:
        out = []
        for fv in self.select(node.parent, ctx):
            array = fv.value
            if not isinstance(array, list) or pv.is_map(array):
                continue
            size = len(array)
            if node.single:
                wanted = node.ranges[0][0]
                index = wanted if wanted >= 0 else size + wanted
                positions = [index] if 0 <= index < size else []
            else:
                positions = []
                for low, high in node.ranges:
                    if size > abs(low):
                        start = low if low >= 0 else size + low
                        stop = high if high >= 0 else size + high
                        positions.extend(i for i in range(start, stop + 1) if 0 <= i < size)
            out.extend(_field(array[i], fv.name, fv, array, i) for i in positions)
        return out

    def _MapKeys(self, node: MapKeys, ctx: FieldValue) -> list[FieldValue]:
        out = []
        for fv in self.select(node.parent, ctx):
            entries = pv.map_items(fv.value) if fv.value != [] else []
            if entries is None:
                continue
            lookup = dict(entries)
            out.extend(_field(lookup.get(key), fv.name, fv, fv.value, key) for key in node.keys)
        return out

    def _WildcardIndex(self, node: WildcardIndex, ctx: FieldValue) -> list[FieldValue]:
        out = []
        for fv in self.select(node.parent, ctx):
            value = fv.value
            entries = pv.map_items(value)
            if entries is not None:
                out.extend(_field(v, fv.name, fv, value, k) for k, v in entries)
            elif isinstance(value, list):
                out.extend(_field(v, fv.name, fv, value, i) for i, v in enumerate(value))
        return out

    def _Predicate(self, node: Predicate, ctx: FieldValue) -> list[FieldValue]:
        return [fv for fv in self.select(node.parent, ctx) if self.passing(node.filter, fv, False)]

    def _Literal(self, node: Literal, ctx: FieldValue) -> list[FieldValue]:
        return [FieldValue(node.value, None, None)]

    def _Compare(self, node: Compare, ctx: FieldValue) -> list[FieldValue]:
        return self.booleans(node, ctx)

    _FilterCall = _Compare
    _Not = _Compare

    # filters

    def first(self, node: Node, ctx: FieldValue) -> FieldValue | None:
        found = self.select(node, ctx)
        return found[0] if found else None

    def first_text(self, node: Node, ctx: FieldValue) -> str | None:
        found = self.first(node, ctx)
        return None if found is None else pv.to_string(found.value)

    def first_int(self, node: Node, ctx: FieldValue) -> int | None:
        """The first value as NiFi's ``isIntegerTypeCompatible`` sees it: a number (truncated) or an
        integer's text within the int range; ``None`` otherwise."""
        found = self.first(node, ctx)
        value = None if found is None else found.value
        if isinstance(value, str):
            value = pv.as_number(value)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return None
        number = int(value)
        return number if -2**31 <= number < 2**31 else None

    def passing(self, node: FilterNode, ctx: FieldValue, invert: bool) -> list[FieldValue]:
        """NiFi's ``RecordPathFilter.filter``: the subject's values that pass (or fail, inverted)."""
        if isinstance(node, Not):
            return self.passing(node.filter, ctx, not invert)
        if isinstance(node, Compare):
            rhs = next((fv.value for fv in self.select(node.rhs, ctx) if fv.value is not None), None)
            if rhs is None:
                return []
            return [fv for fv in self.select(node.lhs, ctx) if pv.test_compare(node.op, fv.value, rhs) != invert]
        return [fv for fv in self.select(node.args[0], ctx) if self.test(node, fv, ctx) != invert]

    def booleans(self, node: FilterNode, ctx: FieldValue) -> list[FieldValue]:
        """NiFi's ``mapToBoolean``: one boolean per value of the filter's subject."""
        if isinstance(node, Not):
            return [FieldValue(not fv.value, "not()", None) for fv in self.booleans(node.filter, ctx)]
        if isinstance(node, Compare):
            rhs = next((fv.value for fv in self.select(node.rhs, ctx) if fv.value is not None), None)
            if rhs is None:
                return []
            return [FieldValue(pv.test_compare(node.op, fv.value, rhs), node.op, None)
                    for fv in self.select(node.lhs, ctx)]
        return [FieldValue(self.test(node, fv, ctx), node.name, None) for fv in self.select(node.args[0], ctx)]

    def test(self, node: FilterCall, fv: FieldValue, ctx: FieldValue) -> bool:
        text = pv.to_string(fv.value)
        name = node.name
        if name == "isEmpty":
            return text is None or text == ""
        if name == "isBlank":
            return text is None or pv.is_java_blank(text)
        if text is None:
            return False
        if name in ("matchesRegex", "containsRegex"):
            pattern = self.path.regex(node.args[1], self, ctx)
            if pattern is None:
                return False
            return bool(pattern.fullmatch(text) if name == "matchesRegex" else pattern.search(text))
        search = self.first_text(node.args[1], ctx)
        if search is None:
            return False
        if name == "contains":
            return search in text
        if name == "startsWith":
            return text.startswith(search)
        return text.endswith(search)

    # functions

    def _Call(self, node: Call, ctx: FieldValue) -> list[FieldValue]:
        from engine.record.path_functions import call

        return call(self, node, ctx)


class RecordPath:
    """A compiled RecordPath (see the module docstring); build one with ``compile_record_path``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tree: Node = parse(text)
        from engine.record.path_functions import validate

        validate(self)

    def __repr__(self) -> str:
        return f"RecordPath({self.text!r})"

    @property
    def is_absolute(self) -> bool:
        """True when the path starts at the record (``/...``), as NiFi's ``isAbsolute``; a relative path
        (``.``, ``..``, a function or a literal) is evaluated against a context field."""
        node = self.tree
        while not isinstance(node, (Root, Context, Literal, Call, Compare, FilterCall, Not)):
            node = node.parent
        return isinstance(node, Root)

    @property
    def field_name(self) -> str | None:
        """The name of the last field the path steps to (``/address/city`` → ``city``; ``/a[0]`` → ``a``;
        ``/a/b/..`` → ``a``), ``None`` when the path does not end at a named field."""
        names: list[str | None] = []
        chain: list[Node] = []
        node = self.tree
        while isinstance(node, (Child, WildcardChild, Descendant, WildcardDescendant, Parent, Current, Index,
                                MapKeys, WildcardIndex, Predicate)):
            chain.append(node)
            node = node.parent
        if not isinstance(node, (Root, Context)):
            return None
        for step in reversed(chain):
            if isinstance(step, (Child, Descendant)):
                names.append(step.name)
            elif isinstance(step, (WildcardChild, WildcardDescendant)):
                names.append(None)
            elif isinstance(step, Parent):
                if names:
                    names.pop()
                else:
                    names.append(None)
        return names[-1] if names else None

    def evaluate(self, record: dict[str, Any], context: FieldValue | None = None) -> list[FieldValue]:
        """The fields this path selects in ``record`` (a dict; changed in place by ``FieldValue.set``).

        ``context`` is the field a relative path starts from (UpdateRecord passes each destination
        field); without it a relative path starts at the record.
        """
        if not isinstance(record, dict):
            raise RecordPathError(f"a record is a dict, not {type(record).__name__}", path=self.text)
        root = FieldValue(record, "root", None, record, _ROOT)
        return _Evaluator(self, root).select(self.tree, context or root)

    def values(self, record: dict[str, Any], context: FieldValue | None = None) -> list[Any]:
        """The values of the fields this path selects in ``record``."""
        return [fv.value for fv in self.evaluate(record, context)]

    def regex(self, node: Node, evaluator: _Evaluator, ctx: FieldValue) -> Any:
        """The compiled Java regular expression an argument gives (``None`` when it gives none)."""
        if isinstance(node, Literal):
            return pv.java_regex(str(node.value))
        text = evaluator.first_text(node, ctx)
        if text is None:
            return None
        try:
            return pv.java_regex(text)
        except Exception as error:
            raise RecordPathError(f"the regular expression {text!r} is invalid: {error}", path=self.text) from None

    def update(self, record: dict[str, Any], value: UpdateValue | Any) -> int:
        """Set every field this path selects in ``record`` as NiFi's UpdateRecord does; returns how many.

        ``value`` is the new value itself, a callable given each field's current value, or a
        RecordPath: an absolute one is evaluated once on the record, a relative one against each
        field being set; it gives its only value, or ``None`` when it selects nothing (a path that
        selects several values raises RecordPathError: NiFi would make a record of them).
        """
        targets = self.evaluate(record)
        if isinstance(value, RecordPath) and value.is_absolute:
            fixed = self._single(value, value.evaluate(record))
            for fv in targets:
                fv.set(fixed)
        elif isinstance(value, RecordPath):
            for fv in targets:
                fv.set(self._single(value, value.evaluate(record, fv)))
        elif callable(value):
            for fv in targets:
                fv.set(value(fv.value))
        else:
            for fv in targets:
                fv.set(value)
        return len(targets)

    @staticmethod
    def _single(replacement: RecordPath, found: list[FieldValue]) -> Any:
        if len(found) > 1:
            raise RecordPathError(f"the replacement path selects {len(found)} values", path=replacement.text)
        return found[0].value if found else None

    # Spark SQL

    def sql_value(self, schema: pa.Schema | RecordSchema | None = None) -> SqlValue:
        """The Spark SQL form of this path: ``.sql`` (the expression), ``.is_array`` (true when the path
        can select several values: the expression is then an array of them), ``.type`` (the Arrow
        type of one value, ``None`` when unknown). See ``engine.record.path_sql``."""
        from engine.record.path_sql import select_sql

        return select_sql(self, schema)

    def to_sql(self, schema: pa.Schema | RecordSchema | None = None) -> str:
        """A Spark SQL expression selecting this path's value over a table of the record's top-level fields.

        A path that selects one value (``/a/b``, ``/a[0]``, ``/m['k']``, functions of those) gives
        that value, NULL when it selects nothing; a path that can select several (``[*]``, ``/*``,
        ``//name``, ``[0..2]``) gives an array. ``schema`` (the table's) is needed for ``/*``, ``//``
        and for NiFi's exact comparisons; raises RecordPathError for a part Spark cannot run.
        """
        return self.sql_value(schema).sql

    def update_sql(self, value: UpdateValue, schema: pa.Schema | RecordSchema) -> tuple[str, str]:
        """``(column, expression)``: the new SQL of the top-level column that holds this path, with
        the path's field(s) set to ``value``. See ``engine.record.path_sql.update_columns`` for
        ``value`` and what is supported; raises RecordPathError when the path spans several columns."""
        columns = self.update_sql_columns(value, schema)
        if len(columns) != 1:
            names = ", ".join(name for name, _ in columns) or "none"
            raise RecordPathError(f"the path sets {len(columns)} columns ({names}); use update_sql_columns",
                                  path=self.text)
        return columns[0]

    def update_sql_columns(self, value: UpdateValue, schema: pa.Schema | RecordSchema) -> list[tuple[str, str]]:
        """Like ``update_sql`` for a path that may set fields in several columns (``/*``, ``//name``)."""
        from engine.record.path_update import update_columns

        return update_columns(self, value, schema)


UpdateValue = Union[str, RecordPath, Callable[[str], str]]


@lru_cache(maxsize=512)
def compile_record_path(text: str) -> RecordPath:
    """Parse and check RecordPath ``text`` (cached); raises RecordPathError naming the position at fault."""
    return RecordPath(text)
