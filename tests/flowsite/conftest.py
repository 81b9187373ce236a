"""Fixtures of the control-plane tests: tenants with their users, and API clients that
authenticate with real API tokens. The database is the PostgreSQL server named by
DATABASE_URL (scripts/test starts a project-local one)."""

from __future__ import annotations

import itertools
import uuid

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from flowsite.api.models import ApiToken
from flowsite.cluster.status import forget_answers
from flowsite.flows import access
from flowsite.flows.tenants import create_tenant, root_group
from flowsite.tenancy.models import Membership
from tests.servers import free_port

_numbers = itertools.count(1)


#: What the fixture tenants A and B are granted, as an operator would: the file capabilities, so
#: tests of other matters may use GetFile, FetchFile and PutFile (a new tenant has none).
FILE_CAPABILITIES = ("read-filesystem", "write-filesystem")


class TenantWorld:
    """A tenant (granted ``capabilities``) and helpers to add members with chosen policies."""

    def __init__(self, name: str, capabilities=()) -> None:
        self.tenant = create_tenant(name, f"{name.lower()}-{next(_numbers)}")
        if capabilities:
            self.tenant.capabilities = list(capabilities)
            self.tenant.save(update_fields=["capabilities"])
        self.root = root_group(self.tenant)

    def member(self, username: str | None = None, *, global_policies=(), root_policies=()):
        """A new user of this tenant holding the given global and root-group policies."""
        username = username or f"user{next(_numbers)}"
        user = get_user_model().objects.create_user(username, password="correct horse battery staple")
        Membership.objects.create(tenant=self.tenant, user=user)
        access.grant_global(self.tenant, *global_policies, user=user)
        access.grant(self.root, *root_policies, user=user)
        return user

    def admin(self, username: str | None = None):
        """A member holding every global policy and every policy on the root group."""
        return self.member(username, global_policies=access.GLOBAL_ACTIONS, root_policies=access.COMPONENT_ACTIONS)


def token_client(user) -> APIClient:
    """An API client that sends a fresh API token of ``user``."""
    _, secret = ApiToken.issue(user, "tests")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    return client


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Passwords hashed cheaply: the tests create many users and check no password strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def own_cache(settings):
    """Django's cache (throttle counts) in the real Redis under a key prefix of this test's own,
    so no count carries over from another test or an earlier run."""
    settings.CACHES = {"default": {**settings.CACHES["default"], "KEY_PREFIX": f"flowsite:test:{uuid.uuid4().hex}"}}


@pytest.fixture(autouse=True)
def no_cluster(settings):
    """The cluster's Redis is a port nothing listens on, unless a test gives one of its own
    (``tests/flowsite/cluster``): no test reaches a shared Redis, and endpoints that carry
    commands to the nodes find the cluster away. Status answers cached by an earlier test are
    forgotten."""
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    forget_answers()
    yield
    forget_answers()


@pytest.fixture
def tenant_a(db) -> TenantWorld:
    return TenantWorld("Acme", FILE_CAPABILITIES)


@pytest.fixture
def tenant_b(db) -> TenantWorld:
    return TenantWorld("Globex", FILE_CAPABILITIES)


@pytest.fixture
def admin_a(tenant_a):
    return tenant_a.admin("alice")


@pytest.fixture
def api_a(admin_a) -> APIClient:
    """An API client of an administrator of tenant A."""
    return token_client(admin_a)
