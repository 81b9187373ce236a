"""``manage.py runnode``: run one node of the dataflow engine until SIGTERM or SIGINT.

A node holds only the secrets it needs: ``FLOWSITE_SENSITIVE_KEY`` (to derive each tenant's key
and open its sealed values), ``FLOWSITE_CLUSTER_KEY`` (to verify commands), ``REDIS_URL`` and, where
the cluster has its own CA, its certificate and key (``workers.transfer_trust``). The
settings give it no database and no ``SECRET_KEY`` (``FLOWSITE_ROLE=node``); if the environment
holds them anyway, the node warns and removes them from its environment before any flow runs.
"""

from __future__ import annotations

import argparse
import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from engine.cluster.agent import ClusterOptions
from engine.cluster.placement import parse_labels
from engine.flow.sealed import open_flow
from engine.run import RunError, add_run_arguments
from flowsite.cluster.redis import command_signer
from flowsite.flows.secrets import master_key
from workers.commands import NodeCommands
from workers.confinement import platform_addresses, protected_paths
from workers.node import node_id, run
from workers.transfer_trust import TransferTrustError, transfer_trust


class Command(BaseCommand):
    help = ("Run one engine node over its data directory until SIGTERM or SIGINT, in the cluster named by "
            "FLOWSITE_CLUSTER through the Redis at REDIS_URL (standalone, as the primary node, while Redis does "
            "not answer). Without --flow the node resumes the flow saved in the data directory, or starts empty. "
            "Components may not reach the platform's Redis, the addresses of FLOWSITE_PLATFORM_ADDRESSES "
            "(host:port,...) or the project's .local directory (see workers.confinement). Spark-backed processors "
            "run on SPARK_MASTER (default local[*]) and stage large batches under FLOWSITE_SPARK_STAGING_DIR "
            "(default DATA_DIR/spark-staging).")

    def add_arguments(self, parser):
        parser.add_argument("--node-id", required=True, type=node_id, help="This node's id, e.g. node-1.")
        parser.add_argument("--standalone", action="store_true", help="Stay out of any cluster.")
        parser.add_argument("--election-max-candidates", type=int, metavar="N",
                            help="End the flow election as soon as N nodes have voted (default: wait the maximum "
                                 "wait, 5 minutes, as the node settings say).")
        parser.add_argument("--labels", type=_labels, default=(), metavar="A,B",
                            help="This node's labels: it runs the tenants whose pool is one of them, and the "
                                 "shared pool's tenants only when it has no label or the label 'shared' "
                                 "(docs/cluster.md).")
        add_run_arguments(parser)

    def handle(self, *args, node_id, standalone, election_max_candidates, labels, data_dir, flow, config, parameter,
               status_interval, accept_damage, files_root, start, **options):
        if election_max_candidates is not None and election_max_candidates < 1:
            raise CommandError("--election-max-candidates must be at least 1")
        if standalone and labels:
            raise CommandError("--labels places a node in the cluster's pools; a --standalone node runs its whole flow")
        if settings.NODE:
            self._drop_control_plane_secrets()
        else:
            self.stderr.write("warning: runnode with FLOWSITE_ROLE=web holds the control plane's settings (its "
                              "database and SECRET_KEY); nodes run with FLOWSITE_ROLE=node, the default of runnode")
        key = master_key()
        try:
            trust = None if standalone else transfer_trust(node_id)
        except TransferTrustError as error:
            raise CommandError(str(error)) from None
        cluster = None if standalone else ClusterOptions(
            node_id, settings.REDIS_URL, settings.FLOWSITE_CLUSTER, election_max_candidates,
            unseal=lambda document: open_flow(document, key),
            register_commands=lambda listener, node: NodeCommands(
                lambda: node.controller, node_id, node=node,
                analytics_dir=settings.FLOWSITE_ANALYTICS_DIR).register(listener),
            signer=command_signer(), labels=labels, transfer_trust=trust)
        try:
            run(node_id, data_dir, flow, cluster=cluster, config=config, parameter=parameter,
                status_interval=status_interval, accept_damage=accept_damage, files_root=files_root,
                protected_paths=protected_paths(settings.BASE_DIR, data_dir, files_root,
                                                settings.FLOWSITE_ANALYTICS_DIR),
                platform_addresses=platform_addresses(settings.REDIS_URL),
                spark_master=settings.SPARK_MASTER, spark_staging_dir=settings.SPARK_STAGING_DIR or None,
                start=start)
        except RunError as error:
            raise CommandError(str(error), returncode=error.exit_status) from None

    def _drop_control_plane_secrets(self) -> None:
        """Warn of, and remove from the environment, the control plane's secrets a node must not hold."""
        for name in CONTROL_PLANE_SECRETS:
            if os.environ.pop(name, None) is not None:
                self.stderr.write(f"warning: {name} is set in the node's environment; nodes do not use it and "
                                  "must not hold it: remove it from the node's configuration")


#: What only the web tier and the jobs need; a node's flow must never be able to read them.
CONTROL_PLANE_SECRETS = ("SECRET_KEY", "SECRET_KEY_FILE", "DATABASE_URL", "DATABASE_URL_FILE", "FLOWSITE_DEMO_PASSWORD")


def _labels(text: str) -> tuple[str, ...]:
    try:
        return parse_labels(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
