"""HandleHttpResponse: answers the HTTP request a FlowFile of HandleHttpRequest came from."""

from __future__ import annotations

import time

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
from engine.processors._http_request_attributes import CONTEXT_ID, transit_uri
from engine.services.apis import HttpContextMap

STATUS_CODE = PropertyDescriptor(
    "HTTP Status Code", description="The status of the answer.", required=True,
    validators=[v.integer_range(0, 2 ** 31 - 1)], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
HTTP_CONTEXT_MAP = PropertyDescriptor(
    "HTTP Context Map", description="The service HandleHttpRequest keeps its requests in.", required=True,
    service=HttpContextMap)
ATTRIBUTES_AS_HEADERS = PropertyDescriptor(
    "Attributes for HTTP Response", description="A regular expression: the FlowFile attributes whose names it "
    "matches whole are sent as response headers.", validators=[v.REGEX])

SUCCESS = Relationship("success", "FlowFiles whose request was answered")
FAILURE = Relationship("failure", "FlowFiles whose request could not be answered: no context identifier, a "
                       "request that expired or was already answered, a bad status code, or a client gone")

#: Framing headers are the server's to write.
_FRAMING = {"content-length", "transfer-encoding", "connection"}


class HandleHttpResponse(Processor):
    """Answers the HTTP request a FlowFile of HandleHttpRequest came from, with the HTTP Status
    Code and the FlowFile's content as the body.

    The headers are the dynamic properties (name: header, value: its value, expressions evaluated
    against the FlowFile) and the attributes matched by Attributes for HTTP Response; headers
    whose value is blank are left out, and Content-Length, Transfer-Encoding and Connection are
    the server's own.

    The request is found in the HTTP Context Map under the FlowFile's ``http.context.identifier``.
    A FlowFile without that attribute, whose request is no longer waiting (it expired and was
    answered 503, was answered already, or the node restarted since), whose status code does not
    evaluate to a number, or whose client went away while it was answered goes to failure, with a
    bulletin saying which. An answered FlowFile gets a SEND provenance event and goes to success.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.HandleHttpResponse"
    tags = ("http", "https", "response", "egress", "web service")
    properties = (STATUS_CODE, HTTP_CONTEXT_MAP, ATTRIBUTES_AS_HEADERS)
    migrated_properties = {"Attributes to add to the HTTP Response (Regex)": "Attributes for HTTP Response"}
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    dynamic_properties = DynamicProperties(
        "An HTTP header name", "An HTTP header value", "Sent as a header of the response",
        expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
    reads_attributes = (
        WrittenAttribute(CONTEXT_ID, "Which request to answer; without it the FlowFile goes to failure"),
        WrittenAttribute("http.request.uri", "For the provenance event's transit URI"),
        WrittenAttribute("http.remote.host", "For the provenance event's transit URI"),
        WrittenAttribute("http.local.name", "For the provenance event's transit URI"),
        WrittenAttribute("http.server.port", "For the provenance event's transit URI"),
        WrittenAttribute("http.subject.dn", "For the provenance event's transit URI (https when present)"),
    )
    see_also = ("HandleHttpRequest", "StandardHttpContextMap")

    def on_scheduled(self, context):
        pattern = context.property(ATTRIBUTES_AS_HEADERS)
        self._pattern = pattern.as_regex() if pattern.is_set() else None
        self._context_map: HttpContextMap = context.property(HTTP_CONTEXT_MAP).as_service()

    def on_trigger(self, context, session):
        flowfile = session.get()
        if flowfile is None:
            return
        started = time.monotonic()
        logger = context.logger
        identifier = flowfile.attributes.get(CONTEXT_ID)
        if identifier is None:
            logger.warning("cannot answer the HTTP request of %s: it has no '%s' attribute (only FlowFiles of "
                           "HandleHttpRequest can be answered)", flowfile, CONTEXT_ID)
            session.transfer(flowfile, FAILURE)
            return
        status_text = (context.property(STATUS_CODE).evaluate(flowfile).value or "").strip()
        if not status_text.isdigit() or not 100 <= int(status_text) <= 999:
            logger.error("cannot answer the HTTP request of %s: the HTTP Status Code is %r, not a status from 100 "
                         "to 999", flowfile, status_text)
            session.transfer(flowfile, FAILURE)
            return
        exchange = self._context_map.get_response(identifier)
        if exchange is None or not exchange.claim():
            logger.error("cannot answer the HTTP request of %s: no request is waiting under %s '%s' (it expired "
                         "and was answered 503 — see the HTTP Context Map's Request Expiration —, was answered "
                         "already, or the node restarted since it was received)", flowfile, CONTEXT_ID, identifier)
            session.transfer(flowfile, FAILURE)
            return
        headers = self._headers(context, flowfile)
        try:
            with session.read(flowfile) as content:
                exchange.send(int(status_text), headers, content, flowfile.size)
        except Exception as error:
            logger.error("could not answer the HTTP request of %s: %s: %s", flowfile, type(error).__name__, error)
            self._complete(identifier, exchange)
            session.transfer(flowfile, FAILURE)
            return
        self._complete(identifier, exchange)
        session.provenance.send(flowfile, transit_uri(flowfile.attributes),
                                duration=int((time.monotonic() - started) * 1000))
        session.transfer(flowfile, SUCCESS)

    def _headers(self, context, flowfile) -> list[tuple[str, str]]:
        headers: dict[str, tuple[str, str]] = {}
        for name, property_value in context.dynamic_properties.items():
            value = property_value.evaluate(flowfile).value or ""
            if value.strip():
                headers[name.lower()] = (name, value)
        if self._pattern is not None:
            for name, value in flowfile.attributes.items():
                if self._pattern.fullmatch(name) and value.strip():
                    headers[name.lower()] = (name, value)
        return [header for key, header in headers.items() if key not in _FRAMING]

    def _complete(self, identifier: str, exchange) -> None:
        try:
            self._context_map.complete(identifier)
        except KeyError:
            exchange.finish()  # it expired while being answered: the answer went out all the same
