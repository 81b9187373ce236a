"""The controller-service form: the processor form's property rows (from the engine's
descriptors of the service's type) with a name and comments, and the posted form turned back
into an API request body."""

from __future__ import annotations

from functools import cached_property

from flowsite.portal.forms.common import revision
from flowsite.portal.forms.processors import ProcessorForm

FIELDS = ("name", "comments")


class ServiceForm(ProcessorForm):
    """The fields of a controller service's page (see ``ProcessorForm``)."""

    def __init__(self, representation: dict, service_type: dict | None, post=None, errors: dict | None = None):
        described = dict(service_type or {"properties": []})
        described.setdefault("supportsDynamicProperties", False)
        super().__init__(representation, described, post, errors)

    @cached_property
    def values(self) -> dict:
        """The name and comments."""
        source = self.representation if self.post is None else {n: self.post.get(n, "") for n in FIELDS}
        return {name: source.get(name) for name in FIELDS}

    def payload(self) -> dict:
        """The posted form as the body of an API update."""
        data = {name: self.post.get(name, "") for name in FIELDS}
        data["properties"] = self._property_changes()
        data["revision"] = revision(self.post)
        return data
