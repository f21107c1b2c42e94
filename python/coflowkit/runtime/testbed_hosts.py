"""The testbed's hosts: their names and addresses, and how the testbed starts
processes on them (a module of its own, so that the testbed and its
decentralized runs, :mod:`coflowkit.runtime.testbed_stream`, share it without
importing each other)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

PREFIX = "cfk"
SWITCH = f"{PREFIX}-sw"
DATA_NET = "10.77.0"
CTL_NET = "10.78.0"
MASTER_IP = f"{CTL_NET}.254"


def host_ns(i: int) -> str:
    return f"{PREFIX}-h{i}"


def host_ip(i: int) -> str:
    return f"{DATA_NET}.{i + 1}"


# -- processes ----------------------------------------------------------------


# The control plane (master and agents) runs at a real-time priority. On a
# cluster the master has a machine of its own and an agent needs ~2 % of a
# core; here every host's applications and packets share this machine's cores,
# and a starved master falls silent long enough for agents to fail open. The
# kernel's real-time throttling (sched_rt_runtime_us) still bounds them.
CONTROL_PRIORITY = ["chrt", "--rr", "10"]


def _python(ns: str | None, *args: str, control: bool = False) -> list[str]:
    base = [sys.executable, "-m", *args]
    if control and shutil.which("chrt"):
        base = CONTROL_PRIORITY + base
    return (["ip", "netns", "exec", ns] if ns else []) + base


def child_env() -> dict:
    """Environment for child processes: they import this very coflowkit package
    (installed or a source tree), whatever the working directory."""
    env = dict(os.environ)
    pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = pkg + os.pathsep + env.get("PYTHONPATH", "")
    return env


def make_identities(
    directory: str,
    hosts: int,
    host_ips: list[list[str]] | None = None,
    master_ips: list[str] | None = None,
) -> str:
    """A fresh cluster CA in ``directory``, the master's certificate, one per
    host (with its addresses: by default the testbed's data and management
    addresses), and an API token file (read, register)."""
    from coflowkit.runtime import tls

    if os.path.exists(directory):
        shutil.rmtree(directory)
    tls.init_ca(directory)
    tls.issue(directory, None, master_ips or [MASTER_IP])
    for i in range(hosts):
        ips = host_ips[i] if host_ips else [host_ip(i), f"{CTL_NET}.{i + 1}"]
        tls.issue(directory, i, ips)
    fd = os.open(os.path.join(directory, "tokens"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(f"{tls.new_token()} read,register\n")
    return directory


def stop_all(procs: list[subprocess.Popen], timeout: float = 10.0) -> None:
    """SIGTERM to every process, then a kill for any still running after ``timeout``."""
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
