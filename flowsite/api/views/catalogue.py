"""The catalogue of processor and controller-service types the engine provides."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from flowsite.api.serializers.catalogue import ProcessorTypeSerializer, ServiceTypeSerializer
from flowsite.flows.catalogue import find_type, processor_types, service_types

_SEARCH = OpenApiParameter("q", str, required=False, description="Part of the name, description or a tag.")


class _TypeList(GenericAPIView):

    filter_backends = ()
    kind: str

    def get(self, request):
        listing = processor_types() if self.kind == "processor" else service_types()
        query = (request.query_params.get("q") or "").lower()
        if query:
            listing = [t for t in listing if query in t["type"].lower() or query in t["description"].lower()
                       or any(query in tag.lower() for tag in t["tags"])]
        page = self.paginate_queryset(listing)
        return self.get_paginated_response(page)


class _TypeDetail(GenericAPIView):
    kind: str

    def get(self, request, name):
        described = find_type(name, self.kind)
        if described is None:
            raise exceptions.NotFound(f"no {self.kind.replace('service', 'controller service')} type {name!r}")
        return Response(described)


@extend_schema(responses=ProcessorTypeSerializer(many=True), parameters=[_SEARCH])
class ProcessorTypeList(_TypeList):
    """Processor types: descriptors, relationships and documentation (``?q=`` searches)."""

    kind = "processor"


@extend_schema(responses=ProcessorTypeSerializer)
class ProcessorTypeDetail(_TypeDetail):
    """One processor type, by short or full name."""

    kind = "processor"


@extend_schema(responses=ServiceTypeSerializer(many=True), parameters=[_SEARCH])
class ServiceTypeList(_TypeList):
    """Controller-service types (``?q=`` searches)."""

    kind = "service"


@extend_schema(responses=ServiceTypeSerializer)
class ServiceTypeDetail(_TypeDetail):
    """One controller-service type, by short or full name."""

    kind = "service"
