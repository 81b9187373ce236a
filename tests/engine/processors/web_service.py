"""A running node whose flow is a web service: HandleHttpRequest → (processors) → HandleHttpResponse,
with a StandardHttpContextMap between them; answered FlowFiles wait in the 'answered' queue and
those that could not be answered in 'failed'."""

from __future__ import annotations

import http.client
import ssl
from pathlib import Path
from typing import Any, Mapping

from engine.flow import load_flow
from engine.provenance.query import ProvenanceQuery
from engine.runtime import FlowController, RuntimeConfig, SystemClock
from engine.storage import NodeStorage
from engine.testing.flows import connection, processor, service


class WebService:
    """``with WebService(tmp_path, port, ...) as web:`` runs the node for the block.

    ``middle`` is a list of ``(identifier, type, properties[, auto-terminated relationships])``
    processors chained between the request and the response; ``response_state`` "ENABLED" leaves HandleHttpResponse stopped
    (start it with ``web.controller.start_processor("resp")``)."""

    def __init__(self, directory: Path, port: int, request: Mapping[str, str] | None = None, *,
                 response: Mapping[str, str] | None = None, context_map: Mapping[str, str] | None = None,
                 middle: list[tuple] = (), services: list[dict] = (),
                 response_state: str = "RUNNING", request_connection: Mapping[str, Any] | None = None) -> None:
        self.port = port
        middle = [(*entry, ())[:4] for entry in middle]
        chain = ["req", *(identifier for identifier, *_ in middle), "resp"]
        processors = [
            processor("req", "HandleHttpRequest", {"Listening Port": str(port), "HTTP Context Map": "map",
                                                   **(request or {})}, schedulingPeriod="0 sec"),
            *(processor(identifier, type_name, properties, auto_terminate=terminated)
              for identifier, type_name, properties, terminated in middle),
            processor("resp", "HandleHttpResponse", {"HTTP Status Code": "200", "HTTP Context Map": "map",
                                                     **(response or {})}, state=response_state),
            processor("sink", "UpdateAttribute", state="ENABLED", auto_terminate=["success"]),
        ]
        connections = [connection(f"{source}-{destination}", source, destination,
                                  **((request_connection or {}) if source == "req" else {}))
                       for source, destination in zip(chain, chain[1:])]
        connections += [connection("answered", "resp", "sink", ["success"]),
                        connection("failed", "resp", "sink", ["failure"])]
        document = {"flowEncodingVersion": "1.0", "parameterContexts": {}, "flowContents": {
            "identifier": "root", "name": "web", "processors": processors, "connections": connections,
            "controllerServices": [service("map", "StandardHttpContextMap", dict(context_map or {})),
                                   *services]}}
        self.storage = NodeStorage(Path(directory) / f"node-{port}")
        recovered = self.storage.open(background=False)
        self.controller = FlowController(self.storage, clock=SystemClock(), config=RuntimeConfig())
        self.problems = self.controller.load(load_flow(document), recovered)

    def __enter__(self) -> WebService:
        assert self.problems == [], self.problems
        failures = self.controller.start_components()
        assert failures == [], failures
        self.controller.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.controller.shutdown(timeout=5)
        self.storage.close()

    def queued(self, identifier: str) -> list:
        return self.controller.list_queue(identifier, 1000)

    def content(self, flowfile) -> bytes:
        return self.storage.content.read_bytes(flowfile.content_claim) if flowfile.content_claim else b""

    def events(self, **criteria) -> list:
        self.storage.provenance.rollover()
        return list(reversed(self.storage.provenance.query(ProvenanceQuery(limit=10_000, **criteria)).events))

    def bulletins(self, component: str) -> list[str]:
        return [bulletin.message for bulletin in self.controller.bulletins.recent(component)]


def call(port: int, method: str = "GET", path: str = "/", body: bytes | None = None,
         headers: Mapping[str, str] | None = None, context: ssl.SSLContext | None = None,
         timeout: float = 15) -> tuple[int, bytes, http.client.HTTPMessage]:
    """One request on a new connection: (status, body, headers)."""
    if context is None:
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    else:
        client = http.client.HTTPSConnection("localhost", port, timeout=timeout, context=context)
    try:
        client.request(method, path, body=body, headers=dict(headers or {}))
        response = client.getresponse()
        return response.status, response.read(), response.headers
    finally:
        client.close()
