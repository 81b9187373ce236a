"""Paging of list answers: ``?limit=`` (default 100, at most 1,000) and ``?offset=``; answers
carry ``count``, ``next``, ``previous`` and ``results``."""

from rest_framework.pagination import LimitOffsetPagination


class Pagination(LimitOffsetPagination):
    """Limit/offset paging with a bounded page size."""

    default_limit = 100
    max_limit = 1000
