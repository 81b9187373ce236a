"""Sealing a flow definition's sensitive values for the nodes, and opening them there."""

from __future__ import annotations

import base64
import json

import pytest

from engine.flow.sealed import open_flow, seal_flow
from engine.secrets import LEGACY_PREFIX, PREFIX, MasterKey, SensitiveValueError, _LegacyKey

MASTER = MasterKey("the cluster's key")
#: What a flow outside every tenant is sealed with.
KEY = MASTER.platform()


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
    assert open_flow(sealed, MASTER) == document
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
        open_flow(sealed, MasterKey("another key"))


def test_an_altered_value_does_not_open():
    sealed = seal_flow(_document(), KEY)
    service = sealed["flowContents"]["processGroups"][0]["controllerServices"][0]
    value = service["properties"]["Keystore Password"]
    service["properties"]["Keystore Password"] = value[:-6] + ("AAAA==" if not value.endswith("AAAA==") else "BBBB==")
    with pytest.raises(ValueError, match=r"controller service 'TLS' \(s-ssl\): property 'Keystore Password'"):
        open_flow(sealed, MASTER)


def test_a_value_copied_to_another_property_does_not_open():
    sealed = seal_flow(_document(), KEY)
    processors = sealed["flowContents"]["processors"]
    processors[0]["properties"]["Request Username"] = processors[0]["properties"]["Request Password"]
    with pytest.raises(ValueError, match="property 'Request Username' does not open"):
        open_flow(sealed, MASTER)


def test_a_parameter_copied_to_another_context_does_not_open():
    sealed = seal_flow(_document(), KEY)
    context = sealed["parameterContexts"]["acme/paths"]
    sealed["parameterContexts"]["globex/paths"] = {"name": "globex/paths", "parameters": [dict(context["parameters"][0])]}
    with pytest.raises(ValueError, match="parameter context 'globex/paths': parameter 'password' does not open"):
        open_flow(sealed, MASTER)


def _tenants_document() -> dict:
    """Two tenants' groups under the cluster's root, each with a sealed password and a context."""
    def group(slug: str, identifier: str) -> dict:
        return {"identifier": identifier, "name": slug, "parameterContextName": f"{slug}/ctx",
                "processors": [{"identifier": f"p-{slug}", "name": "Call", "type": "InvokeHTTP",
                                "properties": {"Request Password": f"{slug}-password"}}]}

    contents = {"identifier": "root", "name": "root", "processGroups": []}
    document = {"flowEncodingVersion": "1.0", "flowContents": contents, "parameterContexts": {}, "tenants": {}}
    for slug, tenant_id in (("acme", "id-of-acme"), ("globex", "id-of-globex")):
        part = seal_flow({"flowContents": group(slug, f"g-{slug}"), "parameterContexts": {f"{slug}/ctx": {
            "name": f"{slug}/ctx", "parameters": [{"name": "token", "value": f"{slug}-token", "sensitive": True}]}}},
            MASTER.tenant(tenant_id))
        contents["processGroups"].append(part["flowContents"])
        document["parameterContexts"].update(part["parameterContexts"])
        document["tenants"][slug] = {"group": f"g-{slug}", "id": tenant_id}
    return document


def test_each_tenant_is_sealed_with_its_own_key_and_the_node_opens_every_tenant():
    document = _tenants_document()
    acme = document["flowContents"]["processGroups"][0]["processors"][0]["properties"]["Request Password"]
    with pytest.raises(SensitiveValueError):
        MASTER.tenant("id-of-globex").open(acme, "p-acme/Request Password")
    with pytest.raises(SensitiveValueError):
        MASTER.platform().open(acme, "p-acme/Request Password")
    assert MASTER.tenant("id-of-acme").open(acme, "p-acme/Request Password") == "acme-password"
    opened = open_flow(document, MASTER)
    groups = opened["flowContents"]["processGroups"]
    assert [g["processors"][0]["properties"]["Request Password"] for g in groups] == ["acme-password",
                                                                                     "globex-password"]
    assert opened["parameterContexts"]["globex/ctx"]["parameters"][0]["value"] == "globex-token"


def test_a_tenants_value_moved_into_another_tenants_group_does_not_open():
    document = _tenants_document()
    acme, globex = (g["processors"][0] for g in document["flowContents"]["processGroups"])
    globex["identifier"] = "p-acme"  # same binding, other tenant: only the key differs
    globex["properties"]["Request Password"] = acme["properties"]["Request Password"]
    with pytest.raises(ValueError, match=r"processor 'Call' \(p-acme\): property 'Request Password' does not open"):
        open_flow(document, MASTER)


def test_a_tenant_without_an_id_is_refused_with_a_clear_message():
    document = _tenants_document()
    del document["tenants"]["acme"]["id"]
    with pytest.raises(ValueError, match="tenant 'acme' of the flow has no id"):
        open_flow(document, MASTER)


def test_a_sealed_value_carries_no_key_check_and_a_rotated_key_still_opens_it():
    sealed = KEY.seal("hunter2", "p/x")
    assert sealed.startswith(PREFIX) and sealed.count(":") == 2, "enc:v2:<base64> and nothing else"
    rotated = MasterKey("the next key", previous=["the cluster's key"])
    assert rotated.platform().open(sealed, "p/x") == "hunter2"
    assert rotated.platform().seal("v", "p/x") != sealed
    with pytest.raises(SensitiveValueError):
        MasterKey("the next key").platform().open(sealed, "p/x")


def test_values_of_the_former_format_still_open():
    legacy = _LegacyKey("the cluster's key")
    raw = legacy.aead.encrypt(b"0" * 12, b"old-secret", b"p/x")
    sealed = f"{LEGACY_PREFIX}{legacy.key_id}:{base64.b64encode(b'0' * 12 + raw).decode()}"
    assert MASTER.tenant("any").open(sealed, "p/x") == "old-secret"
    assert MASTER.platform().open(sealed, "p/x") == "old-secret"
    with pytest.raises(SensitiveValueError):
        MasterKey("another key").platform().open(sealed, "p/x")
