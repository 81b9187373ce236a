"""LogMessage: writes a message, built from each FlowFile's attributes, to the log."""

from __future__ import annotations

import logging

from engine.components import (
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
)
from engine.components import validators as v

_LEVELS = {"trace": 5, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}


def _log_level(value: str, context) -> str | None:
    if value.lower() in _LEVELS:
        return None
    return "must be either trace, debug, info, warn or error"


LOG_LEVEL = PropertyDescriptor(
    "Log Level", description="The level to log the message at: trace, debug, info, warn or error "
    "(case-insensitive).", required=True, default="info", validators=[_log_level],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
LOG_PREFIX = PropertyDescriptor(
    "Log Prefix", description="Text put before the message, to tell the output of several LogMessage "
    "processors apart.", validators=[v.NON_EMPTY], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
LOG_MESSAGE = PropertyDescriptor(
    "Log Message", description="The message to log.", validators=[v.NON_EMPTY],
    expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)

SUCCESS = Relationship("success", "Every FlowFile, once its message is logged")


class LogMessage(Processor):
    """Logs a message at the chosen level for each FlowFile, then passes the FlowFile on unchanged.

    The level, prefix and message may all be expressions over the FlowFile's attributes. Messages at
    warn or error also become bulletins. A level that evaluates to something other than trace, debug,
    info, warn or error fails the task (the FlowFile goes back to its queue, penalized).
    """

    nifi_type = "org.apache.nifi.processors.standard.LogMessage"
    tags = ("attributes", "logging")
    properties = (LOG_LEVEL, LOG_PREFIX, LOG_MESSAGE)
    relationships = (SUCCESS,)
    input_requirement = InputRequirement.REQUIRED
    migrated_properties = {"log-level": "Log Level", "log-prefix": "Log Prefix", "log-message": "Log Message"}
    see_also = ("LogAttribute",)

    def on_scheduled(self, context):
        self._level = context.property(LOG_LEVEL)
        self._prefix = context.property(LOG_PREFIX)
        self._message = context.property(LOG_MESSAGE)

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return
        name = (self._level.evaluate(flowfile).value or "").lower()
        level = _LEVELS.get(name)
        if level is None:
            raise ProcessException(f"Log Level evaluated to {name!r}; it must be trace, debug, info, warn or error")
        logger = context.logger
        if logger.isEnabledFor(level) or level >= logger.bulletin_level:
            prefix = (self._prefix.evaluate(flowfile).value if self._prefix.is_set() else None) or ""
            message = (self._message.evaluate(flowfile).value if self._message.is_set() else None) or ""
            logger.log(level, "%s", prefix + message if prefix.strip() else message)
        session.transfer(flowfile, SUCCESS)
