"""The cluster's REST API (mounted with the rest of /api/v1/)."""
