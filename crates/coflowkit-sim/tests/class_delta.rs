//! Class delta decisions (`Decision::class_delta`): a policy names only the
//! flows that started and those whose class changed. Hand-worked on the big
//! switch; C = 1 Gbps (2^27 B/s), 128 MB = 1 C·s.

use coflowkit_policy::decision::Decision;
use coflowkit_policy::policy::{AnyPolicy, NonClairvoyantPolicy};
use coflowkit_policy::view::NonClairvoyantView;
use coflowkit_sim::{simulate, ClassForm, SimOptions};
use coflowkit_trace::read_benchmark;

/// Class = flow index mod 2, named once, when the flow starts; with `forget`,
/// the odd flows are never named (a broken policy).
struct ByIndex {
    forget: bool,
}

impl NonClairvoyantPolicy for ByIndex {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        out.class_delta = true;
        for &f in v.started {
            if !(self.forget && f % 2 == 1) {
                out.class_moves.push((f, (f % 2) as u8));
            }
        }
    }
}

/// The flows' finish times of `policy` on the benchmark trace `trace`, with
/// invariants checked, in class form `form`.
fn finish_times(
    trace: &str,
    policy: impl NonClairvoyantPolicy + 'static,
    form: ClassForm,
) -> Result<Vec<f64>, String> {
    let w = read_benchmark("t", trace).unwrap();
    let mut p = AnyPolicy::NonClairvoyant(Box::new(policy));
    let opts = SimOptions {
        check_invariants: true,
        class_form: form,
        ..Default::default()
    };
    simulate(&w, &mut p, &opts, None)
        .map(|r| r.flow_finish_s)
        .map_err(|e| e.to_string())
}

fn run(forget: bool, form: ClassForm) -> Result<Vec<f64>, String> {
    // Port 0 sends 1 C·s to port 1 (flow 0) and 3 C·s to port 2 (flow 1).
    finish_times("4 1\n1 0 1 0 2 1:128 2:384\n", ByIndex { forget }, form)
}

#[test]
fn classes_named_once_hold_until_changed() {
    // Flow 0 (class 0) has port 0's uplink alone: done at 1 s; flow 1 (class
    // 1) gets nothing until then, then C for 3 C·s: done at 4 s. Named once
    // each, in either form.
    for form in [ClassForm::Flows, ClassForm::Groups, ClassForm::Auto] {
        let f = run(false, form).unwrap();
        assert!(
            (f[0] - 1.0).abs() < 1e-9 && (f[1] - 4.0).abs() < 1e-9,
            "{form:?}: {f:?}"
        );
    }
}

#[test]
fn a_new_flow_left_without_a_class_is_an_error() {
    for form in [ClassForm::Flows, ClassForm::Groups] {
        let e = run(true, form).unwrap_err();
        assert!(
            e.contains("without a class for flow") && e.contains("started at t=0"),
            "{form:?}: {e}"
        );
    }
}

/// Flows 0 and 1 in classes 0 and 1, flow 2 in class 2; when flow 2 starts,
/// classes 0 and 1 swap by a rename (`bad`: class 0 is renamed into class 1,
/// which holds flow 1 and is not renamed itself).
struct Swap {
    bad: bool,
}

impl NonClairvoyantPolicy for Swap {
    fn decide(&mut self, v: &NonClairvoyantView, out: &mut Decision) {
        out.class_delta = true;
        for &f in v.started {
            out.class_moves.push((f, f.min(2) as u8));
            if f == 2 {
                let renames: &[(u8, u8)] = if self.bad {
                    &[(0, 1)]
                } else {
                    &[(0, 1), (1, 0)]
                };
                out.class_renames.extend_from_slice(renames);
            }
        }
    }
}

fn run_swap(bad: bool, form: ClassForm) -> Result<Vec<f64>, String> {
    // Port 0 sends 1 C·s to port 1 (flow 0) and 3 C·s to port 2 (flow 1) at
    // t = 0; port 3 sends 1 C·s to port 1 (flow 2) at t = 0.5 s.
    let trace = "4 2\n1 0 1 0 2 1:128 2:384\n2 500 1 3 1 1:128\n";
    finish_times(trace, Swap { bad }, form)
}

#[test]
fn renamed_classes_carry_their_flows() {
    // Until 0.5 s flow 0 (class 0) has port 0's uplink: 0.5 C·s left. Then
    // flows 0 and 1 swap classes: flow 1 (class 0) takes the uplink for its
    // 3 C·s, done at 3.5 s; flow 2 (class 2) has port 3's uplink and port
    // 1's downlink (flow 0 sends nothing), done at 1.5 s; flow 0 resumes at
    // 3.5 s, done at 4 s. The same in either form.
    for form in [ClassForm::Flows, ClassForm::Groups, ClassForm::Auto] {
        let f = run_swap(false, form).unwrap();
        let want = [4.0, 3.5, 1.5];
        assert!(
            f.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9),
            "{form:?}: {f:?}"
        );
    }
}

#[test]
fn a_rename_into_a_class_that_holds_flows_is_an_error() {
    for form in [ClassForm::Flows, ClassForm::Groups] {
        let e = run_swap(true, form).unwrap_err();
        assert!(
            e.contains("bad class rename")
                && e.contains("class 1 is renamed into while it holds flows"),
            "{form:?}: {e}"
        );
    }
}
