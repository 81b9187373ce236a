"""PutEmail: sends an e-mail over SMTP for each FlowFile."""

from __future__ import annotations

import re
import smtplib
import socket
import ssl
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.charset import Charset
from email.header import Header
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from email.policy import compat32
from email.utils import formataddr, formatdate, getaddresses, make_msgid

from engine.components import (
    AllowableValue,
    ExpressionScope,
    InputRequirement,
    Processor,
    PropertyDependency,
    PropertyDescriptor,
    Relationship,
)
from engine.components import validators as v
from engine.components.processor import DynamicProperties
from engine.confinement import ConfinementError, Policy
from engine.expression import ExpressionError

_FLOWFILE = ExpressionScope.FLOWFILE_ATTRIBUTES
SSL_SOCKET_FACTORY = "javax.net.ssl.SSLSocketFactory"
PLAIN_SOCKET_FACTORY = "javax.net.SocketFactory"
PASSWORD_MODE = "password-based-authorization-mode"

SMTP_HOSTNAME = PropertyDescriptor(
    "SMTP Hostname", description="The SMTP server's host name.", required=True, validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
SMTP_PORT = PropertyDescriptor(
    "SMTP Port", description="The SMTP server's port.", required=True, default="25", validators=[v.PORT],
    expression_language=_FLOWFILE)
AUTHORIZATION_MODE = PropertyDescriptor(
    "authorization-mode", display_name="Authorization Mode", description="How the sender proves who it is.",
    required=True, default=PASSWORD_MODE,
    allowed_values=[AllowableValue(PASSWORD_MODE, "Use Password", "Authenticate with SMTP Username and Password")])
SMTP_USERNAME = PropertyDescriptor(
    "SMTP Username", description="The account to authenticate as.", validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
SMTP_PASSWORD = PropertyDescriptor(
    "SMTP Password", description="The account's password.", validators=[v.NON_EMPTY], sensitive=True,
    expression_language=_FLOWFILE, depends_on=[PropertyDependency(AUTHORIZATION_MODE.name, (PASSWORD_MODE,))])
SMTP_AUTH = PropertyDescriptor(
    "SMTP Auth", description="Whether to authenticate (when a username is set and the server offers AUTH).",
    required=True, default="true", validators=[v.BOOLEAN], expression_language=_FLOWFILE)
SMTP_TLS = PropertyDescriptor(
    "SMTP TLS", display_name="SMTP STARTTLS", description="Whether to switch to TLS with STARTTLS when the "
    "server offers it.", required=True, default="false", validators=[v.BOOLEAN], expression_language=_FLOWFILE)
SMTP_SOCKET_FACTORY = PropertyDescriptor(
    "SMTP Socket Factory", description=f"{SSL_SOCKET_FACTORY}: try TLS from the first byte (SMTPS), and plain SMTP "
    f"when the TLS handshake fails; {PLAIN_SOCKET_FACTORY}: plain SMTP.", required=True, default=SSL_SOCKET_FACTORY,
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
HEADER_XMAILER = PropertyDescriptor(
    "SMTP X-Mailer Header", description="The X-Mailer header of the message.", required=True, default="NiFi",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
ATTRIBUTE_NAME_REGEX = PropertyDescriptor(
    "attribute-name-regex", display_name="Attributes to Send as Headers (Regex)", description="FlowFile "
    "attributes whose whole name matches become message headers; unset: none do.", validators=[v.REGEX])
CONTENT_TYPE = PropertyDescriptor(
    "Content Type", description="The MIME type of the message body, such as text/plain or text/html.",
    required=True, default="text/plain", validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
FROM = PropertyDescriptor(
    "From", description="The sender: comma-separated addresses.", required=True, validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
TO = PropertyDescriptor(
    "To", description="Recipients on the To line: comma-separated addresses.", validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
CC = PropertyDescriptor(
    "CC", description="Recipients on the Cc line: comma-separated addresses.", validators=[v.NON_EMPTY],
    expression_language=_FLOWFILE)
BCC = PropertyDescriptor(
    "BCC", description="Hidden recipients: comma-separated addresses (no header names them).",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
REPLY_TO = PropertyDescriptor(
    "Reply-To", description="Where replies should go instead of From: comma-separated addresses.",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
SUBJECT = PropertyDescriptor(
    "Subject", description="The message subject.", required=True, default="Message from NiFi",
    validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
MESSAGE = PropertyDescriptor(
    "Message", description="The message body.", validators=[v.NON_EMPTY], expression_language=_FLOWFILE)
CONTENT_AS_MESSAGE = PropertyDescriptor(
    "email-ff-content-as-message", display_name="Flow file content as message", description="Whether the "
    "FlowFile's content (decoded with Input Character Set) is the body; Message is then ignored.", required=True,
    default="false", validators=[v.BOOLEAN], expression_language=_FLOWFILE)
INPUT_CHARACTER_SET = PropertyDescriptor(
    "input-character-set", display_name="Input Character Set", description="The character set of the FlowFile "
    "content used as body, and of the message body sent.", required=True, default="UTF-8",
    validators=[v.CHARACTER_SET])
ATTACH_FILE = PropertyDescriptor(
    "Attach File", description="Whether the FlowFile's content is attached (named after its filename).",
    required=True, default="false", allowed_values=["true", "false"])
INCLUDE_ALL_ATTRIBUTES = PropertyDescriptor(
    "Include All Attributes In Message", description="Whether the body ends with the FlowFile's metadata and "
    "attributes.", required=True, default="false", allowed_values=["true", "false"])

SUCCESS = Relationship("success", "FlowFiles whose e-mail was accepted by the SMTP server")
FAILURE = Relationship("failure", "FlowFiles whose e-mail could not be built or sent; penalized")

#: The mail session properties Flowsite honours as dynamic properties, and what they do.
MAIL_PROPERTIES = {
    "mail.smtp.ssl.enable": "true: use TLS from the first byte (SMTPS) whatever the socket factory",
    "mail.smtp.ssl.trust": "'*' or host names (space-separated) whose certificates are trusted unchecked",
    "mail.smtp.ssl.checkserveridentity": "false: accept a certificate issued for another host name",
    "mail.smtp.socketFactory.fallback": "false: no plain SMTP when the SMTPS handshake fails",
    "mail.smtp.starttls.required": "true: fail when the server does not offer STARTTLS",
    "mail.smtp.connectiontimeout": "milliseconds to wait for the connection (default 30000)",
    "mail.smtp.timeout": "milliseconds to wait for each answer of the server (default 30000)",
    "mail.smtp.localhost": "the host name sent in EHLO/HELO",
    "mail.smtp.from": "the envelope sender (MAIL FROM); default: the first From address",
}
_STANDARD_MAIL_PROPERTIES = {
    "mail.smtp.host", "mail.smtp.port", "mail.smtp.socketFactory.port", "mail.smtp.socketFactory.class",
    "mail.smtp.auth", "mail.smtp.starttls.enable", "mail.smtp.user", "mail.smtp.password",
}
_DEFAULT_TIMEOUT = 30.0
_BATCH = 50
_SEPARATOR = "\n\n--------------------------------------------------\n"
_HEADER_NAME = re.compile(r"[!-9;-~]+")
#: Messages are built with the classic email API and sent with CRLF line ends.
_WIRE = compat32.clone(linesep="\r\n")


def _mail_property_validator(name: str):
    def validate(value: str, context) -> str | None:
        if name in _STANDARD_MAIL_PROPERTIES:
            return "sets what a standard property of PutEmail sets; use that property"
        if name not in MAIL_PROPERTIES:
            return f"is not a mail session property Flowsite honours ({', '.join(MAIL_PROPERTIES)})"
        return None
    return validate


class PutEmail(Processor):
    """Sends an e-mail for each FlowFile through an SMTP server.

    The body is the Message property, or the FlowFile's content (decoded with Input Character
    Set) when 'Flow file content as message' is true, followed by the FlowFile's metadata and
    attributes when Include All Attributes In Message is true. With Attach File the content is
    also attached, named after the 'filename' attribute. Attributes whose names match
    'Attributes to Send as Headers (Regex)' become headers. Non-ASCII header values are
    encoded (RFC 2047).

    Connections follow JavaMail as NiFi configures it: with the default socket factory
    ``javax.net.ssl.SSLSocketFactory`` the connection starts with a TLS handshake (SMTPS, as on
    port 465) and falls back to plain SMTP when the handshake fails; with SMTP STARTTLS the
    connection switches to TLS when the server offers STARTTLS. Certificates are checked
    against the system's trusted authorities and the host name. Authentication happens when
    SMTP Auth is true, a username is set and the server offers AUTH. The dynamic properties
    listed in ``MAIL_PROPERTIES`` (mail.smtp.ssl.trust, mail.smtp.timeout, ...) tune this;
    other JavaMail properties are reported invalid. OAuth2 authorization is not offered.

    A FlowFile whose message cannot be built (an address that does not parse, no recipients,
    an expression that fails) is penalized and routed to failure. When the server cannot be
    reached or refuses the message, the FlowFile is penalized and routed to failure, the rest
    of the batch goes back to the queue, and the processor yields. FlowFiles of one trigger that
    use the same server share a connection. Connections are confined (``engine.confinement``):
    a refused server address fails the FlowFile with a bulletin saying why. Each e-mail sent gets a SEND provenance event whose
    transit URI is ``smtp://host:port``. If the server accepts the message for some recipients
    only, the FlowFile goes to success and a warning names the refused ones. Delivery is at
    least once: a crash after sending and before committing sends the e-mail again.
    """

    waits_on_io = True

    nifi_type = "org.apache.nifi.processors.standard.PutEmail"
    tags = ("email", "put", "notify", "smtp")
    properties = (SMTP_HOSTNAME, SMTP_PORT, AUTHORIZATION_MODE, SMTP_USERNAME, SMTP_PASSWORD, SMTP_AUTH, SMTP_TLS,
                  SMTP_SOCKET_FACTORY, HEADER_XMAILER, ATTRIBUTE_NAME_REGEX, CONTENT_TYPE, FROM, TO, CC, BCC,
                  REPLY_TO, SUBJECT, MESSAGE, CONTENT_AS_MESSAGE, INPUT_CHARACTER_SET, ATTACH_FILE,
                  INCLUDE_ALL_ATTRIBUTES)
    relationships = (SUCCESS, FAILURE)
    input_requirement = InputRequirement.REQUIRED
    dynamic_properties = DynamicProperties(
        "mail.smtp.<name>", "a value", "A JavaMail session property; see MAIL_PROPERTIES for those honoured.",
        _FLOWFILE)

    @classmethod
    def dynamic_property_descriptor(cls, name: str) -> PropertyDescriptor | None:
        return PropertyDescriptor(name, description=MAIL_PROPERTIES.get(name, "A JavaMail session property"),
                                  dynamic=True, expression_language=_FLOWFILE,
                                  validators=[_mail_property_validator(name)])

    def validate(self, context):
        if not any(context.property(p).is_set() for p in (TO, CC, BCC)):
            yield "at least one of 'To', 'CC' and 'BCC' must be set"
        factory = context.property(SMTP_SOCKET_FACTORY).value or ""
        if "${" not in factory and factory not in (SSL_SOCKET_FACTORY, PLAIN_SOCKET_FACTORY):
            yield f"'{SMTP_SOCKET_FACTORY.name}' must be {SSL_SOCKET_FACTORY} or {PLAIN_SOCKET_FACTORY}, not {factory!r}"

    def on_scheduled(self, context):
        self._confinement = context.confinement
        regex = context.property(ATTRIBUTE_NAME_REGEX)
        self._header_pattern = regex.as_regex() if regex.is_set() else None
        self._charset = context.property(INPUT_CHARACTER_SET).value.strip()
        self._attach = context.property(ATTACH_FILE).as_bool()
        self._include_attributes = context.property(INCLUDE_ALL_ATTRIBUTES).as_bool()

    def on_trigger(self, context, session):
        flowfiles = session.get_batch(_BATCH)
        connections: dict[_Settings, smtplib.SMTP] = {}
        try:
            for index, flowfile in enumerate(flowfiles):
                try:
                    settings, envelope, message = self._prepare(context, session, flowfile)
                except _BadMessage as problem:
                    context.logger.error("cannot build the e-mail for %s: %s; routing to failure", flowfile.uuid,
                                         problem)
                    session.transfer(session.penalize(flowfile), FAILURE)
                    continue
                started = time.monotonic()
                try:
                    refused = self._send(connections, settings, envelope, message)
                except OSError as error:
                    stale = connections.pop(settings, None)
                    if stale is not None:
                        stale.close()
                    reason = (context.refused(error) if isinstance(error, ConfinementError)
                              else f"{type(error).__name__}: {error}")
                    context.logger.error("failed to send the e-mail for %s through %s:%d: %s; routing to failure "
                                         "and yielding", flowfile.uuid, settings.host, settings.port, reason)
                    session.transfer(session.penalize(flowfile), FAILURE)
                    for untouched in flowfiles[index + 1:]:
                        session.transfer(untouched)
                    context.yield_processor()
                    return
                if refused:
                    context.logger.warning("the SMTP server refused recipients %s of the e-mail for %s",
                                           ", ".join(sorted(refused)), flowfile.uuid)
                session.provenance.send(flowfile, f"smtp://{settings.host}:{settings.port}",
                                        details=f"to {', '.join(envelope[1])}",
                                        duration=int((time.monotonic() - started) * 1000))
                session.transfer(flowfile, SUCCESS)
        finally:
            for connection in connections.values():
                try:
                    connection.quit()
                except (OSError, smtplib.SMTPException):
                    connection.close()

    # -- building the message ---------------------------------------------------------------

    def _prepare(self, context, session, flowfile):
        try:
            def value(descriptor):
                return context.property(descriptor).evaluate(flowfile).value

            mail = {name: prop.evaluate(flowfile).value for name, prop in context.dynamic_properties.items()}
            settings = self._settings(context, flowfile, mail)
            senders = _addresses(value(FROM), FROM.name)
            if not senders:
                raise _BadMessage("'From' evaluates to nothing")
            to, cc, bcc = (_addresses(value(p), p.name) for p in (TO, CC, BCC))
            if not (to or cc or bcc):
                raise _BadMessage("'To', 'CC' and 'BCC' evaluate to no recipient")
            reply_to = _addresses(value(REPLY_TO), REPLY_TO.name)
            body = self._body(context, session, flowfile)
            content_type = value(CONTENT_TYPE) or "text/plain"
            message = self._mime(session, flowfile, body, content_type)
            message["From"] = ", ".join(header for header, _ in senders)
            if to:
                message["To"] = ", ".join(header for header, _ in to)
            if cc:
                message["Cc"] = ", ".join(header for header, _ in cc)
            if reply_to:
                message["Reply-To"] = ", ".join(header for header, _ in reply_to)
            message["Subject"] = _header_value(value(SUBJECT) or "")
            message["X-Mailer"] = _header_value(value(HEADER_XMAILER) or "")
            message["Date"] = formatdate(localtime=True)
            message["Message-ID"] = make_msgid()
            if self._header_pattern is not None:
                for name, text in flowfile.attributes.items():
                    if self._header_pattern.fullmatch(name):
                        if _HEADER_NAME.fullmatch(name):
                            message[name] = _header_value(text)
                        else:
                            context.logger.warning("attribute %r cannot be a header name; not sent", name)
        except ExpressionError as error:
            raise _BadMessage(f"an expression failed: {error}") from error
        sender = mail.get("mail.smtp.from") or senders[0][1]
        recipients = [address for _, address in to + cc + bcc]
        return settings, (sender, recipients), message.as_bytes(policy=_WIRE)

    def _settings(self, context, flowfile, mail: dict[str, str | None]) -> _Settings:
        def value(descriptor):
            return (context.property(descriptor).evaluate(flowfile).value or "").strip()

        host = value(SMTP_HOSTNAME)
        if not host:
            raise _BadMessage("'SMTP Hostname' evaluates to nothing")
        port_text = value(SMTP_PORT)
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise _BadMessage(f"'SMTP Port' evaluates to {port_text!r}, which is not a port")
        factory = value(SMTP_SOCKET_FACTORY)
        if factory not in (SSL_SOCKET_FACTORY, PLAIN_SOCKET_FACTORY):
            raise _BadMessage(f"'SMTP Socket Factory' evaluates to {factory!r}, which is neither "
                              f"{SSL_SOCKET_FACTORY} nor {PLAIN_SOCKET_FACTORY}")

        def flag(text: str | None, default: bool) -> bool:
            return default if text is None else text.strip().lower() == "true"

        def millis(name: str) -> float:
            text = (mail.get(name) or "").strip()
            if not text:
                return _DEFAULT_TIMEOUT
            if not text.isdigit() or int(text) == 0:
                raise _BadMessage(f"'{name}' must be a positive number of milliseconds, not {text!r}")
            return int(text) / 1000

        trust = (mail.get("mail.smtp.ssl.trust") or "").split()
        return _Settings(
            host=host, port=int(port_text),
            username=value(SMTP_USERNAME) if flag(value(SMTP_AUTH), True) else "",
            password=context.property(SMTP_PASSWORD).evaluate(flowfile).value or "",
            implicit_tls=factory == SSL_SOCKET_FACTORY or flag(mail.get("mail.smtp.ssl.enable"), False),
            fallback=factory == SSL_SOCKET_FACTORY and not flag(mail.get("mail.smtp.ssl.enable"), False)
            and flag(mail.get("mail.smtp.socketFactory.fallback"), True),
            starttls=flag(value(SMTP_TLS), False),
            starttls_required=flag(mail.get("mail.smtp.starttls.required"), False),
            trust_all="*" in trust or host in trust,
            check_identity=flag(mail.get("mail.smtp.ssl.checkserveridentity"), True),
            connect_timeout=millis("mail.smtp.connectiontimeout"), timeout=millis("mail.smtp.timeout"),
            local_hostname=(mail.get("mail.smtp.localhost") or "").strip() or socket.gethostname())

    def _body(self, context, session, flowfile) -> str:
        if context.property(CONTENT_AS_MESSAGE).evaluate(flowfile).as_bool():
            body = session.read_bytes(flowfile).decode(self._charset, errors="replace")
        else:
            body = context.property(MESSAGE).evaluate(flowfile).value or ""
        if self._include_attributes:
            body += _attribute_listing(flowfile)
        return body

    def _mime(self, session, flowfile, body: str, content_type: str):
        text = _text_part(body, content_type, self._charset)
        if not self._attach:
            return text
        attachment = MIMEApplication(session.read_bytes(flowfile), "octet-stream")
        filename = flowfile.attributes.get("filename") or flowfile.uuid
        attachment.add_header("Content-Disposition", "attachment",
                              filename=filename if filename.isascii() else ("utf-8", "", filename))
        message = MIMEMultipart("mixed")
        message.attach(text)
        message.attach(attachment)
        return message

    # -- sending ----------------------------------------------------------------------------

    def _send(self, connections: dict, settings: _Settings, envelope, message: bytes) -> dict:
        connection = connections.get(settings)
        if connection is None:
            connection = connections[settings] = _connect(settings, self._confinement)
        sender, recipients = envelope
        return connection.sendmail(sender, recipients, message)


@dataclass(frozen=True)
class _Settings:
    """How to reach and talk to one SMTP server."""

    host: str
    port: int
    username: str
    password: str
    implicit_tls: bool
    fallback: bool
    starttls: bool
    starttls_required: bool
    trust_all: bool
    check_identity: bool
    connect_timeout: float
    timeout: float
    local_hostname: str

    def tls_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context()
        if self.trust_all:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        elif not self.check_identity:
            context.check_hostname = False
        return context


class _BadMessage(Exception):
    """Why the e-mail of one FlowFile cannot be built."""


class _ConfinedSMTP(smtplib.SMTP):
    """An SMTP client whose connection goes through a confinement policy."""

    def __init__(self, policy: Policy, *args, **kwargs) -> None:
        self._policy = policy
        super().__init__(*args, **kwargs)

    def _get_socket(self, host, port, timeout):
        return self._policy.connect(host, port, timeout, self.source_address)


class _ConfinedSMTPS(smtplib.SMTP_SSL, _ConfinedSMTP):
    """SMTPS through a confinement policy (``SMTP_SSL`` wraps the socket ``_ConfinedSMTP`` opens)."""

    def __init__(self, policy: Policy, *args, **kwargs) -> None:
        self._policy = policy
        smtplib.SMTP_SSL.__init__(self, *args, **kwargs)


def _connect(settings: _Settings, policy: Policy) -> smtplib.SMTP:
    """An SMTP session ready to send: connected, greeted, secured and authenticated as configured."""
    context = settings.tls_context()
    connection = None
    if settings.implicit_tls:
        try:
            connection = _ConfinedSMTPS(policy, settings.host, settings.port, local_hostname=settings.local_hostname,
                                        timeout=settings.connect_timeout, context=context)
        except ssl.SSLError:
            if not settings.fallback:
                raise
    secured = connection is not None
    if connection is None:
        connection = _ConfinedSMTP(policy, settings.host, settings.port, local_hostname=settings.local_hostname,
                                   timeout=settings.connect_timeout)
    try:
        connection.sock.settimeout(settings.timeout)
        connection.ehlo_or_helo_if_needed()
        if settings.starttls and not secured:
            if connection.has_extn("starttls"):
                connection.starttls(context=context)
                connection.ehlo()
            elif settings.starttls_required:
                raise smtplib.SMTPNotSupportedError("the server does not offer STARTTLS")
        if settings.username and connection.has_extn("auth"):
            connection.login(settings.username, settings.password)
    except BaseException:
        connection.close()
        raise
    return connection


def _addresses(text: str | None, prop: str) -> list[tuple[str, str]]:
    """(header form, bare address) of each comma-separated address in ``text``."""
    if not text or not text.strip():
        return []
    found = []
    for name, address in getaddresses([text]):
        if not name and not address:
            continue
        local, at, domain = address.partition("@")
        if not (local and at and domain) or "@" in domain or any(c.isspace() for c in address):
            raise _BadMessage(f"'{prop}' holds {text!r}, which does not parse as e-mail addresses")
        found.append((formataddr((name, address), charset="utf-8"), address))
    return found


def _header_value(text: str) -> str | Header:
    text = " ".join(text.splitlines())
    return text if text.isascii() else Header(text, "utf-8")


def _text_part(body: str, content_type: str, charset_name: str) -> MIMENonMultipart:
    kind, *parameters = content_type.split(";")
    main, _, sub = kind.strip().partition("/")
    if not main or not sub or " " in kind.strip():
        raise _BadMessage(f"'Content Type' is {content_type!r}, which is not a MIME type such as text/plain")
    part = MIMENonMultipart(main, sub)
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip() and name.strip().lower() != "charset":
            part.set_param(name.strip(), value.strip().strip('"'))
    # Characters the character set cannot hold become '?', as a Java encoder would write them.
    representable = body.encode(charset_name, errors="replace").decode(charset_name)
    part.set_payload(representable, charset=Charset(charset_name))
    return part


def _attribute_listing(flowfile) -> str:
    entered = datetime.fromtimestamp(flowfile.entry_date / 1000, UTC).astimezone()
    lines = [_SEPARATOR, "\nStandard FlowFile Metadata:",
             f"\n\tid = '{flowfile.uuid}'",
             f"\n\tentryDate = '{entered.strftime('%a %b %d %H:%M:%S %Z %Y')}'",
             f"\n\tfileSize = '{flowfile.size}'",
             "\nFlowFile Attributes:"]
    lines += [f"\n\t{name} = '{value}'" for name, value in flowfile.attributes.items()]
    lines.append("\n")
    return "".join(lines)
