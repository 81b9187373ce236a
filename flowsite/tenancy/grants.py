"""What an operator may grant a tenant, checked and normalised before it is stored: restricted
capabilities, the directories its flow may use on the nodes, the outbound destinations opened to
it, the ports its listeners may bind and the node pool it runs on. Every checker returns the
normalised value or raises ``GrantError`` saying what is wrong with which entry."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug

from engine.confinement.network import AllowRule
from engine.confinement.paths import ALWAYS_REFUSED
from engine.flow.loader import CAPABILITIES

#: The ports a tenant's listeners may be assigned (no privileged ports).
PORT_LOW, PORT_HIGH = 1024, 65535

_HOST_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")


class GrantError(ValueError):
    """A grant an operator asked for is refused; ``field`` names what is wrong."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def platform_dirs() -> tuple[str, ...]:
    """The platform's own directories: the installation (code, .local data and secrets, static
    files), the analytics directory (every tenant's provenance) and any the deployment names in
    ``FLOWSITE_PLATFORM_DIRS``."""
    dirs = [str(settings.BASE_DIR), str(settings.STATIC_ROOT), str(settings.FLOWSITE_ANALYTICS_DIR),
            *settings.FLOWSITE_PLATFORM_DIRS]
    return tuple(os.path.normpath(str(d)) for d in dirs)


def check_capabilities(values) -> list[str]:
    """Known capability names, without repeats, in CAPABILITIES order."""
    unknown = sorted(set(values) - set(CAPABILITIES))
    if unknown:
        raise GrantError("capabilities", f"unknown capabilit{'y' if len(unknown) == 1 else 'ies'} "
                                         f"{', '.join(map(repr, unknown))} (known: {', '.join(CAPABILITIES)})")
    return [capability for capability in CAPABILITIES if capability in set(values)]


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def check_file_root(value: str) -> str:
    """An absolute directory, normalised (no ``.``, ``..`` or repeated slashes), that is neither the
    file system's root nor inside /proc, /sys, /dev or a platform directory."""
    text = str(value).strip()
    if not text or "\x00" in text:
        raise GrantError("file_roots", "a file root is a non-empty absolute path")
    if not PurePosixPath(text).is_absolute():
        raise GrantError("file_roots", f"{text!r} is not an absolute path")
    normal = os.path.normpath(text)
    if normal.startswith("//"):
        normal = "/" + normal.lstrip("/")
    if normal == "/":
        raise GrantError("file_roots", "the file system's root cannot be a tenant's file root")
    for directory in ALWAYS_REFUSED + platform_dirs():
        if _inside(normal, directory):
            raise GrantError("file_roots", f"{normal} is inside {directory}, which no tenant may use")
    return normal


def _check_host(name: str, entry: str) -> str:
    """``name`` (a host name, as ``AllowRule`` lower-cased it) when it is one by DNS syntax."""
    if len(name) > 253 or not all(_HOST_LABEL.match(label) for label in name.split(".")):
        raise GrantError("network_allow", f"{entry!r} is not a CIDR range, a host name or host:port")
    return name


def check_network_entry(value: str) -> str:
    """A CIDR range (``10.1.2.0/24``), an address or host name, or either with a port
    (``api.example.com:443``, ``[::1]:8080``), parsed as the nodes parse it and normalised."""
    entry = str(value).strip()
    if not entry:
        raise GrantError("network_allow", "an allowlist entry is not empty")
    try:
        rule = AllowRule.parse(entry)
    except ValueError as error:
        raise GrantError("network_allow", f"{entry!r} is not a CIDR range, a host name or host:port ({error})") \
            from None
    if "/" in entry:
        return str(rule.network)
    host = str(rule.network.network_address) if rule.network is not None else _check_host(rule.host, entry)
    if rule.port is None:
        return host
    return f"[{host}]:{rule.port}" if ":" in host else f"{host}:{rule.port}"


def check_listen_ports(low: int | None, high: int | None) -> tuple[int | None, int | None]:
    """Both None (the tenant may not listen), or a range within 1024-65535 with low <= high."""
    if low is None and high is None:
        return None, None
    if low is None or high is None:
        raise GrantError("listen_ports", "a listen-port range has both a first and a last port")
    if not (PORT_LOW <= low <= PORT_HIGH and PORT_LOW <= high <= PORT_HIGH):
        raise GrantError("listen_ports", f"listen ports are from {PORT_LOW} to {PORT_HIGH}")
    if low > high:
        raise GrantError("listen_ports", f"the first port ({low}) is after the last ({high})")
    return low, high


def parse_port_range(text: str) -> tuple[int, int]:
    """``"20000-20099"`` (or one port, ``"20000"``) as (low, high), checked."""
    low, _, high = str(text).strip().partition("-")
    if not low.isdigit() or (high and not high.isdigit()):
        raise GrantError("listen_ports", f"{text!r} is not a port range such as 20000-20099")
    return check_listen_ports(int(low), int(high or low))


def check_pool(value: str) -> str:
    """A node pool label (a slug), or "" for the shared pool."""
    pool = str(value).strip()
    if pool:
        try:
            validate_slug(pool)
        except ValidationError:
            raise GrantError("pool", f"{pool!r} is not a pool name (letters, digits, '-' and '_')") from None
        if len(pool) > 64:
            raise GrantError("pool", "a pool name has at most 64 characters")
    return pool


@dataclass
class Grants:
    """Everything an operator grants a tenant, as ``Tenant`` stores it."""

    capabilities: list[str] = field(default_factory=list)
    file_roots: list[str] = field(default_factory=list)
    network_allow: list[str] = field(default_factory=list)
    listen_port_low: int | None = None
    listen_port_high: int | None = None
    pool: str = ""

    @classmethod
    def of(cls, tenant) -> Grants:
        return cls(list(tenant.capabilities), list(tenant.file_roots), list(tenant.network_allow),
                   tenant.listen_port_low, tenant.listen_port_high, tenant.pool)

    def checked(self) -> Grants:
        """These grants normalised; raises GrantError for the first field that is wrong."""
        low, high = check_listen_ports(self.listen_port_low, self.listen_port_high)
        return Grants(check_capabilities(self.capabilities), _unique(check_file_root(r) for r in self.file_roots),
                      _unique(check_network_entry(e) for e in self.network_allow), low, high, check_pool(self.pool))


def _unique(values) -> list[str]:
    return list(dict.fromkeys(values))
