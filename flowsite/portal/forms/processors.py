"""The processor form: a processor's API representation laid out as the fields of its page
(properties from the engine's descriptors of its type), and the posted form turned back into
an API request body.

Posted field names are the API's (``schedulingPeriod``, ``autoTerminatedRelationships``...);
a property is ``properties[<name>]``, a sensitive one is cleared with ``clear[<name>]``, a
dynamic one removed with ``remove[<name>]``, and new dynamic ones are ``new-name-<i>`` /
``new-value-<i>`` pairs."""

from __future__ import annotations

from functools import cached_property

from flowsite.api.serializers.processors import ProcessorSerializer
from flowsite.portal.editing import messages
from flowsite.portal.forms.common import choice_pairs, field_errors, general_errors, revision

SCHEDULING_FIELDS = ("schedulingStrategy", "schedulingPeriod", "concurrentlySchedulableTaskCount", "executionNode",
                     "penaltyDuration", "yieldDuration", "bulletinLevel", "runDurationMillis")
FIELDS = ("name", "comments", *SCHEDULING_FIELDS)
#: Blank name/value rows offered for new dynamic properties.
NEW_DYNAMIC_ROWS = 2


class ProcessorForm:
    """The fields of a processor's page: from its API ``representation``, or from ``post`` (a
    form sent back) with the serializer's ``errors``. ``processor_type`` is the catalogue's
    description of its type (None for a type the engine does not know)."""

    def __init__(self, representation: dict, processor_type: dict | None, post=None, errors: dict | None = None):
        self.representation = representation
        self.type = processor_type or {"properties": [], "supportsDynamicProperties": False}
        self.post = post
        self._errors = errors or {}
        self.errors = field_errors(errors)
        self.general_errors = general_errors(errors)

    @cached_property
    def values(self) -> dict:
        """The simple fields' values."""
        if self.post is None:
            return {name: self.representation.get(name) for name in FIELDS}
        return {name: self.post.get(name, "") for name in FIELDS}

    @cached_property
    def choices(self) -> dict[str, list[tuple[str, str]]]:
        """The choices of the scheduling fields that have some (the API serializer's)."""
        fields = ProcessorSerializer().fields
        return {name: choice_pairs(fields[name].choices) for name in ("schedulingStrategy", "executionNode",
                                                                      "bulletinLevel")}

    @cached_property
    def problems(self) -> list[dict]:
        """Why the saved processor is invalid (the engine's validation), as the API reports it."""
        return list(self.representation.get("validationErrors") or [])

    @property
    def _descriptor_names(self) -> set[str]:
        return {d["name"] for d in self.type["properties"]}

    def _property_errors(self, name: str) -> list[str]:
        detail = self._errors.get("properties")
        return messages(detail.get(name)) if isinstance(detail, dict) else []

    def _problems_of(self, name: str) -> list[str]:
        if self.post is not None:  # the problems are the saved configuration's, not what was sent
            return []
        return [p["message"] for p in self.problems if p.get("property") == name]

    def _value(self, name: str) -> str:
        if self.post is not None:
            return self.post.get(f"properties[{name}]", "")
        return self.representation.get("properties", {}).get(name) or ""

    @cached_property
    def properties(self) -> list[dict]:
        """One row per property the type describes."""
        is_set = set(self.representation.get("sensitivePropertiesSet") or [])
        rows = []
        for descriptor in self.type["properties"]:
            name = descriptor["name"]
            rows.append({
                "name": name, "label": descriptor["displayName"], "description": descriptor["description"],
                "required": descriptor["required"], "default": descriptor["defaultValue"],
                "choices": descriptor["allowableValues"], "sensitive": descriptor["sensitive"],
                "is_set": name in is_set, "value": "" if descriptor["sensitive"] else self._value(name),
                "multiline": "\n" in self._value(name),
                "clear": self.post is not None and bool(self.post.get(f"clear[{name}]")),
                "depends": [f"{d['propertyName']} is {' or '.join(d['dependentValues']) or 'set'}"
                            for d in descriptor["dependencies"]],
                "errors": self._property_errors(name), "problems": self._problems_of(name),
            })
        return rows

    @cached_property
    def dynamic_properties(self) -> list[dict]:
        """The set properties the type does not describe (dynamic ones)."""
        names = [name for name in self.representation.get("properties", {}) if name not in self._descriptor_names]
        return [{"name": name, "value": self._value(name), "multiline": "\n" in self._value(name),
                 "remove": self.post is not None and bool(self.post.get(f"remove[{name}]")),
                 "errors": self._property_errors(name), "problems": self._problems_of(name)} for name in names]

    @cached_property
    def new_properties(self) -> list[dict]:
        """Blank rows to add dynamic properties (when the type supports them)."""
        if not self.type["supportsDynamicProperties"]:
            return []
        rows = []
        for index in range(NEW_DYNAMIC_ROWS):
            name = self.post.get(f"new-name-{index}", "").strip() if self.post is not None else ""
            value = self.post.get(f"new-value-{index}", "") if self.post is not None else ""
            rows.append({"index": index, "name": name, "value": value,
                         "errors": self._property_errors(name) if name else []})
        return rows

    @cached_property
    def relationships(self) -> list[dict]:
        """The processor's relationships and whether each is auto-terminated."""
        rows = [dict(r) for r in self.representation.get("relationships") or []]
        if self.post is not None:
            checked = set(self.post.getlist("autoTerminatedRelationships"))
            for row in rows:
                row["autoTerminate"] = row["name"] in checked
        return rows

    def payload(self) -> dict:
        """The posted form as the body of an API update."""
        data = {name: self.post.get(name, "") for name in FIELDS}
        data["autoTerminatedRelationships"] = self.post.getlist("autoTerminatedRelationships")
        data["properties"] = self._property_changes()
        data["revision"] = revision(self.post)
        return data

    def _property_changes(self) -> dict[str, str | None]:
        post = self.post
        changes: dict[str, str | None] = {}
        for descriptor in self.type["properties"]:
            name = descriptor["name"]
            value = post.get(f"properties[{name}]", "")
            if descriptor["sensitive"]:
                if post.get(f"clear[{name}]"):
                    changes[name] = None
                elif value:
                    changes[name] = value
            else:
                changes[name] = value if value != "" else None  # unset: the default applies
        for row in self.dynamic_properties:
            name = row["name"]
            changes[name] = None if post.get(f"remove[{name}]") else post.get(f"properties[{name}]", "")
        for row in self.new_properties:
            if row["name"]:
                changes[row["name"]] = row["value"]
        return changes
