//! Helpers shared by the engine's integration tests.

use coflowkit_model::Pcg32;

/// A random benchmark trace: 12 ports, 30 coflows arriving over 2 s, 1-10
/// mappers and 1-10 reducers each (so some are wider than MCS's 50 flows),
/// reducers receiving 1-300 MB.
pub fn random_trace(seed: u64) -> String {
    let mut rng = Pcg32::new(seed, 9);
    let mut t = String::from("12 30\n");
    for k in 0..30 {
        let arrival = rng.below(2000);
        let m = 1 + rng.below(10);
        let r = 1 + rng.below(10);
        t += &format!("{} {arrival} {m}", k + 1);
        for _ in 0..m {
            t += &format!(" {}", rng.below(12));
        }
        t += &format!(" {r}");
        for _ in 0..r {
            t += &format!(" {}:{}", rng.below(12), 1 + rng.below(300));
        }
        t += "\n";
    }
    t
}
