"""Making record batches fit a writer's schema."""

from __future__ import annotations

import pyarrow as pa

from engine.record.api import MalformedRecordError

__all__ = ["conform"]

_CAST_ERRORS = (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError)


def conform(batch: pa.RecordBatch | pa.Table, schema: pa.Schema) -> pa.Table:
    """``batch`` with the fields of ``schema`` in its order and of its types (a field the batch
    lacks is null, one it has beyond the schema is dropped); raises MalformedRecordError when a
    column cannot be cast."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    if table.schema.equals(schema):
        return table
    columns = []
    for field in schema:
        index = table.schema.get_field_index(field.name)
        if index < 0:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        column = table.column(index)
        if not column.type.equals(field.type):
            try:
                column = column.cast(field.type)
            except _CAST_ERRORS as error:
                raise MalformedRecordError(f"field {field.name!r}: {column.type} values cannot be written as "
                                           f"{field.type}: {type(error).__name__}: {error}") from None
        columns.append(column)
    return pa.Table.from_arrays(columns, schema=schema)
