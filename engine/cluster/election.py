"""The flow election (seed 000): nodes offer their flow bundles, the coordinator elects one.

Each node casts a ballot once per election: its bundle goes under its fingerprint into
``election:bundles`` and ``election:ballots`` maps the node to that fingerprint. The election
(``election`` hash: ``started_at``, then ``elected`` and ``ended_at``) ends when the maximum wait
has passed since the first ballot, or as soon as the maximum number of candidates (when one is
set) have voted. The coordinator then counts: the bundle offered by the most nodes wins; an empty
bundle wins only when every bundle is empty; among equals, the smallest fingerprint wins, so the
choice is arbitrary but the same wherever it is made. The winner becomes the cluster's flow.
A ballot carries a MAC under the cluster key (``election:macs``) and its bundle must match its
fingerprint; the coordinator counts no other ballot, so only the cluster's nodes vote.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass

import redis

from engine.cluster.bundle import FlowBundle
from engine.cluster.cluster_flow import publish_flow, read_fingerprint
from engine.cluster.keys import ClusterKeys
from engine.cluster.signing import CommandSigner

__all__ = ["ElectionSettings", "cast_ballot", "count_votes", "run_election"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ElectionSettings:
    """When an election ends: after ``max_wait`` seconds, or once ``max_candidates`` voted."""

    max_wait: float = 300.0
    max_candidates: int | None = None


def count_votes(ballots: dict[str, str], empty: set[str]) -> str | None:
    """The elected fingerprint among ``ballots`` (node → fingerprint); ``empty`` names the
    fingerprints of empty bundles. None when nobody voted."""
    if not ballots:
        return None
    counts = Counter(ballots.values())
    contenders = [fingerprint for fingerprint in counts if fingerprint not in empty] or list(counts)
    return min(contenders, key=lambda fingerprint: (-counts[fingerprint], fingerprint))


def _ballot(keys: ClusterKeys, node_id: str, fingerprint: str) -> dict[str, str]:
    return {"cluster": keys.cluster, "node": node_id, "fingerprint": fingerprint}


def cast_ballot(client: redis.Redis, keys: ClusterKeys, node_id: str, bundle: FlowBundle,
                signer: CommandSigner) -> None:
    """Offer this node's bundle in the running (or starting) election, signed with ``signer``."""
    fingerprint = bundle.fingerprint
    pipe = client.pipeline()
    pipe.hsetnx(keys.bundles, fingerprint, bundle.encode())
    pipe.hset(keys.ballots, node_id, fingerprint)
    pipe.hset(keys.ballot_macs, node_id, signer.mac("ballot", _ballot(keys, node_id, fingerprint)))
    pipe.hsetnx(keys.election, "started_at", repr(time.time()))
    pipe.execute()


def _signed_ballots(client: redis.Redis, keys: ClusterKeys, signer: CommandSigner) -> dict[str, str]:
    """node → fingerprint of every ballot whose MAC verifies (the others are logged and left out)."""
    macs = {node.decode(): mac.decode() for node, mac in client.hgetall(keys.ballot_macs).items()}
    ballots = {}
    for node, fingerprint in ((n.decode(), f.decode()) for n, f in client.hgetall(keys.ballots).items()):
        if signer.valid("ballot", _ballot(keys, node, fingerprint), macs.get(node)):
            ballots[node] = fingerprint
        else:
            log.warning("flow election: the ballot of %r is not signed with the cluster key: not counted", node)
    return ballots


def run_election(client: redis.Redis, keys: ClusterKeys, settings: ElectionSettings, now: float | None = None, *,
                 signer: CommandSigner) -> str | None:
    """The coordinator's turn: end the election if its time has come and publish the winner
    (counting only ballots signed with ``signer``'s key, and publishing it signed).

    Returns the fingerprint of the cluster's flow (existing or just elected), or None while the
    vote goes on.
    """
    existing = read_fingerprint(client, keys)
    if existing is not None:
        return existing
    started = client.hget(keys.election, "started_at")
    if started is None:
        return None
    now = time.time() if now is None else now
    ballots = _signed_ballots(client, keys, signer)
    enough = settings.max_candidates is not None and len(ballots) >= settings.max_candidates
    if not enough and now - float(started) < settings.max_wait:
        return None
    bundles = {fingerprint.decode(): FlowBundle.decode(raw) for fingerprint, raw in client.hgetall(keys.bundles).items()}
    bundles = {fingerprint: bundle for fingerprint, bundle in bundles.items() if bundle.fingerprint == fingerprint}
    ballots = {node: fingerprint for node, fingerprint in ballots.items() if fingerprint in bundles}
    elected = count_votes(ballots, {fingerprint for fingerprint, bundle in bundles.items() if bundle.is_empty})
    if elected is None:
        return None
    publish_flow(client, keys, bundles[elected], version="elected", signer=signer)
    pipe = client.pipeline()
    pipe.hset(keys.election, mapping={"elected": elected, "ended_at": repr(now), "voters": len(ballots)})
    pipe.delete(keys.bundles)
    pipe.execute()
    return elected
