//! Runs one policy on a trace and prints timings: a profiling aid.
//! `cargo run --release -p coflowkit-sim --example run_trace -- TRACE POLICY[:K=V...] [--check] [--dump FILE]`
//! `--dump FILE` writes each coflow's id and finish time (one per line, full
//! precision), to compare two builds of the engine coflow by coflow.

use std::time::Instant;

use coflowkit_model::Workload;

/// Prints `e` and exits with `code`.
fn die(e: impl std::fmt::Display, code: i32) -> ! {
    eprintln!("{e}");
    std::process::exit(code)
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        die("usage: run_trace TRACE POLICY [--check] [--dump FILE]", 2);
    }
    let t0 = Instant::now();
    let w = load(&args[1], t0);
    let t1 = Instant::now();
    // POLICY[:KEY=VALUE...], e.g. coda:labels=random:intra=false
    let mut parts = args[2].split(':');
    let name = parts.next().unwrap_or_default();
    let params = parts
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let mut p = coflowkit_policy::build(name, &params).unwrap_or_else(|e| die(e, 2));
    let opts = options(args.iter().any(|a| a == "--check"));
    let r = match coflowkit_sim::simulate(&w, &mut p, &opts, None) {
        Ok(r) => r,
        Err(e) => {
            println!("{} {e} after {:.3}s", args[2], t1.elapsed().as_secs_f64());
            return;
        }
    };
    let t2 = Instant::now();
    let mean: f64 = w
        .coflows
        .iter()
        .enumerate()
        .map(|(k, c)| r.coflow_finish_s[k] - c.arrival_s)
        .sum::<f64>()
        / w.coflows.len() as f64;
    if let Some(i) = args.iter().position(|a| a == "--dump") {
        let mut out = String::new();
        for (k, c) in w.coflows.iter().enumerate() {
            out.push_str(&format!("{} {:e}\n", c.id, r.coflow_finish_s[k]));
        }
        std::fs::write(&args[i + 1], out).expect("cannot write the --dump file");
    }
    println!(
        "{} read {:.3}s simulate {:.3}s events {} calls {} mean_active {:.0} mean_cct {:.6}{}",
        args[2],
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        r.events,
        r.policy_calls,
        r.active_flow_calls as f64 / r.policy_calls.max(1) as f64,
        mean,
        r.series
            .map(|s| format!(" samples {}", s.time_s.len()))
            .unwrap_or_default()
    );
    eprintln!(
        "rate_changes {} class_group_calls {} class_form_switches {}",
        r.rate_changes, r.class_group_calls, r.class_form_switches
    );
}

/// The trace, cut to its first `FIRST=N` coflows and re-routed on `FABRIC=SPEC`
/// (e.g. fattree:k=16) when those are set.
fn load(path: &str, t0: Instant) -> Workload {
    let w = coflowkit_trace::read_path(path, None).unwrap_or_else(|e| die(e, 1));
    let w = match env_parse::<usize>("FIRST") {
        Some(n) => w.head(n),
        None => w,
    };
    let Ok(spec) = std::env::var("FABRIC") else {
        return w;
    };
    let f = coflowkit_model::Fabric::from_spec(&spec, w.fabric.ports())
        .and_then(|f| w.with_fabric(f))
        .unwrap_or_else(|e| die(e, 2));
    eprintln!(
        "fabric {} ({} paths), routed in {:.3}s",
        f.fabric.describe(),
        f.fabric.num_paths(),
        t0.elapsed().as_secs_f64()
    );
    f
}

/// Engine options from the environment: `MAX_EVENTS=N`; `RECORD=SECONDS` (0:
/// every event) records the instantaneous metrics, to measure what recording
/// costs; `DELTA=0` runs without delta decisions (policies answer in full), to
/// compare a policy's incremental form with its from-scratch one;
/// `CLASSES=flows|groups|auto` chooses how strict-priority classes are kept.
fn options(check: bool) -> coflowkit_sim::SimOptions {
    coflowkit_sim::SimOptions {
        check_invariants: check,
        max_events: env_parse("MAX_EVENTS").unwrap_or(0),
        record: env_parse("RECORD").map(|interval_s| coflowkit_sim::Recording {
            interval_s,
            per_coflow: false,
        }),
        delta_decisions: std::env::var("DELTA").map_or(true, |v| v != "0"),
        class_form: match std::env::var("CLASSES").as_deref() {
            Ok("flows") => coflowkit_sim::ClassForm::Flows,
            Ok("groups") => coflowkit_sim::ClassForm::Groups,
            Ok("auto") | Err(_) => coflowkit_sim::ClassForm::Auto,
            Ok(other) => panic!("CLASSES={other}: expected flows, groups or auto"),
        },
        ..Default::default()
    }
}
