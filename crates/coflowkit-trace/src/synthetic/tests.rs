//! Tests of the synthetic `fb` generator.

use super::sample::*;
use super::*;

#[test]
fn erfc_matches_reference_values() {
    // erfc(0) = 1, erfc(1) = 0.157299207..., erfc(-1) = 1.842700792..., erfc(3) = 2.209049699e-5.
    for (x, want) in [
        (0.0, 1.0),
        (1.0, 0.157_299_207_050_285_1),
        (-1.0, 1.842_700_792_949_715),
        (3.0, 2.209_049_699_858_544e-5),
    ] {
        let got = erfc(x);
        assert!(
            (got - want).abs() <= 2e-7 * want,
            "erfc({x}) = {got}, want {want}"
        );
    }
}

#[test]
fn size_quantiles_are_monotone_and_bounded() {
    for m in FB2010_BINS {
        let mut prev = 0.0;
        for i in 0..=1000 {
            let u = i as f64 / 1000.0 * 0.999_999;
            let s = m.size.quantile_mb(u);
            assert!(s >= prev && s >= m.size.min_mb && s <= m.size.max_mb);
            prev = s;
        }
    }
    // The SN atom: a third of the bin is exactly 1 MB.
    assert_eq!(FB2010_BINS[0].size.quantile_mb(0.3), 1.0);
}

#[test]
fn picked_ports_are_distinct_sorted_and_in_range() {
    let mut rng = Pcg32::new(1, 1);
    let mut buf = Vec::new();
    for k in [1, 7, 150] {
        let p = pick_ports(k, 150, &mut rng, &mut buf);
        assert_eq!(p.len(), k as usize);
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        assert!(p.iter().all(|&x| x < 150));
    }
}

#[test]
fn width_repair_reaches_the_bin() {
    assert_eq!(repair_width(Bin::SN, 40, 3, 150), (16, 3));
    let (m, r) = repair_width(Bin::LW, 1, 1, 150);
    assert!(m as u64 * r as u64 > NARROW_MAX_FLOWS);
    let (m, r) = repair_width(Bin::SW, 8, 1, 8);
    assert!(m as u64 * r as u64 > NARROW_MAX_FLOWS && m <= 8 && r <= 8);
}

#[test]
fn flow_split_respects_the_length_class_and_port_cap() {
    let mut rng = Pcg32::new(3, 3);
    let model = |spread, max_port_mb| BinModel {
        spread,
        max_port_mb,
        ..FB2010_BINS[0]
    };
    // Short: 1000 MB over 2 × 10 flows must clamp every flow at 4 MB.
    let mb = split_flows(Bin::SW, &model(0.5, 1e9), 1000.0, 2, 10, &mut rng);
    assert!(mb
        .iter()
        .all(|&x| (1.0..=4.0).contains(&x) && x.fract() == 0.0));
    // Long: 3 MB over 4 × 3 flows must lift one flow to 5 MB.
    let mb = split_flows(Bin::LN, &model(0.5, 1e9), 3.0, 4, 3, &mut rng);
    assert_eq!(mb.iter().cloned().fold(0.0, f64::max), 5.0);
    // The port cap: 2 mappers × 10 reducers sharing 1000 MB, no reducer above
    // 120 MB, so no flow above 60 MB.
    let mb = split_flows(Bin::LW, &model(1.0, 120.0), 1000.0, 2, 10, &mut rng);
    assert!(mb.iter().all(|&x| x <= 60.0), "{mb:?}");
    assert_eq!(repair_load(1, 2, 1000.0, 120.0, 150), (9, 9));
    assert_eq!(repair_load(1, 2, 1e9, 120.0, 150), (150, 150));
}

#[test]
fn small_custom_workloads_keep_the_bin_mix() {
    let g = SyntheticFb {
        ports: 8,
        coflows: 40,
        duration_s: 10.0,
        ..SyntheticFb::default()
    };
    let w = g.generate(9).unwrap();
    assert_eq!(w.source, "synthetic:fb:seed=9:custom");
    assert_eq!(w.coflows.len(), 40);
    assert!(w.flows.iter().all(|f| f.src < 8 && f.dst < 8));
    assert!(w.coflows.iter().all(|c| c.arrival_s <= 10.0));
    for b in Bin::ALL {
        let n = w.coflows.iter().filter(|c| Bin::of_coflow(c) == b).count() as f64;
        assert!((n - 40.0 * g.bin(b).fraction).abs() <= 1.0, "{b:?}: {n}");
    }
}

#[test]
fn invalid_parameters_are_errors_not_panics() {
    let d = SyntheticFb::default;
    let field = |g: SyntheticFb| g.generate(1).unwrap_err().field;
    assert_eq!(field(SyntheticFb { ports: 0, ..d() }), "ports");
    assert_eq!(field(SyntheticFb { coflows: 0, ..d() }), "coflows");
    assert_eq!(
        field(SyntheticFb {
            duration_s: f64::NAN,
            ..d()
        }),
        "duration_s"
    );
    assert_eq!(
        field(SyntheticFb {
            burst_persistence: 1.0,
            ..d()
        }),
        "burst_persistence"
    );
    // Wide bins cannot exist on 7 ports (49 flows at most).
    assert_eq!(field(SyntheticFb { ports: 7, ..d() }), "bins.SW.fraction");
    let mut g = d();
    g.bins[3].size.shape_a = 0.0;
    assert_eq!(field(g), "bins.LW.size.shape_a");
    let mut g = d();
    g.bins[1].mappers.p_one = 2.0;
    assert_eq!(field(g), "bins.LN.mappers.p_one");
    let mut g = d();
    g.bins.iter_mut().for_each(|b| b.fraction = 0.0);
    assert_eq!(field(g), "bins");
    // Only narrow bins on 7 ports is fine.
    let mut g = SyntheticFb {
        ports: 7,
        coflows: 30,
        ..d()
    };
    g.bins[2].fraction = 0.0;
    g.bins[3].fraction = 0.0;
    let w = g.generate(2).unwrap();
    assert!(w.coflows.iter().all(|c| Bin::of_coflow(c).is_narrow()));
}
