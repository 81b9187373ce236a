"""The control plane's connection to the cluster's Redis, and what a request answers when Redis is away.

One client per process, from ``REDIS_URL``, with short connect and read timeouts so that a Redis
that does not answer makes a request fail within about a second instead of hanging; the command
bus has a client of its own whose reads may block as long as a request waits for the nodes. Every
``redis.RedisError`` met while talking to the cluster becomes ``ClusterUnreachable``: a 503 in the
API's error shape saying which Redis does not answer. Flow definitions live in PostgreSQL and never
come here.
"""

from __future__ import annotations

import functools
import logging

import redis
from django.conf import settings
from rest_framework import exceptions, status

from engine.cluster.bus import CommandBus
from engine.cluster.keys import ClusterKeys
from engine.cluster.signing import DEVELOPMENT_CLUSTER_KEY, CommandSigner

__all__ = ["ClusterUnreachable", "bus", "client", "command_signer", "keys", "redis_address", "unreachable",
           "unreachable_message"]

log = logging.getLogger(__name__)

#: Seconds to connect to Redis, and to wait for a reply that is not a blocking read.
SOCKET_TIMEOUT = 1.0
#: The longest a request to the nodes may wait for their replies, in seconds.
LONGEST_REQUEST = 30.0


class ClusterUnreachable(exceptions.APIException):
    """503: the cluster's Redis does not answer."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "cluster_unreachable"


@functools.cache
def _client(url: str, read_timeout: float) -> redis.Redis:
    return redis.Redis.from_url(url, socket_connect_timeout=SOCKET_TIMEOUT, socket_timeout=read_timeout,
                                health_check_interval=10)


def client() -> redis.Redis:
    """The Redis client of the cluster named by the settings."""
    return _client(settings.REDIS_URL, SOCKET_TIMEOUT)


def bus() -> CommandBus:
    """The command bus to the cluster's nodes (blocking reads of up to ``LONGEST_REQUEST`` s)."""
    return CommandBus(_client(settings.REDIS_URL, LONGEST_REQUEST + SOCKET_TIMEOUT), keys(), command_signer())


@functools.cache
def _signer(secret: str) -> CommandSigner:
    if not secret:
        log.warning("FLOWSITE_CLUSTER_KEY is not set: commands to nodes are authenticated with the DEVELOPMENT "
                    "cluster key, which anyone can know; set FLOWSITE_CLUSTER_KEY (production refuses to start "
                    "without it)")
    return CommandSigner(secret or DEVELOPMENT_CLUSTER_KEY)


def command_signer() -> CommandSigner:
    """What signs commands to the nodes and verifies them there: ``FLOWSITE_CLUSTER_KEY`` (in
    development, a fixed development key when it is not set, with a warning)."""
    return _signer(settings.FLOWSITE_CLUSTER_KEY)


def keys() -> ClusterKeys:
    """The key names of the cluster ``FLOWSITE_CLUSTER``."""
    return ClusterKeys(settings.FLOWSITE_CLUSTER)


def redis_address() -> str:
    """``host:port`` of the cluster's Redis, for messages."""
    options = client().connection_pool.connection_kwargs
    if "path" in options:
        return options["path"]
    return f"{options.get('host', '127.0.0.1')}:{options.get('port', 6379)}"


def unreachable_message() -> str:
    """What a request answers when the cluster's Redis does not answer."""
    return f"the cluster cannot be reached: Redis at {redis_address()} does not answer"


def unreachable(error: redis.RedisError) -> ClusterUnreachable:
    """The 503 that answers ``error`` met while talking to the cluster."""
    return ClusterUnreachable(f"{unreachable_message()} ({error})")
