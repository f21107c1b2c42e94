//! The master's agent sessions on tokio: TLS, frames, deadlines and heartbeats,
//! off the Python thread that runs rounds.
//!
//! `coflowkit master --io rust` (docs/runtime.md, "The session hub"). The hub
//! accepts agents' connections, authenticates them with the cluster CA
//! (rustls, TLS 1.3, the certificate's `urn:coflowkit:host:N` name), cuts and
//! decodes their frames with [`crate::wire`], and keeps every per-session
//! promise of the Python master: a handshake and HELLO within a deadline, a
//! first frame of at most 4 KiB, no frame left unfinished and no silence longer
//! than the read timeout, a bounded send queue, and an empty DECISIONS after
//! `heartbeat` without one. What needs the master's state (flows, hosts already
//! connected, rounds) stays with the master: the hub hands it [`Event`]s and
//! takes frames to send.
//!
//! A session costs its own task and nothing when it is quiet: an empty REPORT
//! (an agent's heartbeat) is counted and never reaches the master.

use crate::wire::{self, FrameReader, Hello, Report};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, sleep_until, timeout, Instant};
use tokio_rustls::TlsAcceptor;

const URI_PREFIX: &str = "urn:coflowkit:";
/// Bytes asked of a session per read.
const READ_BYTES: usize = 16 << 10;

/// What one peer may cost, and the master's fabric.
#[derive(Debug, Clone)]
pub struct HubConfig {
    pub listen: SocketAddr,
    /// Holds `ca.crt`, `master.crt` and `master.key`.
    pub tls_dir: std::path::PathBuf,
    /// Hosts `0..hosts` may connect.
    pub hosts: u32,
    pub max_agents: usize,
    pub handshake_timeout: Duration,
    pub read_timeout: Duration,
    /// Bytes queued for one agent before it counts as not keeping up.
    pub send_queue: usize,
    /// An empty DECISIONS goes to an agent told nothing for this long.
    pub heartbeat: Duration,
    /// Tokio worker threads.
    pub workers: usize,
    /// Binds with `SO_REUSEPORT`, so that hubs in several processes of the
    /// same user share one port and the kernel spreads new connections over
    /// them (the master's session shards, docs/runtime.md).
    pub reuse_port: bool,
}

/// What the hub tells the master.
#[derive(Debug)]
pub enum Event {
    /// A session's checked HELLO: the certificate is host `host`'s and lists
    /// every address announced.
    Hello {
        sid: u64,
        peer: String,
        hello: Hello,
        cert_ips: Vec<[u8; 4]>,
    },
    /// A REPORT with new or ended flows.
    Report { sid: u64, report: Report },
    /// Byte counts of running flows, `(session, flow, bytes)`, from REPORTs
    /// with nothing else, merged while the master has not taken them (in
    /// order with the other events).
    Updates { items: Vec<(u64, u32, u64)> },
    /// A session ended: by its peer, a deadline, a bad frame (`rejected`), or
    /// the master (then after the master's own close).
    Closed {
        sid: u64,
        peer: String,
        why: String,
        rejected: bool,
    },
}

/// Counters since the hub started.
#[derive(Debug, Default)]
pub struct HubMetrics {
    pub accepted: AtomicU64,
    pub refused: AtomicU64,
    pub accept_errors: AtomicU64,
    pub rejected: AtomicU64,
    pub reports: AtomicU64,
    pub empty_reports: AtomicU64,
    pub heartbeats_sent: AtomicU64,
}

enum Out {
    /// A frame queued by the master (counted in the session's queued bytes).
    Frame(u8, Vec<u8>),
    /// The writer's own heartbeat (not counted).
    Heartbeat,
    Close {
        why: String,
        tell: bool,
    },
}

struct Handle {
    tx: mpsc::UnboundedSender<Out>,
    queued: Arc<AtomicUsize>,
    /// Set with the reason when the session is to end: a writer blocked on a
    /// peer that does not read gives up [`CLOSE_GRACE`] later.
    closing: watch::Sender<Option<String>>,
}

/// How long a closing session's writer may stay blocked on a peer that does
/// not read before the session is dropped anyway.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

impl Handle {
    fn close(&self, why: &str, tell: bool) {
        let _ = self.tx.send(Out::Close {
            why: why.to_string(),
            tell,
        });
        self.closing.send_if_modified(|c| {
            let first = c.is_none();
            if first {
                *c = Some(why.to_string());
            }
            first
        });
    }
}

struct Shared {
    cfg: HubConfig,
    events: Mutex<VecDeque<Event>>,
    ready: Condvar,
    sessions: Mutex<HashMap<u64, Handle>>,
    open: AtomicUsize,
    next_sid: AtomicU64,
    metrics: HubMetrics,
}

impl Shared {
    fn push(&self, e: Event) {
        let mut q = self.events.lock().unwrap_or_else(|e| e.into_inner());
        q.push_back(e);
        self.ready.notify_one();
    }

    /// Events the master has not taken yet, and the byte counts they carry
    /// (an `Updates` event holds many).
    fn pending(&self) -> (usize, usize) {
        let q = self.events.lock().unwrap_or_else(|e| e.into_inner());
        let items = q
            .iter()
            .map(|e| match e {
                Event::Updates { items } => items.len(),
                _ => 1,
            })
            .sum();
        (q.len(), items)
    }

    fn push_updates(&self, sid: u64, updated: &[(u32, u64)]) {
        let mut q = self.events.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(Event::Updates { items }) = q.back_mut() {
            items.extend(updated.iter().map(|&(f, b)| (sid, f, b)));
            return;
        }
        q.push_back(Event::Updates {
            items: updated.iter().map(|&(f, b)| (sid, f, b)).collect(),
        });
        self.ready.notify_one();
    }
}

/// Why [`Hub::send`] did not queue a frame.
#[derive(Debug, PartialEq, Eq)]
pub enum SendError {
    /// The session is gone.
    Gone,
    /// More than `send_queue` bytes would be queued: the agent does not read.
    Full(usize),
}

/// The running hub; dropping it stops every session.
pub struct Hub {
    rt: Option<tokio::runtime::Runtime>,
    shared: Arc<Shared>,
    stop: watch::Sender<bool>,
    local: SocketAddr,
}

/// The identity in a verified certificate: `Some(host)` for a host, `None` for
/// the master, and its IPv4 addresses (the rules of `tls.identity`).
pub fn cert_identity(der: &[u8]) -> Result<(Option<u32>, Vec<[u8; 4]>), String> {
    use x509_parser::extensions::{GeneralName, ParsedExtension};
    let (_, cert) = x509_parser::parse_x509_certificate(der)
        .map_err(|e| format!("the peer's certificate does not parse: {e}"))?;
    let mut uris = Vec::new();
    let mut ips = Vec::new();
    for ext in cert.extensions() {
        if let ParsedExtension::SubjectAlternativeName(san) = ext.parsed_extension() {
            for name in &san.general_names {
                match name {
                    GeneralName::URI(u) => uris.push(u.to_string()),
                    GeneralName::IPAddress(b) if b.len() == 4 => ips.push([b[0], b[1], b[2], b[3]]),
                    _ => {}
                }
            }
        }
    }
    let roles: Vec<&str> = uris
        .iter()
        .filter_map(|u| u.strip_prefix(URI_PREFIX))
        .collect();
    if roles.len() != 1 {
        return Err(format!(
            "the peer's certificate names no single coflowkit role ({uris:?})"
        ));
    }
    if roles[0] == "master" {
        return Ok((None, ips));
    }
    match roles[0].strip_prefix("host:").map(str::parse::<u32>) {
        Some(Ok(h)) if h < 65536 => Ok((Some(h), ips)),
        _ => Err(format!(
            "the peer's certificate names an unknown role {:?}",
            roles[0]
        )),
    }
}

fn tls_config(dir: &Path) -> Result<rustls::ServerConfig, String> {
    let file = |name: &str| dir.join(name);
    let ca = file("ca.crt");
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(file("master.crt"))
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("TLS: cannot load {}: {e}", file("master.crt").display()))?;
    let key = PrivateKeyDer::from_pem_file(file("master.key"))
        .map_err(|e| format!("TLS: cannot load {}: {e}", file("master.key").display()))?;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&ca)
        .map_err(|e| format!("TLS: cannot load {}: {e}", ca.display()))?
    {
        let c = c.map_err(|e| format!("TLS: cannot load {}: {e}", ca.display()))?;
        roots
            .add(c)
            .map_err(|e| format!("TLS: {} is not a CA certificate: {e}", ca.display()))?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("TLS: {e}"))?;
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| format!("TLS: {e}"))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs, key)
        .map_err(|e| format!("TLS: {e}"))?;
    cfg.send_tls13_tickets = 0; // agents do not resume sessions
    Ok(cfg)
}

/// A listening socket on `addr` (`SO_REUSEADDR`, and `SO_REUSEPORT` if asked),
/// with a backlog of 1024. Call within the runtime.
fn listen(addr: SocketAddr, reuse_port: bool) -> std::io::Result<TcpListener> {
    let sock = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    sock.set_reuseaddr(true)?;
    if reuse_port {
        sock.set_reuseport(true)?;
    }
    sock.bind(addr)?;
    sock.listen(1024)
}

impl Hub {
    /// Binds `cfg.listen` and starts accepting agents.
    pub fn start(cfg: HubConfig) -> Result<Hub, String> {
        if cfg.max_agents == 0 || cfg.send_queue == 0 || cfg.workers == 0 {
            return Err("hub: max_agents, send_queue and workers must be >= 1".into());
        }
        let acceptor = TlsAcceptor::from(Arc::new(tls_config(&cfg.tls_dir)?));
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.workers)
            .thread_name("coflowkit-hub")
            .enable_all()
            .build()
            .map_err(|e| format!("hub: cannot start its threads: {e}"))?;
        let listener = {
            let _g = rt.enter();
            listen(cfg.listen, cfg.reuse_port)
                .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?
        };
        let local = listener
            .local_addr()
            .map_err(|e| format!("cannot listen on {}: {e}", cfg.listen))?;
        let shared = Arc::new(Shared {
            cfg,
            events: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            sessions: Mutex::new(HashMap::new()),
            open: AtomicUsize::new(0),
            next_sid: AtomicU64::new(1),
            metrics: HubMetrics::default(),
        });
        let (stop, stop_rx) = watch::channel(false);
        rt.spawn(accept_loop(listener, acceptor, shared.clone(), stop_rx));
        Ok(Hub {
            rt: Some(rt),
            shared,
            stop,
            local,
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Waits up to `wait` for events and takes at most `max` of them.
    pub fn poll(&self, wait: Duration, max: usize) -> Vec<Event> {
        let mut q = self.shared.events.lock().unwrap_or_else(|e| e.into_inner());
        if q.is_empty() && !wait.is_zero() {
            q = self
                .shared
                .ready
                .wait_timeout(q, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let n = q.len().min(max);
        q.drain(..n).collect()
    }

    /// Queues one frame for session `sid`.
    pub fn send(&self, sid: u64, mtype: u8, payload: Vec<u8>) -> Result<(), SendError> {
        let sessions = self
            .shared
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let h = sessions.get(&sid).ok_or(SendError::Gone)?;
        let len = payload.len() + wire::HEADER + 4;
        let queued = h.queued.fetch_add(len, Ordering::AcqRel) + len;
        if queued > self.shared.cfg.send_queue {
            h.queued.fetch_sub(len, Ordering::AcqRel);
            return Err(SendError::Full(queued));
        }
        h.tx.send(Out::Frame(mtype, payload))
            .map_err(|_| SendError::Gone)
    }

    /// Ends session `sid`, first sending `why` in an ERROR frame if `tell`.
    /// Its `Closed` event follows.
    pub fn close(&self, sid: u64, why: &str, tell: bool) {
        let sessions = self
            .shared
            .sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(h) = sessions.get(&sid) {
            h.close(why, tell);
        }
    }

    /// Sessions open (handshaking ones included).
    pub fn open_sessions(&self) -> usize {
        self.shared.open.load(Ordering::Acquire)
    }

    /// Events received and not yet taken by [`Hub::poll`], and the items in
    /// them (each byte count of an `Updates` event is one): a master that falls
    /// behind its agents shows here first.
    pub fn pending(&self) -> (usize, usize) {
        self.shared.pending()
    }

    pub fn metrics(&self) -> &HubMetrics {
        &self.shared.metrics
    }

    /// Tells every agent `why` and stops (at most `grace` for the goodbyes).
    pub fn stop(&mut self, why: &str, grace: Duration) {
        let Some(rt) = self.rt.take() else { return };
        let _ = self.stop.send(true);
        {
            let sessions = self
                .shared
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            for h in sessions.values() {
                h.close(why, true);
            }
        }
        let shared = self.shared.clone();
        rt.block_on(async {
            let end = Instant::now() + grace;
            while shared.open.load(Ordering::Acquire) > 0 && Instant::now() < end {
                sleep(Duration::from_millis(5)).await;
            }
        });
        rt.shutdown_timeout(Duration::from_millis(100));
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.stop("master stopping", Duration::from_millis(500));
    }
}

async fn accept_loop(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        let got = tokio::select! {
            r = listener.accept() => r,
            _ = stop.changed() => return,
        };
        match got {
            Ok((tcp, addr)) => {
                if shared.open.load(Ordering::Acquire) >= shared.cfg.max_agents {
                    shared.metrics.refused.fetch_add(1, Ordering::Relaxed);
                    drop(tcp);
                    continue;
                }
                let _ = tcp.set_nodelay(true);
                shared.open.fetch_add(1, Ordering::AcqRel);
                shared.metrics.accepted.fetch_add(1, Ordering::Relaxed);
                let sid = shared.next_sid.fetch_add(1, Ordering::Relaxed);
                let (acceptor, shared) = (acceptor.clone(), shared.clone());
                tokio::spawn(async move {
                    let peer = addr.to_string();
                    let (why, rejected) = session(&shared, &acceptor, sid, tcp, &peer).await;
                    shared
                        .sessions
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&sid);
                    shared.open.fetch_sub(1, Ordering::AcqRel);
                    if rejected {
                        shared.metrics.rejected.fetch_add(1, Ordering::Relaxed);
                    }
                    shared.push(Event::Closed {
                        sid,
                        peer,
                        why,
                        rejected,
                    });
                });
            }
            Err(_) => {
                // Out of descriptors or buffers: the connection waits in the
                // backlog; try again shortly rather than spin.
                shared.metrics.accept_errors.fetch_add(1, Ordering::Relaxed);
                sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

type Tls = tokio_rustls::server::TlsStream<TcpStream>;

/// One session, from accept to its end; returns why it ended and whether it
/// was a rejection (a bad certificate, frame or HELLO).
async fn session(
    shared: &Arc<Shared>,
    acceptor: &TlsAcceptor,
    sid: u64,
    tcp: TcpStream,
    peer: &str,
) -> (String, bool) {
    let cfg = &shared.cfg;
    let hello_by = Instant::now() + cfg.handshake_timeout;
    let tls = match tokio::time::timeout_at(hello_by, acceptor.accept(tcp)).await {
        Err(_) => return ("no TLS handshake and HELLO in time".into(), false),
        Ok(Err(e)) => return (format!("TLS: {e}"), true),
        Ok(Ok(t)) => t,
    };
    let ident = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .ok_or_else(|| "the peer presented no verified certificate".to_string())
        .and_then(|c| cert_identity(c.as_ref()));
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    let (closing, closing_rx) = watch::channel(None);
    let (rd, wr) = tokio::io::split(tls);
    let (host, cert_ips) = match ident {
        Ok((Some(h), ips)) => (h, ips),
        Ok((None, _)) => {
            let why = "rejected: a master certificate is not an agent's".to_string();
            goodbye(wr, &why).await;
            return (why, true);
        }
        Err(e) => {
            let why = format!("rejected: {e}");
            goodbye(wr, &why).await;
            return (why, true);
        }
    };
    shared
        .sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(
            sid,
            Handle {
                tx,
                queued: queued.clone(),
                closing,
            },
        );
    let (said_hello, hello_rx) = watch::channel(false);
    let (alive, writer_gone) = watch::channel(());
    let mut writer = tokio::spawn(write_loop(
        wr,
        rx,
        closing_rx,
        queued,
        cfg.heartbeat,
        hello_rx,
        alive,
        shared.clone(),
    ));
    let out = read_loop(
        shared,
        sid,
        rd,
        peer,
        host,
        &cert_ips,
        hello_by,
        said_hello,
        writer_gone,
    )
    .await;
    // The reader ended: on its own (peer, deadline, bad frame) the writer is
    // told why (an ERROR for a rejection); when the writer ended first (the
    // master's close, or a broken connection) its reason is the session's.
    let (why, rejected) = match out {
        ReadEnd::Writer => {
            shared
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&sid);
            let why = match timeout(Duration::from_secs(3), &mut writer).await {
                Ok(Ok(why)) => why,
                Ok(Err(_)) => "closed".to_string(),
                Err(_) => {
                    writer.abort();
                    "closed".to_string()
                }
            };
            return (why, false);
        }
        ReadEnd::Own(why, rejected) => {
            let h = shared
                .sessions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&sid);
            if let Some(h) = h {
                h.close(&why, rejected);
            }
            (why, rejected)
        }
    };
    // The writer ends within CLOSE_GRACE plus a bounded goodbye; never leave it
    // (and the socket it holds) behind.
    if timeout(Duration::from_secs(3), &mut writer).await.is_err() {
        writer.abort();
    }
    (why, rejected)
}

/// Sends an ERROR before any other frame, then closes (bounded in time).
async fn goodbye(mut wr: tokio::io::WriteHalf<Tls>, why: &str) {
    let msg = &why.as_bytes()[..why.len().min(1000)];
    if let Ok(f) = wire::encode_frame(wire::ERROR, 0, msg) {
        let _ = timeout(Duration::from_secs(1), async {
            let _ = wr.write_all(&f).await;
            let _ = wr.shutdown().await;
        })
        .await;
    }
}

enum ReadEnd {
    /// The writer ended first (the master closed the session, or a write failed).
    Writer,
    /// It ended by itself: why, and whether it was a rejection.
    Own(String, bool),
}

#[allow(clippy::too_many_arguments)]
async fn read_loop(
    shared: &Arc<Shared>,
    sid: u64,
    mut rd: tokio::io::ReadHalf<Tls>,
    peer: &str,
    host: u32,
    cert_ips: &[[u8; 4]],
    hello_by: Instant,
    said_hello: watch::Sender<bool>,
    mut writer_gone: watch::Receiver<()>,
) -> ReadEnd {
    let cfg = &shared.cfg;
    let rt = cfg.read_timeout;
    let mut reader = FrameReader::with_first(
        wire::MAX_FRAME_BEFORE_HELLO,
        wire::MAX_FRAME,
        &[wire::HELLO, wire::REPORT],
    );
    let mut buf = vec![0u8; READ_BYTES];
    let mut hello_done = false;
    let mut last_heard = Instant::now();
    let mut frame_since: Option<Instant> = None;
    loop {
        let deadline = if !hello_done {
            hello_by
        } else {
            let d = last_heard + rt;
            frame_since.map_or(d, |f| d.min(f + rt))
        };
        let n = tokio::select! {
            r = rd.read(&mut buf) => match r {
                Ok(0) => return ReadEnd::Own("connection closed".into(), false),
                Ok(n) => n,
                Err(e) => return ReadEnd::Own(e.to_string(), false),
            },
            _ = sleep_until(deadline) => {
                let why = if !hello_done {
                    "no TLS handshake and HELLO in time".to_string()
                } else if frame_since.is_some_and(|f| f + rt <= Instant::now()) {
                    format!("a frame left unfinished for {} s", secs(rt))
                } else {
                    format!("silent for {} s", secs(rt))
                };
                return ReadEnd::Own(why, false);
            }
            r = writer_gone.changed() => {
                if r.is_err() {
                    return ReadEnd::Writer;
                }
                continue;
            }
        };
        last_heard = Instant::now();
        let frames = match reader.feed(&buf[..n]) {
            Ok(f) => f,
            Err(e) => return ReadEnd::Own(format!("rejected: {}", e.0), true),
        };
        frame_since = if reader.pending() > 0 {
            frame_since.or(Some(last_heard))
        } else {
            None
        };
        for (mtype, payload) in frames {
            match (mtype, hello_done) {
                (wire::HELLO, false) => {
                    let h = match check_hello(&payload, host, cfg.hosts, cert_ips) {
                        Ok(h) => h,
                        Err(e) => return ReadEnd::Own(format!("rejected: {e}"), true),
                    };
                    hello_done = true;
                    let _ = said_hello.send(true);
                    shared.push(Event::Hello {
                        sid,
                        peer: peer.to_string(),
                        hello: h,
                        cert_ips: cert_ips.to_vec(),
                    });
                }
                (wire::REPORT, true) => {
                    let r = match Report::decode(&payload) {
                        Ok(r) => r,
                        Err(e) => return ReadEnd::Own(format!("rejected: {}", e.0), true),
                    };
                    shared.metrics.reports.fetch_add(1, Ordering::Relaxed);
                    if r.new.is_empty() && r.updated.is_empty() && r.gone.is_empty() {
                        shared.metrics.empty_reports.fetch_add(1, Ordering::Relaxed);
                    } else if r.new.is_empty() && r.gone.is_empty() {
                        shared.push_updates(sid, &r.updated);
                    } else {
                        shared.push(Event::Report { sid, report: r });
                    }
                }
                _ => {
                    let why = format!("rejected: unexpected {}", wire::type_name(mtype));
                    return ReadEnd::Own(why, true);
                }
            }
        }
    }
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}

/// A HELLO that matches the certificate: its host, and addresses it lists.
fn check_hello(
    payload: &[u8],
    host: u32,
    hosts: u32,
    cert_ips: &[[u8; 4]],
) -> Result<Hello, String> {
    let h = Hello::decode(payload).map_err(|e| e.0)?;
    if u32::from(h.host) != host {
        return Err(format!(
            "HELLO says host {}, but the certificate is host {host}",
            h.host
        ));
    }
    if u32::from(h.host) >= hosts {
        return Err(format!(
            "host {} is outside this master's {hosts} hosts",
            h.host
        ));
    }
    for a in &h.addrs {
        if !cert_ips.contains(a) {
            return Err(format!(
                "address {} is not in host {host}'s certificate",
                std::net::Ipv4Addr::from(*a)
            ));
        }
    }
    Ok(h)
}

/// Writes the master's frames in order, numbering them; an empty DECISIONS
/// after `heartbeat` without a frame (once the agent said HELLO).
#[allow(clippy::too_many_arguments)]
async fn write_loop(
    mut wr: tokio::io::WriteHalf<Tls>,
    mut rx: mpsc::UnboundedReceiver<Out>,
    closing: watch::Receiver<Option<String>>,
    queued: Arc<AtomicUsize>,
    heartbeat: Duration,
    mut hello: watch::Receiver<bool>,
    _alive: watch::Sender<()>,
    shared: Arc<Shared>,
) -> String {
    let mut seq = 0u64;
    // The reader drops its side when it ends; its reason then comes as a Close.
    let mut reader_open = true;
    loop {
        let live = *hello.borrow();
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = sleep(heartbeat), if live => {
                shared.metrics.heartbeats_sent.fetch_add(1, Ordering::Relaxed);
                Some(Out::Heartbeat)
            }
            r = hello.changed(), if !live && reader_open => {
                reader_open = r.is_ok();
                continue;
            }
        };
        let heartbeat = matches!(msg, Some(Out::Heartbeat));
        let (mtype, payload, close) = match msg {
            None => return "closed".into(),
            Some(Out::Frame(t, p)) => (t, p, None),
            Some(Out::Heartbeat) => (wire::DECISIONS, wire::encode_decisions(&[]), None),
            Some(Out::Close { why, tell: false }) => {
                let _ = timeout(Duration::from_secs(1), wr.shutdown()).await;
                return why;
            }
            Some(Out::Close { why, tell: true }) => {
                let b = why.as_bytes();
                (wire::ERROR, b[..b.len().min(1000)].to_vec(), Some(why))
            }
        };
        let len = payload.len() + wire::HEADER + 4;
        let Ok(frame) = wire::encode_frame(mtype, seq, &payload) else {
            return "a frame too large to send".into();
        };
        seq += 1;
        if let Some(why) = close {
            let _ = timeout(Duration::from_secs(1), async {
                let _ = wr.write_all(&frame).await;
                let _ = wr.shutdown().await;
            })
            .await;
            return why;
        }
        // TLS may keep written bytes in its buffer until flushed. A peer that
        // does not read blocks this write; once the session is closing it has
        // CLOSE_GRACE to take the bytes, and then the session ends regardless.
        let mut closing = closing.clone();
        tokio::select! {
            r = async {
                wr.write_all(&frame).await?;
                wr.flush().await
            } => {
                if let Err(e) = r {
                    return format!("send failed: {e}");
                }
            }
            why = async {
                let seen = closing
                    .wait_for(|c| c.is_some())
                    .await
                    .map(|c| c.clone().unwrap_or_default());
                let Ok(why) = seen else {
                    // The handle is gone without a close: the reader ends it.
                    return std::future::pending::<String>().await;
                };
                sleep(CLOSE_GRACE).await;
                why
            } => {
                return format!("{why} (the agent did not read for {} s)", secs(CLOSE_GRACE));
            }
        }
        if !heartbeat {
            queued.fetch_sub(len, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_counts_events_and_the_byte_counts_merged_in_them() {
        let shared = Shared {
            cfg: HubConfig {
                listen: "127.0.0.1:0".parse().unwrap(),
                tls_dir: std::path::PathBuf::new(),
                hosts: 4,
                max_agents: 4,
                handshake_timeout: Duration::from_secs(1),
                read_timeout: Duration::from_secs(1),
                send_queue: 1 << 20,
                heartbeat: Duration::from_secs(1),
                workers: 1,
                reuse_port: false,
            },
            events: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
            sessions: Mutex::new(HashMap::new()),
            open: AtomicUsize::new(0),
            next_sid: AtomicU64::new(0),
            metrics: HubMetrics::default(),
        };
        assert_eq!(shared.pending(), (0, 0));
        // Two reports of bytes only merge into one event of 3 items; a close
        // after them is an event of its own, and updates after it a third.
        shared.push_updates(1, &[(7, 100), (8, 200)]);
        shared.push_updates(2, &[(9, 300)]);
        shared.push(Event::Closed {
            sid: 1,
            peer: "p".into(),
            why: "w".into(),
            rejected: false,
        });
        shared.push_updates(2, &[(9, 400)]);
        assert_eq!(shared.pending(), (3, 5));
    }

    #[test]
    fn secs_prints_whole_seconds_without_a_point() {
        assert_eq!(secs(Duration::from_secs(10)), "10");
        assert_eq!(secs(Duration::from_millis(1500)), "1.5");
    }
}
