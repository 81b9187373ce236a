"""What ListSFTP, FetchSFTP and PutSFTP share: their connection properties, a confined SSH
connection (paramiko over a socket from the component's confinement policy), and the sorting of
errors into NiFi's relationships."""

from __future__ import annotations

import errno
import io
import os
import stat
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import paramiko

from engine.components import AllowableValue, ExpressionScope, PropertyDependency, PropertyDescriptor
from engine.components import validators as v
from engine.confinement import ConfinementError, Policy

__all__ = [
    "ALGORITHMS", "CONNECTION_TIMEOUT", "DATA_TIMEOUT", "HOSTNAME", "HOST_KEY_FILE", "KEEP_ALIVE", "PASSWORD", "PORT",
    "PRIVATE_KEY_PASSPHRASE", "PRIVATE_KEY_PATH", "REMOTE_PATH", "STRICT_HOST_KEY_CHECKING", "USERNAME",
    "USE_COMPRESSION", "CommsError", "Connection", "Denied", "NotFound", "Pool", "Settings", "close_all", "connect",
    "parse_modified_time", "parse_permissions", "permissions",
]

_FLOWFILE = ExpressionScope.FLOWFILE_ATTRIBUTES

HOSTNAME = PropertyDescriptor(
    "Hostname", description="The fully qualified hostname or IP address of the SFTP server.", required=True,
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
PORT = PropertyDescriptor(
    "Port", description="The port the SFTP server listens on.", required=True, default="22",
    validators=[v.PORT], expression_language=_FLOWFILE)
USERNAME = PropertyDescriptor(
    "Username", description="The user to log in as.", required=True, validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
PASSWORD = PropertyDescriptor(
    "Password", description="The user's password (tried after the private key, if any).", sensitive=True,
    expression_language=_FLOWFILE)
PRIVATE_KEY_PATH = PropertyDescriptor(
    "Private Key Path", description="The file holding the private key to log in with (OpenSSH or PEM format; "
    "Ed25519, ECDSA or RSA).", expression_language=_FLOWFILE)
PRIVATE_KEY_PASSPHRASE = PropertyDescriptor(
    "Private Key Passphrase", description="The passphrase of the private key.", sensitive=True,
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
REMOTE_PATH = PropertyDescriptor(
    "Remote Path", description="The directory on the server to send files to; empty for the user's home "
    "directory.", validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
CONNECTION_TIMEOUT = PropertyDescriptor(
    "Connection Timeout", description="How long connecting and the SSH handshake may take.", required=True,
    default="30 sec", validators=[v.TIME_PERIOD])
DATA_TIMEOUT = PropertyDescriptor(
    "Data Timeout", description="How long a transfer may go without any data moving.", required=True,
    default="30 sec", validators=[v.TIME_PERIOD])
HOST_KEY_FILE = PropertyDescriptor(
    "Host Key File", description="A known_hosts file the server's host key is checked against: a host listed "
    "there with another key is always refused, an unlisted host only with Strict Host Key Checking. Without it, "
    "strict checking uses ~/.ssh/known_hosts and known_hosts2 and no checking accepts any host key.")
STRICT_HOST_KEY_CHECKING = PropertyDescriptor(
    "Strict Host Key Checking", description="Whether a server whose host key is not known is refused.",
    required=True, default="false", allowed_values=["true", "false"])
KEEP_ALIVE = PropertyDescriptor(
    "Send Keep Alive On Timeout", description="Whether a keep-alive message is sent every 5 seconds while the "
    "connection is idle.", required=True, default="true", allowed_values=["true", "false"])
USE_COMPRESSION = PropertyDescriptor(
    "Use Compression", description="Whether the connection is compressed (zlib).", required=True, default="false",
    allowed_values=["true", "false"])
ALGORITHM_CONFIGURATION = PropertyDescriptor(
    "Algorithm Negotiation", description="Which SSH algorithms may be negotiated.", required=True,
    default="DEFAULT", allowed_values=[
        AllowableValue("DEFAULT", "DEFAULT", "The SSH library's standard algorithms."),
        AllowableValue("CUSTOM", "CUSTOM", "Only the algorithms the four '... Allowed' properties list.")])
_CUSTOM = (PropertyDependency("Algorithm Negotiation", ("CUSTOM",)),)
CIPHERS_ALLOWED = PropertyDescriptor(
    "Ciphers Allowed", description="Comma-separated ciphers allowed (unset: all the library offers).",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT, depends_on=_CUSTOM)
KEY_ALGORITHMS_ALLOWED = PropertyDescriptor(
    "Key Algorithms Allowed", description="Comma-separated host key algorithms allowed (unset: all).",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT, depends_on=_CUSTOM)
KEY_EXCHANGE_ALGORITHMS_ALLOWED = PropertyDescriptor(
    "Key Exchange Algorithms Allowed", description="Comma-separated key exchange algorithms allowed (unset: all).",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT, depends_on=_CUSTOM)
MACS_ALLOWED = PropertyDescriptor(
    "Message Authentication Codes Allowed", description="Comma-separated MACs allowed (unset: all).",
    validators=[v.NON_EMPTY], expression_language=ExpressionScope.ENVIRONMENT, depends_on=_CUSTOM)

ALGORITHMS = (ALGORITHM_CONFIGURATION, CIPHERS_ALLOWED, KEY_ALGORITHMS_ALLOWED, KEY_EXCHANGE_ALGORITHMS_ALLOWED,
              MACS_ALLOWED)
_KEY_TYPES = (paramiko.Ed25519Key, paramiko.ECDSAKey, paramiko.RSAKey)


class CommsError(Exception):
    """The server could not be reached, refused the login, or broke off: nothing about the file."""


class NotFound(Exception):
    """The remote file or directory does not exist."""


class Denied(Exception):
    """The server refused access to the remote file or directory."""


@dataclass(frozen=True)
class Settings:
    """Everything that decides a connection; equal settings may share one."""

    host: str
    port: int
    username: str
    password: str | None
    key_path: str | None
    passphrase: str | None
    connect_timeout: float
    data_timeout: float
    keep_alive: bool
    compression: bool
    strict: bool
    host_key_file: str | None
    algorithms: tuple[tuple[str, ...] | None, ...] | None

    @classmethod
    def read(cls, context, flowfile=None) -> Settings:
        """The settings for ``flowfile`` (or for a source, without one); ValueError when the
        port is not a number."""
        def text(descriptor) -> str | None:
            return context.property(descriptor).evaluate(flowfile).value or None

        algorithms = None
        if context.property(ALGORITHM_CONFIGURATION).value == "CUSTOM":
            algorithms = tuple(_names(context.property(d).evaluate().value) for d in ALGORITHMS[1:])
        port = text(PORT) or "22"
        if not port.isdigit():
            raise ValueError(f"port {port!r} is not a number")
        return cls(text(HOSTNAME) or "", int(port), text(USERNAME) or "", text(PASSWORD), text(PRIVATE_KEY_PATH),
                   text(PRIVATE_KEY_PASSPHRASE), context.property(CONNECTION_TIMEOUT).as_duration(),
                   context.property(DATA_TIMEOUT).as_duration(), context.property(KEEP_ALIVE).as_bool(),
                   context.property(USE_COMPRESSION).as_bool(), context.property(STRICT_HOST_KEY_CHECKING).as_bool(),
                   context.property(HOST_KEY_FILE).value or None, algorithms)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _names(text: str | None) -> tuple[str, ...] | None:
    names = tuple(name.strip() for name in (text or "").split(",") if name.strip())
    return names or None


class Connection:
    """A logged-in SFTP session; its methods raise NotFound, Denied or CommsError."""

    def __init__(self, settings: Settings, transport: paramiko.Transport, sftp: paramiko.SFTPClient) -> None:
        self.settings = settings
        self.transport = transport
        self.sftp = sftp

    def call(self, what: str, function, *args):
        """``function(*args)`` with its errors sorted; ``what`` names the operation for messages."""
        try:
            return function(*args)
        except OSError as error:
            raise _sorted(error, what, self.settings) from error
        except (paramiko.SSHException, EOFError) as error:
            raise CommsError(f"{what} on {self.settings.address} failed: {error or type(error).__name__}") from error

    @property
    def alive(self) -> bool:
        return self.transport.is_active()

    def close(self) -> None:
        try:
            self.sftp.close()
        finally:
            self.transport.close()


def _sorted(error: OSError, what: str, settings: Settings) -> Exception:
    if isinstance(error, FileNotFoundError) or error.errno == errno.ENOENT:
        return NotFound(f"{what}: no such file or directory on {settings.address}")
    if isinstance(error, PermissionError) or error.errno == errno.EACCES:
        return Denied(f"{what}: permission denied by {settings.address}")
    detail = error.strerror or (error.args[0] if error.args else "") or type(error).__name__
    if detail == "Failure":
        detail = "the server reported a failure without saying why (a full disk, a quota, an unusable path...)"
    return CommsError(f"{what} on {settings.address} failed: {detail}")


def connect(policy: Policy, settings: Settings) -> Connection:
    """Connect through ``policy``, check the host key, log in and open SFTP. Raises
    ConfinementError (the address is refused) or CommsError."""
    if not settings.host:
        raise CommsError("no hostname is set")
    key = _private_key(policy, settings) if settings.key_path else None
    known = _known_hosts(policy, settings)
    try:
        sock = policy.connect(settings.host, settings.port, timeout=settings.connect_timeout)
    except ConfinementError:
        raise
    except OSError as error:
        raise CommsError(f"could not connect to {settings.address}: {error.strerror or error}") from error
    transport = paramiko.Transport(sock)
    try:
        transport.banner_timeout = transport.handshake_timeout = settings.connect_timeout
        transport.auth_timeout = settings.connect_timeout
        transport.use_compression(settings.compression)
        if settings.algorithms is not None:
            _restrict(transport.get_security_options(), settings.algorithms)
        transport.start_client(timeout=settings.connect_timeout)
        _check_host_key(transport.get_remote_server_key(), known, settings)
        _authenticate(transport, settings, key)
        sftp = paramiko.SFTPClient.from_transport(transport)
        sftp.get_channel().settimeout(settings.data_timeout)
        if settings.keep_alive:
            transport.set_keepalive(5)
    except CommsError:
        transport.close()
        raise
    except (paramiko.SSHException, EOFError, OSError) as error:
        transport.close()
        raise CommsError(f"SSH session with {settings.address} failed: {error or type(error).__name__}") from error
    return Connection(settings, transport, sftp)


class Pool:
    """Logged-in connections kept between runs (a handshake costs more than most transfers),
    closed once idle for ``idle_seconds``. Taking one checks its address against the policy
    again, so a grant withdrawn meanwhile also closes what was already open."""

    def __init__(self, idle_seconds: float = 30.0) -> None:
        self._idle_seconds = idle_seconds
        self._idle: dict[Settings, list[tuple[float, Connection]]] = {}
        self._lock = threading.Lock()

    def take(self, policy: Policy, settings: Settings) -> Connection:
        """An open connection for ``settings``: an idle one, else a new one (see ``connect``)."""
        while True:
            with self._lock:
                idle = self._idle.get(settings)
                connection = idle.pop()[1] if idle else None
            if connection is None:
                return connect(policy, settings)
            try:
                policy.check_destination(settings.host, settings.port)
            except ConfinementError:
                connection.close()
                raise
            if connection.alive:
                return connection
            connection.close()

    def give_back(self, connections: Iterable[Connection]) -> None:
        """Keep the open ones of ``connections`` for later; close those idle too long."""
        now = time.monotonic()
        expired = []
        with self._lock:
            for connection in connections:
                if connection.alive:
                    self._idle.setdefault(connection.settings, []).append((now, connection))
                else:
                    expired.append(connection)
            for settings, idle in list(self._idle.items()):
                expired += [connection for since, connection in idle if now - since > self._idle_seconds]
                idle[:] = [(since, connection) for since, connection in idle if now - since <= self._idle_seconds]
                if not idle:
                    del self._idle[settings]
        close_all(expired)

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle = [connection for entries in self._idle.values() for _, connection in entries]
            self._idle.clear()
        close_all(idle)


def close_all(connections: Iterable[Connection]) -> None:
    """Close each of ``connections``, whatever state it is in."""
    for connection in connections:
        try:
            connection.close()
        except Exception:  # noqa: BLE001, S110 - closing a broken connection
            pass


def _restrict(options, algorithms) -> None:
    ciphers, keys, kex, macs = algorithms
    for attribute, allowed in (("ciphers", ciphers), ("key_types", keys), ("kex", kex), ("digests", macs)):
        if allowed is None:
            continue
        try:
            setattr(options, attribute, tuple(allowed))
        except ValueError as error:
            raise CommsError(f"the allowed {attribute} are not supported: {error}") from error


def _read(policy: Policy, path: str, what: str) -> str:
    try:
        with open(policy.open(path, os.O_RDONLY), encoding="utf-8") as file:
            return file.read()
    except ConfinementError:
        raise
    except OSError as error:
        raise CommsError(f"could not read the {what} {path}: {error.strerror or error}") from error


def _private_key(policy: Policy, settings: Settings) -> paramiko.PKey:
    text = _read(policy, settings.key_path, "private key")
    for key_type in _KEY_TYPES:
        try:
            return key_type.from_private_key(io.StringIO(text), password=settings.passphrase)
        except paramiko.PasswordRequiredException as error:
            raise CommsError(f"the private key {settings.key_path} needs a passphrase") from error
        except (paramiko.SSHException, ValueError):
            continue
    raise CommsError(f"the private key {settings.key_path} could not be read (wrong passphrase, or not an "
                     f"Ed25519, ECDSA or RSA key)")


def _known_hosts(policy: Policy, settings: Settings) -> paramiko.HostKeys | None:
    if settings.host_key_file:
        files = [settings.host_key_file]
    elif settings.strict:
        home = os.path.expanduser("~/.ssh")
        files = [path for path in (f"{home}/known_hosts", f"{home}/known_hosts2") if os.path.exists(path)]
    else:
        return None
    known = paramiko.HostKeys()
    for path in files:
        for line in _read(policy, path, "host key file").splitlines():
            entry = paramiko.hostkeys.HostKeyEntry.from_line(line)
            if entry is not None:
                for name in entry.hostnames:
                    known.add(name, entry.key.get_name(), entry.key)
    return known


def _check_host_key(key: paramiko.PKey, known: paramiko.HostKeys | None, settings: Settings) -> None:
    if known is None:
        return
    names = [settings.host] if settings.port == 22 else [f"[{settings.host}]:{settings.port}", settings.host]
    for name in names:
        entries = known.lookup(name)
        if entries is None:
            continue
        if key.get_name() in entries and entries[key.get_name()] == key:
            return
        raise CommsError(f"the host key of {settings.address} ({key.get_name()} {key.fingerprint}) differs from the "
                         f"one known for {name}: refusing to connect (the server changed, or someone is in between)")
    if settings.strict:
        raise CommsError(f"the host key of {settings.address} ({key.get_name()} {key.fingerprint}) is not known and "
                         f"Strict Host Key Checking is on: add it to the Host Key File")


def _authenticate(transport: paramiko.Transport, settings: Settings, key: paramiko.PKey | None) -> None:
    tried = []
    if key is not None:
        try:
            transport.auth_publickey(settings.username, key)
        except paramiko.AuthenticationException:
            tried.append("private key")
    if not transport.is_authenticated() and settings.password is not None:
        try:
            transport.auth_password(settings.username, settings.password)
        except paramiko.BadAuthenticationType as error:
            try:
                transport.auth_interactive_dumb(settings.username, lambda *_: [settings.password])
            except paramiko.AuthenticationException:
                tried.append(f"password (the server allows {', '.join(error.allowed_types)})")
        except paramiko.AuthenticationException:
            tried.append("password")
    if not transport.is_authenticated():
        how = " and ".join(tried) or "no private key or password given"
        raise CommsError(f"{settings.address} refused the login of {settings.username!r} ({how})")


def permissions(mode: int) -> str:
    """``rwxr-x---`` for a file mode."""
    return stat.filemode(mode)[1:]


def parse_permissions(text: str) -> int:
    """A mode from ``rw-r--r--`` or octal ``644``; ValueError otherwise."""
    text = text.strip()
    if len(text) in (3, 4) and all(char in "01234567" for char in text):
        return int(text, 8)
    if len(text) == 9 and all(char in ("-", expected) for char, expected in zip(text, "rwxrwxrwx")):
        return sum(1 << (8 - index) for index, char in enumerate(text) if char != "-")
    raise ValueError(f"permissions {text!r} are neither 'rwxr-x---' nor octal like '644'")


def parse_modified_time(text: str) -> float:
    """Seconds since the epoch from NiFi's ``yyyy-MM-dd'T'HH:mm:ssZ``; ValueError otherwise."""
    return datetime.strptime(text.strip(), "%Y-%m-%dT%H:%M:%S%z").timestamp()

