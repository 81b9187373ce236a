"""Routes of the portal."""

from django.urls import path

from flowsite.portal.views import (
    auth,
    bulletins,
    canvas,
    cluster,
    connections,
    endpoints,
    events,
    groups,
    history,
    parameters,
    processors,
    provenance,
    queues,
    services,
    tenants,
    tokens,
)

app_name = "portal"

urlpatterns = [
    path("", tenants.home, name="home"),
    path("login/", auth.LoginView.as_view(), name="login"),
    path("logout/", auth.LogoutView.as_view(), name="logout"),
    path("tenant", tenants.switch, name="switch-tenant"),

    path("groups/<uuid:pk>/", groups.detail, name="group"),
    path("groups/<uuid:pk>/canvas", canvas.canvas, name="group-canvas"),
    path("groups/<uuid:pk>/groups", groups.create_child, name="group-create-child"),
    path("groups/<uuid:pk>/delete", groups.delete, name="group-delete"),
    path("groups/<uuid:pk>/processors/new", processors.new, name="processor-new"),
    path("groups/<uuid:pk>/connections/new", connections.new, name="connection-new"),
    path("groups/<uuid:pk>/funnels", endpoints.new_funnel, name="funnel-new"),
    path("groups/<uuid:pk>/ports", endpoints.new_port, name="port-new"),
    path("groups/<uuid:pk>/labels", endpoints.new_label, name="label-new"),
    path("groups/<uuid:pk>/services/", services.group_services, name="group-services"),
    path("groups/<uuid:pk>/parameter-context", parameters.bind, name="group-parameter-context"),

    path("processors/<uuid:pk>/", processors.detail, name="processor"),
    path("processors/<uuid:pk>/delete", processors.delete, name="processor-delete"),
    path("connections/<uuid:pk>/", connections.detail, name="connection"),
    path("connections/<uuid:pk>/delete", connections.delete, name="connection-delete"),
    path("connections/<uuid:pk>/queue/", queues.listing, name="connection-queue"),
    path("services/<uuid:pk>/", services.detail, name="service"),
    path("services/<uuid:pk>/state", services.set_state, name="service-state"),
    path("services/<uuid:pk>/delete", services.delete, name="service-delete"),
    path("parameter-contexts/", parameters.index, name="parameter-contexts"),
    path("parameter-contexts/<uuid:pk>/", parameters.detail, name="parameter-context"),
    path("parameter-contexts/<uuid:pk>/delete", parameters.delete, name="parameter-context-delete"),
    path("bulletins/", bulletins.index, name="bulletins"),
    path("funnels/<uuid:pk>/delete", endpoints.delete_funnel, name="funnel-delete"),
    path("ports/<uuid:pk>/delete", endpoints.delete_port, name="port-delete"),
    path("labels/<uuid:pk>/delete", endpoints.delete_label, name="label-delete"),

    path("cluster/", cluster.index, name="cluster"),
    path("cluster/deploy", cluster.deploy, name="cluster-deploy"),
    path("cluster/nodes/<str:node>/disconnect", cluster.disconnect, name="cluster-disconnect"),
    path("cluster/nodes/<str:node>/reconnect", cluster.reconnect, name="cluster-reconnect"),
    path("cluster/nodes/<str:node>/offload", cluster.offload, name="cluster-offload"),
    path("cluster/nodes/<str:node>/remove", cluster.remove, name="cluster-remove"),

    path("provenance/", events.search, name="provenance"),
    path("provenance/events/<str:event_id>/", events.event, name="provenance-event"),
    path("provenance/events/<str:event_id>/lineage/", events.event_lineage, name="provenance-event-lineage"),
    path("provenance/flowfiles/<str:uuid>/lineage/", events.flowfile_lineage, name="provenance-flowfile-lineage"),
    path("provenance/analytics/", provenance.index, name="analytics"),
    path("provenance/analytics/<str:request_id>/", provenance.detail, name="analytics-request"),
    path("provenance/analytics/<str:request_id>/delete", provenance.delete, name="analytics-delete"),

    path("history/", history.index, name="history"),

    path("tokens/", tokens.index, name="tokens"),
    path("tokens/<uuid:pk>/revoke", tokens.revoke, name="token-revoke"),
]
