"""Addresses as confinement sees them: metadata ranges, the machine's own addresses, the
platform's services and a tenant's allowlist."""

from __future__ import annotations

import errno
import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from functools import lru_cache

from engine.confinement.settings import split_host_port

__all__ = ["AllowRule", "IPAddress", "METADATA_NETWORKS", "PlatformAddresses", "address", "is_local"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Link-local and cloud metadata ranges: never reachable, whatever a tenant's allowlist says.
METADATA_NETWORKS = tuple(ipaddress.ip_network(text) for text in (
    "169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "100.100.100.200/32"))

#: How long resolved platform host names are trusted.
_RESOLVE_TTL = 30.0


def address(text: str) -> IPAddress:
    """An IP address (its zone dropped), IPv4-mapped IPv6 addresses as the IPv4 address."""
    ip = ipaddress.ip_address(text.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


@lru_cache(maxsize=1024)
def is_local(ip: IPAddress) -> bool:
    """True for an address of this machine (loopback, unspecified, or one it could bind)."""
    if ip.is_loopback or ip.is_unspecified:
        return True
    try:
        with socket.socket(socket.AF_INET if ip.version == 4 else socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind((str(ip), 0))
    except OSError as error:
        if error.errno in (errno.EADDRNOTAVAIL, errno.EINVAL, errno.EAFNOSUPPORT):
            return False
        raise
    return True


@dataclass(frozen=True)
class AllowRule:
    """One entry of a tenant's ``network.allow``: a CIDR or IP, or a host name, each with an
    optional port (``10.1.2.0/24``, ``api.example.com``, ``127.0.0.1:8080``, ``[::1]:80``)."""

    text: str
    network: ipaddress.IPv4Network | ipaddress.IPv6Network | None
    host: str | None
    port: int | None

    @classmethod
    def parse(cls, text: str) -> AllowRule:
        if "/" in text:
            return cls(text, ipaddress.ip_network(text, strict=False), None, None)
        host, port = split_host_port(text)
        try:
            return cls(text, ipaddress.ip_network(address(host)), None, port)
        except ValueError:
            return cls(text, None, host.lower().rstrip("."), port)

    def matches(self, host: str, ip: IPAddress, port: int) -> bool:
        """True when a connection to ``host`` (asked for) at ``ip``:``port`` (resolved) is opened."""
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return ip in self.network
        return host.lower().rstrip(".") == self.host


class PlatformAddresses:
    """The platform's own services (``host:port``), resolved now and then. An address of this
    machine at a platform port counts as the platform's when the service's host is this machine
    (a server bound to every interface answers on each of them)."""

    def __init__(self, entries: tuple[str, ...]) -> None:
        self._entries = [(text, *split_host_port(text)) for text in entries]
        self._lock = threading.Lock()
        self._resolved: list[tuple[str, int, frozenset[IPAddress], bool]] = []
        self._resolved_at = float("-inf")

    def match(self, ip: IPAddress, port: int) -> str | None:
        """The entry ``ip``:``port`` is, or None."""
        for text, entry_port, addresses, local in self._current():
            if port == entry_port and (ip in addresses or (local and is_local(ip))):
                return text
        return None

    def _current(self) -> list[tuple[str, int, frozenset[IPAddress], bool]]:
        with self._lock:
            if time.monotonic() - self._resolved_at > _RESOLVE_TTL:
                resolved = []
                for text, host, port in self._entries:
                    addresses = frozenset(_resolve(host, port))
                    resolved.append((text, port, addresses, any(is_local(ip) for ip in addresses)))
                self._resolved, self._resolved_at = resolved, time.monotonic()
            return self._resolved


def _resolve(host: str, port: int) -> set[IPAddress]:
    try:
        return {address(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)}
    except OSError:
        return set()  # a platform host that does not resolve cannot be connected to either
