"""UpdateAttribute: sets, changes and deletes FlowFile attributes with expressions."""

from __future__ import annotations

import threading

from engine.components import (
    DynamicProperties,
    ExpressionScope,
    InputRequirement,
    ProcessException,
    Processor,
    PropertyDescriptor,
    Relationship,
    Scope,
)
from engine.components import validators as v
from engine.expression import ExpressionError

DELETE_ATTRIBUTES = PropertyDescriptor(
    "Delete Attributes Expression", description="A regular expression; attributes whose names match it are "
    "removed (before the user-added properties are applied). 'uuid' is never removed.",
    validators=[v.REGEX], expression_language=ExpressionScope.FLOWFILE_ATTRIBUTES)
STORE_STATE = PropertyDescriptor(
    "Store State", description="Whether the values set are kept as local state between FlowFiles: each "
    "property's expression then sees the value it produced for the previous FlowFile under the property's "
    "name (state values take precedence over attributes).", required=True, default="Do not store state",
    allowed_values=["Do not store state", "Store state locally"])
STATEFUL_INITIAL_VALUE = PropertyDescriptor(
    "Stateful Variables Initial Value", description="The value a stateful variable has before any FlowFile "
    "set it.")
CACHE_SIZE = PropertyDescriptor(
    "canonical-value-lookup-cache-size", display_name="Cache Value Lookup Cache Size",
    description="Kept for compatibility with NiFi flows; expressions are compiled once, so it has no effect.",
    required=True, default="100", validators=[v.POSITIVE_INTEGER])

SUCCESS = Relationship("success", "Every FlowFile, once its attributes are updated")
SET_STATE_FAIL = Relationship("set state fail", "FlowFiles whose state could not be stored (only when "
                              "Store State is on)")

_BATCH = 100


class UpdateAttribute(Processor):
    """Updates the attributes of each FlowFile: every user-added property sets the attribute of
    its name to the value of its expression, after attributes matching the Delete Attributes
    Expression have been removed.

    Setting ``alternate.identifier`` records an ASSOCIATE provenance event; any other change
    records ATTRIBUTES_MODIFIED.
    """

    nifi_type = "org.apache.nifi.processors.attributes.UpdateAttribute"
    nifi_bundle = {"group": "org.apache.nifi", "artifact": "nifi-update-attribute-nar"}
    tags = ("attributes", "modification", "update", "delete", "Attribute Expression Language", "state")
    properties = (DELETE_ATTRIBUTES, STORE_STATE, STATEFUL_INITIAL_VALUE, CACHE_SIZE)
    relationships = (SUCCESS,)
    dynamic_relationships = True
    dynamic_properties = DynamicProperties(
        "A FlowFile attribute to update", "The value to set it to",
        "Updates (or adds) the attribute of this name with the value of the expression.",
        ExpressionScope.FLOWFILE_ATTRIBUTES)
    input_requirement = InputRequirement.REQUIRED
    stateful = "With 'Store state locally', the last value set for each user-added property (local scope)."

    @classmethod
    def relationships_for(cls, properties):
        if properties.get("Store State") == "Store state locally":
            return [SUCCESS, SET_STATE_FAIL]
        return [SUCCESS]

    def validate(self, context):
        stateful = context.property(STORE_STATE).value == "Store state locally"
        if stateful and context.property(STATEFUL_INITIAL_VALUE).value is None:
            yield "'Stateful Variables Initial Value' is required when Store State is on"

    def on_scheduled(self, context):
        self._updates = context.dynamic_properties
        self._delete = context.property(DELETE_ATTRIBUTES)
        self._stateful = context.property(STORE_STATE).value == "Store state locally"
        self._initial = context.property(STATEFUL_INITIAL_VALUE).value or ""
        self._state_lock = threading.Lock()

    def on_trigger(self, context, session):
        flowfiles = session.get_batch(_BATCH)
        if not flowfiles:
            return
        if self._stateful:
            with self._state_lock:
                self._update_with_state(context, session, flowfiles)
            return
        for flowfile in flowfiles:
            session.transfer(self._update(session, flowfile, None), SUCCESS)

    def _update(self, session, flowfile, state: dict[str, str] | None):
        try:
            if self._delete.is_set():
                pattern = self._delete.evaluate(flowfile).as_regex()
                doomed = [name for name in flowfile.attributes if name != "uuid" and pattern.fullmatch(name)]
                if doomed:
                    flowfile = session.remove_all_attributes(flowfile, doomed)
            updates = {name: value.evaluate(flowfile, state, state=state).value or ""
                       for name, value in self._updates.items()}
        except (ExpressionError, ValueError) as error:
            raise ProcessException(f"could not update the attributes of {flowfile.uuid}: {error}") from error
        if state is not None:
            state.update(updates)
        return session.put_all_attributes(flowfile, updates) if updates else flowfile

    def _update_with_state(self, context, session, flowfiles) -> None:
        manager = context.state
        stored = manager.get_state(Scope.LOCAL)
        state = {name: stored.get(name, self._initial) for name in self._updates}
        for flowfile in flowfiles:
            session.transfer(self._update(session, flowfile, state), SUCCESS)

        def save() -> None:
            if not manager.replace(stored, state, Scope.LOCAL):
                context.logger.warning("state changed while FlowFiles were updated; storing the newest values")
                manager.set_state(state, Scope.LOCAL)

        session.on_commit(save)
