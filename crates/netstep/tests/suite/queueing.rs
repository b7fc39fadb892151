//! Analytic checks: M/M/1 and M/D/1 mean sojourn time at the switch port equals queueing
//! theory within a 99.9 % confidence interval computed from the sample (batch means, so the
//! correlation between successive sojourn times is accounted for).

use netstep_core::engine::WindowMode;

use crate::common::*;

/// Service time: 1000 B at 1 Gb/s.
const SERVICE_US: f64 = 8.0;
/// Fixed delay outside the queue: two 1 us propagation delays.
const PROPAGATION_PS: u64 = 2_000_000;

/// Mean sojourn (µs) and the half-width of its 99.9 % confidence interval.
fn measured_sojourn(file: &str) -> (f64, f64, usize) {
    let mut s = scenario_file(file, &[]);
    s.model.record_deliveries = true;
    let out = run_window(&s, 1, WindowMode::Exact);
    // Sojourn at the switch port = one-way delay - propagation - serialization on the 1 Tb/s
    // access link (8 ps per byte).
    let mut by_number: Vec<_> = out.deliveries.iter().collect();
    by_number.sort_by_key(|d| d.number);
    let samples: Vec<f64> = by_number
        .iter()
        .map(|d| (d.arrived_ps - d.sent_ps - PROPAGATION_PS - d.size_bytes as u64 * 8) as f64 / 1e6)
        .collect();
    let expected = match &*s.model.flows.flows[0].transport {
        netstep_core::transport::TransportSpec::OpenLoop(o) => o.n_packets as usize,
        other => panic!("unexpected transport {other:?}"),
    };
    assert_eq!(
        samples.len(),
        expected,
        "every packet is delivered (unbounded buffer)"
    );
    batch_means_ci(&samples)
}

fn check(file: &str, theory_us: f64) {
    let (mean, half_width, n) = measured_sojourn(file);
    assert!(
        (mean - theory_us).abs() <= half_width,
        "{file}: mean sojourn {mean:.3} us over {n} packets, theory {theory_us:.3} us, 99.9% CI half-width {half_width:.3} us"
    );
    // The interval must be informative, not so wide that anything passes.
    assert!(
        half_width < 0.15 * theory_us,
        "{file}: CI half-width {half_width:.3} us is too wide to be a test"
    );
}

fn mm1(rho: f64) -> f64 {
    SERVICE_US / (1.0 - rho)
}

fn md1(rho: f64) -> f64 {
    SERVICE_US + rho * SERVICE_US / (2.0 * (1.0 - rho))
}

#[test]
fn mm1_rho_05() {
    check("scenarios/queueing/mm1-rho05.toml", mm1(0.5));
}

#[test]
fn mm1_rho_08() {
    check("scenarios/queueing/mm1-rho08.toml", mm1(0.8));
}

#[test]
fn mm1_rho_09() {
    check("scenarios/queueing/mm1-rho09.toml", mm1(0.9));
}

#[test]
fn md1_rho_05() {
    check("scenarios/queueing/md1-rho05.toml", md1(0.5));
}

#[test]
fn md1_rho_08() {
    check("scenarios/queueing/md1-rho08.toml", md1(0.8));
}

#[test]
fn md1_rho_09() {
    check("scenarios/queueing/md1-rho09.toml", md1(0.9));
}

#[test]
fn md1_and_mm1_differ_as_theory_says() {
    // Guards against a source that ignores size_distribution: at rho = 0.8 M/M/1 waits
    // (40 us) are far longer than M/D/1 waits (24 us).
    let (mm, _, _) = measured_sojourn("scenarios/queueing/mm1-rho08.toml");
    let (md, _, _) = measured_sojourn("scenarios/queueing/md1-rho08.toml");
    assert!(mm > md * 1.4, "M/M/1 {mm:.2} us vs M/D/1 {md:.2} us");
}
