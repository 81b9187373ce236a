"""Fixtures of the API tests: a flow with a component of each kind in tenant A."""

from __future__ import annotations

import pytest

from tests.flowsite.api.support import Flow, build_flow


@pytest.fixture
def flow_a(tenant_a) -> Flow:
    """Tenant A's flow (see ``support.Flow``)."""
    return build_flow(tenant_a)
