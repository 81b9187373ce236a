"""Fixtures of the API tests: a flow with a component of each kind in tenant A."""

from __future__ import annotations

import pytest
from _pytest.nodeid import NodeId  # pytest 9's structured node id (see below)
from schemathesis.pytest.plugin import SchemathesisFunction

from tests.flowsite.api.support import Flow, build_flow


def pytest_collection_modifyitems(items) -> None:
    """Give each operation schemathesis generates a node id of its own (``test[GET /path]``).
    Under pytest 9, whose node ids take their brackets from a parametrization, schemathesis'
    items all get the test function's; pytest-xdist, which hands tests to its workers by node
    id, would then run only the first of them."""
    for item in items:
        if isinstance(item, SchemathesisFunction) and item.id.params is None:
            item._id = NodeId(path=item.id.path, names=item.id.names, params=item.operation_label)


@pytest.fixture
def flow_a(tenant_a) -> Flow:
    """Tenant A's flow (see ``support.Flow``)."""
    return build_flow(tenant_a)
