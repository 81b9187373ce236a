"""Routes of the REST API (mounted at /api/v1/)."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from flowsite.api.views import (
    catalogue,
    components,
    flow,
    group_flow,
    history,
    parameters,
    platform,
    services,
    tenants,
    tokens,
    versions,
)
from flowsite.cluster.api import views as cluster
from flowsite.provenance.api import events as provenance_events
from flowsite.provenance.api import queues as flowfile_queues
from flowsite.provenance.api import searches as provenance_searches
from flowsite.provenance.api import views as provenance

app_name = "api"

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api:schema"), name="redoc"),

    path("tenants", tenants.TenantList.as_view(), name="tenants"),
    path("tenants/<uuid:pk>", tenants.TenantDetail.as_view(), name="tenant"),
    path("platform/tenants", platform.PlatformTenantList.as_view(), name="platform-tenants"),
    path("platform/tenants/<uuid:pk>", platform.PlatformTenantDetail.as_view(), name="platform-tenant"),
    path("tokens", tokens.TokenList.as_view(), name="tokens"),
    path("tokens/<uuid:pk>", tokens.TokenDetail.as_view(), name="token"),
    path("processor-types", catalogue.ProcessorTypeList.as_view(), name="processor-types"),
    path("processor-types/<str:name>", catalogue.ProcessorTypeDetail.as_view(), name="processor-type"),
    path("controller-service-types", catalogue.ServiceTypeList.as_view(), name="service-types"),
    path("controller-service-types/<str:name>", catalogue.ServiceTypeDetail.as_view(), name="service-type"),

    path("process-groups/<uuid:pk>", components.ProcessGroupDetail.as_view(), name="process-group"),
    path("process-groups/<uuid:pk>/process-groups", components.ProcessGroupChildren.as_view(),
         name="process-group-children"),
    path("process-groups/<uuid:pk>/run-status", components.ProcessGroupRunStatus.as_view(),
         name="process-group-run-status"),
    path("process-groups/<uuid:pk>/process-groups/import", flow.ImportView.as_view(), name="process-group-import"),
    path("process-groups/<uuid:pk>/processors", components.ProcessorList.as_view(), name="processors"),
    path("process-groups/<uuid:pk>/connections", components.ConnectionList.as_view(), name="connections"),
    path("process-groups/<uuid:pk>/controller-services", services.ControllerServiceList.as_view(),
         name="controller-services"),
    path("process-groups/<uuid:pk>/funnels", components.FunnelList.as_view(), name="funnels"),
    path("process-groups/<uuid:pk>/labels", components.LabelList.as_view(), name="labels"),
    path("process-groups/<uuid:pk>/input-ports", components.InputPortList.as_view(), name="input-ports"),
    path("process-groups/<uuid:pk>/output-ports", components.OutputPortList.as_view(), name="output-ports"),
    path("process-groups/<uuid:pk>/flow", group_flow.GroupFlow.as_view(), name="process-group-flow"),
    path("process-groups/<uuid:pk>/flow-definition", flow.FlowDefinitionView.as_view(), name="flow-definition"),
    path("process-groups/<uuid:pk>/versions", versions.VersionList.as_view(), name="versions"),
    path("process-groups/<uuid:pk>/versions/diff", versions.VersionDiff.as_view(), name="version-diff"),
    path("process-groups/<uuid:pk>/versions/<int:number>", versions.VersionDetail.as_view(), name="version"),
    path("process-groups/<uuid:pk>/versions/<int:number>/revert", versions.VersionRevert.as_view(),
         name="version-revert"),

    path("processors/<uuid:pk>", components.ProcessorDetail.as_view(), name="processor"),
    path("processors/<uuid:pk>/run-status", components.ProcessorRunStatus.as_view(), name="processor-run-status"),
    path("processors/<uuid:pk>/terminate", cluster.ProcessorTerminate.as_view(), name="processor-terminate"),
    path("connections/<uuid:pk>", components.ConnectionDetail.as_view(), name="connection"),
    path("connections/<uuid:pk>/empty", cluster.ConnectionEmpty.as_view(), name="connection-empty"),
    path("controller-services/<uuid:pk>", services.ControllerServiceDetail.as_view(), name="controller-service"),
    path("controller-services/<uuid:pk>/run-status", services.ControllerServiceRunStatus.as_view(),
         name="controller-service-run-status"),
    path("funnels/<uuid:pk>", components.FunnelDetail.as_view(), name="funnel"),
    path("labels/<uuid:pk>", components.LabelDetail.as_view(), name="label"),
    path("input-ports/<uuid:pk>", components.InputPortDetail.as_view(), name="input-port"),
    path("output-ports/<uuid:pk>", components.OutputPortDetail.as_view(), name="output-port"),

    path("parameter-contexts", parameters.ParameterContextList.as_view(), name="parameter-contexts"),
    path("parameter-contexts/<uuid:pk>", parameters.ParameterContextDetail.as_view(), name="parameter-context"),

    path("cluster/nodes", cluster.NodeList.as_view(), name="cluster-nodes"),
    path("cluster/nodes/<str:node>", cluster.NodeDetail.as_view(), name="cluster-node"),
    path("cluster/nodes/<str:node>/disconnect", cluster.NodeDisconnect.as_view(), name="cluster-node-disconnect"),
    path("cluster/nodes/<str:node>/reconnect", cluster.NodeReconnect.as_view(), name="cluster-node-reconnect"),
    path("cluster/nodes/<str:node>/offload", cluster.NodeOffload.as_view(), name="cluster-node-offload"),
    path("cluster/deployments", cluster.DeploymentList.as_view(), name="cluster-deployments"),
    path("cluster/deployments/<str:deploy_id>", cluster.DeploymentDetail.as_view(), name="cluster-deployment"),
    path("flow/history", history.FlowHistory.as_view(), name="flow-history"),
    path("flow/status", cluster.FlowStatus.as_view(), name="flow-status"),
    path("process-groups/<uuid:pk>/status", cluster.GroupStatus.as_view(), name="process-group-status"),

    path("provenance", provenance_searches.ProvenanceQueries.as_view(), name="provenance-queries"),
    path("provenance/search-options", provenance_searches.SearchOptions.as_view(), name="provenance-search-options"),
    path("provenance/lineage", provenance_searches.LineageRequests.as_view(), name="lineage-requests"),
    path("provenance/lineage/<str:request_id>", provenance_searches.LineageDetail.as_view(), name="lineage-request"),
    path("provenance/<str:request_id>", provenance_searches.ProvenanceQuery.as_view(), name="provenance-query"),
    path("provenance-events/replays", provenance_events.Replays.as_view(), name="provenance-replays"),
    path("provenance-events/<str:event_id>", provenance_events.EventDetail.as_view(), name="provenance-event"),
    path("provenance-events/<str:event_id>/content/input", provenance_events.EventContent.as_view(direction="input"),
         name="provenance-event-input"),
    path("provenance-events/<str:event_id>/content/output",
         provenance_events.EventContent.as_view(direction="output"), name="provenance-event-output"),
    path("provenance-exports", provenance_searches.Exports.as_view(), name="provenance-exports"),
    path("provenance-exports/<str:request_id>", provenance_searches.ExportDetail.as_view(), name="provenance-export"),
    path("provenance-exports/<str:request_id>/content", provenance_searches.ExportContent.as_view(),
         name="provenance-export-content"),
    path("flowfile-queues/<uuid:pk>/listing-requests", flowfile_queues.ListingRequests.as_view(),
         name="listing-requests"),
    path("flowfile-queues/<uuid:pk>/listing-requests/<str:request_id>", flowfile_queues.ListingDetail.as_view(),
         name="listing-request"),
    path("flowfile-queues/<uuid:pk>/drop-requests", flowfile_queues.DropRequests.as_view(), name="drop-requests"),
    path("flowfile-queues/<uuid:pk>/drop-requests/<str:request_id>", flowfile_queues.DropDetail.as_view(),
         name="drop-request"),
    path("flowfile-queues/<uuid:pk>/flowfiles/<str:uuid>", flowfile_queues.QueuedFlowFile.as_view(),
         name="queued-flowfile"),
    path("flowfile-queues/<uuid:pk>/flowfiles/<str:uuid>/content", flowfile_queues.QueuedContent.as_view(),
         name="queued-flowfile-content"),

    path("provenance-analytics", provenance.AnalyticsList.as_view(), name="provenance-analytics"),
    path("provenance-analytics/questions", provenance.AnalyticsQuestions.as_view(),
         name="provenance-analytics-questions"),
    path("provenance-analytics/<str:request_id>", provenance.AnalyticsDetail.as_view(),
         name="provenance-analytics-request"),
]
