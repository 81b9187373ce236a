"""Sealing a flow definition's sensitive values for the nodes, and opening them there."""

from __future__ import annotations

import json

import pytest

from engine.flow.sealed import open_flow, seal_flow
from engine.secrets import PREFIX, SensitiveKey

KEY = SensitiveKey("the cluster's key")


def _document() -> dict:
    return {
        "flowEncodingVersion": "1.0",
        "flowContents": {
            "identifier": "root", "name": "root",
            "processors": [{"identifier": "p-http", "name": "Call", "type": "InvokeHTTP",
                            "properties": {"HTTP URL": "http://example.org", "Request Username": "ann",
                                           "Request Password": "hunter2-http"}}],
            "processGroups": [{
                "identifier": "g-inner", "name": "inner",
                "processors": [{"identifier": "p-ref", "name": "Ref", "type": "InvokeHTTP",
                                "properties": {"Request Password": "#{password}"}},
                               {"identifier": "p-foreign", "name": "Foreign", "type": "org.example.Unknown",
                                "properties": {"Token": "tok-secret-value", "Plain": "plain-value"},
                                "propertyDescriptors": {"Token": {"name": "Token", "sensitive": True}}}],
                "controllerServices": [{"identifier": "s-ssl", "name": "TLS", "type": "StandardSSLContextService",
                                        "properties": {"Keystore Filename": "/k.p12",
                                                       "Keystore Password": "ks-secret-value",
                                                       "Truststore Password": None}}],
            }],
        },
        "parameterContexts": {"acme/paths": {"name": "acme/paths", "parameters": [
            {"name": "password", "value": "param-secret-value", "sensitive": True},
            {"name": "dir", "value": "/data", "sensitive": False}]}},
    }


def test_round_trip_gives_back_the_document():
    document = _document()
    sealed = seal_flow(document, KEY)
    assert sealed != document
    assert open_flow(sealed, KEY) == document
    assert document == _document(), "seal_flow must not change its argument"


def test_sensitive_values_are_sealed_and_the_rest_untouched():
    sealed = seal_flow(_document(), KEY)
    root = sealed["flowContents"]
    inner = root["processGroups"][0]
    assert root["processors"][0]["properties"]["Request Password"].startswith(PREFIX)
    assert root["processors"][0]["properties"]["Request Username"] == "ann"
    assert inner["processors"][0]["properties"]["Request Password"] == "#{password}"
    assert inner["processors"][1]["properties"]["Token"].startswith(PREFIX)
    assert inner["processors"][1]["properties"]["Plain"] == "plain-value"
    assert inner["controllerServices"][0]["properties"]["Keystore Password"].startswith(PREFIX)
    assert inner["controllerServices"][0]["properties"]["Truststore Password"] is None
    parameters = sealed["parameterContexts"]["acme/paths"]["parameters"]
    assert parameters[0]["value"].startswith(PREFIX)
    assert parameters[1]["value"] == "/data"


def test_nothing_sensitive_is_in_clear_in_the_sealed_json():
    text = json.dumps(seal_flow(_document(), KEY))
    for secret in ("hunter2-http", "tok-secret-value", "ks-secret-value", "param-secret-value"):
        assert secret not in text


def test_a_callback_can_decide_what_is_sensitive():
    sealed = seal_flow(_document(), KEY, lambda component, kind, name: name == "Request Username")
    assert sealed["flowContents"]["processors"][0]["properties"]["Request Username"].startswith(PREFIX)
    assert sealed["flowContents"]["processors"][0]["properties"]["Request Password"] == "hunter2-http"


def test_another_key_does_not_open_and_the_error_names_the_component_and_property():
    sealed = seal_flow(_document(), KEY)
    with pytest.raises(ValueError, match=r"processor 'Call' \(p-http\): property 'Request Password' does not open"):
        open_flow(sealed, SensitiveKey("another key"))


def test_an_altered_value_does_not_open():
    sealed = seal_flow(_document(), KEY)
    service = sealed["flowContents"]["processGroups"][0]["controllerServices"][0]
    value = service["properties"]["Keystore Password"]
    service["properties"]["Keystore Password"] = value[:-6] + ("AAAA==" if not value.endswith("AAAA==") else "BBBB==")
    with pytest.raises(ValueError, match=r"controller service 'TLS' \(s-ssl\): property 'Keystore Password'"):
        open_flow(sealed, KEY)


def test_a_value_copied_to_another_property_does_not_open():
    sealed = seal_flow(_document(), KEY)
    processors = sealed["flowContents"]["processors"]
    processors[0]["properties"]["Request Username"] = processors[0]["properties"]["Request Password"]
    with pytest.raises(ValueError, match="property 'Request Username' does not open"):
        open_flow(sealed, KEY)


def test_a_parameter_copied_to_another_context_does_not_open():
    sealed = seal_flow(_document(), KEY)
    context = sealed["parameterContexts"]["acme/paths"]
    sealed["parameterContexts"]["globex/paths"] = {"name": "globex/paths", "parameters": [dict(context["parameters"][0])]}
    with pytest.raises(ValueError, match="parameter context 'globex/paths': parameter 'password' does not open"):
        open_flow(sealed, KEY)
