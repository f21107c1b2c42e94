"""The runtime tests' kit: a master on loopback (in a thread) and hand-made agents
speaking the protocol over mutual TLS with the session's test certificates
(the ``pki`` fixture: host h is 10.0.0.(h+1))."""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request

import pytest
from coflowkit.runtime import tls
from coflowkit.runtime.emulator import EmulatedAgent
from coflowkit.runtime.master import Limits, Master

TIMEOUT_S = 10.0
PKI_HOSTS = 8


def pki_ip(host: int) -> str:
    return f"10.0.0.{host + 1}"


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    """A cluster CA with the master's and hosts 0..7's certificates (host h is
    10.0.0.(h+1), the master 127.0.0.1), and token files: ``tokens`` (one
    read,register token) and ``read-tokens`` (read only)."""
    d = str(tmp_path_factory.mktemp("pki"))
    tls.init_ca(d)
    tls.issue(d, None, ["127.0.0.1"])
    for h in range(PKI_HOSTS):
        tls.issue(d, h, [pki_ip(h)])
    for name, scopes in (("tokens", "read,register"), ("read-tokens", "read")):
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{tls.new_token()} {scopes}\n")
    return d


class FakeAgent(EmulatedAgent):
    """An emulated agent (coflowkit.runtime.emulator) whose HELLO defaults to
    the test certificates' addresses."""

    def hello(self, host: int, addrs=None, boot: bytes = b"\1" * 16):
        super().hello(host, [pki_ip(host)] if addrs is None else addrs, boot)


def connect(master, pki, host, boot=b"\1" * 16) -> FakeAgent:
    a = FakeAgent(master.address, pki, host)
    a.hello(host, boot=boot)
    return a


def wait_for(cond, what: str, timeout=TIMEOUT_S):
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.01)


def wait_hosts(master, n):
    wait_for(lambda: len(master.by_host) == n, f"{n} agents")


def http(m, path, body=None, token=None, method=None, scheme="http", context=None):
    url = f"{scheme}://{m.http_address[0]}:{m.http_address[1]}{path}"
    data = (
        None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    )
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    req = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT_S, context=context) as r:
            raw = r.read().decode()
            return r.status, (raw if path == "/metrics" else json.loads(raw))
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read().decode())


def token_of(pki, name="tokens") -> str:
    with open(os.path.join(pki, name), encoding="utf-8") as fh:
        return fh.read().split()[0]


@pytest.fixture
def master_io():
    """Who holds the master's agent sessions; a module parametrizes it
    (``@pytest.mark.parametrize("master_io", ["python", "rust"])``) to run its
    tests against both."""
    return "python"


@pytest.fixture
def start_master(pki, master_io):
    """``start_master(policy="fair", hosts=3, **kw)``: a running master (thread)
    with the test PKI, links of 10 MB/s, Δ = 10 ms; stopped after the test."""
    started = []

    def start(policy="fair", hosts=3, capacity=10e6, limits=None, **kw):
        kw.setdefault("http", ("127.0.0.1", 0))
        kw.setdefault("interval", 0.01)
        kw.setdefault("io", master_io)
        kw.setdefault("tls_dir", pki)
        m = Master(
            policy, kw.pop("params", {}), hosts, capacity, tls.master_context(pki),
            listen=("127.0.0.1", 0), limits=limits or Limits(max_agents=200), **kw,
        )  # fmt: skip
        t = threading.Thread(target=m.run, daemon=True)
        t.start()
        started.append((m, t))
        return m

    yield start
    for m, t in started:
        m.close()
        t.join(timeout=10)
        assert not t.is_alive(), "the master did not stop"


@pytest.fixture
def master(start_master):
    return start_master()
