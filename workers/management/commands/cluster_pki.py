"""``manage.py cluster_pki``: the cluster's certificate authority, on the operator's machine.

``init`` creates the CA, ``issue NODE`` a node's certificate and key, ``revoke NODE`` puts a
node's certificate on the revocation list, ``list`` shows the node certificates. The directory is
``--dir`` or ``FLOWSITE_CLUSTER_PKI_DIR`` (``engine.cluster.authority`` describes its files); each
command says what to copy to which node.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from engine.cluster.authority import NODE_DAYS, ClusterAuthority
from engine.cluster.identity import IdentityError
from workers.node import node_id


class Command(BaseCommand):
    help = ("The cluster's certificate authority: init, issue NODE, revoke NODE, list. Nodes sign the data they "
            "send each other with their certificate and refuse data of a revoked or unknown node "
            "(docs/security.md, 'Node identity').")

    def add_arguments(self, parser):
        parser.add_argument("--dir", dest="directory", type=Path, default=None,
                            help="The CA's directory (default: FLOWSITE_CLUSTER_PKI_DIR, .local/pki of the project).")
        actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
        actions.add_parser("init", help="Create the cluster's CA and an empty revocation list.")
        issue = actions.add_parser("issue", help="Issue a certificate and key for a node.")
        issue.add_argument("node", type=node_id, help="The node's id (as runnode --node-id).")
        issue.add_argument("--force", action="store_true",
                           help="Replace a node's valid certificate; the old one is revoked.")
        issue.add_argument("--days", type=int, default=NODE_DAYS, help=f"Validity in days (default {NODE_DAYS}).")
        revoke = actions.add_parser("revoke", help="Revoke a node's certificate (rewrites the revocation list).")
        revoke.add_argument("node", type=node_id)
        actions.add_parser("list", help="Show every node certificate and whether it is revoked.")

    def handle(self, *args, action, directory, **options):
        directory = Path(directory or settings.FLOWSITE_CLUSTER_PKI_DIR)
        try:
            getattr(self, f"_{action}")(directory, **{k: options[k] for k in ("node", "force", "days") if k in options})
        except IdentityError as error:
            raise CommandError(str(error)) from None
        except OSError as error:
            raise CommandError(f"{error.filename or directory}: {error.strerror}; nothing half-written was left, "
                               "run the command again once this is fixed") from None

    def _init(self, directory: Path) -> None:
        authority = ClusterAuthority.create(directory)
        self.stdout.write(f"created the cluster CA in {directory}:\n"
                          f"  {authority.certificate_file}  the CA certificate: copy it to every node "
                          "(FLOWSITE_CLUSTER_CA_FILE)\n"
                          f"  {authority.crl_file}  the revocation list: copy it to every node "
                          "(FLOWSITE_CLUSTER_CRL_FILE), again after each revoke\n"
                          f"  {directory / 'ca.key'}  the CA key (mode 0600): keep it here and back it up; "
                          "never copy it to a node\n"
                          "next: python manage.py cluster_pki issue NODE, for each node")

    def _issue(self, directory: Path, node: str, force: bool, days: int) -> None:
        if days < 1:
            raise CommandError("--days must be at least 1")
        issued = ClusterAuthority.open(directory).issue(node, days=days, force=force)
        if issued.replaced_serial is not None:
            self.stdout.write(f"revoked the previous certificate of {node} (serial {issued.replaced_serial:x}): "
                              f"copy {directory / 'crl.pem'} to every node")
        self.stdout.write(f"issued a certificate for node {node} (serial {issued.serial:x}, valid until "
                          f"{issued.not_after:%Y-%m-%d}):\n"
                          f"  {issued.certificate_file}  copy to node {node} (FLOWSITE_NODE_CERT_FILE)\n"
                          f"  {issued.key_file}  copy to node {node} only, keeping mode 0600 "
                          "(FLOWSITE_NODE_KEY_FILE); delete it here once copied if you keep no backups")

    def _revoke(self, directory: Path, node: str) -> None:
        authority = ClusterAuthority.open(directory)
        serial = authority.revoke(node)
        self.stdout.write(f"revoked the certificate of node {node} (serial {serial:x}); copy {authority.crl_file} "
                          "to every node (FLOWSITE_CLUSTER_CRL_FILE): each refuses the node's data as soon as the "
                          "new list is there, without a restart")

    def _list(self, directory: Path) -> None:
        authority = ClusterAuthority.open(directory)
        entries = authority.nodes()
        now = datetime.datetime.now(datetime.UTC)
        if not entries:
            self.stdout.write(f"no node certificates in {directory}")
        for entry in entries:
            state = ("revoked" if entry.revoked else f"expired {entry.not_after:%Y-%m-%d}" if entry.not_after < now
                     else f"valid until {entry.not_after:%Y-%m-%d}")
            self.stdout.write(f"{entry.node_id}  serial {entry.serial:x}  {state}")
