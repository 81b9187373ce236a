"""``manage.py create_operator USERNAME``: make a user a platform operator (creating the user
if needed), or with ``--revoke`` no longer one."""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from flowsite.tenancy.actions import do_set_platform_operator


class Command(BaseCommand):
    help = ("Give a user the platform-operator permission (tenancy.operate_platform): node actions, every "
            "tenant's figures, tenants' grants and placement. Creates the user when it does not exist.")

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", help="Password of a user created now (default: a random one, printed).")
        parser.add_argument("--revoke", action="store_true", help="Take the permission away instead.")

    @transaction.atomic
    def handle(self, username, password=None, revoke=False, **options):
        users = get_user_model().objects
        user = users.filter(username=username).first()
        if user is None and revoke:
            raise CommandError(f"no user {username!r}")
        if user is None:
            chosen = password or secrets.token_urlsafe(12)
            user = users.create_user(username, password=chosen)
            self.stdout.write(f"user {username} created" + ("" if password else f", password: {chosen}"))
        changed = do_set_platform_operator(user, not revoke)
        state = "no longer a platform operator" if revoke else "a platform operator"
        self.stdout.write(f"{username} is {state}" + ("" if changed else " (unchanged)"))
