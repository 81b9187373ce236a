"""The attributes of a request's FlowFiles, as NiFi's HandleHttpRequest writes them, and the
provenance transit URI HandleHttpResponse also uses."""

from __future__ import annotations

import http.cookies
import ipaddress
from urllib.parse import parse_qsl, unquote, urlsplit

from cryptography import x509

from engine.processors._http_server import Handler, dn, peer_certificate

CONTEXT_ID = "http.context.identifier"
_GENERAL_NAMES = {x509.RFC822Name: "rfc822Name", x509.DNSName: "dNSName", x509.DirectoryName: "directoryName",
                  x509.UniformResourceIdentifier: "uniformResourceIdentifier", x509.IPAddress: "iPAddress",
                  x509.RegisteredID: "registeredID", x509.OtherName: "otherName"}


def request_attributes(handler: Handler, identifier: str, *, https: bool, default_charset: str,
                       parameters: set[str], form: dict[str, str]) -> dict[str, str]:
    """The attributes NiFi's HandleHttpRequest gives a request's FlowFiles (``parameters``: the
    names for ``http.param.*``, found in the query string, then in ``form``)."""
    content_type = handler.headers.get("Content-Type")
    raw = urlsplit(handler.path)
    charset = content_charset(content_type) or default_charset
    local_address, local_port = handler.connection.getsockname()[:2]
    host_header = handler.headers.get("Host")
    server_name, server_port = _host_and_port(host_header, local_address, local_port, https)
    scheme = "https" if https else "http"
    default_port = 443 if https else 80
    authority = server_name if server_port == default_port else f"{server_name}:{server_port}"
    attributes = {
        CONTEXT_ID: identifier,
        "http.servlet.path": unquote(raw.path, encoding=charset, errors="replace"),
        "http.context.path": "",
        "http.method": handler.command,
        "http.local.addr": local_address,
        "http.local.name": local_address,
        "http.remote.host": handler.client_address[0],
        "http.remote.addr": handler.client_address[0],
        "http.protocol": handler.request_version,
        "http.request.uri": raw.path,
        "http.request.url": f"{scheme}://{authority}{raw.path}",
        "http.dispatcher.type": "REQUEST",
        "http.locale": _locale(handler.headers.get("Accept-Language")),
        "http.server.name": server_name,
        "http.server.port": str(server_port),
    }
    if content_type is not None:
        attributes["mime.type"] = content_type
    if content_charset(content_type):
        attributes["http.character.encoding"] = content_charset(content_type)
    query = parse_qsl(raw.query, keep_blank_values=True, encoding=charset, errors="replace")
    if raw.query:
        attributes["http.query.string"] = unquote(raw.query.replace("+", " "), encoding=charset, errors="replace")
    for name, value in query:
        attributes[f"http.query.param.{name}"] = value
    for name in parameters:
        value = next((value for key, value in query if key == name), form.get(name))
        if value is not None:
            attributes[f"http.param.{name}"] = value
    for name in handler.headers.keys():
        attributes.setdefault(f"http.headers.{name}", handler.headers.get(name))
    for cookie_header in handler.headers.get_all("Cookie") or ():
        cookies = http.cookies.SimpleCookie()
        try:
            cookies.load(cookie_header)
        except http.cookies.CookieError:
            continue
        for name, morsel in cookies.items():
            attributes[f"http.cookie.{name}.value"] = morsel.value
            attributes[f"http.cookie.{name}.max.age"] = "-1"
            attributes[f"http.cookie.{name}.secure"] = "false"
    attributes.update(certificate_attributes(peer_certificate(handler.connection)))
    return attributes


def content_charset(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type."""
    for parameter in (content_type or "").split(";")[1:]:
        name, _, value = parameter.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return None


def _locale(accept_language: str | None) -> str:
    first = (accept_language or "").split(",", 1)[0].split(";", 1)[0].strip()
    if not first or first == "*":
        return "en_US"
    language, _, region = first.partition("-")
    return f"{language.lower()}_{region.upper()}" if region else language.lower()


def _host_and_port(host: str | None, local_address: str, local_port: int, https: bool) -> tuple[str, int]:
    if not host:
        return local_address, local_port
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port_text = host.partition(":")
    try:
        return name, int(port_text) if port_text else (443 if https else 80)
    except ValueError:
        return name, local_port


def certificate_attributes(certificate: x509.Certificate | None) -> dict[str, str]:
    """``http.subject.dn``, ``http.issuer.dn`` and ``http.certificate.sans.N.*`` of a client certificate."""
    if certificate is None:
        return {}
    attributes = {"http.subject.dn": dn(certificate.subject), "http.issuer.dn": dn(certificate.issuer)}
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return attributes
    for index, name in enumerate(names):
        attributes[f"http.certificate.sans.{index}.nameType"] = _GENERAL_NAMES.get(type(name), "otherName")
        value = name.value
        if isinstance(name, x509.DirectoryName):
            value = dn(value)
        elif isinstance(name, x509.IPAddress):
            value = value.with_prefixlen if isinstance(value, (ipaddress.IPv4Network, ipaddress.IPv6Network)) else value
        elif isinstance(name, x509.RegisteredID):
            value = value.dotted_string
        elif isinstance(name, x509.OtherName):
            value = value.hex() if isinstance(value, bytes) else str(value)
        attributes[f"http.certificate.sans.{index}.name"] = str(value)
    return attributes


def transit_uri(attributes) -> str:
    """The provenance transit URI of a request (NiFi's): scheme://client@server:port/path."""
    scheme = "https" if attributes.get("http.subject.dn") is not None else "http"
    return (f"{scheme}://{attributes.get('http.remote.host')}@{attributes.get('http.local.name')}:"
            f"{attributes.get('http.server.port')}{attributes.get('http.request.uri')}")
