"""PutEmail against a real local SMTP server (aiosmtpd), plain, SMTPS and STARTTLS."""

from __future__ import annotations

import email
import email.policy
import ssl
from dataclasses import dataclass, field

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from engine.processors.put_email import PutEmail
from engine.runtime import Outcome
from engine.testing import ProcessorTestRunner
from tests.engine.services.conftest import make_certificate
from tests.servers import free_port

PLAIN = {"SMTP Socket Factory": "javax.net.SocketFactory"}


@dataclass
class Received:
    mail_from: str
    recipients: list[str]
    message: email.message.EmailMessage
    tls: bool
    login: str | None


@dataclass
class Handler:
    messages: list[Received] = field(default_factory=list)
    greetings: int = 0

    async def handle_EHLO(self, server, session, envelope, hostname, responses):
        self.greetings += 1
        session.host_name = hostname
        return responses

    async def handle_DATA(self, server, session, envelope):
        login = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        self.messages.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                      email.message_from_bytes(envelope.original_content,
                                                               policy=email.policy.default),
                                      server.transport.get_extra_info("ssl_object") is not None, login))
        return "250 OK"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and (auth_data.login, auth_data.password) == (b"alice", b"wonderland")
    return AuthResult(success=ok, handled=False, auth_data=auth_data)


class SmtpServer:
    def __init__(self, **kwargs) -> None:
        self.handler = Handler()
        self.port = free_port()
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port, **kwargs)

    def __enter__(self):
        self.controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self.controller.stop()

    @property
    def messages(self) -> list[Received]:
        return self.handler.messages


@pytest.fixture(scope="module")
def certificate(tmp_path_factory):
    return make_certificate(tmp_path_factory.mktemp("tls"))


def server_context(certificate) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    return context


def runner_for(tmp_path, server, **properties) -> ProcessorTestRunner:
    return ProcessorTestRunner(PutEmail, tmp_path, {
        "SMTP Hostname": "127.0.0.1", "SMTP Port": str(server.port), "From": "sender@example.com",
        "To": "to@example.com", **properties})


def test_sends_the_message_with_its_headers_and_recipients(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, **{
            "From": "Sender Name <sender@example.com>", "To": "a@example.com, B <b@example.com>",
            "CC": "c@example.com", "BCC": "hidden@example.com", "Reply-To": "replies@example.com",
            "Subject": "Report for ${customer}", "Message": "Hello ${customer}!",
            "SMTP X-Mailer Header": "Flowsite test"}) as runner:
        sent = runner.enqueue(b"ignored content", customer="ACME")
        (outcome,) = runner.run()
        assert outcome is Outcome.DID_WORK
        assert [f.uuid for f in runner.output("success")] == [sent.uuid]
        (received,) = server.messages
        assert received.mail_from == "sender@example.com"
        assert sorted(received.recipients) == ["a@example.com", "b@example.com", "c@example.com",
                                               "hidden@example.com"]
        message = received.message
        assert message["From"] == "Sender Name <sender@example.com>"
        assert message["To"] == "a@example.com, B <b@example.com>"
        assert message["Cc"] == "c@example.com"
        assert message["Bcc"] is None
        assert message["Reply-To"] == "replies@example.com"
        assert message["Subject"] == "Report for ACME"
        assert message["X-Mailer"] == "Flowsite test"
        assert message["Date"] and message["Message-ID"]
        assert message.get_content_type() == "text/plain"
        assert message.get_content_charset() == "utf-8"
        assert message.get_content() == "Hello ACME!"
        assert not received.tls and received.login is None
        (event,) = runner.events(event_type="SEND")
        assert event.flowfile_uuid == sent.uuid
        assert event.transit_uri == f"smtp://127.0.0.1:{server.port}"
        assert "hidden@example.com" in event.details


def test_non_ascii_subject_body_and_names_are_encoded(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, To="Zoë <zoe@example.com>", Subject="Grüße ☃", Message="naïve café ☕") as runner:
        runner.enqueue(b"")
        runner.run()
        message = server.messages[0].message
        assert message["Subject"] == "Grüße ☃"
        assert message["To"].addresses[0].display_name == "Zoë"
        assert message.get_content() == "naïve café ☕"
        assert b"=?utf-8?" in message.as_bytes()  # encoded words, not raw 8-bit headers


def test_content_as_message_with_character_set_and_content_type(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, **{
            "email-ff-content-as-message": "true", "Message": "not used", "input-character-set": "ISO-8859-1",
            "Content Type": "text/html"}) as runner:
        runner.enqueue("<p>café</p>".encode("latin-1"))
        runner.run()
        message = server.messages[0].message
        assert message.get_content_type() == "text/html"
        assert message.get_content_charset() == "iso-8859-1"
        # quoted-printable: the line break ending the SMTP data belongs to the body
        assert message.get_content().rstrip("\r\n") == "<p>café</p>"


def test_include_all_attributes_appends_metadata(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, **{
            "Message": "body", "Include All Attributes In Message": "true"}) as runner:
        sent = runner.enqueue(b"12345", colour="blue")
        runner.run()
        body = server.messages[0].message.get_content()
        assert body.startswith("body\n\n--------------------------------------------------\n")
        assert f"\tid = '{sent.uuid}'" in body
        assert "\tfileSize = '5'" in body
        assert "FlowFile Attributes:" in body
        assert "\tcolour = 'blue'" in body


def test_attach_file(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, **{
            "Message": "see attached", "Attach File": "true"}) as runner:
        runner.enqueue(b"\x00\x01binary\xff", filename="data.bin")
        runner.enqueue(b"second", filename="résumé.txt")
        runner.run()
        first, second = (received.message for received in server.messages)
        assert first.get_content_type() == "multipart/mixed"
        text, attachment = first.iter_parts()
        assert text.get_content() == "see attached"
        assert attachment.get_filename() == "data.bin"
        assert attachment.get_content_type() == "application/octet-stream"
        assert attachment.get_content() == b"\x00\x01binary\xff"
        assert next(second.iter_attachments()).get_filename() == "résumé.txt"


def test_attributes_matching_the_regex_become_headers(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, **{
            "attribute-name-regex": "X-.*", "Message": "m"}) as runner:
        runner.enqueue(b"", **{"X-Ticket": "T-42", "X-Multi": "line one\nline two", "Other": "no"})
        runner.run()
        message = server.messages[0].message
        assert message["X-Ticket"] == "T-42"
        assert message["X-Multi"] == "line one line two"
        assert message["Other"] is None


def test_one_connection_serves_the_batch(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, Message="${n}") as runner:
        for n in range(3):
            runner.enqueue(b"", n=str(n))
        runner.run()
        assert [r.message.get_content() for r in server.messages] == ["0", "1", "2"]
        assert server.handler.greetings == 1


def test_default_socket_factory_falls_back_to_plain_smtp(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, Message="m") as runner:
        runner.enqueue(b"")
        runner.run()
        assert len(runner.output("success")) == 1
        assert not server.messages[0].tls


def test_without_fallback_a_plain_server_is_a_failure(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, Message="m", **{
            "mail.smtp.socketFactory.fallback": "false"}) as runner:
        runner.enqueue(b"")
        (outcome,) = runner.run()
        assert outcome is Outcome.YIELDED
        assert len(runner.output("failure")) == 1
        assert server.messages == []


def test_smtps_with_the_default_socket_factory(tmp_path, certificate):
    with SmtpServer(ssl_context=server_context(certificate)) as server, runner_for(
            tmp_path, server, Message="m", **{"mail.smtp.ssl.trust": "*"}) as runner:
        runner.enqueue(b"")
        runner.run()
        assert len(runner.output("success")) == 1
        assert server.messages[0].tls


def test_starttls(tmp_path, certificate):
    context = server_context(certificate)
    with SmtpServer(tls_context=context, require_starttls=True) as server:
        with runner_for(tmp_path, server, **PLAIN, Message="m", **{
                "SMTP TLS": "true", "mail.smtp.ssl.trust": "127.0.0.1"}) as runner:
            runner.enqueue(b"")
            runner.run()
            assert len(runner.output("success")) == 1
            assert server.messages[0].tls
        with runner_for(tmp_path, server, **PLAIN, Message="m") as runner:
            runner.enqueue(b"")
            (outcome,) = runner.run()
            assert outcome is Outcome.YIELDED  # the server insists on STARTTLS
            assert len(runner.output("failure")) == 1
    assert len(server.messages) == 1


def test_starttls_checks_the_certificate(tmp_path, certificate, monkeypatch):
    with SmtpServer(tls_context=server_context(certificate)) as server:
        with runner_for(tmp_path, server, **PLAIN, Message="m", **{"SMTP TLS": "true"}) as runner:
            runner.enqueue(b"")
            runner.run()
            assert len(runner.output("failure")) == 1
            assert any("CERTIFICATE_VERIFY_FAILED" in message for message in runner.bulletins)
        monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))
        with runner_for(tmp_path, server, **PLAIN, Message="m", **{"SMTP TLS": "true"}) as runner:
            runner.enqueue(b"")
            runner.run()
            assert len(runner.output("success")) == 1
        assert [r.tls for r in server.messages] == [True]


def test_starttls_required_refuses_a_server_without_it(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, Message="m", **{
            "SMTP TLS": "true", "mail.smtp.starttls.required": "true"}) as runner:
        runner.enqueue(b"")
        runner.run()
        assert len(runner.output("failure")) == 1
        assert any("STARTTLS" in message for message in runner.bulletins)


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_authentication(tmp_path):
    with SmtpServer(authenticator=authenticator, auth_required=True, auth_require_tls=False) as server:
        with runner_for(tmp_path, server, **PLAIN, Message="m", **{
                "SMTP Username": "alice", "SMTP Password": "wonderland"}) as runner:
            runner.enqueue(b"")
            runner.run()
            assert len(runner.output("success")) == 1
        assert server.messages[0].login == "alice"
        with runner_for(tmp_path, server, **PLAIN, Message="m", **{
                "SMTP Username": "alice", "SMTP Password": "wrong"}) as runner:
            runner.enqueue(b"")
            (outcome,) = runner.run()
            assert outcome is Outcome.YIELDED
            assert len(runner.output("failure")) == 1
            assert any("SMTPAuthenticationError" in message for message in runner.bulletins)
        with runner_for(tmp_path, server, **PLAIN, Message="m", **{
                "SMTP Username": "alice", "SMTP Password": "wonderland", "SMTP Auth": "false"}) as runner:
            runner.enqueue(b"")
            runner.run()
            assert len(runner.output("failure")) == 1  # no login, and the server requires one
    assert len(server.messages) == 1


def test_server_down_fails_penalizes_and_yields(tmp_path):
    port = free_port()
    with ProcessorTestRunner(PutEmail, tmp_path, {
            "SMTP Hostname": "127.0.0.1", "SMTP Port": str(port), "From": "s@example.com", "To": "t@example.com",
            "Message": "m", **PLAIN}) as runner:
        for n in range(3):
            runner.enqueue(b"", n=str(n))
        (outcome,) = runner.run()
        assert outcome is Outcome.YIELDED
        (failed,) = runner.output("failure")
        assert failed.attributes["n"] == "0"
        assert failed.penalty_expiration > 0
        assert sorted(f.attributes["n"] for f in runner.input_flowfiles()) == ["1", "2"]
        assert runner.events(event_type="SEND") == []


def test_unparseable_addresses_fail_without_yielding(tmp_path):
    with SmtpServer() as server, runner_for(tmp_path, server, **PLAIN, Message="m", To="${to}") as runner:
        runner.enqueue(b"", to="not an address")
        runner.enqueue(b"", to="")
        runner.enqueue(b"", to="fine@example.com")
        (outcome,) = runner.run()
        assert outcome is Outcome.DID_WORK
        failures = runner.output("failure")
        assert len(failures) == 2 and all(f.penalty_expiration > 0 for f in failures)
        assert len(runner.output("success")) == 1
        assert any("does not parse" in message for message in runner.bulletins)
        assert any("no recipient" in message for message in runner.bulletins)


def test_recipients_refused_by_the_server(tmp_path):
    class Picky(Handler):
        async def handle_RCPT(self, server, session, envelope, address, options):
            if address.startswith("nobody"):
                return "550 no such user"
            envelope.rcpt_tos.append(address)
            return "250 OK"

    server = SmtpServer()
    server.controller.handler = server.handler = Picky()
    with server, runner_for(tmp_path, server, **PLAIN, Message="m", To="nobody@example.com, x@example.com") as runner:
        runner.enqueue(b"")
        runner.enqueue(b"", to="only")
        runner.run()
        assert len(runner.output("success")) == 2
        assert server.messages[0].recipients == ["x@example.com"]
        assert any("refused recipients nobody@example.com" in message for message in runner.bulletins)


def test_validation(tmp_path):
    with ProcessorTestRunner(PutEmail, tmp_path, {"SMTP Hostname": "h", "From": "f@example.com"}) as runner:
        assert "at least one of 'To', 'CC' and 'BCC' must be set" in runner.validate()
    with ProcessorTestRunner(PutEmail, tmp_path, {"SMTP Hostname": "h", "From": "f@example.com", "BCC": "b@x.org",
                                                  "SMTP Socket Factory": "com.example.Factory"}) as runner:
        assert any("must be javax.net.ssl.SSLSocketFactory or javax.net.SocketFactory" in p for p in runner.validate())
    with ProcessorTestRunner(PutEmail, tmp_path, {
            "SMTP Hostname": "h", "From": "f@example.com", "To": "t@example.com",
            "authorization-mode": "oauth-based-authorization-mode", "input-character-set": "no-such-charset",
            "mail.smtp.host": "other", "mail.smtp.quitwait": "false", "mail.imap.host": "x",
            "mail.smtp.ssl.trust": "*"}) as runner:
        problems = runner.validate()
        assert any("authorization-mode" in p and "allowed values" in p for p in problems)
        assert any("input-character-set" in p for p in problems)
        assert any("'mail.smtp.host' sets what a standard property" in p for p in problems)
        assert any("'mail.smtp.quitwait' is not a mail session property" in p for p in problems)
        assert any("'mail.imap.host'" in p for p in problems)
        assert not any(p.startswith("'mail.smtp.ssl.trust'") for p in problems)
        assert not any("SMTP Port" in p for p in problems)


def test_nifi_names_and_defaults():
    assert PutEmail.nifi_type == "org.apache.nifi.processors.standard.PutEmail"
    defaults = {d.name: d.default for d in PutEmail.properties}
    assert defaults["SMTP Port"] == "25"
    assert defaults["SMTP Auth"] == "true"
    assert defaults["SMTP TLS"] == "false"
    assert defaults["SMTP Socket Factory"] == "javax.net.ssl.SSLSocketFactory"
    assert defaults["SMTP X-Mailer Header"] == "NiFi"
    assert defaults["Subject"] == "Message from NiFi"
    assert defaults["input-character-set"] == "UTF-8"
    assert [d.name for d in PutEmail.properties][-4:] == [
        "email-ff-content-as-message", "input-character-set", "Attach File", "Include All Attributes In Message"]
    assert {d.name: d.display_name for d in PutEmail.properties}["SMTP TLS"] == "SMTP STARTTLS"


def test_a_nifi_flow_configuration_is_valid(tmp_path):
    exported = {
        "SMTP Hostname": "mail.example.com", "SMTP Port": "25", "authorization-mode": "password-based-authorization-mode",
        "oauth2-access-token-provider": None, "SMTP Username": None, "SMTP Password": None, "SMTP Auth": "true",
        "SMTP TLS": "false", "SMTP Socket Factory": "javax.net.ssl.SSLSocketFactory", "SMTP X-Mailer Header": "NiFi",
        "attribute-name-regex": None, "Content Type": "text/plain", "From": "nifi@example.com",
        "To": "ops@example.com", "CC": None, "BCC": None, "Reply-To": None, "Subject": "Message from NiFi",
        "Message": "${filename}", "email-ff-content-as-message": "false", "input-character-set": "UTF-8",
        "Attach File": "false", "Include All Attributes In Message": "false"}
    with ProcessorTestRunner("org.apache.nifi.processors.standard.PutEmail", tmp_path, exported) as runner:
        assert runner.validate() == []
