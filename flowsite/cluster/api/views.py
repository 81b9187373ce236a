"""The cluster's endpoints: its nodes, federated status, commands to the nodes and deployments.

Every endpoint here talks to the cluster's Redis; when it does not answer they answer 503
(``ClusterUnreachable``). The nodes serve every tenant: reading them needs the ``view_cluster``
policy in one of one's tenants (or being a platform operator), and a tenant user sees of them only
what concerns their own tenants; changing them is for platform operators only. What each kind of
person sees is decided in ``flowsite.cluster.visibility``.
"""

from __future__ import annotations

import uuid

import redis
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from engine.cluster.cluster_flow import read_reports
from engine.cluster.records import (ClusterView, NodeStateError, remove_node, request_disconnect, request_offload,
                                   request_reconnect)
from flowsite.api.errors import Conflict
from flowsite.api.lookup import component_or_404, require_global, tenant_or_404, tenants_of
from flowsite.cluster import commands, status as federated
from flowsite.cluster.actions import do_deploy
from flowsite.cluster import redis as cluster_redis
from flowsite.cluster import visibility
from flowsite.cluster.api.serializers import (
    ClusterStatusSerializer,
    CommandOutcomeSerializer,
    DeployAnswerSerializer,
    DeploymentDetailSerializer,
    DeploymentSerializer,
    DeployRequestSerializer,
    DropOutcomeSerializer,
    GroupClusterStatusSerializer,
    NodeSerializer,
)
from flowsite.cluster.models import Deployment
from flowsite.cluster.nodes import node_entry, nodes
from flowsite.cluster.visibility import ClusterSight
from flowsite.flows import access as policies
from flowsite.flows.models import Connection, ProcessGroup, Processor
from flowsite.tenancy.models import Tenant, is_platform_operator

_TENANT_PARAMETER = OpenApiParameter("tenant", OpenApiTypes.UUID, required=False,
                                     description="Only this tenant (default: every tenant you belong to).")


def _tenants(request) -> list[Tenant]:
    """The tenant named by ``?tenant=``, or every tenant of the user."""
    raw = request.query_params.get("tenant")
    if raw:
        return [_tenant(request, raw)]
    return list(tenants_of(request).order_by("slug"))


def _tenant(request, raw) -> Tenant:
    try:
        pk = uuid.UUID(str(raw))
    except ValueError:
        raise exceptions.ValidationError({"tenant": f"{raw!r} is not a tenant id"}) from None
    return tenant_or_404(request, pk)


def _require_node_operator(request) -> None:
    visibility.require_operator(request.user, "change the cluster's nodes")


class ClusterEndpoint(GenericAPIView):
    """An endpoint that talks to the cluster (503 when its Redis does not answer)."""

    filter_backends = ()
    pagination_class = None
    extra_error_statuses: tuple[int, ...] = (503,)

    def handle_exception(self, exc):
        if isinstance(exc, redis.RedisError):
            exc = cluster_redis.unreachable(exc)
        return super().handle_exception(exc)


# ---------------------------------------------------------------------------------- nodes

class NodeList(ClusterEndpoint):
    """The cluster's nodes: state, roles and last heartbeat."""

    serializer_class = NodeSerializer

    @extend_schema(responses=NodeSerializer(many=True))
    def get(self, request):
        sight = ClusterSight(request.user, tenants_of(request).order_by("slug"))
        sight.require_nodes()
        return Response(sight.nodes(nodes().values()))


class _NodeEndpoint(ClusterEndpoint):
    serializer_class = NodeSerializer
    extra_error_statuses = (409, 503)

    def _view(self, node: str):
        view = nodes().get(node)
        if view is None:
            raise exceptions.NotFound(f"no node {node!r} in the cluster")
        return view


class NodeDetail(_NodeEndpoint):
    """One node; DELETE (platform operators only) forgets a disconnected or offloaded node."""

    def get(self, request, node):
        sight = ClusterSight(request.user, tenants_of(request).order_by("slug"))
        sight.require_nodes()
        return Response(sight.nodes([self._view(node)])[0])

    @extend_schema(responses={204: None})
    def delete(self, request, node):
        _require_node_operator(request)
        self._view(node)
        try:
            remove_node(cluster_redis.client(), cluster_redis.keys(), node)
        except NodeStateError as error:
            raise Conflict(str(error)) from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class _NodeAction(_NodeEndpoint):
    def change_node(self, node: str) -> None:
        raise NotImplementedError

    @extend_schema(request=None, responses=NodeSerializer)
    def post(self, request, node):
        _require_node_operator(request)
        self._view(node)
        try:
            self.change_node(node)
        except NodeStateError as error:
            raise Conflict(str(error)) from None
        return Response(node_entry(self._view(node)))


class NodeDisconnect(_NodeAction):
    """Ask a node to leave the cluster (DISCONNECTING, then DISCONNECTED once it acknowledges);
    platform operators only."""

    def change_node(self, node: str) -> None:
        request_disconnect(cluster_redis.client(), cluster_redis.keys(), node,
                           f"disconnected by {self.request.user.get_username()}")


class NodeOffload(_NodeAction):
    """Ask a disconnected node to offload (platform operators only): OFFLOADING at once; the node
    stops its processors, sends every queued FlowFile to the connected nodes, then reports
    OFFLOADED, after which it can be removed with nothing left on it."""

    def change_node(self, node: str) -> None:
        request_offload(cluster_redis.client(), cluster_redis.keys(), node, cluster_redis.bus(),
                        f"offloaded by {self.request.user.get_username()}")


class NodeReconnect(_NodeAction):
    """Let a disconnected, offloading or offloaded node connect again (platform operators only)."""

    def change_node(self, node: str) -> None:
        request_reconnect(cluster_redis.client(), cluster_redis.keys(), node)


# --------------------------------------------------------------------------------- status

class FlowStatus(ClusterEndpoint):
    """The status of your tenants' components over every connected node (what you may view)."""

    serializer_class = ClusterStatusSerializer
    extra_error_statuses = (404, 503)  # 404: a ?tenant= you do not belong to

    @extend_schema(parameters=[_TENANT_PARAMETER])
    def get(self, request):
        return Response(federated.cluster_status(request.user, _tenants(request)))


class GroupStatus(ClusterEndpoint):
    """The status of one process group and what it holds, over every connected node."""

    serializer_class = GroupClusterStatusSerializer

    def get(self, request, pk):
        group = component_or_404(request, ProcessGroup, pk, policies.VIEW)
        return Response(federated.cluster_status(request.user, [group.tenant], within=group))


# ------------------------------------------------------------------------------- commands

class ProcessorTerminate(ClusterEndpoint):
    """End the tasks of a stopping processor on every connected node."""

    serializer_class = CommandOutcomeSerializer

    @extend_schema(request=None, responses=CommandOutcomeSerializer)
    def post(self, request, pk):
        processor = component_or_404(request, Processor, pk, policies.OPERATE)
        return Response(commands.on_nodes("processor.terminate", {"id": str(processor.pk)}))


class ConnectionEmpty(ClusterEndpoint):
    """Drop every FlowFile queued in a connection on every connected node, at once (needs *modify
    the data* of the connection, as NiFi's drop requests: ``/flowfile-queues/{id}/drop-requests``
    is the same as a request resource)."""

    serializer_class = DropOutcomeSerializer

    @extend_schema(request=None, responses=DropOutcomeSerializer)
    def post(self, request, pk):
        connection = component_or_404(request, Connection, pk, policies.MODIFY_DATA)
        outcome = commands.on_nodes("queue.empty", {"id": str(connection.pk),
                                                     "requester": request.user.get_username()})
        outcome["dropped"] = sum(node["result"]["dropped"] for node in outcome["nodes"] if node["ok"])
        return Response(outcome)


# ---------------------------------------------------------------------------- deployments

class DeploymentList(ClusterEndpoint):
    """Your tenants' deployments (newest first), or deploy a tenant's flow to the cluster. Listed
    are the deployments of tenants whose root group you may view (every tenant's for a platform
    operator)."""

    serializer_class = DeploymentSerializer
    extra_error_statuses = (404, 409, 503)  # 404: a tenant you do not belong to

    @extend_schema(parameters=[_TENANT_PARAMETER], responses=DeploymentSerializer(many=True))
    def get(self, request):
        deployments = visibility.restrict_deployments(Deployment.objects.all(), request.user)
        raw = request.query_params.get("tenant")
        if raw:
            deployments = deployments.filter(tenant=self._named(request, raw))
        deployments = deployments.select_related("tenant", "created_by")[:100]
        return Response(DeploymentSerializer(deployments, many=True, context={"request": request}).data)

    @extend_schema(request=DeployRequestSerializer, responses={202: DeployAnswerSerializer})
    def post(self, request):
        serializer = DeployRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        tenant = self._tenant(request, serializer.validated_data.get("tenant"))
        require_global(request, tenant, policies.MODIFY_FLOW, "deploy the tenant's flow")
        deployment, nodes = do_deploy(tenant, request.user, serializer.validated_data.get("version"))
        data = DeploymentSerializer(deployment, context={"request": request}).data
        return Response({**data, "nodes": nodes}, status=status.HTTP_202_ACCEPTED)

    @staticmethod
    def _named(request, raw) -> Tenant:
        """The tenant ``?tenant=`` names: one of the user's, or any for a platform operator."""
        if is_platform_operator(request.user):
            try:
                tenant = Tenant.objects.filter(pk=uuid.UUID(str(raw))).first()
            except ValueError:
                tenant = None
            if tenant is not None:
                return tenant
        return _tenant(request, raw)

    @staticmethod
    def _tenant(request, pk) -> Tenant:
        if pk is not None:
            return _tenant(request, pk)
        tenants = list(tenants_of(request)[:2])
        if len(tenants) != 1:
            raise exceptions.ValidationError({"tenant": "name the tenant to deploy" if tenants else
                                              "you belong to no tenant"})
        return tenants[0]


class DeploymentDetail(ClusterEndpoint):
    """One deployment, with each node's report and the connected nodes that have not reported.
    Reading it needs the view policy on the tenant's root group, and on everything in the deployed
    document (else 403 naming the component); tenant users see the nodes' reports with neutral
    messages (a node's own words may name any tenant's components)."""

    serializer_class = DeploymentDetailSerializer

    def get(self, request, deploy_id):
        deployments = Deployment.objects.filter(deploy_id=deploy_id).select_related("tenant", "created_by")
        if not is_platform_operator(request.user):
            deployments = deployments.filter(tenant__in=tenants_of(request))
        deployment = deployments.first()
        if deployment is None:
            raise exceptions.NotFound("no such deployment")
        if not visibility.restrict_deployments(Deployment.objects.filter(pk=deployment.pk), request.user).exists():
            raise exceptions.PermissionDenied("you may not view this deployment (the view policy on the tenant's "
                                              "root group)")
        visibility.require_document(request.user, deployment)
        client, keys = cluster_redis.client(), cluster_redis.keys()
        reports = read_reports(client, keys, deployment.deploy_id)
        connected = ClusterView(client, keys).connected()
        sight = ClusterSight(request.user, [deployment.tenant])
        data = DeploymentSerializer(deployment, context={"request": request}).data
        return Response({**data, "reports": [sight.report(reports[node]) for node in sorted(reports)],
                         "pending": [node for node in connected if node not in reports],
                         "document": deployment.document})
