"""Fixtures of the portal tests: Django test clients logged in as members of the tenants."""

from __future__ import annotations

import pytest
from django.test import Client

from flowsite.flows.models import ProcessGroup, Processor


def logged_in(user) -> Client:
    """A browser-like client with ``user``'s session."""
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def portal_a(admin_a) -> Client:
    """The portal as an administrator of tenant A."""
    return logged_in(admin_a)


def add_processor(group: ProcessGroup, type_name: str, name: str, **fields) -> Processor:
    """A processor saved straight into ``group`` (for tests that start from an existing flow)."""
    return Processor.objects.create(parent=group, tenant=group.tenant, type=type_name, name=name, **fields)
