"""Schema access: how a record reader or writer service gets the schema of a FlowFile's records.

Every reader and writer service declares NiFi's ``Schema Access Strategy`` property (its values
differ by service) and the ``Schema Text`` property it depends on; writers also declare
``Schema Write Strategy``. Property names are NiFi 2's current ones; the NiFi 1.x ids
(``schema-access-strategy``, ``schema-text``) are read through ``MIGRATED_PROPERTIES``.

Strategies (NiFi's values):

- ``infer-schema`` (readers): the reader infers the schema from the content.
- ``schema-text-property``: ``Schema Text`` (default ``${avro.schema}``, Expression Language on
  the FlowFile's attributes) holds an Avro record schema.
- ``inherit-record-schema`` (writers): the records' own schema, as the reader gave it.
- ``embedded-avro-schema`` (AvroReader): the schema in the Avro content's header; the Avro
  reader reads it itself (``SchemaAccess.explicit_schema`` returns None for it).
- ``csv-header-derived`` (CSVReader): every column of the header line, as strings.

Flowsite has no schema registry service yet: NiFi's ``schema-name`` and
``schema-reference-reader`` strategies are not offered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from engine.components import AllowableValue, ExpressionScope, PropertyDependency, PropertyDescriptor
from engine.expression import ExpressionError
from engine.record.api import MalformedRecordError
from engine.record.schema import RecordSchema, SchemaError

if TYPE_CHECKING:
    from engine.components.context import ConfigurationContext, PropertyValue

__all__ = [
    "AVRO_EMBEDDED", "AVRO_SCHEMA_ATTRIBUTE", "EMBEDDED_AVRO_SCHEMA", "INFER_SCHEMA", "INHERIT_RECORD_SCHEMA",
    "MIGRATED_PROPERTIES", "NO_SCHEMA", "SCHEMA_ACCESS_STRATEGY", "SCHEMA_TEXT", "SCHEMA_TEXT_PROPERTY",
    "SCHEMA_WRITE_STRATEGY", "SchemaAccess", "parse_schema_text", "schema_access_strategy", "schema_write_attributes",
    "schema_write_strategy",
]

#: The property names (NiFi 2's).
SCHEMA_ACCESS_STRATEGY = "Schema Access Strategy"
SCHEMA_WRITE_STRATEGY = "Schema Write Strategy"

# -- Schema Access Strategy values -------------------------------------------------------------

INFER_SCHEMA = AllowableValue(
    "infer-schema", "Infer Schema", "The schema of the data is inferred from the content when it is read (see the "
    "reader's documentation for how far into the content it looks).")
SCHEMA_TEXT_PROPERTY = AllowableValue(
    "schema-text-property", "Use 'Schema Text' Property", "The text of the schema itself is specified by the 'Schema "
    "Text' property. Its value must be a valid Avro schema; with Expression Language, it must be one once the "
    "expressions are evaluated against the FlowFile's attributes.")
INHERIT_RECORD_SCHEMA = AllowableValue(
    "inherit-record-schema", "Inherit Record Schema", "The schema used to write records is the schema the records "
    "were read with (or the schema of a query's result).")
EMBEDDED_AVRO_SCHEMA = AllowableValue(
    "embedded-avro-schema", "Use Embedded Avro Schema", "The FlowFile has the Avro schema embedded within the content, "
    "and this schema is used.")

# -- Schema Write Strategy values --------------------------------------------------------------

NO_SCHEMA = AllowableValue("no-schema", "Do Not Write Schema", "Do not add any schema-related information to the "
                           "FlowFile.")
AVRO_SCHEMA_ATTRIBUTE = AllowableValue(
    "full-schema-attribute", "Set 'avro.schema' Attribute", "The FlowFile is given an attribute named 'avro.schema' "
    "holding the Avro schema that describes its records. The content need not be Avro: the text of the schema is "
    "used.")
AVRO_EMBEDDED = AllowableValue("avro-embedded", "Embed Avro Schema", "The FlowFile has the Avro schema embedded into "
                               "the content, as is typical with Avro.")

#: NiFi 1.x ids of the shared properties and the names they became (a service adds these to its
#: own ``migrated_properties``).
MIGRATED_PROPERTIES: Mapping[str, str] = {
    "schema-access-strategy": SCHEMA_ACCESS_STRATEGY,
    "schema-text": "Schema Text",
}


def _avro_schema(value: str, context) -> str | None:
    """Validator: an Avro record schema (skipped while the value holds a FlowFile expression)."""
    try:
        _parse(value)
    except SchemaError as error:
        return f"is not a valid Avro record schema: {error}"
    return None


SCHEMA_TEXT = PropertyDescriptor(
    "Schema Text", description="The text of an Avro-formatted schema. With Expression Language it is evaluated "
    "against each FlowFile's attributes (the default reads the 'avro.schema' attribute).",
    default="${avro.schema}", expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES, validators=[_avro_schema],
    depends_on=[PropertyDependency(SCHEMA_ACCESS_STRATEGY, (SCHEMA_TEXT_PROPERTY.value,))])


def schema_access_strategy(values: Sequence[AllowableValue], default: AllowableValue) -> PropertyDescriptor:
    """The ``Schema Access Strategy`` property of a service offering ``values``."""
    return PropertyDescriptor(
        SCHEMA_ACCESS_STRATEGY, description="Specifies how to obtain the schema that is to be used for interpreting "
        "the data.", required=True, default=default.value, allowed_values=tuple(values))


def schema_write_strategy(values: Sequence[AllowableValue] = (NO_SCHEMA, AVRO_SCHEMA_ATTRIBUTE),
                          default: AllowableValue = NO_SCHEMA) -> PropertyDescriptor:
    """The ``Schema Write Strategy`` property of a writer offering ``values``."""
    return PropertyDescriptor(
        SCHEMA_WRITE_STRATEGY, description="Specifies how the schema for a record should be added to the data.",
        required=True, default=default.value, allowed_values=tuple(values))


@lru_cache(maxsize=256)
def _parse(text: str) -> RecordSchema:
    return RecordSchema.from_avro(text)


def parse_schema_text(text: str | None, property_name: str = "Schema Text") -> RecordSchema:
    """The record schema ``text`` holds (parsed schemas are cached by text); raises
    MalformedRecordError naming ``property_name`` when it is empty or not an Avro record schema."""
    if text is None or not text.strip():
        raise MalformedRecordError(f"'{property_name}' is empty for this FlowFile: no schema to read or write "
                                   f"records with (the default '${{avro.schema}}' needs an 'avro.schema' attribute)")
    try:
        return _parse(text)
    except SchemaError as error:
        raise MalformedRecordError(f"'{property_name}' is not a valid Avro record schema: {error}") from None


def schema_write_attributes(strategy: str | None, schema: RecordSchema) -> dict[str, str]:
    """The attributes a writer's ``Schema Write Strategy`` gives its output (``avro.schema`` for
    ``full-schema-attribute``; nothing otherwise)."""
    if strategy == AVRO_SCHEMA_ATTRIBUTE.value:
        return {"avro.schema": schema.avro_text}
    return {}


class SchemaAccess:
    """A service's configured schema access strategy, resolved for one FlowFile at a time.

    Built when the service is enabled (``from_context``); ``explicit_schema`` and
    ``writer_schema`` are called for each FlowFile with its attributes.
    """

    def __init__(self, strategy: str, schema_text: PropertyValue | None = None) -> None:
        self.strategy = strategy
        self._schema_text = schema_text

    @classmethod
    def from_context(cls, context: ConfigurationContext) -> SchemaAccess:
        """The strategy configured in ``context`` (a service's ConfigurationContext)."""
        return cls(context.property(SCHEMA_ACCESS_STRATEGY).value or "", context.property(SCHEMA_TEXT))

    @property
    def infers(self) -> bool:
        """True when the reader infers the schema from the content."""
        return self.strategy == INFER_SCHEMA.value

    def schema_text(self, attributes: Mapping[str, str]) -> RecordSchema:
        """The schema ``Schema Text`` gives for a FlowFile with ``attributes``; raises MalformedRecordError."""
        if self._schema_text is None:
            raise MalformedRecordError("the service has no 'Schema Text' property")
        try:
            text = self._schema_text.evaluate(attributes=attributes).value
        except ExpressionError as error:
            raise MalformedRecordError(f"'Schema Text' could not be evaluated for this FlowFile: {error}") from None
        return parse_schema_text(text)

    def explicit_schema(self, attributes: Mapping[str, str]) -> RecordSchema | None:
        """For a reader: the schema the configuration names for a FlowFile with ``attributes``, or
        None when the reader finds the schema in the content (inferred, embedded, header-derived)."""
        if self.strategy == SCHEMA_TEXT_PROPERTY.value:
            return self.schema_text(attributes)
        return None

    def writer_schema(self, attributes: Mapping[str, str], read_schema: RecordSchema | None) -> RecordSchema:
        """For a writer: the schema to write records of ``read_schema`` with, for a FlowFile with
        ``attributes``; raises MalformedRecordError when there is none."""
        if self.strategy == INHERIT_RECORD_SCHEMA.value:
            if read_schema is None:
                raise MalformedRecordError("'Schema Access Strategy' is 'Inherit Record Schema' but the records come "
                                           "with no schema to inherit")
            return read_schema
        if self.strategy == SCHEMA_TEXT_PROPERTY.value:
            return self.schema_text(attributes)
        raise MalformedRecordError(f"'Schema Access Strategy' {self.strategy!r} gives a writer no schema")
