"""Identities of the runtime: a cluster CA, one certificate per host and one for
the master, mutual TLS between them, and bearer tokens for the HTTP API.

``coflowkit ca init --dir D`` makes the CA (``ca.key``, ``ca.crt``);
``coflowkit ca issue --dir D --host N --ip A`` a host's key and certificate
(``host-N.key``, ``host-N.crt``), ``--master`` the master's; ``coflowkit ca
token --scope read,register`` an API token. A certificate names its role and
host in a URI subject alternative name (``urn:coflowkit:host:N`` or
``urn:coflowkit:master``) and lists the host's addresses as IP alternative
names: the master accepts a HELLO only for the host and the addresses the
peer's certificate names, and an agent talks only to a peer whose certificate
says *master*. TLS itself is Python's ``ssl`` (OpenSSL), TLS 1.3 only;
certificates are made with the ``cryptography`` package. Keys are ECDSA P-256.

Private files (keys, token files) must not be readable by group or others, or
they are refused; tokens must be long and varied enough to be unguessable.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import secrets
import ssl
import stat
from dataclasses import dataclass

from coflowkit._core import CoflowkitError

URI_PREFIX = "urn:coflowkit:"
CA_KEY, CA_CERT = "ca.key", "ca.crt"
MASTER = "master"
SCOPES = ("read", "register")
TOKEN_MIN_CHARS = 32
TOKEN_MIN_DISTINCT = 16


def host_files(host: int) -> tuple[str, str]:
    return f"host-{host}.key", f"host-{host}.crt"


MASTER_FILES = ("master.key", "master.crt")


def check_private(path: str, what: str) -> None:
    """Refuses ``path`` unless only its owner may read it (mode 0600 or stricter)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise CoflowkitError(f"{what} {path}: {e.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise CoflowkitError(f"{what} {path}: not a regular file")
    if st.st_mode & 0o077:
        raise CoflowkitError(
            f"{what} {path}: mode {stat.S_IMODE(st.st_mode):04o} lets others read it; "
            f"`chmod 600 {path}`"
        )


def _write_private(path: str, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)


def _write_public(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def init_ca(directory: str, days: int = 3650, name: str = "coflowkit cluster CA") -> str:
    """Creates the cluster CA in ``directory`` (refuses to replace one); returns
    the certificate's path."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    os.makedirs(directory, exist_ok=True)
    key_path = os.path.join(directory, CA_KEY)
    if os.path.exists(key_path):
        raise CoflowkitError(f"ca init: {key_path} exists; a CA is made once")
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    _write_private(
        key_path,
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
    cert_path = os.path.join(directory, CA_CERT)
    _write_public(cert_path, cert.public_bytes(serialization.Encoding.PEM))
    return cert_path


def issue(
    directory: str,
    host: int | None = None,
    ips: list[str] | tuple[str, ...] = (),
    dns: list[str] | tuple[str, ...] = (),
    days: int = 825,
    out: str | None = None,
) -> tuple[str, str]:
    """A key and a certificate signed by the CA in ``directory``: host ``host``'s,
    or the master's when ``host`` is None. Written to ``out`` (default: the CA's
    directory) as ``host-N.key``/``.crt`` or ``master.key``/``.crt``; returns
    their paths."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    if host is not None and not 0 <= host < 65536:
        raise CoflowkitError(f"ca issue: --host must be in 0..65535, got {host}")
    addrs = []
    for a in ips:
        try:
            addrs.append(ipaddress.ip_address(a))
        except ValueError:
            raise CoflowkitError(f"ca issue: --ip {a!r} is not an IP address") from None
    key_path = os.path.join(directory, CA_KEY)
    check_private(key_path, "CA key")
    with open(key_path, "rb") as fh:
        ca_key = serialization.load_pem_private_key(fh.read(), password=None)
    with open(os.path.join(directory, CA_CERT), "rb") as fh:
        ca_cert = x509.load_pem_x509_certificate(fh.read())
    role = MASTER if host is None else f"host:{host}"
    key_name, cert_name = MASTER_FILES if host is None else host_files(host)
    out = out or directory
    os.makedirs(out, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    now = _now()
    names: list[x509.GeneralName] = [x509.UniformResourceIdentifier(URI_PREFIX + role)]
    names += [x509.IPAddress(a) for a in addrs]
    names += [x509.DNSName(d) for d in dns]
    cn = "coflowkit master" if host is None else f"coflowkit host {host}"
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_cert.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    kp, cp = os.path.join(out, key_name), os.path.join(out, cert_name)
    if os.path.exists(kp):
        os.remove(kp)
    _write_private(
        kp,
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )
    _write_public(cp, cert.public_bytes(serialization.Encoding.PEM))
    return kp, cp


@dataclass(frozen=True)
class Identity:
    """Who a verified peer is: role ``master`` or ``host``, the host number, and
    the addresses its certificate lists."""

    role: str
    host: int | None
    ips: frozenset[str]

    def __str__(self) -> str:
        return MASTER if self.role == MASTER else f"host {self.host}"


def identity(peercert: dict | None) -> Identity:
    """The identity in a verified peer certificate (``SSLSocket.getpeercert()``)."""
    if not peercert:
        raise CoflowkitError("the peer presented no verified certificate")
    uris = [v for k, v in peercert.get("subjectAltName", ()) if k == "URI"]
    ips = frozenset(v for k, v in peercert.get("subjectAltName", ()) if k == "IP Address")
    roles = [u[len(URI_PREFIX) :] for u in uris if u.startswith(URI_PREFIX)]
    if len(roles) != 1:
        raise CoflowkitError(f"the peer's certificate names no single coflowkit role ({uris})")
    role = roles[0]
    if role == MASTER:
        return Identity(MASTER, None, ips)
    kind, _, num = role.partition(":")
    if kind != "host" or not num.isdigit() or not 0 <= int(num) < 65536:
        raise CoflowkitError(f"the peer's certificate names an unknown role {role!r}")
    return Identity("host", int(num), ips)


def _context(purpose: int, directory: str, key_name: str, cert_name: str) -> ssl.SSLContext:
    server = purpose == ssl.PROTOCOL_TLS_SERVER
    ctx = ssl.SSLContext(purpose)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    if not server:
        # The peer is checked by role (identity()), not by DNS name.
        ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    key = os.path.join(directory, key_name)
    cert = os.path.join(directory, cert_name)
    ca = os.path.join(directory, CA_CERT)
    check_private(key, "TLS key")
    for path in (cert, ca):
        if not os.path.isfile(path):
            raise CoflowkitError(f"TLS: {path} not found (see `coflowkit ca --help`)")
    try:
        ctx.load_cert_chain(cert, key)
        ctx.load_verify_locations(ca)
    except (ssl.SSLError, OSError) as e:
        raise CoflowkitError(f"TLS: cannot load {cert} / {key} / {ca}: {e}") from None
    return ctx


def master_context(directory: str) -> ssl.SSLContext:
    """The master's server context: its own certificate, clients must present one."""
    return _context(ssl.PROTOCOL_TLS_SERVER, directory, *MASTER_FILES)


def host_server_context(directory: str, host: int) -> ssl.SSLContext:
    """Host ``host``'s server context (an agent that other agents connect to)."""
    return _context(ssl.PROTOCOL_TLS_SERVER, directory, *host_files(host))


def host_client_context(directory: str, host: int) -> ssl.SSLContext:
    """Host ``host``'s client context."""
    return _context(ssl.PROTOCOL_TLS_CLIENT, directory, *host_files(host))


def api_server_context(directory: str) -> ssl.SSLContext:
    """The HTTP API over TLS with the master's certificate (clients need none)."""
    ctx = master_context(directory)
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


# -- API tokens ----------------------------------------------------------------


def new_token() -> str:
    """32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


def check_token(token: str, where: str) -> None:
    if len(token) < TOKEN_MIN_CHARS or len(set(token)) < TOKEN_MIN_DISTINCT:
        raise CoflowkitError(
            f"{where}: the token is too weak (at least {TOKEN_MIN_CHARS} characters, "
            f"{TOKEN_MIN_DISTINCT} distinct; `coflowkit ca token` makes one)"
        )


def read_tokens(path: str) -> dict[str, frozenset[str]]:
    """``{token: scopes}`` from a file of lines ``TOKEN SCOPE[,SCOPE]`` (``#``
    comments); the file must be private and every token strong."""
    check_private(path, "token file")
    tokens: dict[str, frozenset[str]] = {}
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2:
                raise CoflowkitError(f"{path}:{n}: expected `TOKEN SCOPE[,SCOPE]`")
            token, scopes = parts
            check_token(token, f"{path}:{n}")
            got = frozenset(s for s in scopes.split(",") if s)
            bad = sorted(got - set(SCOPES))
            if bad or not got:
                raise CoflowkitError(
                    f"{path}:{n}: unknown scope {', '.join(bad) or '(none)'} (scopes: {', '.join(SCOPES)})"
                )
            if token in tokens:
                raise CoflowkitError(f"{path}:{n}: the same token twice")
            tokens[token] = got
    if not tokens:
        raise CoflowkitError(f"{path}: no token")
    return tokens
