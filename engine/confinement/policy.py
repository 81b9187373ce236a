"""Confinement policies: what one component may touch on its node (see the package docstring)."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from engine.confinement.network import METADATA_NETWORKS, AllowRule, PlatformAddresses, address, is_local
from engine.confinement.paths import ALWAYS_REFUSED, fd_path, real_path, within
from engine.confinement.settings import ConfinementSettings

if TYPE_CHECKING:
    from engine.flow.model import FlowDefinition, TenantConfig

__all__ = ["ConfinementError", "NodeConfinement", "Policy", "capability_problems"]


class ConfinementError(PermissionError):
    """A file, address or port a component may not use; the message says what and why."""

    def __init__(self, subject: str, reason: str) -> None:
        self.subject = subject
        self.reason = reason
        super().__init__(f"refused {subject}: {reason}")


def capability_problems(cls, tenant: TenantConfig | None) -> list[str]:
    """Why a component of type ``cls`` may not run for ``tenant`` (None: the operator's)."""
    if tenant is None:
        return []
    return [f"{cls.type_name} needs the restricted capability {capability!r}, which tenant {tenant.slug!r} has "
            f"not been granted" for capability in cls.restricted if capability not in tenant.capabilities]


class NodeConfinement:
    """The node-wide refusals and the tenants of the running flow, by group."""

    def __init__(self, settings: ConfinementSettings | None = None, data_dir: Path | str | None = None) -> None:
        self.settings = settings or ConfinementSettings()
        self.refused_roots = [(root, f"{root} is never reachable") for root in ALWAYS_REFUSED]
        if data_dir is not None:
            self.refused_roots.append((real_path(data_dir), "it is inside the node's data directory"))
        for path in self.settings.protected_paths:
            for form in dict.fromkeys((os.path.normpath(path), real_path(path))):
                self.refused_roots.append((form, f"it is inside a protected directory of the platform ({path})"))
        self.platform = PlatformAddresses(self.settings.platform_addresses)
        self._tenants: dict[str, TenantConfig] = {}
        self._rules: dict[str, list[AllowRule]] = {}

    def set_flow(self, flow: FlowDefinition) -> None:
        """Take the tenants of ``flow``: every group under a tenant's group is that tenant's."""
        groups = {group.identifier: group for group in flow.groups()}
        tenants, rules = {}, {}
        for tenant in flow.tenants.values():
            rules[tenant.slug] = [AllowRule.parse(text) for text in tenant.network_allow]
            if tenant.group in groups:
                tenants.update((group.identifier, tenant) for group in groups[tenant.group].walk())
        self._tenants, self._rules = tenants, rules

    def tenant_of(self, group_id: str | None) -> TenantConfig | None:
        """The tenant owning group ``group_id`` (None: the operator's)."""
        return self._tenants.get(group_id) if group_id is not None else None

    def policy(self, group_id: str | None) -> Policy:
        """The policy of components in group ``group_id`` (it follows later flow changes)."""
        return Policy(self, group_id)

    def allow_rules(self, tenant: TenantConfig) -> list[AllowRule]:
        """The tenant's parsed ``network.allow``."""
        return self._rules.get(tenant.slug, [])

    def file_roots(self, tenant: TenantConfig) -> list[str]:
        """The tenant's roots, resolved: its own, else ``<files root>/<slug>``."""
        roots = list(tenant.file_roots)
        if not roots and self.settings.files_root:
            roots = [os.path.join(self.settings.files_root, tenant.slug)]
        return [real_path(root) for root in roots]


class Policy:
    """What the components of one group may touch: their tenant's grants plus the node-wide
    refusals (components of no tenant get the refusals only)."""

    def __init__(self, node: NodeConfinement, group_id: str | None) -> None:
        self.node = node
        self.group_id = group_id

    @property
    def tenant(self) -> TenantConfig | None:
        """The tenant the components belong to, as the current flow says (None: the operator)."""
        return self.node.tenant_of(self.group_id)

    def missing_capabilities(self, cls) -> list[str]:
        """Why a component of type ``cls`` may not run here (empty: it may)."""
        return capability_problems(cls, self.tenant)

    # -- files ------------------------------------------------------------------------------

    def path_refusal(self, real: str) -> str | None:
        """Why the resolved path ``real`` may not be used, or None."""
        for root, reason in self.node.refused_roots:
            if within(real, root):
                return reason
        tenant = self.tenant
        if tenant is None:
            return None
        roots = self.node.file_roots(tenant)
        if not roots:
            return f"tenant {tenant.slug} has no file roots (and the node no files root)"
        if not any(within(real, root) for root in roots):
            return f"outside tenant {tenant.slug}'s file roots ({', '.join(roots)})"
        return None

    def check_path(self, path: str | os.PathLike) -> str:
        """``path`` resolved (symbolic links, ``..``); raises ConfinementError when refused."""
        real = real_path(path)
        reason = self.path_refusal(real)
        if reason is not None:
            raise ConfinementError(os.fspath(path), reason)
        return real

    def allows(self, path: str | os.PathLike) -> bool:
        """True when ``path`` may be used (for skipping entries of a listing)."""
        return self.refusal(path) is None

    def refusal(self, path: str | os.PathLike) -> str | None:
        """Why ``path`` may not be used, or None when it may."""
        return self.path_refusal(real_path(path))

    def open_directory(self, path: str | os.PathLike) -> int:
        """A descriptor of the directory ``path``, checked by where it really is once open."""
        real = self.check_path(path)
        fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        return self._verified(fd, path)

    def open(self, path: str | os.PathLike, flags: int, mode: int = 0o644) -> int:
        """``os.open`` of ``path`` once checked: the file is opened by name inside its checked
        directory without following a final symbolic link, then checked again by where its
        descriptor really is. Raises ConfinementError when refused."""
        real = self.check_path(path)
        directory, name = os.path.split(real)
        dir_fd = self.open_directory(directory)
        try:
            fd = os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        return self._verified(fd, path)

    def remove(self, path: str | os.PathLike) -> None:
        """Delete the file ``path`` (a symbolic link itself, not its target) inside its checked
        directory."""
        absolute = os.path.abspath(os.fspath(path))
        directory, name = os.path.split(absolute)
        reason = self.path_refusal(os.path.join(real_path(directory), name))
        if reason is not None:
            raise ConfinementError(os.fspath(path), reason)
        dir_fd = self.open_directory(directory)
        try:
            os.unlink(name, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)

    def make_directories(self, path: str | os.PathLike) -> str:
        """Create the directory ``path`` and its missing parents once checked; its real path."""
        real = self.check_path(path)
        os.makedirs(real, exist_ok=True)
        return self.check_path(real)

    def _verified(self, fd: int, path: str | os.PathLike) -> int:
        actual = fd_path(fd)
        reason = self.path_refusal(actual) if actual is not None else None
        if reason is not None:
            os.close(fd)
            raise ConfinementError(os.fspath(path), f"it was replaced while being opened ({actual}): {reason}")
        return fd

    # -- network ----------------------------------------------------------------------------

    def address_refusal(self, host: str, ip_text: str, port: int) -> str | None:
        """Why a connection to ``host`` resolved as ``ip_text``:``port`` may not be made, or None."""
        ip = address(ip_text)
        if ip.is_unspecified:
            return f"{ip} is the unspecified address"
        if any(ip in network for network in METADATA_NETWORKS):
            return f"{ip} is a link-local or cloud metadata address"
        platform = self.node.platform.match(ip, port)
        if platform is not None:
            return f"{ip}:{port} is one of the platform's own services ({platform})"
        tenant = self.tenant
        if tenant is None or not is_local(ip):
            return None
        if any(rule.matches(host, ip, port) for rule in self.node.allow_rules(tenant)):
            return None
        return f"{ip} is this machine, which tenant {tenant.slug}'s network allowlist does not open"

    def connect(self, host: str, port: int, timeout: float | None | object = socket._GLOBAL_DEFAULT_TIMEOUT,
                source_address: tuple[str, int] | None = None) -> socket.socket:
        """``socket.create_connection`` that checks each address it resolves ``host`` to before
        connecting to that very address; raises ConfinementError when every address is refused."""
        refusals, last_error = [], None
        for family, kind, proto, _, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            reason = self.address_refusal(host, sockaddr[0], port)
            if reason is not None:
                refusals.append(reason)
                continue
            sock = socket.socket(family, kind, proto)
            try:
                if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                    sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)
                return sock
            except OSError as error:
                sock.close()
                last_error = error
        if last_error is not None:
            raise last_error
        raise ConfinementError(f"{host}:{port}", "; ".join(dict.fromkeys(refusals)) or "it does not resolve")

    def check_destination(self, host: str, port: int) -> None:
        """Raise ConfinementError when an address ``host`` resolves to now is refused (for
        clients that connect on their own; a host that does not resolve passes)."""
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            return
        for *_, sockaddr in infos:
            reason = self.address_refusal(host, sockaddr[0], port)
            if reason is not None:
                raise ConfinementError(f"{host}:{port}", reason)

    def check_listen(self, port: int) -> None:
        """Raise ConfinementError unless the tenant may listen on ``port`` (the operator may)."""
        tenant = self.tenant
        if tenant is None:
            return
        if tenant.listen_ports is None:
            raise ConfinementError(f"listening on port {port}", f"tenant {tenant.slug} may not listen")
        low, high = tenant.listen_ports
        if not low <= port <= high:
            raise ConfinementError(f"listening on port {port}",
                                   f"outside tenant {tenant.slug}'s listen ports ({low}-{high})")
