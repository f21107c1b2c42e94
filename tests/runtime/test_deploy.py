"""examples/deploy/make-identities.sh: every identity of a cluster, usable by the
master and the agents as they load them, keys private, nothing overwritten."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from coflowkit.runtime import tls

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "deploy" / "make-identities.sh"


def make(tmp_path, hosts_text):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text(hosts_text)
    out = tmp_path / "ids"
    env = dict(os.environ, COFLOWKIT=f"{sys.executable} -m coflowkit")
    r = subprocess.run(["bash", str(SCRIPT), str(hosts), "10.0.0.1", str(out)],
                       capture_output=True, text=True, env=env)  # fmt: skip
    return r, out


def test_identities_load_as_the_master_and_agents_load_them(tmp_path):
    r, out = make(tmp_path, "# index address\n0 10.0.0.11\n1 10.0.0.12\n\n2 10.0.0.13\n")
    assert r.returncode == 0, r.stderr
    assert "the master and 3 hosts" in r.stdout
    tls.master_context(str(out / "master"))
    for h in range(3):
        tls.host_client_context(str(out / f"host-{h}"), h)
    for key in [out / "master" / "master.key", out / "master" / "tokens",
                *(out / f"host-{h}" / f"host-{h}.key" for h in range(3))]:  # fmt: skip
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    scopes = sorted(sorted(s) for s in tls.read_tokens(str(out / "master" / "tokens")).values())
    assert scopes == [["read"], ["read", "register"]]
    reader = (out / "reader.token").read_text().split()[0]
    assert reader in tls.read_tokens(str(out / "master" / "tokens"))
    # The CA key stays in ca/ only: no host's folder has it.
    assert sorted(p.name for p in out.rglob("ca.key")) == ["ca.key"]


def test_refuses_to_overwrite_and_names_a_bad_line(tmp_path):
    r, out = make(tmp_path, "0 10.0.0.11\n")
    assert r.returncode == 0
    r, _ = make(tmp_path, "0 10.0.0.11\n")
    assert r.returncode == 1 and "refusing to overwrite" in r.stderr
    (tmp_path / "sub").mkdir()
    r, _ = make(tmp_path / "sub", "zero 10.0.0.11\n")
    assert r.returncode == 1 and "bad host index 'zero'" in r.stderr


@pytest.mark.parametrize(
    "unit",
    ["coflowkit-master.service", "coflowkit-agent.service", "coflowkit-stream-agent.service"],
)
def test_units_name_only_options_the_cli_has(unit):
    """Every --option of a unit's command lines is one `coflowkit master|agent` takes."""
    text = (SCRIPT.parent / unit).read_text()
    command = "master" if "master" in unit else "agent"
    r = subprocess.run([sys.executable, "-m", "coflowkit", command, "--help"],
                       capture_output=True, text=True)  # fmt: skip
    used = {w.split("=")[0] for w in text.replace("\\\n", " ").split() if w.startswith("--")}
    assert used and all(opt in r.stdout for opt in used), used - set(r.stdout.split())
