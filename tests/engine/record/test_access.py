"""Schema access: the shared properties, their validation, and the schema each strategy resolves."""

from __future__ import annotations

import json

import pytest

from engine.components import ConfigurationContext, ControllerService, validate_properties
from engine.components.validation import component_descriptors
from engine.record.access import (
    AVRO_SCHEMA_ATTRIBUTE,
    INFER_SCHEMA,
    INHERIT_RECORD_SCHEMA,
    MIGRATED_PROPERTIES,
    NO_SCHEMA,
    SCHEMA_TEXT,
    SCHEMA_TEXT_PROPERTY,
    SchemaAccess,
    parse_schema_text,
    schema_access_strategy,
    schema_write_attributes,
    schema_write_strategy,
)
from engine.record.api import MalformedRecordError
from engine.record.schema import RecordSchema

PERSON = json.dumps({"type": "record", "name": "person", "fields": [
    {"name": "name", "type": "string"}, {"name": "age", "type": ["null", "int"]}]})


class Reader(ControllerService):
    """A reader's schema properties, as a service declares them."""

    properties = (schema_access_strategy((INFER_SCHEMA, SCHEMA_TEXT_PROPERTY), INFER_SCHEMA), SCHEMA_TEXT)
    migrated_properties = MIGRATED_PROPERTIES


class Writer(ControllerService):
    """A writer's schema properties."""

    properties = (schema_write_strategy(), schema_access_strategy((INHERIT_RECORD_SCHEMA, SCHEMA_TEXT_PROPERTY),
                                                                  INHERIT_RECORD_SCHEMA), SCHEMA_TEXT)


def access(cls, properties) -> SchemaAccess:
    descriptors, _ = component_descriptors(cls, properties)
    return SchemaAccess.from_context(ConfigurationContext(descriptors, properties))


def problems(cls, properties) -> list[str]:
    return [str(p) for p in validate_properties(cls, properties)]


def test_nifi_names_values_and_defaults():
    strategy, text = Reader.properties
    assert strategy.name == "Schema Access Strategy" and strategy.required and strategy.default == "infer-schema"
    assert [(v.value, v.display_name) for v in strategy.allowed_values] == [
        ("infer-schema", "Infer Schema"), ("schema-text-property", "Use 'Schema Text' Property")]
    assert text.name == "Schema Text" and text.default == "${avro.schema}"
    assert text.expression_language.value == "FLOWFILE_ATTRIBUTES"
    write = Writer.properties[0]
    assert write.name == "Schema Write Strategy" and write.default == "no-schema"
    assert [(v.value, v.display_name) for v in write.allowed_values] == [
        ("no-schema", "Do Not Write Schema"), ("full-schema-attribute", "Set 'avro.schema' Attribute")]
    assert Writer.properties[1].default == "inherit-record-schema"


def test_nifi_1_ids_are_migrated():
    migrated = Reader.migrate_properties({"schema-access-strategy": "schema-text-property", "schema-text": PERSON})
    assert migrated == {"Schema Access Strategy": "schema-text-property", "Schema Text": PERSON}


def test_validation():
    assert problems(Reader, {}) == []
    assert problems(Reader, {"Schema Access Strategy": "schema-text-property"}) == []  # ${avro.schema}: per FlowFile
    assert problems(Reader, {"Schema Access Strategy": "schema-text-property", "Schema Text": PERSON}) == []
    bad = problems(Reader, {"Schema Access Strategy": "schema-text-property", "Schema Text": '{"type": "int"}'})
    assert bad == ["'Schema Text' is not a valid Avro record schema: a record schema must be a JSON object with "
                   "\"type\": \"record\""]
    assert problems(Reader, {"Schema Access Strategy": "schema-name"})[0].startswith(
        "'Schema Access Strategy' is 'schema-name', which is not one of the allowed values")
    # Schema Text only matters under its strategy
    assert problems(Reader, {"Schema Access Strategy": "infer-schema", "Schema Text": "not json"}) == []


def test_schema_text_from_the_property_and_from_attributes():
    explicit = access(Reader, {"Schema Access Strategy": "schema-text-property", "Schema Text": PERSON})
    schema = explicit.explicit_schema({})
    assert schema.field_names == ["name", "age"] and schema == RecordSchema.from_avro(PERSON)
    by_attribute = access(Reader, {"Schema Access Strategy": "schema-text-property"})
    assert by_attribute.explicit_schema({"avro.schema": PERSON}) == schema
    templated = access(Reader, {"Schema Access Strategy": "schema-text-property", "Schema Text": "${my.schema}"})
    assert templated.explicit_schema({"my.schema": PERSON}) == schema
    assert access(Reader, {}).explicit_schema({"avro.schema": PERSON}) is None  # inferred: the reader's job
    assert access(Reader, {}).infers


def test_schema_text_errors_name_the_property():
    by_attribute = access(Reader, {"Schema Access Strategy": "schema-text-property"})
    with pytest.raises(MalformedRecordError, match=r"'Schema Text' is empty for this FlowFile.*avro\.schema"):
        by_attribute.explicit_schema({})
    with pytest.raises(MalformedRecordError, match=r"'Schema Text' is not a valid Avro record schema: the schema is "
                                                   r"not valid JSON"):
        by_attribute.explicit_schema({"avro.schema": "{nope"})
    with pytest.raises(MalformedRecordError, match="unknown Avro type 'strng'"):
        by_attribute.explicit_schema({"avro.schema": '{"type": "record", "name": "r", "fields": '
                                                     '[{"name": "a", "type": "strng"}]}'})
    broken = access(Reader, {"Schema Access Strategy": "schema-text-property", "Schema Text": "${a:nosuchfn()}"})
    with pytest.raises(MalformedRecordError, match="'Schema Text' could not be evaluated"):
        broken.explicit_schema({"a": "x"})


def test_writer_schema():
    read = RecordSchema.from_avro(PERSON)
    inherit = access(Writer, {})
    assert inherit.writer_schema({}, read) is read
    with pytest.raises(MalformedRecordError, match="no schema to inherit"):
        inherit.writer_schema({}, None)
    other = json.dumps({"type": "record", "name": "n", "fields": [{"name": "name", "type": "string"}]})
    text = access(Writer, {"Schema Access Strategy": "schema-text-property", "Schema Text": other})
    assert text.writer_schema({}, read).field_names == ["name"]


def test_write_strategy_attributes():
    schema = parse_schema_text(PERSON)
    assert schema_write_attributes(NO_SCHEMA.value, schema) == {}
    attributes = schema_write_attributes(AVRO_SCHEMA_ATTRIBUTE.value, schema)
    assert json.loads(attributes["avro.schema"]) == json.loads(PERSON)
