"""LogAttribute: writes each FlowFile's attributes (and optionally its content) to the log."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDescriptor,
    Relationship,
)
from engine.components import validators as v

LOG_LEVEL = PropertyDescriptor(
    "Log Level", description="The level to log at.", required=True, default="info",
    allowed_values=["trace", "debug", "info", "warn", "error"])
LOG_PAYLOAD = PropertyDescriptor(
    "Log Payload", description="Whether the content (under 1 MB) is logged too.", required=True, default="false",
    allowed_values=["true", "false"])
ATTRIBUTES_TO_LOG = PropertyDescriptor(
    "Attributes to Log", description="Comma-separated names of the attributes to log (all when unset); "
    "combined (and) with the regular expression below.", validators=[v.NON_EMPTY])
ATTRIBUTES_TO_LOG_REGEX = PropertyDescriptor(
    "attributes-to-log-regex", display_name="Attributes to Log by Regular Expression",
    description="A regular expression the names of logged attributes must match.", default=".*", validators=[v.REGEX])
ATTRIBUTES_TO_IGNORE = PropertyDescriptor(
    "Attributes to Ignore", description="Comma-separated names of attributes not to log; combined (or) with the "
    "regular expression below.", validators=[v.NON_EMPTY])
ATTRIBUTES_TO_IGNORE_REGEX = PropertyDescriptor(
    "attributes-to-ignore-regex", display_name="Attributes to Ignore by Regular Expression",
    description="A regular expression matching the names of attributes not to log.", validators=[v.REGEX])
LOG_PROPERTIES = PropertyDescriptor(
    "Log FlowFile Properties", description="Whether the entry date, lineage start date and size are logged.",
    required=True, default="true", allowed_values=["true", "false"])
OUTPUT_FORMAT = PropertyDescriptor(
    "Output Format", description="One line per attribute, or everything on a single line.", required=True,
    default="Line per Attribute", allowed_values=[AllowableValue("Line per Attribute"), AllowableValue("Single Line")])
LOG_PREFIX = PropertyDescriptor(
    "Log prefix", description="Text shown in the dashed lines around each entry, to tell processors apart.",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
CHARACTER_SET = PropertyDescriptor(
    "character-set", display_name="Character Set", description="How the content is decoded when logged.",
    required=True, default="UTF-8", validators=[v.CHARACTER_SET], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

SUCCESS = Relationship("success", "Every FlowFile, once logged")

_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}
_ONE_MB = 1 << 20
_BATCH = 50


class LogAttribute(Processor):
    """Logs the attributes of each FlowFile (and, if asked, its content) at the chosen level, then
    passes it on unchanged. Entries at warn or error also become bulletins."""

    nifi_type = "org.apache.nifi.processors.standard.LogAttribute"
    tags = ("attributes", "logging")
    properties = (LOG_LEVEL, LOG_PAYLOAD, ATTRIBUTES_TO_LOG, ATTRIBUTES_TO_LOG_REGEX, ATTRIBUTES_TO_IGNORE,
                  ATTRIBUTES_TO_IGNORE_REGEX, LOG_PROPERTIES, OUTPUT_FORMAT, LOG_PREFIX, CHARACTER_SET)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.REQUIRED
    migrated_properties = {"Attributes to Log by Regular Expression": "attributes-to-log-regex",
                           "Attributes to Ignore by Regular Expression": "attributes-to-ignore-regex",
                           "Character Set": "character-set"}

    def on_scheduled(self, context):
        self._level = _LEVELS[context.property(LOG_LEVEL).value]
        self._payload = context.property(LOG_PAYLOAD).as_bool()
        listed = context.property(ATTRIBUTES_TO_LOG).value
        self._include = {name.strip() for name in listed.split(",")} if listed else None
        self._include_regex = context.property(ATTRIBUTES_TO_LOG_REGEX).as_regex()
        ignored = context.property(ATTRIBUTES_TO_IGNORE).value
        self._exclude = {name.strip() for name in ignored.split(",")} if ignored else set()
        self._exclude_regex = context.property(ATTRIBUTES_TO_IGNORE_REGEX).as_regex()
        self._properties = context.property(LOG_PROPERTIES).as_bool()
        self._single_line = context.property(OUTPUT_FORMAT).value == "Single Line"
        self._prefix = context.property(LOG_PREFIX)
        self._charset = context.property(CHARACTER_SET)

    def _logged(self, name: str) -> bool:
        if self._include is not None and name not in self._include:
            return False
        if self._include_regex is not None and not self._include_regex.fullmatch(name):
            return False
        if name in self._exclude:
            return False
        return not (self._exclude_regex is not None and self._exclude_regex.fullmatch(name))

    def on_trigger(self, context, session):
        flowfiles = session.get_batch(_BATCH)
        logger = context.logger
        enabled = logger.isEnabledFor(self._level) or self._level >= logger.bulletin_level
        for flowfile in flowfiles:
            if enabled:
                logger.log(self._level, "%s", self._message(session, flowfile))
            session.transfer(flowfile, SUCCESS)

    def _message(self, session, flowfile) -> str:
        attributes = {name: flowfile.attributes[name] for name in sorted(flowfile.attributes) if self._logged(name)}
        if self._properties:
            properties = {"entryDate": _date(flowfile.entry_date),
                          "lineageStartDate": _date(flowfile.lineage_start_date), "fileSize": str(flowfile.size)}
        else:
            properties = {}
        if self._single_line:
            message = f"logging for flow file {flowfile.uuid}\nFlowFile Properties: {dict(sorted({**attributes, **properties}.items()))}"
        else:
            prefix = self._prefix.evaluate(flowfile).value if self._prefix.is_set() else None
            dashes = "-" * 50 if not prefix else "-" * 5 + prefix[:40].center(40, "-") + "-" * 5
            lines = [f"logging for flow file {flowfile.uuid}", dashes]
            if properties:
                lines.append("FlowFile Properties")
                lines += [f"Key: '{key}'\n\tValue: '{value}'" for key, value in properties.items()]
            lines.append("FlowFile Attribute Map Content")
            lines += [f"Key: '{key}'\n\tValue: '{value}'" for key, value in attributes.items()]
            lines.append(dashes)
            message = "\n".join(lines)
        if self._payload:
            if flowfile.size < _ONE_MB:
                charset = self._charset.evaluate(flowfile).value or "UTF-8"
                message += "\n" + session.read_bytes(flowfile).decode(charset, errors="replace")
            else:
                message += "\nNot including payload since it is larger than one mb."
        return message


def _date(millis: int) -> str:
    return datetime.fromtimestamp(millis / 1000, tz=timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
