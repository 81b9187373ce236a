"""A tenant's flow as design-time rows: process groups (a tree), processors, connections,
funnels, ports, labels, controller services and parameter contexts, plus committed flow versions.

Every component shares one ``Component`` row (multi-table inheritance) holding what all have:
identity, tenant, parent group, revision, position and the flow-definition fields Flowsite does
not model (``extra``, written back on export). Two identifiers: ``id`` is this instance's,
``versioned_id`` is the ``identifier`` of the flow definition it came from (kept across export
and import, as NiFi keeps a versioned component id). Component policies are object permissions
on the ``Component`` row.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase

from flowsite.tenancy.models import Tenant

#: The policies of a component, NiFi's component access policies: (codename, label).
COMPONENT_POLICIES = [
    ("view_component", "view the component"),
    ("modify_component", "modify the component"),
    ("view_data", "view the data"),
    ("modify_data", "modify the data"),
    ("view_provenance", "view provenance"),
    ("operate_component", "operate the component"),
]


class Kind(models.TextChoices):
    """What a component is."""

    PROCESS_GROUP = "PROCESS_GROUP"
    PROCESSOR = "PROCESSOR"
    CONNECTION = "CONNECTION"
    FUNNEL = "FUNNEL"
    INPUT_PORT = "INPUT_PORT"
    OUTPUT_PORT = "OUTPUT_PORT"
    CONTROLLER_SERVICE = "CONTROLLER_SERVICE"
    LABEL = "LABEL"


class ComponentQuerySet(models.QuerySet):
    """Components, with the one filter every list of them goes through."""

    def restrict(self, access, action: str) -> ComponentQuerySet:
        """The components of ``access``'s tenant (a ``flowsite.flows.access.TenantAccess``) on
        which its user holds ``action``; none for a non-member (NetBox's ``restrict()``)."""
        if not access.is_member:
            return self.none()
        permitted = access.permitted_ids(action)
        mine = self.filter(tenant=access.tenant)
        return mine if permitted is None else mine.filter(pk__in=permitted)


class Component(models.Model):
    """What every component has: identity, place, revision, position and unmodelled fields."""

    objects = ComponentQuerySet.as_manager()

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="components")
    kind = models.CharField(max_length=32, choices=Kind.choices, editable=False)
    parent = models.ForeignKey("ProcessGroup", on_delete=models.CASCADE, null=True, blank=True,
                               related_name="contents")
    versioned_id = models.CharField(max_length=200)
    name = models.CharField(max_length=500, blank=True)
    comments = models.TextField(blank=True)
    position_x = models.FloatField(default=0)
    position_y = models.FloatField(default=0)
    extra = models.JSONField(default=dict, blank=True)
    version = models.PositiveBigIntegerField(default=0)
    last_client_id = models.CharField(max_length=100, blank=True)
    last_modifier = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        default_permissions = ()
        permissions = COMPONENT_POLICIES
        indexes = [models.Index(fields=["tenant", "kind"]), models.Index(fields=["parent", "kind"])]
        constraints = [models.UniqueConstraint(fields=["tenant"], condition=models.Q(parent__isnull=True),
                                               name="one_root_group_per_tenant")]

    def __str__(self) -> str:
        return f"{self.kind.lower().replace('_', ' ')} {self.name or self.id}"

    def save(self, *args, **kwargs):
        if not self.kind:
            self.kind = self.KIND
        if not self.versioned_id:
            self.versioned_id = str(self.id)
        super().save(*args, **kwargs)

    @property
    def base(self) -> Component:
        """This component's ``Component`` row (where its policies are held)."""
        return self if type(self) is Component else self.component_ptr


class ParameterContext(models.Model):
    """A named set of parameters of a tenant (``#{name}`` in property values). Parameters are a
    list of ``{name, value, sensitive, description}``; sensitive values are stored encrypted."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="parameter_contexts")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    parameters = models.JSONField(default=list, blank=True)
    inherited = models.JSONField(default=list, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    version = models.PositiveBigIntegerField(default=0)
    last_client_id = models.CharField(max_length=100, blank=True)
    last_modifier = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="parameter_context_name_unique")]

    def __str__(self) -> str:
        return self.name


class ProcessGroup(Component):
    """A process group: the root of a tenant's flow (no parent) or a group inside another."""

    KIND = Kind.PROCESS_GROUP
    parameter_context = models.ForeignKey(ParameterContext, on_delete=models.SET_NULL, null=True, blank=True,
                                          related_name="groups")
    default_back_pressure_object_threshold = models.PositiveBigIntegerField(default=10_000)
    default_back_pressure_data_size_threshold = models.CharField(max_length=50, default="1 GB")
    default_flowfile_expiration = models.CharField(max_length=50, default="0 sec")
    document_extra = models.JSONField(default=dict, blank=True)

    class Meta:
        default_permissions = ()


class Processor(Component):
    """A processor: its type, properties and scheduling (NiFi's ``VersionedProcessor``)."""

    KIND = Kind.PROCESSOR
    type = models.CharField(max_length=300)
    bundle = models.JSONField(null=True, blank=True)
    properties = models.JSONField(default=dict, blank=True)
    sensitive_properties = models.JSONField(default=dict, blank=True)
    scheduling_strategy = models.CharField(max_length=20, default="TIMER_DRIVEN")
    scheduling_period = models.CharField(max_length=100, default="0 sec")
    execution_node = models.CharField(max_length=20, default="ALL")
    concurrent_tasks = models.PositiveIntegerField(default=1)
    penalty_duration = models.CharField(max_length=50, default="30 sec")
    yield_duration = models.CharField(max_length=50, default="1 sec")
    bulletin_level = models.CharField(max_length=10, default="WARN")
    run_duration_millis = models.PositiveIntegerField(default=0)
    auto_terminated = models.JSONField(default=list, blank=True)
    scheduled_state = models.CharField(max_length=10, default="STOPPED")

    class Meta:
        default_permissions = ()


class ControllerService(Component):
    """A controller service of a process group (NiFi's ``VersionedControllerService``)."""

    KIND = Kind.CONTROLLER_SERVICE
    type = models.CharField(max_length=300)
    bundle = models.JSONField(null=True, blank=True)
    properties = models.JSONField(default=dict, blank=True)
    sensitive_properties = models.JSONField(default=dict, blank=True)
    scheduled_state = models.CharField(max_length=10, default="DISABLED")

    class Meta:
        default_permissions = ()


class Label(Component):
    """A label on the canvas (NiFi's ``VersionedLabel``): text in a box, with its style
    (``font-size``, ``background-color``... as NiFi writes them)."""

    KIND = Kind.LABEL
    text = models.TextField(blank=True)
    width = models.FloatField(default=150)
    height = models.FloatField(default=150)
    style = models.JSONField(default=dict, blank=True)
    z_index = models.BigIntegerField(default=0)

    class Meta:
        default_permissions = ()


class Funnel(Component):
    """A funnel: merges connections into one."""

    KIND = Kind.FUNNEL

    class Meta:
        default_permissions = ()


class Port(Component):
    """An input or output port of a process group (``kind`` says which)."""

    KIND = Kind.INPUT_PORT
    concurrent_tasks = models.PositiveIntegerField(default=1)
    scheduled_state = models.CharField(max_length=10, default="STOPPED")

    class Meta:
        default_permissions = ()


class Connection(Component):
    """A connection between two components of a group, and its queue's settings."""

    KIND = Kind.CONNECTION
    source = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="outgoing")
    destination = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="incoming")
    selected_relationships = models.JSONField(default=list, blank=True)
    back_pressure_object_threshold = models.PositiveBigIntegerField(default=10_000)
    back_pressure_data_size_threshold = models.CharField(max_length=50, default="1 GB")
    flowfile_expiration = models.CharField(max_length=50, default="0 sec")
    prioritizers = models.JSONField(default=list, blank=True)
    load_balance_strategy = models.CharField(max_length=30, default="DO_NOT_LOAD_BALANCE")
    partitioning_attribute = models.CharField(max_length=200, blank=True)
    load_balance_compression = models.CharField(max_length=40, default="DO_NOT_COMPRESS")

    class Meta:
        default_permissions = ()

    @property
    def bends(self) -> list[dict]:
        """The bend points of the connection's line on the canvas (``[{x, y}]``): the flow
        definition's ``bends``, kept with the fields Flowsite does not model."""
        return self.extra.get("bends", [])


class FlowVersion(models.Model):
    """A committed version of a process group: its flow definition (versioned identifiers,
    sensitive values left out) with a comment."""

    group = models.ForeignKey(ProcessGroup, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    comment = models.TextField(blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    definition = models.JSONField()

    class Meta:
        ordering = ["group", "-number"]
        constraints = [models.UniqueConstraint(fields=["group", "number"], name="version_number_unique")]

    def __str__(self) -> str:
        return f"{self.group.name} v{self.number}"


class Operation(models.TextChoices):
    """What an action did to a component (NiFi's flow configuration history operations)."""

    ADD = "Add"
    CONFIGURE = "Configure"
    MOVE = "Move"
    REMOVE = "Remove"
    CONNECT = "Connect"
    DISCONNECT = "Disconnect"
    START = "Start"
    STOP = "Stop"
    ENABLE = "Enable"
    DISABLE = "Disable"
    COMMIT = "CommitLocalChanges"
    REVERT = "RevertLocalChanges"
    IMPORT = "Import"
    DEPLOY = "Deploy"


#: What a history row is about: a component of any kind, or a parameter context (not a component).
ActionKind = models.TextChoices("ActionKind", [(kind.name, kind.value) for kind in Kind]
                                + [("PARAMETER_CONTEXT", "PARAMETER_CONTEXT")])


class FlowActionQuerySet(models.QuerySet):
    """History rows, with the one filter every list of them goes through."""

    def restrict(self, accesses) -> FlowActionQuerySet:
        """The rows that the users of ``accesses`` (``TenantAccess``, one per tenant) may see: those
        of a component they may view, or, once it is gone, of a group they may view it in; those
        of a parameter context when they may view the root group (contexts are tenant-wide); all
        of the tenant's when they may view every component."""
        allowed = models.Q(pk__in=[])
        for access in accesses:
            if access.is_member:
                visible = access.permitted_ids("view_component")
                if visible is None:  # the whole flow: every row of the tenant, deleted subtrees' too
                    allowed |= models.Q(tenant=access.tenant)
                    continue
                root = ProcessGroup.objects.filter(tenant=access.tenant, parent__isnull=True).values_list(
                    "pk", flat=True).first()
                allowed |= models.Q(tenant=access.tenant) & (models.Q(component_id__in=visible) |
                                                             models.Q(group_id__in=visible))
                if root in visible:
                    allowed |= models.Q(tenant=access.tenant, component_kind=ActionKind.PARAMETER_CONTEXT)
        return self.filter(allowed)


class FlowAction(models.Model):
    """One change to a tenant's flow, NiFi's flow configuration history: who, when, what, and the
    value of each changed field before and after (``changes``: ``[{field, before, after}]``;
    sensitive values are never stored). The component is named by id, not a foreign key, so its
    history outlives it."""

    objects = FlowActionQuerySet.as_manager()

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="flow_actions")
    timestamp = models.DateTimeField(default=timezone.now)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+")
    user_name = models.CharField(max_length=150)
    operation = models.CharField(max_length=20, choices=Operation.choices)
    component_id = models.UUIDField()
    component_kind = models.CharField(max_length=32, choices=ActionKind.choices)
    component_name = models.CharField(max_length=500, blank=True)
    component_type = models.CharField(max_length=300, blank=True)
    group_id = models.UUIDField(null=True, blank=True)
    changes = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-timestamp", "-id"]
        indexes = [models.Index(fields=["tenant", "-timestamp"]), models.Index(fields=["tenant", "component_id"])]

    def __str__(self) -> str:
        return f"{self.user_name} {self.operation.lower()} {self.component_kind.lower()} {self.component_id}"


class ComponentUserPermission(UserObjectPermissionBase):
    """A component policy held by a user."""

    content_object = models.ForeignKey(Component, on_delete=models.CASCADE)


class ComponentGroupPermission(GroupObjectPermissionBase):
    """A component policy held by a group."""

    content_object = models.ForeignKey(Component, on_delete=models.CASCADE)
