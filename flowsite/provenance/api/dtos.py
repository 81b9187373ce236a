"""The shapes of the provenance and queue answers, for the OpenAPI schema: NiFi's DTOs and
entities (the answers themselves are built as plain data: ``shapes``, ``events.Presenter``)."""

from __future__ import annotations

from rest_framework import serializers

from flowsite.provenance.api.inputs import LineageRequestSerializer
from flowsite.provenance.api.serializers import NodesSerializer

S, I, B = serializers.CharField, serializers.IntegerField, serializers.BooleanField


def _optional(field_class, **kwargs):
    return field_class(required=False, allow_null=True, **kwargs)


class RequestSerializer(serializers.Serializer):
    """What every request resource carries."""

    id = S()
    uri = S(help_text="Where to follow (GET) or forget (DELETE) the request.")
    submissionTime = S(help_text="MM/dd/yyyy HH:mm:ss.SSS UTC")
    expiration = S(help_text="When the request and its result are forgotten (MM/dd/yyyy HH:mm:ss.SSS UTC).")
    percentCompleted = I()
    finished = B()
    state = serializers.ChoiceField(["queued", "running", "done", "failed"])
    failureReason = _optional(S)
    partial = B(help_text="True when some node's answer is missing (see nodes.missing).")
    nodes = NodesSerializer()


class AttributeSerializer(serializers.Serializer):
    name = S()
    value = _optional(S)
    previousValue = _optional(S)


class ProvenanceEventSerializer(serializers.Serializer):
    """NiFi's ``ProvenanceEventDTO``; search results carry the summary fields (those up to
    ``componentName``), an event asked for by id every field you may see."""

    id = S(help_text="Cluster-unique: '<node>:<eventId>'.")
    eventId = I()
    eventTime = S(help_text="MM/dd/yyyy HH:mm:ss.SSS UTC")
    eventTimestamp = S(help_text="ISO 8601")
    eventDuration = _optional(I, help_text="Milliseconds.")
    lineageDuration = _optional(I, help_text="Milliseconds since the FlowFile's lineage began.")
    eventType = S()
    flowFileUuid = S()
    fileSize = S()
    fileSizeBytes = I()
    clusterNodeId = S()
    groupId = _optional(S)
    componentId = S()
    componentType = S()
    componentName = S(help_text="The component's id when you may not view the component.")
    sourceSystemFlowFileId = _optional(S)
    alternateIdentifierUri = _optional(S)
    transitUri = _optional(S)
    relationship = _optional(S)
    details = _optional(S)
    parentUuids = serializers.ListField(child=S(), required=False)
    childUuids = serializers.ListField(child=S(), required=False)
    attributes = AttributeSerializer(many=True, required=False, allow_null=True,
                                     help_text="Null without the 'view the data' policy.")
    contentEqual = _optional(B)
    inputContentAvailable = _optional(B)
    inputContentClaimContainer = _optional(S)
    inputContentClaimSection = _optional(S)
    inputContentClaimIdentifier = _optional(S)
    inputContentClaimOffset = _optional(I)
    inputContentClaimFileSize = _optional(S)
    inputContentClaimFileSizeBytes = _optional(I)
    outputContentAvailable = _optional(B)
    outputContentClaimContainer = _optional(S)
    outputContentClaimSection = _optional(S)
    outputContentClaimIdentifier = _optional(S)
    outputContentClaimOffset = _optional(I)
    outputContentClaimFileSize = _optional(S)
    outputContentClaimFileSizeBytes = _optional(I)
    replayAvailable = _optional(B)
    replayExplanation = _optional(S)
    sourceConnectionIdentifier = _optional(S)


class ProvenanceEventEntitySerializer(serializers.Serializer):
    provenanceEvent = ProvenanceEventSerializer()


class SearchableFieldSerializer(serializers.Serializer):
    id = S(help_text="The key of searchTerms.")
    field = S()
    label = S()
    type = S()


class _SearchableFieldsSerializer(serializers.Serializer):
    searchableFields = SearchableFieldSerializer(many=True)


class ProvenanceOptionsEntitySerializer(serializers.Serializer):
    provenanceOptions = _SearchableFieldsSerializer()


class SearchValueOutSerializer(serializers.Serializer):
    value = S()
    inverse = B()


class ProvenanceRequestOutSerializer(serializers.Serializer):
    searchTerms = serializers.DictField(child=SearchValueOutSerializer())
    startDate = _optional(S, help_text="MM/dd/yyyy HH:mm:ss UTC")
    endDate = _optional(S, help_text="MM/dd/yyyy HH:mm:ss UTC")
    minimumFileSize = _optional(S)
    maximumFileSize = _optional(S)
    maxResults = I(required=False)
    clusterNodeId = _optional(S)
    tenant = _optional(S, help_text="The one tenant searched, when the request named one.")
    summarize = _optional(B)
    incrementalResults = _optional(B)


class ProvenanceResultsSerializer(serializers.Serializer):
    provenanceEvents = ProvenanceEventSerializer(many=True, help_text="Newest first across the nodes.")
    total = S(help_text="'1,000+' when more events matched than maxResults.")
    totalCount = I()
    generated = S(help_text="HH:mm:ss UTC")
    oldestEvent = _optional(S, help_text="The oldest event any node still holds (MM/dd/yyyy HH:mm:ss UTC).")
    timeOffset = I()
    errors = serializers.ListField(child=S(), help_text="'<node> -- <why>' for each node missing.")


class ProvenanceSerializer(RequestSerializer):
    """NiFi's ``ProvenanceDTO``."""

    request = ProvenanceRequestOutSerializer()
    results = ProvenanceResultsSerializer()


class ProvenanceEntitySerializer(serializers.Serializer):
    provenance = ProvenanceSerializer()


class LineageNodeSerializer(serializers.Serializer):
    """NiFi's ``ProvenanceNodeDTO``."""

    id = S(help_text="A FlowFile's uuid, or an event's cluster-unique id.")
    type = serializers.ChoiceField(["FLOWFILE", "EVENT"])
    flowFileUuid = S()
    parentUuids = serializers.ListField(child=S())
    childUuids = serializers.ListField(child=S())
    clusterNodeIdentifier = _optional(S)
    eventType = _optional(S, help_text="UNKNOWN for an event you may not view the provenance of.")
    componentType = _optional(S)
    millis = _optional(I)
    timestamp = _optional(S)


class LineageLinkSerializer(serializers.Serializer):
    """NiFi's ``ProvenanceLinkDTO``."""

    sourceId = S()
    targetId = S()
    flowFileUuid = S()
    millis = _optional(I)
    timestamp = _optional(S)


class LineageResultsSerializer(serializers.Serializer):
    nodes = LineageNodeSerializer(many=True)
    links = LineageLinkSerializer(many=True)
    truncated = B(help_text="True when the graph reached FLOWSITE_LINEAGE_MAX_NODES (5,000) nodes and more were "
                            "left out.")
    errors = serializers.ListField(child=S())


class LineageSerializer(RequestSerializer):
    """NiFi's ``LineageDTO``."""

    request = LineageRequestSerializer()
    results = LineageResultsSerializer()


class LineageEntitySerializer(serializers.Serializer):
    lineage = LineageSerializer()


class QueueSizeSerializer(serializers.Serializer):
    objectCount = I()
    byteCount = I()


class FlowFileSummarySerializer(serializers.Serializer):
    """NiFi's ``FlowFileSummaryDTO``."""

    uri = S()
    uuid = S()
    filename = _optional(S)
    mimeType = _optional(S)
    position = _optional(I)
    size = _optional(I)
    queuedDuration = _optional(I)
    lineageDuration = _optional(I)
    penaltyExpiresIn = _optional(I)
    penalized = B()
    clusterNodeId = S()
    clusterNodeAddress = S()


class ListingRequestSerializer(RequestSerializer):
    """NiFi's ``ListingRequestDTO``."""

    lastUpdated = S(help_text="HH:mm:ss UTC")
    maxResults = I()
    sourceRunning = B()
    destinationRunning = B()
    queueSize = QueueSizeSerializer(help_text="Over every node, swapped-out FlowFiles included.")
    swappedCount = I(help_text="FlowFiles swapped out: counted, not listed.")
    flowFileSummaries = FlowFileSummarySerializer(many=True)


class ListingRequestEntitySerializer(serializers.Serializer):
    listingRequest = ListingRequestSerializer()


class DropNodeSerializer(serializers.Serializer):
    clusterNodeId = S()
    originalCount = _optional(I)
    originalSize = _optional(I)
    droppedCount = _optional(I)
    droppedSize = _optional(I)
    currentCount = _optional(I)
    currentSize = _optional(I)


class DropRequestSerializer(RequestSerializer):
    """NiFi's ``DropRequestDTO``, with each node's figures."""

    lastUpdated = S()
    originalCount = _optional(I)
    originalSize = _optional(I)
    original = _optional(S, help_text="'12 / 3.4 KB'")
    droppedCount = _optional(I)
    droppedSize = _optional(I)
    dropped = _optional(S)
    currentCount = _optional(I)
    currentSize = _optional(I)
    current = _optional(S)
    nodeResults = DropNodeSerializer(many=True)


class DropRequestEntitySerializer(serializers.Serializer):
    dropRequest = DropRequestSerializer()


class FlowFileSerializer(FlowFileSummarySerializer):
    """NiFi's ``FlowFileDTO``."""

    attributes = serializers.DictField(child=S(allow_null=True))
    contentClaimContainer = _optional(S)
    contentClaimSection = _optional(S)
    contentClaimIdentifier = _optional(S)
    contentClaimOffset = _optional(I)
    contentClaimFileSize = _optional(S)
    contentClaimFileSizeBytes = _optional(I)
    contentAvailable = B()


class FlowFileEntitySerializer(serializers.Serializer):
    flowFile = FlowFileSerializer()


class ExportSerializer(RequestSerializer):
    """A provenance export."""

    format = serializers.ChoiceField(["CSV", "JSON"])
    maxEvents = I()
    request = ProvenanceRequestOutSerializer()
    eventCount = I(help_text="Events written so far.")
    truncated = B(help_text="True when more events matched than maxEvents.")
    size = _optional(I, help_text="Bytes of the file, once done.")
    contentUri = _optional(S, help_text="Where the file is, once done.")
    errors = serializers.ListField(child=S())


class ExportEntitySerializer(serializers.Serializer):
    provenanceExport = ExportSerializer()
