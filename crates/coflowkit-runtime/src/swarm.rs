//! Emulated agents for `coflowkit testbed emulate`: N real mutual-TLS sessions
//! to a master, each reporting its flows every Δ and moving their bytes at the
//! rates the master decides (closed loop). The workload (which coflows, which
//! flows, their registration with the master's API) is the caller's; the swarm
//! only runs the agents' side, on tokio threads, so that one process can keep
//! tens of thousands of agents reporting on time.
//!
//! Each agent does what the Python emulator's did (`scale.py`): it binds its
//! host's own source address, says HELLO, and every Δ sends one REPORT (flows
//! first seen, the bytes of running ones, the ones that ended); an agent with
//! nothing to say reports every 5th Δ, as the real agent does. A flow is first
//! reported with the bytes it has when it starts; its bytes then advance by
//! `rate · Δ` per Δ, `rate` being the master's last decision for it.
//!
//! Churn ([`Swarm::churn`]): an agent told to leave closes its session, stays
//! away for a while and reconnects as the same agent process (same boot id),
//! reporting its running flows again under the same numbers, as a real agent
//! does after a network partition. [`Swarm::pause`] stops every report for a
//! moment, so that the master's counters can be compared with the swarm's.

use crate::wire::{self, FrameReader, NewFlow, Report};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;
use tokio::sync::{watch, Semaphore};
use tokio::time::{interval, Instant, MissedTickBehavior};
use tokio_rustls::TlsConnector;

/// One flow an agent sends.
#[derive(Debug, Clone)]
pub struct EmuFlow {
    pub fid: u32,
    pub sport: u16,
    pub dst: [u8; 4],
    pub dport: u16,
    pub size: f64,
    pub sent: f64,
    pub coflow: u64,
}

#[derive(Debug, Default)]
struct AgentState {
    flows: Vec<(EmuFlow, f64, bool)>, // (flow, rate, reported)
    gone: Vec<(u32, u64)>,
}

/// What the swarm has done so far.
#[derive(Debug, Default)]
pub struct SwarmStats {
    pub connected: AtomicUsize,
    pub failed: AtomicUsize,
    pub disconnected: AtomicUsize,
    pub reports: AtomicU64,
    pub decisions: AtomicU64,
    pub active_flows: AtomicI64,
    /// Flows whose end was reported, and their final bytes.
    pub flows_done: AtomicU64,
    pub bytes_done: AtomicU64,
    /// Sessions ended by churn, and sessions opened again after it.
    pub churned: AtomicU64,
    pub reconnected: AtomicU64,
}

struct Shared {
    agents: Vec<Mutex<AgentState>>,
    index: HashMap<u32, usize>,
    remaining: Mutex<HashMap<u64, u32>>,
    finished: Mutex<Vec<u64>>,
    first_error: Mutex<Option<String>>,
    stats: SwarmStats,
    t0: Instant,
    /// Per agent: milliseconds to stay away, when told to leave (0: stay).
    churn: Vec<AtomicU64>,
    paused: AtomicBool,
}

/// The running agents; dropping it closes every session.
pub struct Swarm {
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
}

/// Where the agents connect and how.
#[derive(Debug, Clone)]
pub struct SwarmConfig {
    pub master: SocketAddr,
    /// Holds `ca.crt` and `host-N.crt` / `host-N.key` for every host.
    pub tls_dir: PathBuf,
    /// `(host, its address)`: the source address it binds and announces.
    pub hosts: Vec<(u32, [u8; 4])>,
    pub interval: Duration,
    pub workers: usize,
    /// Handshakes in progress at once.
    pub connecting: usize,
}

fn client_config(dir: &Path, host: u32) -> Result<Arc<rustls::ClientConfig>, String> {
    let (cert, key) = (
        dir.join(format!("host-{host}.crt")),
        dir.join(format!("host-{host}.key")),
    );
    let ca = dir.join("ca.crt");
    let load = |p: &Path, e: &dyn std::fmt::Display| format!("cannot load {}: {e}", p.display());
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| load(&cert, &e))?;
    let key = PrivateKeyDer::from_pem_file(&key).map_err(|e| load(&key, &e))?;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&ca).map_err(|e| load(&ca, &e))? {
        roots
            .add(c.map_err(|e| load(&ca, &e))?)
            .map_err(|e| load(&ca, &e))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let cfg = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| format!("host {host}'s certificate: {e}"))?;
    Ok(Arc::new(cfg))
}

impl Swarm {
    /// Starts connecting every host (at most `connecting` handshakes at once).
    pub fn start(cfg: SwarmConfig) -> Result<Swarm, String> {
        if cfg.workers == 0 || cfg.connecting == 0 || cfg.interval.is_zero() {
            return Err("swarm: workers, connecting and interval must be positive".into());
        }
        let mut configs = Vec::with_capacity(cfg.hosts.len());
        for &(h, _) in &cfg.hosts {
            configs.push(client_config(&cfg.tls_dir, h)?);
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.workers)
            .thread_name("coflowkit-swarm")
            .enable_all()
            .build()
            .map_err(|e| format!("swarm: cannot start its threads: {e}"))?;
        let shared = Arc::new(Shared {
            agents: cfg
                .hosts
                .iter()
                .map(|_| Mutex::new(AgentState::default()))
                .collect(),
            index: cfg
                .hosts
                .iter()
                .enumerate()
                .map(|(i, &(h, _))| (h, i))
                .collect(),
            remaining: Mutex::new(HashMap::new()),
            finished: Mutex::new(Vec::new()),
            first_error: Mutex::new(None),
            stats: SwarmStats::default(),
            t0: Instant::now(),
            churn: cfg.hosts.iter().map(|_| AtomicU64::new(0)).collect(),
            paused: AtomicBool::new(false),
        });
        let (stop, stop_rx) = watch::channel(false);
        let gate = Arc::new(Semaphore::new(cfg.connecting));
        for (i, (&(host, addr), cc)) in cfg.hosts.iter().zip(configs).enumerate() {
            let (shared, gate, stop_rx) = (shared.clone(), gate.clone(), stop_rx.clone());
            let (master, every) = (cfg.master, cfg.interval);
            rt.spawn(async move {
                let out = agent(&shared, i, host, addr, master, cc, every, gate, stop_rx).await;
                if let Err(e) = out {
                    let mut first = shared.first_error.lock().unwrap_or_else(|e| e.into_inner());
                    first.get_or_insert(format!("host {host}: {e}"));
                }
            });
        }
        Ok(Swarm {
            rt: Some(rt),
            shared,
            stop,
        })
    }

    /// Gives host `host` flows to send from now on.
    pub fn start_flows(&self, host: u32, flows: Vec<EmuFlow>) -> Result<(), String> {
        let &i = self
            .shared
            .index
            .get(&host)
            .ok_or_else(|| format!("host {host} is not in the swarm"))?;
        {
            let mut rem = self
                .shared
                .remaining
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for f in &flows {
                *rem.entry(f.coflow).or_insert(0) += 1;
            }
        }
        let n = flows.len() as i64;
        let mut a = self.shared.agents[i]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        a.flows.extend(flows.into_iter().map(|f| (f, 0.0, false)));
        self.shared
            .stats
            .active_flows
            .fetch_add(n, Ordering::Relaxed);
        Ok(())
    }

    /// Coflows whose every flow has ended since the last call.
    pub fn finished(&self) -> Vec<u64> {
        std::mem::take(
            &mut *self
                .shared
                .finished
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
    }

    pub fn stats(&self) -> &SwarmStats {
        &self.shared.stats
    }

    /// Each of `hosts` closes its session at its next Δ and reconnects `away`
    /// later (at least 1 ms).
    pub fn churn(&self, hosts: &[u32], away: Duration) -> Result<(), String> {
        let ms = (away.as_millis() as u64).max(1);
        for h in hosts {
            let &i = self
                .shared
                .index
                .get(h)
                .ok_or_else(|| format!("host {h} is not in the swarm"))?;
            self.shared.churn[i].store(ms, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Stops (`true`) or resumes every agent's reports, heartbeats included.
    pub fn pause(&self, paused: bool) {
        self.shared.paused.store(paused, Ordering::Relaxed);
    }

    /// The first agent's error (a refused connection, a failed handshake).
    pub fn first_error(&self) -> Option<String> {
        self.shared
            .first_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    pub fn stop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(rt) = self.rt.take() {
            rt.shutdown_timeout(Duration::from_secs(2));
        }
    }
}

impl Drop for Swarm {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Advances an agent's flows by `dt` and builds its REPORT (None: nothing to
/// say and not a heartbeat round).
fn tick(shared: &Shared, i: usize, dt: f64, now: f64, heartbeat: bool) -> Option<Vec<u8>> {
    if shared.paused.load(Ordering::Relaxed) {
        return None;
    }
    let mut a = shared.agents[i].lock().unwrap_or_else(|e| e.into_inner());
    if a.flows.is_empty() && a.gone.is_empty() && !heartbeat {
        return None;
    }
    let (mut new, mut updated) = (Vec::new(), Vec::new());
    let mut ended = Vec::new();
    let mut k = 0;
    while k < a.flows.len() {
        let (f, rate, reported) = &mut a.flows[k];
        f.sent = f.size.min(f.sent + *rate * dt);
        if !*reported {
            *reported = true;
            new.push(NewFlow {
                fid: f.fid,
                sport: f.sport,
                dst: f.dst,
                dport: f.dport,
                first_seen: now,
                sent: f.sent as u64,
            });
        } else if f.sent >= f.size {
            ended.push((f.fid, f.sent as u64, f.coflow));
            a.flows.swap_remove(k);
            continue;
        } else {
            updated.push((f.fid, f.sent as u64));
        }
        k += 1;
    }
    let mut gone = std::mem::take(&mut a.gone);
    drop(a);
    if !ended.is_empty() {
        shared
            .stats
            .active_flows
            .fetch_sub(ended.len() as i64, Ordering::Relaxed);
        let mut rem = shared.remaining.lock().unwrap_or_else(|e| e.into_inner());
        for &(fid, sent, coflow) in &ended {
            gone.push((fid, sent));
            shared.stats.flows_done.fetch_add(1, Ordering::Relaxed);
            shared.stats.bytes_done.fetch_add(sent, Ordering::Relaxed);
            if let Some(n) = rem.get_mut(&coflow) {
                *n -= 1;
                if *n == 0 {
                    rem.remove(&coflow);
                    shared
                        .finished
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(coflow);
                }
            }
        }
    }
    Some(
        Report {
            time: now,
            new,
            updated,
            gone,
        }
        .encode(),
    )
}

/// How a session ended.
enum End {
    Stop,
    /// Told to leave: stay away this many milliseconds.
    Churn(u64),
}

type Tls = tokio_rustls::client::TlsStream<tokio::net::TcpStream>;

async fn connect(
    addr: [u8; 4],
    master: SocketAddr,
    cc: Arc<rustls::ClientConfig>,
) -> Result<Tls, String> {
    let go = async {
        let sock = TcpSocket::new_v4().map_err(|e| e.to_string())?;
        sock.bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(addr)), 0))
            .map_err(|e| format!("bind {}: {e}", Ipv4Addr::from(addr)))?;
        let tcp = sock
            .connect(master)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::IpAddress(master.ip().into());
        TlsConnector::from(cc)
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))
    };
    match tokio::time::timeout(Duration::from_secs(60), go).await {
        Ok(r) => r,
        Err(_) => Err("no connection in 60 s".into()),
    }
}

#[allow(clippy::too_many_arguments)]
async fn agent(
    shared: &Shared,
    i: usize,
    host: u32,
    addr: [u8; 4],
    master: SocketAddr,
    cc: Arc<rustls::ClientConfig>,
    every: Duration,
    gate: Arc<Semaphore>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), String> {
    let mut again = false;
    loop {
        let permit = gate
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let tls = match connect(addr, master, cc.clone()).await {
            Ok(t) => t,
            Err(e) => {
                shared.stats.failed.fetch_add(1, Ordering::Relaxed);
                return Err(e);
            }
        };
        if again {
            // The same agent process: its running flows are reported again.
            let mut a = shared.agents[i].lock().unwrap_or_else(|e| e.into_inner());
            for f in a.flows.iter_mut() {
                f.2 = false;
            }
            shared.stats.reconnected.fetch_add(1, Ordering::Relaxed);
        } else {
            shared.stats.connected.fetch_add(1, Ordering::Relaxed);
        }
        match session(shared, i, host, addr, tls, every, permit, &mut stop).await {
            Ok(End::Stop) => return Ok(()),
            Ok(End::Churn(ms)) => {
                shared.stats.churned.fetch_add(1, Ordering::Relaxed);
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(ms)) => {}
                    _ = stop.changed() => return Ok(()),
                }
                again = true;
            }
            Err(why) => {
                shared.stats.disconnected.fetch_add(1, Ordering::Relaxed);
                return Err(why);
            }
        }
    }
}

/// One session: HELLO, then a REPORT every Δ and the master's decisions.
#[allow(clippy::too_many_arguments)]
async fn session(
    shared: &Shared,
    i: usize,
    host: u32,
    addr: [u8; 4],
    tls: Tls,
    every: Duration,
    permit: tokio::sync::OwnedSemaphorePermit,
    stop: &mut watch::Receiver<bool>,
) -> Result<End, String> {
    let (mut rd, mut wr) = tokio::io::split(tls);
    let hello = wire::Hello {
        host: host as u16,
        interval_ms: every.as_millis().min(u32::MAX as u128) as u32,
        boot_id: [1; wire::BOOT_ID_LEN],
        addrs: vec![addr],
        name: format!("emulated-{host}"),
    }
    .encode()
    .map_err(|e| e.0)?;
    let mut seq = 0u64;
    let frame = wire::encode_frame(wire::HELLO, seq, &hello).map_err(|e| e.0)?;
    seq += 1;
    wr.write_all(&frame).await.map_err(|e| e.to_string())?;
    wr.flush().await.map_err(|e| e.to_string())?;
    drop(permit);
    let mut ticker = interval(every);
    ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut reader = FrameReader::new(wire::MAX_FRAME, &[wire::DECISIONS, wire::ERROR]);
    let mut buf = vec![0u8; 16 << 10];
    let mut ticks = 0u64;
    let dt = every.as_secs_f64();
    loop {
        tokio::select! {
            _ = ticker.tick() => {
                let away = shared.churn[i].swap(0, Ordering::Relaxed);
                if away > 0 {
                    let _ = tokio::time::timeout(Duration::from_secs(1), wr.shutdown()).await;
                    return Ok(End::Churn(away));
                }
                ticks += 1;
                let now = shared.t0.elapsed().as_secs_f64();
                if let Some(p) = tick(shared, i, dt, now, ticks.is_multiple_of(5)) {
                    let f = wire::encode_frame(wire::REPORT, seq, &p).map_err(|_| "report too large".to_string())?;
                    seq += 1;
                    async { wr.write_all(&f).await?; wr.flush().await }.await.map_err(|e| e.to_string())?;
                    shared.stats.reports.fetch_add(1, Ordering::Relaxed);
                }
            }
            r = rd.read(&mut buf) => {
                let n = match r { Ok(0) => return Err("closed by the master".to_string()), Ok(n) => n, Err(e) => return Err(e.to_string()) };
                let frames = reader.feed(&buf[..n]).map_err(|e| e.0)?;
                for (t, p) in frames {
                    if t == wire::ERROR {
                        return Err(format!("the master said: {}", wire::decode_error(&p)));
                    }
                    let Ok(ds) = wire::decode_decisions(&p) else { continue };
                    let mut a = shared.agents[i].lock().unwrap_or_else(|e| e.into_inner());
                    for d in &ds {
                        if d.kind == wire::RATE {
                            if let Some(x) = a.flows.iter_mut().find(|x| x.0.fid == d.fid) {
                                x.1 = d.value;
                            }
                        }
                    }
                    shared.stats.decisions.fetch_add(ds.len() as u64, Ordering::Relaxed);
                }
            }
            _ = stop.changed() => return Ok(End::Stop),
        }
    }
}
