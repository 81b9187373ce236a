"""GenerateFlowFile: makes FlowFiles of random or fixed content, for tests, load and triggers."""

from __future__ import annotations

import os
import random

from engine.components import (
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.components import validators as v

FILE_SIZE = PropertyDescriptor(
    "File Size", description="The size of the content of each FlowFile.", required=True, default="0B",
    validators=[v.DATA_SIZE], expression_language=ExpressionScope.ENVIRONMENT)
BATCH_SIZE = PropertyDescriptor(
    "Batch Size", description="How many FlowFiles each run makes (one session for all of them).", required=True,
    default="1", validators=[v.POSITIVE_INTEGER])
DATA_FORMAT = PropertyDescriptor(
    "Data Format", description="Whether random content is printable text or any bytes.", required=True,
    default="Text", allowed_values=["Binary", "Text"])
UNIQUE_FLOWFILES = PropertyDescriptor(
    "Unique FlowFiles", description="If true, every FlowFile gets new random content; if false, one random "
    "content is made when the processor starts and every FlowFile gets it (much faster).", required=True,
    default="false", allowed_values=["true", "false"])
CUSTOM_TEXT = PropertyDescriptor(
    "Custom Text", description="Content to use instead of random data (Data Format must be Text and Unique "
    "FlowFiles false); File Size is then ignored. Expressions are evaluated once per run.",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT)
CHARACTER_SET = PropertyDescriptor(
    "Character Set", description="How Custom Text is encoded into bytes.", required=True, default="UTF-8",
    validators=[v.CHARACTER_SET])
MIME_TYPE = PropertyDescriptor(
    "Mime Type", description="The value of the mime.type attribute of each FlowFile.", validators=[v.NON_EMPTY])

SUCCESS = Relationship("success", "Every generated FlowFile")

_TEXT = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ1234567890!@#$%^&*()-_=+/?.,';:\"?<>\n\t "


class GenerateFlowFile(Processor):
    """Creates FlowFiles with random or custom content; useful for load tests, simulations and
    as a timer that starts a flow.

    Each FlowFile gets a CREATE provenance event. User-added properties become attributes of
    every FlowFile (their expressions see environment variables and are evaluated once per run).
    """

    nifi_type = "org.apache.nifi.processors.standard.GenerateFlowFile"
    tags = ("test", "random", "generate", "load")
    properties = (FILE_SIZE, BATCH_SIZE, DATA_FORMAT, UNIQUE_FLOWFILES, CUSTOM_TEXT, CHARACTER_SET, MIME_TYPE)
    relationships = (SUCCESS,)
    dynamic_properties = DynamicProperties(
        "Generated FlowFile attribute name", "Generated FlowFile attribute value",
        "Sets this attribute on every generated FlowFile.", ExpressionScope.ENVIRONMENT)
    input_requirement = InputRequirement.FORBIDDEN
    default_scheduling_period = "1 min"
    writes_attributes = (WrittenAttribute("mime.type", "The Mime Type property's value, when it is set"),)
    migrated_properties = {"generate-ff-custom-text": "Custom Text", "character-set": "Character Set",
                           "mime-type": "Mime Type"}

    def validate(self, context):
        custom = context.property(CUSTOM_TEXT).is_set()
        unique = context.property(UNIQUE_FLOWFILES).as_bool()
        text = context.property(DATA_FORMAT).value == "Text"
        if custom and (unique or not text):
            yield "'Custom Text' requires Data Format 'Text' and Unique FlowFiles 'false'"

    def on_scheduled(self, context):
        self._unique = context.property(UNIQUE_FLOWFILES).as_bool()
        self._binary = context.property(DATA_FORMAT).value == "Binary"
        self._size = context.property(FILE_SIZE).evaluate().as_data_size()
        self._batch = context.property(BATCH_SIZE).as_int()
        self._data = None if self._unique else self._random_content()

    def _random_content(self) -> bytes:
        if self._binary:
            return os.urandom(self._size)
        return bytes(random.choices(_TEXT, k=self._size))

    def on_trigger(self, context, session):
        custom = context.property(CUSTOM_TEXT)
        if custom.is_set():
            data = custom.evaluate().value.encode(context.property(CHARACTER_SET).value)
        else:
            data = self._data
        attributes = {name: value.evaluate().value or "" for name, value in context.dynamic_properties.items()}
        mime_type = context.property(MIME_TYPE).value
        if mime_type:
            attributes["mime.type"] = mime_type
        flowfiles = [session.create() for _ in range(self._batch)]
        contents = [self._random_content() for _ in flowfiles] if self._unique else [data] * len(flowfiles)
        if any(contents):
            flowfiles = session.write_all_bytes(list(zip(flowfiles, contents)))
        for flowfile in flowfiles:
            if attributes:
                flowfile = session.put_all_attributes(flowfile, attributes)
            session.provenance.create(flowfile)
            session.transfer(flowfile, SUCCESS.name)
