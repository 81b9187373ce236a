"""``manage.py grant_tenant SLUG``: change what a tenant is granted on the shared nodes, for
operators' scripts and tests. Without options it shows the tenant's grants."""

from __future__ import annotations

from dataclasses import replace

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from flowsite.tenancy.actions import do_change_tenant_grants
from flowsite.tenancy.grants import GrantError, Grants, parse_port_range
from engine.flow.loader import CAPABILITIES
from flowsite.tenancy.models import Tenant


def _added_removed(values: list[str], added: list[str], removed: list[str]) -> list[str]:
    kept = [value for value in values if value not in removed]
    return kept + [value for value in added if value not in kept]


class Command(BaseCommand):
    help = ("Grant a tenant restricted capabilities, file roots, outbound destinations, a listen-port range and a "
            "node pool, or revoke them. The change is published to the nodes at once.")

    def add_arguments(self, parser):
        parser.add_argument("slug", help="The tenant's slug.")
        parser.add_argument("--capability", action="append", default=[], choices=CAPABILITIES,
                            help="Grant a restricted capability (repeatable).")
        parser.add_argument("--revoke-capability", action="append", default=[], choices=CAPABILITIES,
                            metavar="CAPABILITY", help="Revoke a capability (repeatable).")
        parser.add_argument("--file-root", action="append", default=[], metavar="DIR",
                            help="Add an absolute directory the tenant's flow may use (repeatable).")
        parser.add_argument("--remove-file-root", action="append", default=[], metavar="DIR")
        parser.add_argument("--allow", action="append", default=[], metavar="DESTINATION",
                            help="Open an outbound destination: CIDR, host or host:port (repeatable).")
        parser.add_argument("--disallow", action="append", default=[], metavar="DESTINATION")
        parser.add_argument("--listen-ports", metavar="LOW-HIGH", help="The ports its listeners may bind.")
        parser.add_argument("--no-listen", action="store_true", help="The tenant may not listen on any port.")
        parser.add_argument("--pool", help="The node pool it runs on (\"\" for the shared pool).")
        parser.add_argument("--revoke-all", action="store_true",
                            help="Take every grant away first (the shared pool, no capability, no listening).")
        parser.add_argument("--by", metavar="USERNAME", help="The operator to record as having made the change.")

    def handle(self, slug, **options):
        tenant = Tenant.objects.filter(slug=slug).first()
        if tenant is None:
            raise CommandError(f"no tenant {slug!r}")
        acting_user = None
        if options["by"]:
            acting_user = get_user_model().objects.filter(username=options["by"]).first()
            if acting_user is None:
                raise CommandError(f"no user {options['by']!r}")
        current = Grants() if options["revoke_all"] else Grants.of(tenant)
        grants = replace(
            current,
            capabilities=_added_removed(current.capabilities, options["capability"], options["revoke_capability"]),
            file_roots=_added_removed(current.file_roots, options["file_root"], options["remove_file_root"]),
            network_allow=_added_removed(current.network_allow, options["allow"], options["disallow"]))
        try:
            if options["listen_ports"] and options["no_listen"]:
                raise CommandError("give --listen-ports or --no-listen, not both")
            if options["listen_ports"]:
                grants.listen_port_low, grants.listen_port_high = parse_port_range(options["listen_ports"])
            if options["no_listen"]:
                grants.listen_port_low = grants.listen_port_high = None
            if options["pool"] is not None:
                grants.pool = options["pool"]
            changed = do_change_tenant_grants(tenant, grants, acting_user=acting_user)
        except GrantError as error:
            raise CommandError(f"{error.field}: {error.message}") from None
        for name, (before, after) in changed.items():
            self.stdout.write(f"{name}: {before!r} -> {after!r}")
        self.stdout.write(self._summary(tenant) if changed else f"{self._summary(tenant)} (unchanged)")

    @staticmethod
    def _summary(tenant: Tenant) -> str:
        ports = (f"{tenant.listen_port_low}-{tenant.listen_port_high}" if tenant.listen_port_low is not None
                 else "none")
        return (f"tenant {tenant.slug}: capabilities {', '.join(tenant.capabilities) or 'none'}; "
                f"file roots {', '.join(tenant.file_roots) or '<files root>/' + tenant.slug}; "
                f"allowed {', '.join(tenant.network_allow) or 'nothing'}; listen ports {ports}; "
                f"pool {tenant.pool or 'shared'}")
