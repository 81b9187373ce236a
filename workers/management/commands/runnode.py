"""``manage.py runnode``: run one node of the dataflow engine until SIGTERM or SIGINT."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from engine.run import RunError, add_run_arguments
from workers.node import node_id, run


class Command(BaseCommand):
    help = ("Run one engine node over its data directory until SIGTERM or SIGINT (standalone, as the primary "
            "node). Without --flow the node resumes the flow saved in the data directory, or starts empty.")

    def add_arguments(self, parser):
        parser.add_argument("--node-id", required=True, type=node_id, help="This node's id, e.g. node-1.")
        add_run_arguments(parser)

    def handle(self, *args, node_id, data_dir, flow, config, parameter, status_interval, **options):
        try:
            run(node_id, data_dir, flow, config=config, parameter=parameter, status_interval=status_interval)
        except RunError as error:
            raise CommandError(str(error), returncode=2) from None
