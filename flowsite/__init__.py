"""Flowsite's control plane: a Django project holding tenants, flows, policies and API tokens."""

from flowsite.celery import app as celery_app

__all__ = ["celery_app"]
