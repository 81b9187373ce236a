"""Fixtures for controller-service tests: a harness that validates and enables services for real."""

from __future__ import annotations

import datetime
import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from engine.components import (
    ConfigurationContext,
    ServiceInitContext,
    ServiceReference,
    validate_properties,
)
from engine.components.validation import component_descriptors


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and localhost in ``directory``: (cert path, key path)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class Services:
    """Enables controller services the way the runtime does: validate, then ``on_enabled``; every
    enabled one is disabled at the end of the test. Services can reference earlier ones by name."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.instances: dict[str, object] = {}
        self._properties: dict[str, dict[str, str | None]] = {}
        self._enabled: list[str] = []

    def service_reference(self, identifier: str) -> ServiceReference | None:
        instance = self.instances.get(identifier)
        if instance is None:
            return None
        return ServiceReference(identifier, identifier, type(instance).type_name, identifier in self._enabled,
                                type(instance).provides, instance)

    def problems(self, cls, properties) -> list[str]:
        """What validation says of ``cls`` configured with ``properties``."""
        found = [str(p) for p in validate_properties(cls, properties, self)]
        if not found:
            descriptors, _ = component_descriptors(cls, properties)
            found = list(cls().validate(ConfigurationContext(descriptors, properties, self)))
        return found

    def enable(self, name: str, cls, properties: dict[str, str | None]):
        """Create, validate and enable a service called ``name``; returns the instance."""
        problems = self.problems(cls, properties)
        assert not problems, problems
        instance = self.instances.get(name)
        if instance is None or type(instance) is not cls:
            instance = self.instances[name] = cls()
        self._properties[name] = dict(properties)
        descriptors, _ = component_descriptors(cls, properties)
        data_dir = self.directory / name
        data_dir.mkdir(parents=True, exist_ok=True)
        instance.on_enabled(ConfigurationContext(descriptors, properties, self),
                            ServiceInitContext(name, name, str(data_dir)))
        self._enabled.append(name)
        return instance

    def disable(self, name: str) -> None:
        """Disable an enabled service (it keeps its instance, so ``reenable`` can enable it again)."""
        self._enabled.remove(name)
        self.instances[name].on_disabled()

    def reenable(self, name: str):
        """Enable a disabled service again with the properties it had."""
        return self.enable(name, type(self.instances[name]), self._properties[name])

    def close(self) -> None:
        for name in reversed(list(self._enabled)):
            self.disable(name)


@pytest.fixture
def services(tmp_path):
    harness = Services(tmp_path / "services")
    yield harness
    harness.close()
