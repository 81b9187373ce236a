"""Controller services as the design sees them: which components reference a service (a
processor or service property whose value is the service's id, NiFi's referencing
components), and the rules that make a service's state refuse a change."""

from __future__ import annotations

from dataclasses import dataclass

from flowsite.flows.models import ControllerService, Processor

__all__ = ["Reference", "referencing_components"]


@dataclass(frozen=True)
class Reference:
    """A component whose property ``property`` names a service."""

    id: str
    kind: str
    name: str
    property: str
    state: str

    def as_dict(self) -> dict:
        return {"id": self.id, "kind": self.kind, "name": self.name, "property": self.property,
                "state": self.state}


def referencing_components(service: ControllerService) -> list[Reference]:
    """The processors and services of ``service``'s tenant with a property whose value is its id."""
    wanted = {str(service.pk), service.versioned_id}
    found = []
    for model in (Processor, ControllerService):
        rows = model.objects.filter(tenant_id=service.tenant_id).exclude(pk=service.pk)
        for pk, kind, name, properties, state in rows.values_list("pk", "kind", "name", "properties",
                                                                  "scheduled_state"):
            for key, value in sorted((properties or {}).items()):
                if value in wanted:
                    found.append(Reference(str(pk), kind, name, key, state))
    return sorted(found, key=lambda r: (r.kind, r.name, r.id, r.property))
