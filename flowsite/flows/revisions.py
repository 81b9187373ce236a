"""Optimistic locking of components, NiFi's way: a change names the revision it was based on
(version number and client id); it applies when the version is the current one, or when the
client id is the one that made the last change (so one client can send several changes without
waiting for each answer). Every change adds one to the version."""

from __future__ import annotations

from dataclasses import dataclass

from flowsite.flows.models import Component


@dataclass(frozen=True)
class Revision:
    """A component's revision as clients see it."""

    version: int
    client_id: str = ""
    last_modifier: str = ""

    @classmethod
    def of(cls, component: Component) -> Revision:
        return cls(component.version, component.last_client_id, component.last_modifier)

    def as_dict(self) -> dict:
        return {"version": self.version, "clientId": self.client_id, "lastModifier": self.last_modifier}


class StaleRevisionError(Exception):
    """A change based on a revision that is no longer current; ``current`` is the current one."""

    def __init__(self, component: Component, current: Revision) -> None:
        self.component = component
        self.current = current
        super().__init__(f"{component} is at version {current.version}: the change was based on an older revision")


def is_current(component: Component, version: int | None, client_id: str | None) -> bool:
    """True when a change based on (``version``, ``client_id``) may apply to ``component``."""
    if client_id and client_id == component.last_client_id:
        return True
    return version is not None and version == component.version


def check_revision(component: Component, version: int | None, client_id: str | None) -> Component:
    """Lock ``component``'s row for the rest of the transaction, reload ``component`` from the
    database (a change committed since it was read is not overwritten when it is saved) and check
    that a change based on (``version``, ``client_id``) may apply; returns the locked row. Raises
    StaleRevisionError."""
    locked = Component.objects.select_for_update().get(pk=component.pk)
    component.refresh_from_db()
    if not is_current(locked, version, client_id):
        raise StaleRevisionError(component, Revision.of(locked))
    return locked


def lock_for_change(component: Component, version: int | None, client_id: str | None, modifier: str) -> Component:
    """``check_revision``, then advance the revision on the instance (the caller saves)."""
    locked = check_revision(component, version, client_id)
    component.version = locked.version + 1
    component.last_client_id = client_id or ""
    component.last_modifier = modifier
    return component
