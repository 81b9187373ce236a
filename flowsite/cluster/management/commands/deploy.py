"""``manage.py deploy --tenant SLUG``: deploy a tenant's flow to the cluster, as the portal's and
the API's Deploy do (``flowsite.cluster.actions.do_deploy``)."""

from __future__ import annotations

import redis
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rest_framework import exceptions

from flowsite.cluster import redis as cluster_redis
from flowsite.cluster.actions import do_deploy
from flowsite.cluster.deploy import InvalidDesign
from flowsite.flows.actions import RunningProcessors
from flowsite.tenancy.models import Tenant


class Command(BaseCommand):
    help = ("Deploy a tenant's flow (its design, or --flow-version N of its root group) to the cluster: every node "
            "connected now is told, the others take it when they connect.")

    def add_arguments(self, parser):
        parser.add_argument("--tenant", required=True, help="The tenant's slug.")
        parser.add_argument("--flow-version", type=int, metavar="N",
                            help="Deploy version N of the root group (default: the design as it is).")
        parser.add_argument("--user", help="The user recorded as having deployed (default: none).")

    def handle(self, tenant, flow_version=None, user=None, **options):
        owner = Tenant.objects.filter(slug=tenant).first()
        if owner is None:
            raise CommandError(f"no tenant with slug {tenant!r}")
        deployer = None
        if user:
            deployer = get_user_model().objects.filter(username=user).first()
            if deployer is None:
                raise CommandError(f"no user {user!r}")
        try:
            deployment, nodes = do_deploy(owner, deployer, flow_version)
        except InvalidDesign as error:
            problems = "\n".join(f"  {problem['message']}" for problem in error.problems)
            raise CommandError(f"{error.detail}:\n{problems}") from None
        except exceptions.APIException as error:
            raise CommandError(str(error.detail)) from None
        except RunningProcessors as error:
            raise CommandError(str(error)) from None
        except redis.RedisError as error:
            raise CommandError(f"{cluster_redis.unreachable_message()} ({error}); nothing was deployed") from None
        told = ", ".join(nodes) if nodes else "none connected yet (nodes take the flow when they connect)"
        self.stdout.write(f"deployed {owner.slug} ({deployment.label}): deploy id {deployment.deploy_id}; "
                          f"nodes told: {told}")
