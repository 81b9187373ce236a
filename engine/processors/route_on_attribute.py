"""RouteOnAttribute: routes FlowFiles by boolean expressions over their attributes."""

from __future__ import annotations

from engine.components import (
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
    WrittenAttribute,
)
from engine.expression import ExpressionError

PROPERTY_NAME = "Route to Property name"
ALL_MATCH = "Route to 'matched' if all match"
ANY_MATCHES = "Route to 'matched' if any matches"

ROUTING_STRATEGY = PropertyDescriptor(
    "Routing Strategy", description="How the user-added properties decide where a FlowFile goes: to a "
    "relationship named after each property that is true (a clone for each one after the first), or to "
    "'matched' when all of them, or any of them, are true. FlowFiles that match nothing go to 'unmatched'.",
    required=True, default=PROPERTY_NAME, allowed_values=[PROPERTY_NAME, ALL_MATCH, ANY_MATCHES])

UNMATCHED = Relationship("unmatched", "FlowFiles that do not match")
MATCHED = Relationship("matched", "FlowFiles that match (with the 'matched' strategies)")
ROUTE_ATTRIBUTE = "RouteOnAttribute.Route"

_BATCH = 100


class RouteOnAttribute(Processor):
    """Routes each FlowFile according to user-added properties whose values are boolean
    expressions over its attributes (``${status.code:ge(200):and(${status.code:lt(300)})}``).

    Each routed FlowFile gets a ROUTE provenance event and the attribute ``RouteOnAttribute.Route``
    naming the relationship it was routed to.
    """

    nifi_type = "org.apache.nifi.processors.standard.RouteOnAttribute"
    tags = ("attributes", "routing", "Attribute Expression Language", "regexp", "regex", "filter", "find")
    properties = (ROUTING_STRATEGY,)
    relationships = (UNMATCHED,)
    dynamic_relationships = True
    dynamic_properties = DynamicProperties(
        "Relationship Name", "A boolean expression",
        "With 'Route to Property name', FlowFiles for which the expression is true go to the relationship of "
        "this name; with the 'matched' strategies, the expression is one of the conditions.",
        ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.REQUIRED
    writes_attributes = (WrittenAttribute(ROUTE_ATTRIBUTE, "The relationship the FlowFile was routed to"),)

    @classmethod
    def relationships_for(cls, properties):
        strategy = properties.get("Routing Strategy") or PROPERTY_NAME
        if strategy == PROPERTY_NAME:
            names = [name for name in properties if name != "Routing Strategy" and properties[name] is not None]
            return [UNMATCHED] + [Relationship(name, "FlowFiles for which this property is true") for name in names]
        return [UNMATCHED, MATCHED]

    def validate(self, context):
        if not context.dynamic_properties:
            yield "at least one user-added property (a condition) is needed"

    def on_scheduled(self, context):
        self._strategy = context.property(ROUTING_STRATEGY).value
        self._conditions = context.dynamic_properties

    def _matches(self, flowfile) -> list[str]:
        matched = []
        for name, condition in self._conditions.items():
            try:
                value = condition.evaluate(flowfile).value
            except ExpressionError as error:
                raise ProcessException(f"condition {name!r} failed for FlowFile {flowfile.uuid}: {error}") from error
            if value is not None and value.strip().lower() == "true":
                matched.append(name)
        return matched

    def on_trigger(self, context, session):
        for flowfile in session.get_batch(_BATCH):
            matched = self._matches(flowfile)
            if self._strategy == PROPERTY_NAME:
                targets = matched or [UNMATCHED.name]
            elif self._strategy == ALL_MATCH:
                targets = [MATCHED.name if len(matched) == len(self._conditions) else UNMATCHED.name]
            else:
                targets = [MATCHED.name if matched else UNMATCHED.name]
            copies = [flowfile] + [session.clone(flowfile) for _ in targets[1:]]
            for copy, target in zip(copies, targets):
                copy = session.put_attribute(copy, ROUTE_ATTRIBUTE, target)
                session.provenance.route(copy, target)
                session.transfer(copy, target)
