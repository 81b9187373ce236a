"""``manage.py runnode``: run one node of the dataflow engine until SIGTERM or SIGINT."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

import argparse

from engine.cluster.agent import ClusterOptions
from engine.cluster.placement import parse_labels
from engine.flow.sealed import open_flow
from engine.run import RunError, add_run_arguments
from flowsite.flows.secrets import current_key
from workers.commands import NodeCommands
from workers.node import node_id, run


class Command(BaseCommand):
    help = ("Run one engine node over its data directory until SIGTERM or SIGINT, in the cluster named by "
            "FLOWSITE_CLUSTER through the Redis at REDIS_URL (standalone, as the primary node, while Redis does "
            "not answer). Without --flow the node resumes the flow saved in the data directory, or starts empty.")

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
               status_interval, accept_damage, **options):
        if election_max_candidates is not None and election_max_candidates < 1:
            raise CommandError("--election-max-candidates must be at least 1")
        if standalone and labels:
            raise CommandError("--labels places a node in the cluster's pools; a --standalone node runs its whole flow")
        key = current_key()
        cluster = None if standalone else ClusterOptions(
            node_id, settings.REDIS_URL, settings.FLOWSITE_CLUSTER, election_max_candidates,
            unseal=lambda document: open_flow(document, key),
            register_commands=lambda listener, node: NodeCommands(lambda: node.controller, node_id,
                                                                  node=node).register(listener),
            labels=labels)
        try:
            run(node_id, data_dir, flow, cluster=cluster, config=config, parameter=parameter,
                status_interval=status_interval, accept_damage=accept_damage)
        except RunError as error:
            raise CommandError(str(error), returncode=error.exit_status) from None


def _labels(text: str) -> tuple[str, ...]:
    try:
        return parse_labels(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
