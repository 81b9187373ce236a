"""Controller services take user-added properties like processors: declared with
DynamicProperties, validated, documented, and sensitive when named with the declared prefix."""

from __future__ import annotations

from engine.components import ComponentRegistry, ConfigurationContext, ControllerService, DynamicProperties
from engine.components.validation import component_descriptors, validate_properties
from engine.docs import render_components
from engine.flow.sealed import is_sensitive_property


class Tagged(ControllerService):
    """Keeps user-added settings."""

    abstract = True
    dynamic_properties = DynamicProperties("setting", "its value", "Any setting.", sensitive_prefix="SECRET.")


class Plain(ControllerService):
    """Takes no user-added property."""

    abstract = True


def test_a_service_declaring_dynamic_properties_accepts_them_and_one_that_does_not_refuses_them():
    properties = {"colour": "blue", "SECRET.token": "s3cret"}
    assert validate_properties(Tagged, properties) == []
    descriptors, problems = component_descriptors(Tagged, properties)
    assert problems == []
    context = ConfigurationContext(descriptors, properties)
    assert {name: value.value for name, value in context.dynamic_properties.items()} == properties
    assert [str(p) for p in validate_properties(Plain, {"colour": "blue"})] == ["'colour' is not a property of Plain"]


def test_a_dynamic_property_named_with_the_sensitive_prefix_is_sensitive():
    assert Tagged.is_sensitive("SECRET.token") and not Tagged.is_sensitive("colour")
    descriptors, _ = component_descriptors(Tagged, {"SECRET.token": "s3cret"})
    assert descriptors["SECRET.token"].sensitive
    assert "s3cret" not in str(ConfigurationContext(descriptors, {"SECRET.token": "s3cret"}).property("SECRET.token"))


def test_a_flows_sensitive_driver_property_of_a_pool_is_sealed_and_others_are_not():
    pool = {"type": "org.apache.nifi.dbcp.DBCPConnectionPool"}
    assert is_sensitive_property(pool, "CONTROLLER_SERVICE", "SENSITIVE.password")
    assert not is_sensitive_property(pool, "CONTROLLER_SERVICE", "ApplicationName")
    assert is_sensitive_property(pool, "CONTROLLER_SERVICE", "Password")


def test_the_components_document_lists_a_services_user_added_properties():
    text = render_components(ComponentRegistry(use_entry_points=False))
    section = text[text.index("## DBCPConnectionPool"):]
    section = section[:section.index("\n## ")]
    assert "**User-added properties**: name = JDBC property name" in section
    assert "Names starting with SENSITIVE. are sensitive" in section
