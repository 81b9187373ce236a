"""How a node signs and checks the batches of load-balanced connections, from the settings.

With ``FLOWSITE_NODE_CERT_FILE`` and ``FLOWSITE_NODE_KEY_FILE`` the node signs with its own
certificate's key (``manage.py cluster_pki issue``) and checks its peers against the cluster CA
(``FLOWSITE_CLUSTER_CA_FILE``) and its revocation list (``FLOWSITE_CLUSTER_CRL_FILE``): a batch from
an unknown, revoked or forged identity is refused. Without them, batches carry a MAC under the
cluster key (``FLOWSITE_CLUSTER_KEY``), which refuses anyone who lacks the key but cannot tell the
nodes that hold it apart.
"""

from __future__ import annotations

from django.conf import settings

from engine.balance.trust import ClusterKeyTrust, Signer, Verifier
from engine.cluster.identity import IdentityError, NodeIdentity, TrustStore
from engine.cluster.signing import DEVELOPMENT_CLUSTER_KEY

__all__ = ["TransferTrustError", "transfer_trust"]


class TransferTrustError(ValueError):
    """The node's identity settings cannot be used (the message says which and what to do)."""


def transfer_trust(node_id: str) -> tuple[Signer, Verifier]:
    """The signer and the verifier of node ``node_id``'s load-balanced transfers."""
    if not settings.FLOWSITE_NODE_CERT_FILE:
        trust = ClusterKeyTrust(settings.FLOWSITE_CLUSTER_KEY or DEVELOPMENT_CLUSTER_KEY, node_id)
        return trust, trust
    if not settings.FLOWSITE_CLUSTER_CA_FILE:
        raise TransferTrustError("FLOWSITE_NODE_CERT_FILE is set but FLOWSITE_CLUSTER_CA_FILE is not: a node with an "
                                 "identity checks its peers against the cluster CA; copy ca.pem to the node and set it")
    try:
        identity = NodeIdentity.load(settings.FLOWSITE_NODE_CERT_FILE, settings.FLOWSITE_NODE_KEY_FILE)
        store = TrustStore(settings.FLOWSITE_CLUSTER_CA_FILE, settings.FLOWSITE_CLUSTER_CRL_FILE or None)
    except IdentityError as error:
        raise TransferTrustError(str(error)) from None
    if identity.node_id != node_id:
        raise TransferTrustError(
            f"{settings.FLOWSITE_NODE_CERT_FILE} is node {identity.node_id}'s certificate, and this node is {node_id}: "
            f"issue one for it (manage.py cluster_pki issue {node_id}) or start it as {identity.node_id}")
    return identity, store
