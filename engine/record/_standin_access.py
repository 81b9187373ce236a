"""STAND-IN for engine/record/access.py (owned by the csvjson helper); deleted once it lands on main."""

from __future__ import annotations

from collections.abc import Mapping

from engine.components import AllowableValue, ExpressionScope, PropertyDependency, PropertyDescriptor
from engine.record.api import MalformedRecordError
from engine.record.schema import RecordSchema, SchemaError

SCHEMA_TEXT_PROPERTY = AllowableValue("schema-text-property", "Use 'Schema Text' Property", "The schema text.")
INHERIT_RECORD_SCHEMA = AllowableValue("inherit-record-schema", "Inherit Record Schema", "The records' schema.")
NO_SCHEMA = AllowableValue("no-schema", "Do Not Write Schema", "No schema information.")
AVRO_SCHEMA_ATTRIBUTE = AllowableValue("full-schema-attribute", "Set 'avro.schema' Attribute", "avro.schema.")


def strategy_property(values, default) -> PropertyDescriptor:
    return PropertyDescriptor("Schema Access Strategy", description="How the schema is obtained.", required=True,
                              default=default, allowed_values=values)


SCHEMA_TEXT = PropertyDescriptor(
    "Schema Text", description="The text of an Avro schema.", default="${avro.schema}",
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES,
    depends_on=[PropertyDependency("Schema Access Strategy", (SCHEMA_TEXT_PROPERTY.value,))])


def write_strategy_property(values, default) -> PropertyDescriptor:
    return PropertyDescriptor("Schema Write Strategy", description="How the schema is written.", required=True,
                              default=default, allowed_values=values)


def schema_from_text(context, attributes: Mapping[str, str]) -> RecordSchema:
    text = context.property(SCHEMA_TEXT).evaluate(attributes=attributes).value
    if not text:
        raise MalformedRecordError("the Schema Text is empty")
    try:
        return RecordSchema.from_avro(text)
    except SchemaError as error:
        raise MalformedRecordError(f"the Schema Text is not a usable schema: {error}") from None
