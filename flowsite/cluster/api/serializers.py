"""Shapes of the cluster API's requests and answers (the answers are built as plain data; these
serializers give them their documented form)."""

from __future__ import annotations

from rest_framework import serializers

from engine.cluster.records import NodeState
from flowsite.api.serializers.processors import ProcessorSerializer
from flowsite.cluster.models import Deployment
from flowsite.cluster.visibility import version_for


class HeartbeatSerializer(serializers.Serializer):
    """What a node last said of itself. A tenant user sees the figures summed over their own
    tenants' components (None when the node did not answer), the version label and the deployment
    of their own tenants only."""

    address = serializers.CharField()
    started_at = serializers.FloatField()
    sent_at = serializers.FloatField()
    flow_fingerprint = serializers.CharField(allow_blank=True)
    flow_version = serializers.CharField(allow_blank=True)
    deploy_id = serializers.CharField(allow_blank=True)
    active_threads = serializers.IntegerField(allow_null=True)
    queued_count = serializers.IntegerField(allow_null=True)
    queued_bytes = serializers.IntegerField(allow_null=True)
    disconnected = serializers.BooleanField()
    refused = serializers.CharField(allow_blank=True)
    labels = serializers.ListField(child=serializers.CharField(), required=False,
                                   help_text="The node's labels (runnode --labels).")
    spark_ui_url = serializers.CharField(allow_blank=True, required=False,
                                         help_text="Its Spark UI's address (empty for tenant users); see sparkUiUrl.")


class NodeSerializer(serializers.Serializer):
    """A node of the cluster."""

    node = serializers.CharField()
    state = serializers.ChoiceField([state.value for state in NodeState],
                                    help_text="NiFi's node states: OFFLOADING while a disconnected node sends its "
                                              "queued FlowFiles to the others, OFFLOADED when it holds none.")
    reason = serializers.CharField(allow_blank=True, help_text="Why the node is in its state (platform operators "
                                                              "only; empty for tenant users).")
    changed_at = serializers.FloatField()
    roles = serializers.ListField(child=serializers.CharField(), help_text="coordinator, primary")
    labels = serializers.ListField(child=serializers.CharField(),
                                   help_text="The pools of tenants the node runs (runnode --labels); none: the shared "
                                             "pool, as the label 'shared' also says.")
    heartbeat = HeartbeatSerializer(allow_null=True, help_text="None once the node's heartbeat expired.")
    heartbeat_age = serializers.FloatField(allow_null=True, help_text="Seconds since the last heartbeat.")
    sparkUiUrl = serializers.CharField(allow_null=True, help_text="The address of the node's Spark UI once its Spark "
                                                                  "started (None before, with the UI disabled, under "
                                                                  "Spark Connect, and for tenant users: the UI shows "
                                                                  "every tenant's jobs).")


class NodeReplySerializer(serializers.Serializer):
    """One node's answer to a command."""

    node = serializers.CharField()
    ok = serializers.BooleanField()
    result = serializers.JSONField(allow_null=True)
    error = serializers.CharField(allow_blank=True)
    timed_out = serializers.BooleanField()


class CommandOutcomeSerializer(serializers.Serializer):
    """What the nodes answered to a command carried to them."""

    reached = serializers.BooleanField(help_text="False when no node was reached (Redis away, no node connected).")
    message = serializers.CharField(allow_blank=True)
    nodes = NodeReplySerializer(many=True)


class NotStartedSerializer(serializers.Serializer):
    """A component a group start left stopped, and why."""

    id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    problems = serializers.ListField(child=serializers.CharField())


class GroupStartAnswerSerializer(serializers.Serializer):
    """What starting a process group started, left stopped, and what the nodes answered."""

    started = serializers.ListField(child=serializers.CharField(), help_text="The processors and ports set RUNNING.")
    not_started = NotStartedSerializer(many=True, help_text="Stopped components left stopped as invalid.")
    cluster = CommandOutcomeSerializer(help_text="The group.start command carried to the connected nodes.")


class DropOutcomeSerializer(CommandOutcomeSerializer):
    """The nodes' answers to emptying a queue."""

    dropped = serializers.IntegerField(help_text="FlowFiles dropped over every node.")


class NodeStatusSerializer(serializers.Serializer):
    """One node's part of a status answer (figures over the components shown)."""

    node = serializers.CharField()
    ok = serializers.BooleanField()
    timed_out = serializers.BooleanField()
    error = serializers.CharField(allow_blank=True)
    uptime_seconds = serializers.FloatField(allow_null=True)
    is_primary = serializers.BooleanField(allow_null=True)
    active_threads = serializers.IntegerField()
    queued_count = serializers.IntegerField()
    queued_bytes = serializers.IntegerField()
    flowFilesAwaitingTransfer = serializers.IntegerField(help_text="Of the FlowFiles queued, those the node holds "
                                                                   "for other nodes (load-balanced connections).")
    bytesAwaitingTransfer = serializers.IntegerField(help_text="Their size in bytes.")


class ProcessorStatusSerializer(serializers.Serializer):
    """A processor over every node."""

    id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    type = serializers.CharField()
    group_id = serializers.CharField()
    run_status = serializers.CharField(help_text="Running if it runs on any node, else Stopping, Invalid, "
                                                 "Stopped, Disabled.")
    active_threads = serializers.IntegerField()
    flowfiles_in = serializers.IntegerField()
    bytes_in = serializers.IntegerField()
    bytes_read = serializers.IntegerField(help_text="Bytes of content read in the last five minutes.")
    bytes_written = serializers.IntegerField(help_text="Bytes of content written in the last five minutes.")
    flowfiles_out = serializers.IntegerField()
    bytes_out = serializers.IntegerField()
    validation_errors = serializers.ListField(child=serializers.CharField())
    nodes = serializers.ListField(child=serializers.DictField(), help_text="Each node's figures.")


class ConnectionStatusSerializer(serializers.Serializer):
    """A connection's queue over every node."""

    id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    group_id = serializers.CharField()
    source_id = serializers.CharField()
    destination_id = serializers.CharField()
    queued_count = serializers.IntegerField()
    queued_bytes = serializers.IntegerField()
    flowFilesAwaitingTransfer = serializers.IntegerField(help_text="Of the FlowFiles queued, those held for another "
                                                                   "node (a load-balanced connection), not yet sent.")
    bytesAwaitingTransfer = serializers.IntegerField(help_text="Their size in bytes.")
    back_pressure_object_threshold = serializers.IntegerField(help_text="Back pressure starts at this many FlowFiles "
                                                                        "queued on a node (0: never).")
    back_pressure_data_size_threshold = serializers.IntegerField(help_text="… or at this many bytes (0: never).")
    percent_use_count = serializers.IntegerField(help_text="The fullest node's queued count in percent of the "
                                                           "object threshold.")
    percent_use_bytes = serializers.IntegerField(help_text="The fullest node's queued bytes in percent of the "
                                                           "data size threshold.")
    nodes = serializers.ListField(child=serializers.DictField(), help_text="Each node's figures.")


class PortStatusSerializer(serializers.Serializer):
    """A funnel or port over every node."""

    id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    kind = serializers.CharField()
    group_id = serializers.CharField()
    run_status = serializers.CharField()
    active_threads = serializers.IntegerField()
    nodes = serializers.ListField(child=serializers.DictField())


class GroupStatusSerializer(serializers.Serializer):
    """A process group (everything inside it) over every node."""

    id = serializers.CharField()
    name = serializers.CharField(allow_blank=True)
    queued_count = serializers.IntegerField()
    queued_bytes = serializers.IntegerField()
    active_threads = serializers.IntegerField()
    running = serializers.IntegerField()
    stopped = serializers.IntegerField()
    invalid = serializers.IntegerField()
    disabled = serializers.IntegerField()
    flowfiles_in = serializers.IntegerField()
    bytes_in = serializers.IntegerField()
    flowfiles_out = serializers.IntegerField()
    bytes_out = serializers.IntegerField()
    nodes = serializers.ListField(child=serializers.DictField())


class ClusterStatusSerializer(serializers.Serializer):
    """The status of what the user may view, over every connected node."""

    asked_at = serializers.FloatField(help_text="When the nodes were asked (answers are reused for about a second).")
    note = serializers.CharField(allow_blank=True, help_text="Why there is nothing to show, if so.")
    nodes = NodeStatusSerializer(many=True)
    processors = ProcessorStatusSerializer(many=True)
    connections = ConnectionStatusSerializer(many=True)
    ports = PortStatusSerializer(many=True)
    groups = GroupStatusSerializer(many=True)
    bulletins = serializers.ListField(child=serializers.DictField())


class GroupClusterStatusSerializer(ClusterStatusSerializer):
    """The status of one process group and what it holds, over every connected node."""

    group = GroupStatusSerializer(allow_null=True, help_text="The group's totals (None when no node runs it).")


class DeployRequestSerializer(serializers.Serializer):
    """What to deploy."""

    tenant = serializers.UUIDField(required=False, help_text="The tenant (needed when you belong to several).")
    version = serializers.IntegerField(required=False, allow_null=True, min_value=1,
                                       help_text="A version of the tenant's root group; absent: the design as it is.")


class DeployReportSerializer(serializers.Serializer):
    """A node's report on a deployment."""

    node = serializers.CharField()
    status = serializers.CharField(help_text="applied, unchanged, refused or failed")
    ok = serializers.BooleanField()
    message = serializers.CharField(allow_blank=True)
    fingerprint = serializers.CharField(allow_blank=True)
    problems = serializers.ListField(child=serializers.CharField())
    at = serializers.FloatField()


class DeploymentSerializer(serializers.ModelSerializer):
    """A deployment of a tenant's flow."""

    tenant = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    group = serializers.UUIDField(source="group_id", read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = Deployment
        fields = ["deploy_id", "tenant", "group", "version", "created_by", "created_at", "fingerprint",
                  "cluster_version"]

    def to_representation(self, instance):
        """The deployment, its cluster version label reduced to what the requesting user may see."""
        data = super().to_representation(instance)
        request = self.context.get("request")
        if request is not None:
            data["cluster_version"] = version_for(request.user, data["cluster_version"])
        return data


class DeployAnswerSerializer(DeploymentSerializer):
    """A deployment just published, and the nodes told to apply it."""

    nodes = serializers.ListField(child=serializers.CharField(), read_only=True,
                                  help_text="The connected nodes sent the deploy command.")

    class Meta(DeploymentSerializer.Meta):
        fields = [*DeploymentSerializer.Meta.fields, "nodes"]


class DeploymentDetailSerializer(DeploymentSerializer):
    """A deployment with the nodes' reports."""

    reports = DeployReportSerializer(many=True, read_only=True)
    pending = serializers.ListField(child=serializers.CharField(), read_only=True,
                                    help_text="Connected nodes that have not reported yet.")
    document = serializers.JSONField(read_only=True, help_text="The tenant's flow as deployed (sensitive values "
                                                               "sealed).")

    class Meta(DeploymentSerializer.Meta):
        fields = [*DeploymentSerializer.Meta.fields, "reports", "pending", "document"]


class ProcessorRunStatusAnswerSerializer(ProcessorSerializer):
    """A processor whose run state changed, with what the nodes answered to the change."""

    cluster = CommandOutcomeSerializer(read_only=True, help_text="The command carried to the connected nodes.")
