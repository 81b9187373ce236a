"""Views of the REST API, one module per kind of resource."""
