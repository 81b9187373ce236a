"""``/ws/process-groups/<uuid>``: a process group's live design changes and figures.

Admission needs the view policy on the group (``flowsite.flows.access``, as the REST API's
process-group detail checks it, a scoped API token narrowing it to its tenant). A missing group,
another tenant's, one the user may not view and an anonymous user are refused alike: the socket
is accepted, then closed with 4404. A refused bearer token closes it with the code
``flowsite.live.auth`` gives (4401; 4429 while the address is locked out).
An admitted socket joins ``pg.<uuid>``, receives ``hello``, the cluster's state, the figures and
bulletins the relay last saw (when it has any), then ``design``, ``stats``, ``bulletins`` and
``cluster`` messages;
it only ever receives figures and design changes of the components its user may view (computed
again when components are added, connected or removed).
Messages from the client are ignored.
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from flowsite.api.lookup import scoped_access
from flowsite.cluster.status import visible_components
from flowsite.flows.access import VIEW
from flowsite.flows.models import ProcessGroup
from flowsite.flows.publish import group_name
from flowsite.live.relay import relay

__all__ = ["NOT_FOUND", "ProcessGroupConsumer"]

#: The close code of a group that does not exist, as far as this user may know.
NOT_FOUND = 4404
#: Design operations after which the set of components a user may view is computed again.
_RESHAPING = {"Add", "Connect", "Remove", "Import", "RevertLocalChanges"}


@database_sync_to_async
def _admitted(user, token, group_id) -> ProcessGroup | None:
    """The group if ``user`` may view it, else None (whatever the reason)."""
    group = ProcessGroup.objects.select_related("tenant").filter(pk=group_id).first()
    if group is None:
        return None
    access = scoped_access(user, group.tenant, getattr(token, "tenant_id", None))
    return group if access.is_member and access.can(group, VIEW) else None


@database_sync_to_async
def _visible(user, group: ProcessGroup) -> set[str]:
    return visible_components(user, [group.tenant], within=group)


class ProcessGroupConsumer(AsyncJsonWebsocketConsumer):
    """One subscriber to one process group (see the module docstring)."""

    group: ProcessGroup | None = None
    visible: set[str] = set()

    async def connect(self) -> None:
        await self.accept()
        if self.scope.get("auth_refusal"):
            await self.close(code=self.scope["auth_refusal"][0])
            return
        group = await _admitted(self.scope.get("user"), self.scope.get("token"),
                                self.scope["url_route"]["kwargs"]["group_id"])
        if group is None:
            await self.close(code=NOT_FOUND)
            return
        self.group, self.visible = group, await _visible(self.scope["user"], group)
        await self.channel_layer.group_add(group_name(group.pk), self.channel_name)
        relay.subscribe(str(group.pk), self)
        await self.send_json({"type": "hello", "group": str(group.pk)})
        if relay.cluster is not None:
            await self.send_json({"type": "cluster", **relay.cluster})
        await self._send_stats(relay.known(str(group.pk)))
        await self.bulletins_posted({"bulletins": relay.known_bulletins(str(group.pk))})

    async def disconnect(self, code: int) -> None:
        if self.group is not None:
            await self.channel_layer.group_discard(group_name(self.group.pk), self.channel_name)
            relay.unsubscribe(str(self.group.pk), self)
            self.group = None

    async def receive_json(self, content: Any, **kwargs) -> None:
        """The endpoint is push-only: what the client sends is ignored."""

    async def design_changed(self, event: dict[str, Any]) -> None:
        """``design.changed``: forwarded as ``design`` when the user may view the component
        (before the change, for a removal; after it, otherwise)."""
        component = str(event["component"])
        seen = component in self.visible
        if event.get("operation") in _RESHAPING:
            self.visible = await _visible(self.scope["user"], self.group)
        if seen or component in self.visible:
            await self.send_json({"type": "design", "component": component, "kind": event.get("kind"),
                                  "operation": event.get("operation"), "parent": event.get("parent")})

    async def stats_delta(self, event: dict[str, Any]) -> None:
        """The figures that changed (handed by this process's relay): forwarded as ``stats``, only
        the components the user may view."""
        await self._send_stats(event["components"])

    async def cluster_state(self, event: dict[str, Any]) -> None:
        """News of the cluster (handed by this process's relay): forwarded as ``cluster`` (whether
        any node answers, which, and a message)."""
        await self.send_json({"type": "cluster", "reachable": event["reachable"], "nodes": event["nodes"],
                              "message": event["message"]})

    async def bulletins_posted(self, event: dict[str, Any]) -> None:
        """Bulletins the nodes posted (handed by this process's relay): forwarded as
        ``bulletins``, only those of components the user may view."""
        mine = [bulletin for bulletin in event["bulletins"] if bulletin.get("source_id") in self.visible]
        if mine:
            await self.send_json({"type": "bulletins", "bulletins": mine})

    async def _send_stats(self, components: dict[str, Any]) -> None:
        mine = {pk: figures for pk, figures in components.items() if pk in self.visible}
        if mine:
            await self.send_json({"type": "stats", "components": mine})
