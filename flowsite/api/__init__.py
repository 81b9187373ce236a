"""The REST API under /api/v1/: resources, serializers, token authentication, errors."""
