"""The runtime's commands: ``agent``, ``master``, ``testbed`` and ``ca`` (one
``add_*`` function per command, called by :mod:`coflowkit.cli`)."""

from __future__ import annotations

import json
import logging
import os

from coflowkit._core import CoflowkitError
from coflowkit.options import default_trace, parse_kv
from coflowkit.runtime.tc import PAUSED_FLOOR, RELEASES


def _log_setup(level: str) -> None:
    logging.basicConfig(
        level=level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )


def add_runtime_parsers(sub) -> None:
    add_agent(sub)
    add_master(sub)
    add_testbed(sub)
    add_ca(sub)


# -- agent ------------------------------------------------------------------------


def cmd_agent(args) -> int:
    from coflowkit.runtime import agent

    _log_setup(args.log_level)
    if args.decentralized is not None and not args.cleanup:
        from coflowkit.runtime import peering

        return peering.main(args)
    return agent.main(args)


def add_agent(sub) -> None:
    a = sub.add_parser(
        "agent", help="per-host agent: observe TCP flows, report, enforce rates (root)"
    )
    a.add_argument("--master", metavar="HOST:PORT", help="the master's agent address")
    a.add_argument("--host", type=int, help="this host's index in the master's fabric")
    a.add_argument("--dev", required=True, help="egress device to shape (e.g. eth0)")
    a.add_argument("--gbps", type=float, default=10.0, help="the device's link rate (default 10)")
    a.add_argument(
        "--tls-dir", metavar="DIR",
        help="ca.crt, host-N.crt and host-N.key (mode 0600) of this host (`coflowkit ca`)",
    )  # fmt: skip
    a.add_argument("--interval-ms", type=float, default=20.0, help="report interval Δ (default 20)")
    a.add_argument(
        "--threshold", type=int, default=100_000, help="ignore flows below this many bytes"
    )
    a.add_argument(
        "--timeout-rounds", type=int, default=10, help="fail open after this many silent Δ"
    )
    a.add_argument(
        "--discover-every",
        type=int,
        default=None,
        metavar="N",
        help="dump all TCP sockets (finding new flows) every N rounds, and look up only the "
        "tracked flows in between (default: from the TCP hash table's size, 1 up to 16384 "
        "buckets, at most 10)",
    )
    a.add_argument("--observe-only", action="store_true", help="report but never touch tc")
    a.add_argument(
        "--release", choices=RELEASES, default="change",
        help="a paused flow given a rate: its HTB class changed in place (default; it first "
        "pays the token debt of its last trickled frame, up to 0.1 s at the 0.5%% floor), "
        "built anew with full tokens (rebuild: the frames queued in the old class are "
        "dropped), or moved to a new class with full tokens (move: the old class keeps its "
        "queued frames, sends them at the new rate once its debt is paid, and is deleted "
        "after twice that time)",
    )  # fmt: skip
    a.add_argument(
        "--paused-floor", type=float, default=PAUSED_FLOOR, metavar="F",
        help="share of the link a paused flow trickles at, keeping TCP's ACK clock "
        f"(default {PAUSED_FLOOR}; the master's --paused-floor must be the same)",
    )  # fmt: skip
    a.add_argument(
        "--decentralized", choices=["stream"], default=None,
        help="run Stream with no master: classes from this host's receivers, enforced by "
        "senders, exchanged between agents (docs/runtime.md, Decentralized Stream)",
    )  # fmt: skip
    a.add_argument(
        "--param", action="append", metavar="K=V",
        help="with --decentralized: a parameter of `--policy stream` (repeatable)",
    )  # fmt: skip
    a.add_argument(
        "--tell-fraction", type=float, default=0.125, metavar="F",
        help="with --decentralized: a receiver tells a sender its bytes again once they grew "
        "by this share (default 0.125); the relays that other receivers count follow it",
    )  # fmt: skip
    a.add_argument(
        "--peer-port", type=int, default=7472,
        help="with --decentralized: the agents' port for each other (default 7472)",
    )  # fmt: skip
    a.add_argument(
        "--registration", default="127.0.0.1:7473", metavar="HOST:PORT",
        help="with --decentralized: the loopback port where this host's jobs register "
        "coflows (the master's JSON; default 127.0.0.1:7473)",
    )  # fmt: skip
    a.add_argument(
        "--cleanup", action="store_true",
        help="remove the agent's traffic-control tree from --dev and exit "
        "(a supervisor's stop hook, e.g. ExecStopPost=)",
    )  # fmt: skip
    a.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    a.set_defaults(func=cmd_agent)


# -- master -----------------------------------------------------------------------


def cmd_master(args) -> int:
    _log_setup(args.log_level)
    return master_main(args)


def add_master(sub) -> None:
    from coflowkit.runtime.master import DEFAULT_MAX_AGENTS

    m = sub.add_parser("master", help="the master: global view, policy rounds, HTTP API")
    m.add_argument("--policy", required=True, help="a policy of `coflowkit policies`")
    m.add_argument("--param", action="append", metavar="K=V", help="policy parameter (repeatable)")
    m.add_argument("--hosts", type=int, required=True, help="number of hosts (agents 0..N-1)")
    m.add_argument("--gbps", type=float, required=True, help="host link rate")
    m.add_argument(
        "--goodput", type=float, default=1448 / 1514, help="payload share of the link rate"
    )
    m.add_argument("--listen", default="127.0.0.1:7470", metavar="HOST:PORT", help="agent address")
    m.add_argument(
        "--http", default="127.0.0.1:7471", metavar="HOST:PORT",
        help="HTTP API (or off); a non-loopback address needs --api-tokens and speaks TLS",
    )  # fmt: skip
    m.add_argument(
        "--tls-dir", required=True, metavar="DIR",
        help="ca.crt, master.crt and master.key (mode 0600) (`coflowkit ca`)",
    )  # fmt: skip
    m.add_argument(
        "--api-tokens", metavar="FILE",
        help="API bearer tokens, lines `TOKEN SCOPE[,SCOPE]` (read, register), mode 0600",
    )  # fmt: skip
    m.add_argument(
        "--state", default="coflowkit-master.db", metavar="FILE",
        help="durable registrations (SQLite; default coflowkit-master.db, `none` to keep nothing)",
    )  # fmt: skip
    m.add_argument("--interval-ms", type=float, default=20.0, help="round interval Δ (default 20)")
    m.add_argument("--membership", default="registry", choices=["registry", "none"])
    m.add_argument("--enforce", default="rates", choices=["rates", "classes"])
    m.add_argument(
        "--paused-floor", type=float, default=PAUSED_FLOOR, metavar="F",
        help="share of a link each paused flow's trickle takes, room left on its links "
        f"(default {PAUSED_FLOOR}; the agents' --paused-floor must be the same)",
    )  # fmt: skip
    m.add_argument(
        "--max-agents", type=int, default=None,
        help=f"agent connections at once (default {DEFAULT_MAX_AGENTS}, or fewer if ulimit -n "
        "allows fewer; a value given is checked against ulimit -n at start)",
    )  # fmt: skip
    m.add_argument("--http-inflight", type=int, default=64, help="HTTP requests at once (64)")
    m.add_argument(
        "--handshake-timeout", type=float, default=5.0, help="s for TLS and HELLO (default 5)"
    )
    m.add_argument(
        "--read-timeout", type=float, default=10.0,
        help="s an agent may stay silent or leave a frame unfinished; per HTTP read (default 10)",
    )  # fmt: skip
    m.add_argument(
        "--send-queue-kib", type=int, default=4096,
        help="KiB queued for one agent before it is disconnected as too slow (default 4096)",
    )  # fmt: skip
    m.add_argument(
        "--lost-after", type=float, default=30.0,
        help="s after which a disconnected host's flows are ended (default 30)",
    )  # fmt: skip
    m.add_argument(
        "--io", default="python", choices=["python", "rust"],
        help="who holds the agents' sessions: this Python thread (default), or the session hub "
        "on tokio threads (Rust; for thousands of agents, docs/runtime.md)",
    )  # fmt: skip
    m.add_argument(
        "--hub-shards", type=int, default=1, metavar="S",
        help="with --io rust: S processes share the agents' port (SO_REUSEPORT), each "
        "holding its share of the sessions; for more agents than one process may hold "
        "descriptors (default 1: the hub in this process)",
    )  # fmt: skip
    m.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    m.set_defaults(func=cmd_master)


# -- testbed ----------------------------------------------------------------------


def cmd_testbed(args) -> int:
    from coflowkit.runtime import testbed

    if args.action == "up":
        st = testbed.up(args.hosts, args.gbps, _switch_queues(args))
        print(
            f"testbed up: {st['hosts']} hosts at {st['gbps']} Gbit/s ({st['ips'][0]} .. {st['ips'][-1]})"
        )
    elif args.action == "down":
        n = testbed.down()
        print(f"testbed down: removed {n} namespaces")
    elif args.action == "emulate":
        _emulate(args)
    elif args.action == "soak":
        _soak(args)
    elif args.action == "bench":
        from coflowkit.runtime import runtime_targets as bench

        print(bench.run(args.out))
    else:
        _run(args)
    return 0


def _emulate(args) -> None:
    from coflowkit.runtime import scale

    out = args.out or "emulate"
    rows = scale.sweep(
        [int(n) for n in args.agents.split(",")], args.policy.split(","),
        parse_kv(args.param), args.flows_per_agent, args.concurrent_coflows,
        args.interval_ms, args.rounds, out, args.gbps, args.io, args.master_nice, args.shards,
    )  # fmt: skip
    for r in rows:
        print(
            f"{r['policy']:>8} {r['agents']:>6} agents: round median {r['round_median_ms']:.1f} ms, "
            f"p99 {r['round_p99_ms']:.1f}, max {r['round_max_ms']:.1f} (Δ {r['interval_ms']:g} ms); "
            f"master CPU {100 * r['master_cpu_share']:.0f}%, RSS {r['master_rss_mib']:.0f} MiB, "
            f"{r['agents_connected_end']} agents connected at the end (--io {r['io']}, "
            f"{r['shards']} session shard(s) per side)"
        )
    print(f"wrote {os.path.join(out, 'scale.csv')}")


def _soak(args) -> None:
    from coflowkit.runtime import scale

    out = args.out or "soak"
    os.makedirs(out, exist_ok=True)
    cfg = scale.Config(
        int(args.agents), args.flows_per_agent, args.concurrent_coflows, args.policy,
        tuple(sorted(parse_kv(args.param).items())), args.interval_ms, gbps=args.gbps,
        io=args.io, master_nice=args.master_nice, shards=args.shards,
    )  # fmt: skip
    soak = scale.Soak(args.minutes, args.churn_every_s, args.churn_hosts, args.away_s)
    row = scale.run(cfg, soak=soak)
    with open(os.path.join(out, "soak.json"), "w") as fh:
        json.dump(row, fh, indent=1)
    print(
        f"{row['agents']} agents, {row['minutes']:g} min, Δ {row['interval_ms']:g} ms: "
        f"{row['rounds']} rounds, median {row['round_median_ms']:.1f} ms, max "
        f"{row['round_max_ms']:.1f} ms ({row['rounds_over_2delta']} over 2Δ); RSS "
        f"{row['rss_minute1_mib']:.0f} MiB at minute 1, {row['rss_end_mib']:.0f} at the end "
        f"({100 * row['rss_growth']:+.1f}%); flows ended: agents {row['agent_flows_done']}, "
        f"master {row['master_flows_finished']:.0f}; bytes: agents {row['agent_bytes_done']}, "
        f"master {row['master_bytes_finished']:.0f}; lost {row['master_lost_flows']:.0f}"
    )
    print(f"wrote {os.path.join(out, 'soak.json')}")


def _switch_queues(args) -> int:
    if args.switch_queues is not None:
        return args.switch_queues
    return 8 if getattr(args, "decentralized", False) else 1


def _run(args) -> None:
    from coflowkit.runtime import testbed

    trace = args.trace or default_trace()
    args.out = args.out or "testbed-run"
    s = testbed.run(
        trace, args.policy, parse_kv(args.param), args.out, hosts=args.hosts, gbps=args.gbps,
        coflows=args.coflows, bytes_scale=args.bytes_scale, time_scale=args.time_scale,
        interval_ms=args.interval_ms, membership=args.membership,
        threshold=args.agent_threshold, decentralized=args.decentralized,
        observe_only=args.observe_only, switch_queues=_switch_queues(args), layout=args.layout,
        min_flow=args.min_flow_bytes, traffic_priority=args.traffic_priority,
        tell_fraction=args.tell_fraction, release=args.agent_release,
        paused_floor=args.paused_floor,
        sample_s=args.sample_ms / 1000.0 if args.sample_ms else None,
    )  # fmt: skip
    print(
        f"testbed run: {s.get('decentralized', s['policy'])} on {s['hosts']} hosts, {s['coflows']} coflows, {s['flows']} flows"
    )
    print(f"  measured goodput   {s['goodput_bytes_per_s'] * 8 / 1e6:.1f} Mbit/s per link")
    print(f"  mean CCT real      {s['real_mean_cct_s']:.3f} s")
    print(f"  mean CCT simulated {s['sim_mean_cct_s']:.3f} s")
    print(
        f"  error              {100 * s['mean_cct_error']:+.1f}% (median per-coflow |error| {100 * s['median_coflow_error']:.1f}%)"
    )
    iv = s.get("interval_model") or {}
    if "median_coflow_error" in iv:
        print(
            f"  vs decisions every Δ {100 * iv['mean_cct_error']:+.1f}% (median per-coflow |error| "
            f"{100 * iv['median_coflow_error']:.1f}%; simulated with realloc=interval)"
        )
    if s.get("decentralized"):
        sent = sum(a["sent"]["classes"] for a in s["agents"])
        print(f"  no master: {len(s['agents'])} agents sent {sent} CLASSES messages")
    else:
        print(
            f"  master round       mean {1e3 * s['master_round_mean_s']:.2f} ms, max {1e3 * s['master_round_max_s']:.2f} ms"
        )
    if "identification" in s:
        q = s["identification"]
        print(
            f"  identification     accuracy {100 * q['accuracy']:.1f}% (precision {100 * q['precision']:.1f}%, recall {100 * q['recall']:.1f}%), {q['labels']} labels for {q['coflows']} coflows"
        )
    print(f"  wrote {args.out}/coflows.csv, summary.json, sim/, comparison.csv, comparison.json")


def add_testbed(sub) -> None:
    from coflowkit.runtime.testbed import DEFAULT_GBPS

    t = sub.add_parser("testbed", help="a cluster of network namespaces: up, down, run (root)")
    t.add_argument("action", choices=["up", "down", "run", "bench", "emulate", "soak"])
    t.add_argument("--hosts", type=int, default=8, help="hosts (default 8)")
    t.add_argument(
        "--gbps",
        type=float,
        default=DEFAULT_GBPS,
        help=f"host link rate, Gbit/s (default {DEFAULT_GBPS}: 8 hosts at that rate are what 2 cores carry)",
    )
    t.add_argument("--trace", metavar="PATH", help="trace to replay (default: the FB trace)")
    t.add_argument("--policy", default="varys", help="policy for run (default varys)")
    t.add_argument("--param", action="append", metavar="K=V", help="policy parameter")
    t.add_argument("--coflows", type=int, default=40, help="first N coflows of the trace")
    t.add_argument("--bytes-scale", type=float, default=0.005, help="factor on flow sizes")
    t.add_argument("--time-scale", type=float, default=0.1, help="factor on arrival times")
    t.add_argument("--interval-ms", type=int, default=20, help="Δ of master and agents")
    t.add_argument(
        "--membership",
        default="registry",
        choices=["registry", "none"],
        help="registry: the workload's coflows are registered; none: nothing is (coda:labels=identify groups flows itself)",
    )
    t.add_argument(
        "--agent-threshold", type=int, default=100_000, metavar="BYTES",
        help="run: bytes a flow has acknowledged before its agent reports it (default 100000)",
    )  # fmt: skip
    t.add_argument(
        "--decentralized", action="store_true",
        help="run: no master, `coflowkit agent --decentralized stream` on every host "
        "(--policy stream); classes marked in DSCP for the switch's priority queues",
    )  # fmt: skip
    t.add_argument(
        "--observe-only", action="store_true",
        help="run --decentralized: the agents enforce nothing (plain TCP, compared with "
        "simulated fair sharing): the Stream paper's TCP baseline",
    )  # fmt: skip
    t.add_argument(
        "--switch-queues", type=int, default=None, metavar="N",
        help="up/run: strict-priority queues per switch port, chosen by DSCP "
        "(default 8 with --decentralized, as the Stream paper's testbed; else 1)",
    )  # fmt: skip
    t.add_argument(
        "--layout", default="shuffle", choices=["shuffle", "many-to-one"],
        help="run: the trace's racks spread on the hosts (shuffle, default), or every flow "
        "into one host from N-2 senders (many-to-one, the Stream paper's testbed)",
    )  # fmt: skip
    t.add_argument(
        "--min-flow-bytes", type=float, default=300e3, metavar="BYTES",
        help="run: smaller flows are raised to this (default 300000: above the agents' "
        "100 KB report threshold; decentralized agents have none)",
    )  # fmt: skip
    t.add_argument(
        "--tell-fraction", type=float, default=None, metavar="F",
        help="run --decentralized: the agents' --tell-fraction (default theirs, 0.125)",
    )  # fmt: skip
    t.add_argument(
        "--traffic-priority", default="normal", choices=["normal", "control"],
        help="run: the traffic workers' scheduling: normal (default), or control, the "
        "real-time priority of the master and agents (on a 2-core machine the agents "
        "can starve normal workers, which then start flows late)",
    )  # fmt: skip
    t.add_argument(
        "--agent-release", choices=RELEASES, default="change",
        help="run: the agents' --release (how a paused flow's class gets its new rate)",
    )  # fmt: skip
    t.add_argument(
        "--paused-floor", type=float, default=PAUSED_FLOOR, metavar="F",
        help=f"run: the master's and agents' --paused-floor (default {PAUSED_FLOOR})",
    )  # fmt: skip
    t.add_argument(
        "--sample-ms", type=float, default=None, metavar="MS",
        help="run: poll the master every MS ms; write progress.csv (each coflow's bytes) "
        "and rates.csv (each scheduled flow's assigned rate)",
    )  # fmt: skip
    t.add_argument("--out", help="output directory (run: default testbed-run)")
    _add_emulate_args(t)
    t.set_defaults(func=cmd_testbed)


def _add_emulate_args(t) -> None:
    """The options of ``testbed emulate`` and ``testbed soak``."""
    e = t.add_argument_group("emulate: a real master and N emulated agents over loopback")
    e.add_argument("--agents", default="1000", metavar="N[,N...]", help="agents (default 1000)")
    e.add_argument("--flows-per-agent", type=float, default=4.0, help="active flows per agent (4)")
    e.add_argument("--concurrent-coflows", type=int, default=100, help="coflows kept running (100)")
    e.add_argument("--rounds", type=int, default=500, help="master rounds measured (500)")
    e.add_argument(
        "--io", default="python", choices=["python", "rust"],
        help="the master's session layer (coflowkit master --io; default python)",
    )  # fmt: skip
    e.add_argument(
        "--master-nice", type=int, default=0, metavar="N",
        help="add N (-20..19; negative needs root) to the master's nice value: the emulated "
        "agents stand for other machines but share this one's cores (default 0)",
    )  # fmt: skip
    e.add_argument(
        "--shards", type=int, default=0, metavar="S",
        help="processes holding the sessions on each side: the master's --hub-shards and the "
        "emulator's own (needs --io rust when above 1; default 0: as few as ulimit -Hn allows)",
    )  # fmt: skip
    k = t.add_argument_group("soak: emulate for minutes, with agents leaving and coming back")
    k.add_argument("--minutes", type=float, default=10.0, help="length of the run (10)")
    k.add_argument("--churn-every-s", type=float, default=10.0, help="seconds between churns (10)")
    k.add_argument("--churn-hosts", type=int, default=100, help="agents that leave each time (100)")
    k.add_argument("--away-s", type=float, default=2.0, help="seconds they stay away (2)")


# -- ca ---------------------------------------------------------------------------


def cmd_ca(args) -> int:
    from coflowkit.runtime import tls

    if args.action == "init":
        path = tls.init_ca(args.dir, days=args.days or 3650)
        print(f"wrote {path} and {os.path.join(args.dir, tls.CA_KEY)} (keep the key offline)")
    elif args.action == "issue":
        if args.master == (args.host is not None):
            raise CoflowkitError("ca issue: give exactly one of --host N and --master")
        key, cert = tls.issue(
            args.dir, None if args.master else args.host, args.ip or [], args.dns or [],
            days=args.days or 825, out=args.out,
        )  # fmt: skip
        print(f"wrote {cert} and {key}")
    else:
        scopes = [s for s in args.scope.split(",") if s]
        bad = [s for s in scopes if s not in tls.SCOPES]
        if bad or not scopes:
            raise CoflowkitError(
                f"ca token: --scope takes {', '.join(tls.SCOPES)}, got {args.scope!r}"
            )
        print(f"{tls.new_token()} {','.join(scopes)}")
    return 0


def add_ca(sub) -> None:
    c = sub.add_parser(
        "ca",
        help="the runtime's identities: a cluster CA, host and master certificates, API tokens",
    )
    c.add_argument("action", choices=["init", "issue", "token"])
    c.add_argument("--dir", default=".", help="the CA's directory (ca.key, ca.crt)")
    c.add_argument("--host", type=int, help="issue: host N's certificate (host-N.crt/.key)")
    c.add_argument("--master", action="store_true", help="issue: the master's certificate")
    c.add_argument("--ip", action="append", metavar="ADDR", help="issue: an address of the host")
    c.add_argument("--dns", action="append", metavar="NAME", help="issue: a DNS name")
    c.add_argument("--days", type=int, help="validity (CA 3650, others 825)")
    c.add_argument("--out", metavar="DIR", help="issue: where to write (default --dir)")
    c.add_argument(
        "--scope", default="read", help="token: scopes, comma-separated (read, register)"
    )
    c.set_defaults(func=cmd_ca)


def parse_addr(text: str, what: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) < 65536:
        raise CoflowkitError(f"{what} must be HOST:PORT, got {text!r}")
    return host.strip("[]"), int(port)


def master_main(args) -> int:
    """``coflowkit master``: builds the master from its arguments and runs it
    until SIGTERM or SIGINT."""
    import gc
    import signal

    from coflowkit.options import parse_kv
    from coflowkit.runtime import tls
    from coflowkit.runtime.master import Limits, Master

    http = None if args.http == "off" else parse_addr(args.http, "--http")
    tokens = tls.read_tokens(args.api_tokens) if args.api_tokens else None
    from coflowkit.runtime.http_api import is_loopback

    api_tls = None if http is None or is_loopback(http[0]) else tls.api_server_context(args.tls_dir)
    m = Master(
        args.policy,
        parse_kv(args.param),
        args.hosts,
        args.gbps * 1e9 / 8 * args.goodput,
        tls.master_context(args.tls_dir),
        listen=parse_addr(args.listen, "--listen"),
        http=http,
        interval=args.interval_ms / 1000,
        membership=args.membership,
        enforce=args.enforce,
        state_path=None if args.state == "none" else args.state,
        api_tokens=tokens,
        api_tls=api_tls,
        limits=Limits(
            max_agents=args.max_agents, handshake_timeout=args.handshake_timeout,
            read_timeout=args.read_timeout, send_queue=args.send_queue_kib << 10,
            http_inflight=args.http_inflight, lost_after=args.lost_after,
            hub_shards=args.hub_shards,
        ),
        io=args.io,
        tls_dir=args.tls_dir,
        paused_floor=args.paused_floor,
    )  # fmt: skip

    def stop(*_):
        m.close()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    logging.getLogger("coflowkit.master").info(
        "master: policy %s, %d hosts, agents on %s:%d", args.policy, args.hosts, *m.address
    )
    # What exists now (modules, the policy, the server) lives as long as the
    # process: out of the cyclic collector's sight, its full passes stay short.
    gc.freeze()
    m.run()
    return 0
