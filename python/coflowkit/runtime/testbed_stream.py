"""Decentralized Stream on the testbed (`coflowkit testbed run --policy stream
--decentralized`): one `coflowkit agent --decentralized stream` per host and
no master. Each host's coflows are registered on its own agent's loopback API
from inside the host's namespace, as a job framework on that host would."""

from __future__ import annotations

import json
import os
import subprocess

from coflowkit._core import CoflowkitError
from coflowkit.runtime.peering import API_PORT, PEER_PORT
from coflowkit.runtime.testbed_hosts import _python, child_env, host_ns, make_identities, stop_all


class DecentralCluster:
    """The agents of a decentralized run, started and stopped together."""

    def __init__(self, params: dict, hosts: int, gbps: float, out: str, interval_ms: int,
                 observe_only: bool = False, tell_fraction: float | None = None):  # fmt: skip
        self.out = out
        self.hosts = hosts
        tls_dir = make_identities(os.path.join(out, "tls"), hosts)
        params_args = [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
        self.logs = []
        self.agents = []
        for i in range(hosts):
            log = open(os.path.join(out, f"agent{i}.log"), "w")
            self.logs.append(log)
            self.agents.append(subprocess.Popen(
                _python(host_ns(i), "coflowkit", "agent", "--decentralized", "stream", *params_args,
                        "--host", str(i), "--dev", "eth0", "--gbps", str(gbps), "--tls-dir", tls_dir,
                        "--interval-ms", str(interval_ms), "--peer-port", str(PEER_PORT),
                        "--registration", f"127.0.0.1:{API_PORT}",
                        *(["--observe-only"] if observe_only else []),
                        *(["--tell-fraction", repr(tell_fraction)] if tell_fraction else []),
                        control=True),
                env=child_env(), stdout=log, stderr=subprocess.STDOUT))  # fmt: skip
        try:
            for i in range(hosts):
                self._local(i, "health")
        except CoflowkitError:
            self.stop()
            raise

    def _local(self, host: int, *args: str) -> dict:
        r = subprocess.run(_python(host_ns(host), "coflowkit.runtime.peering", *args),
                           env=child_env(), capture_output=True, text=True, timeout=60)  # fmt: skip
        if r.returncode != 0:
            raise CoflowkitError(
                f"testbed: host {host}'s agent: {r.stderr.strip()[-300:]}; see {self.out}/agent{host}.log"
            )
        return json.loads(r.stdout)

    def register(self, p: dict) -> None:
        """Each coflow on the agents of the hosts it sends to, hosts named by
        their data addresses."""
        ips = p["hosts"]
        by: dict[int, list] = {}
        for f in p["flows"]:
            by.setdefault(f["coflow"], []).append(f)
        per_host: dict[int, list] = {}
        for cid, flows in by.items():
            body = {"id": cid, "flows": [
                {"src": ips[f["src"]], "dst": ips[f["dst"]], "dst_port": f["port"], "size": f["bytes"]}
                for f in flows]}  # fmt: skip
            for h in sorted({f["dst"] for f in flows}):
                per_host.setdefault(h, []).append(body)
        procs = []
        for h, regs in sorted(per_host.items()):
            path = os.path.join(self.out, f"registrations-host{h}.json")
            with open(path, "w", encoding="utf-8") as fh:
                json.dump(regs, fh)
            procs.append((h, subprocess.Popen(
                _python(host_ns(h), "coflowkit.runtime.peering", "register", path), env=child_env(),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))  # fmt: skip
        for h, proc in procs:
            _, err = proc.communicate(timeout=60)
            if proc.returncode != 0:
                raise CoflowkitError(f"testbed: registering on host {h}: {err.strip()[-300:]}")

    def health(self) -> list[dict]:
        """Every agent's /api/health; also writes each one's receiver units
        (classes, and when each demotion happened: ``units-hostN.json``)."""
        for i in range(self.hosts):
            with open(os.path.join(self.out, f"units-host{i}.json"), "w", encoding="utf-8") as fh:
                json.dump(self._local(i, "units"), fh)
        return [self._local(i, "health") for i in range(self.hosts)]

    def stop(self) -> None:
        stop_all(self.agents)
        for log in self.logs:
            log.close()
