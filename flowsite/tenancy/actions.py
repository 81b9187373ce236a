"""Operators' writes on tenants and users: what a tenant is granted on the shared nodes, and who
operates the platform. Each action checks its input, runs in one transaction, and leaves an
audit record (an admin-site log entry by the acting user, and a line on the ``flowsite.audit``
logger) naming what changed from what to what."""

from __future__ import annotations

import json
import logging

import redis

from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction

from flowsite.tenancy.grants import Grants
from flowsite.tenancy.models import OPERATE_PLATFORM, Tenant

logger = logging.getLogger("flowsite.audit")

GRANT_FIELDS = ("capabilities", "file_roots", "network_allow", "listen_port_low", "listen_port_high", "pool")


def _audit(acting_user, obj, message: str, details: dict) -> None:
    logger.info("%s by %s: %s %s", message, acting_user.get_username() if acting_user else "the command line",
                obj, json.dumps(details, sort_keys=True))
    if acting_user is not None:
        LogEntry.objects.log_actions(acting_user.pk, [obj], CHANGE,
                                     change_message=json.dumps([{"changed": {"fields": sorted(details)}},
                                                                {"flowsite": {"message": message,
                                                                              "details": details}}]),
                                     single_object=True)


@transaction.atomic
def do_change_tenant_grants(tenant: Tenant, grants: Grants, *, acting_user=None) -> dict[str, list]:
    """Give ``tenant`` exactly ``grants`` (checked and normalised first; raises GrantError) and
    return what changed as {field: [before, after]}. Once committed, the cluster's flow is
    published again with the new grants (``republish_grants``), so a revocation reaches the nodes
    at once."""
    new = grants.checked()
    locked = Tenant.objects.select_for_update().get(pk=tenant.pk)
    old = Grants.of(locked)
    changed = {name: [getattr(old, name), getattr(new, name)] for name in GRANT_FIELDS
               if getattr(old, name) != getattr(new, name)}
    if not changed:
        return {}
    for name, (_, value) in changed.items():
        setattr(locked, name, value)
        setattr(tenant, name, value)
    locked.save(update_fields=list(changed))
    _audit(acting_user, locked, "tenant grants changed", changed)
    transaction.on_commit(lambda: republish_grants(locked))
    return changed


def republish_grants(tenant: Tenant) -> None:
    """Have the nodes confine ``tenant`` by its grants as they are now. When the cluster cannot be
    reached the grants stay saved, and the nodes take them with the next deployment (logged)."""
    from flowsite.cluster.actions import do_republish  # the cluster app builds on tenancy, not the reverse

    try:
        deployment, nodes = do_republish(tenant)
    except redis.RedisError as error:
        logger.warning("tenant grants of %s saved, but the cluster could not be told (%s): the nodes apply them "
                       "with the next deployment", tenant.slug, error)
        return
    if deployment is not None:
        logger.info("tenant grants of %s published to the cluster (deployment %s, %d node(s) told)", tenant.slug,
                    deployment.deploy_id, len(nodes))


@transaction.atomic
def do_set_platform_operator(user, operator: bool, *, acting_user=None) -> bool:
    """Make ``user`` a platform operator (or no longer one); False when nothing changed."""
    permission = Permission.objects.get(content_type=ContentType.objects.get_for_model(Tenant),
                                        codename=OPERATE_PLATFORM)
    held = user.user_permissions.filter(pk=permission.pk).exists()
    if held == operator:
        return False
    if operator:
        user.user_permissions.add(permission)
    else:
        user.user_permissions.remove(permission)
    for cache in ("_perm_cache", "_user_perm_cache"):
        user.__dict__.pop(cache, None)
    _audit(acting_user, user, "platform operator granted" if operator else "platform operator revoked",
           {"operate_platform": [held, operator]})
    return True
