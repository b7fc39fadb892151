//! Tests of the scenario crate as a whole: the reference documents the format and its
//! defaults.

/// The scenario reference must mention every field of the format: adding a field to a
/// config type (`config.rs`, or a kind's own file under `topology/`, `traffic/` and
/// `transport/`) without documenting it in `scenarios/REFERENCE.md` fails here.
#[test]
fn reference_documents_every_field() {
    let sources = [
        include_str!("config.rs"),
        include_str!("topology/cluster.rs"),
        include_str!("topology/custom.rs"),
        include_str!("topology/dumbbell.rs"),
        include_str!("topology/fat_tree.rs"),
        include_str!("topology/leaf_spine.rs"),
        include_str!("topology/rail.rs"),
        include_str!("topology/gpu_cluster.rs"),
        include_str!("topology/torus.rs"),
        include_str!("traffic/all_to_all.rs"),
        include_str!("traffic/collective.rs"),
        include_str!("traffic/flow_file.rs"),
        include_str!("traffic/flows.rs"),
        include_str!("traffic/incast.rs"),
        include_str!("traffic/on_off.rs"),
        include_str!("traffic/permutation.rs"),
        include_str!("traffic/poisson.rs"),
        include_str!("traffic/rack_matrix.rs"),
        include_str!("traffic/aicb.rs"),
        include_str!("traffic/random_pairs.rs"),
        include_str!("traffic/request_response.rs"),
        include_str!("transport/open_loop.rs"),
        include_str!("transport/rdma.rs"),
        include_str!("transport/tcp.rs"),
    ];
    let reference = include_str!("../../../scenarios/REFERENCE.md");
    let mut missing = Vec::new();
    let mut checked = 0;
    for source in sources {
        // Fields of the structs that derive `Deserialize` (the format's types).
        let mut deserialized = false;
        let mut inside = false;
        // A field marked `#[serde(skip)]` is not part of the format.
        let mut skipped = false;
        for line in source.lines() {
            if line.starts_with("#[derive(") {
                deserialized = line.contains("Deserialize");
                continue;
            }
            if line.starts_with("pub struct ") {
                inside = std::mem::take(&mut deserialized) && line.ends_with('{');
                continue;
            }
            if line == "}" {
                inside = false;
                continue;
            }
            let line = line.trim();
            if !inside {
                continue;
            }
            if line == "#[serde(skip)]" {
                skipped = true;
                continue;
            }
            let field = line.strip_prefix("pub ").unwrap_or(line);
            if std::mem::take(&mut skipped) {
                continue;
            }
            if let Some((name, rest)) = field.split_once(':')
                && !name.contains(' ')
                && !name.is_empty()
                && rest.trim_end().ends_with(',')
            {
                checked += 1;
                if !reference.contains(&format!("`{name}`")) {
                    missing.push(name.to_string());
                }
            }
        }
    }
    // The format has well over a hundred fields: a scan that finds few has lost its way.
    assert!(checked > 150, "only {checked} fields found");
    assert!(
        missing.is_empty(),
        "scenarios/REFERENCE.md does not document: {missing:?}"
    );
}

/// The rows of the field table that follows `marker` in REFERENCE.md: `(field, default)`.
fn reference_table(reference: &str, marker: &str) -> Vec<(String, String)> {
    let start = reference.find(marker).expect("marker in REFERENCE.md");
    let mut rows = Vec::new();
    let mut in_table = false;
    let mut columns = 0;
    for line in reference[start..].lines() {
        if line.starts_with("| field | ") && line.contains(" | default |") {
            in_table = true;
            columns = line.split(" | ").count();
            continue;
        }
        if !in_table || line.starts_with("|---") {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split(" | ").collect();
        assert_eq!(
            cells.len(),
            columns,
            "REFERENCE.md row with a stray ' | ': {line}"
        );
        rows.push((
            cells[0].trim_start_matches("| ").to_string(),
            cells[2].to_string(),
        ));
    }
    rows
}

/// A duration as a scenario writes it, in the largest unit that divides it exactly.
fn duration(t: netstep_core::units::SimTime) -> String {
    let units = [
        (1_000_000_000_000, "s"),
        (1_000_000_000, "ms"),
        (1_000_000, "us"),
        (1_000, "ns"),
    ];
    let (div, unit) = units
        .into_iter()
        .find(|(d, _)| t.0.is_multiple_of(*d))
        .unwrap_or((1, "ps"));
    format!("`\"{}{unit}\"`", t.0 / div)
}

fn size(bytes: u32) -> String {
    format!("`\"{bytes}B\"`")
}

/// A buffer as a scenario writes it: packets, or bytes in the largest exact decimal unit.
fn buffer(b: netstep_core::units::BufferSize) -> String {
    use netstep_core::units::BufferSize;
    match b {
        BufferSize::Packets(n) => format!("`\"{n}pkts\"`"),
        BufferSize::Bytes(bytes) => {
            let units = [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")];
            let (div, unit) = units
                .into_iter()
                .find(|(d, _)| bytes.0.is_multiple_of(*d))
                .unwrap_or((1, "B"));
            format!("`\"{}{unit}\"`", bytes.0 / div)
        }
    }
}

fn rate(bps: f64) -> String {
    let units = [(1e9, "Gbps"), (1e6, "Mbps"), (1e3, "Kbps")];
    let (div, unit) = units
        .into_iter()
        .find(|(d, _)| (bps / d).fract() == 0.0)
        .unwrap_or((1.0, "bps"));
    format!("`\"{}{unit}\"`", bps / div)
}

/// A gain as the reference writes it: `1/n` when it is one over a whole number.
fn gain(g: f64) -> String {
    let n = 1.0 / g;
    if n.fract() == 0.0 {
        format!("1/{n}")
    } else {
        format!("{g}")
    }
}

/// Compares a REFERENCE.md table with the defaults the code uses, name by name: every
/// documented field has the default stated (the cell equals it, or starts with it and
/// goes on with an explanation), and every field is documented.
fn check_table(marker: &str, expected: &[(&str, String)]) {
    let reference = include_str!("../../../scenarios/REFERENCE.md");
    let rows = reference_table(reference, marker);
    let mut problems = Vec::new();
    for (field, cell) in &rows {
        match expected
            .iter()
            .find(|(name, _)| format!("`{name}`") == *field)
        {
            None => problems.push(format!("{field}: documented but not checked")),
            Some((_, want)) => {
                let ok = cell == want
                    || cell.starts_with(&format!("{want};"))
                    || cell.starts_with(&format!("{want} ("));
                if !ok {
                    problems.push(format!(
                        "{field}: REFERENCE.md says {cell}, the code {want}"
                    ));
                }
            }
        }
    }
    for (name, _) in expected {
        if !rows.iter().any(|(field, _)| *field == format!("`{name}`")) {
            problems.push(format!("`{name}`: not in the table after {marker:?}"));
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// One place per default: the TCP and RDMA transports take every unset field from
/// `TcpSpec::new` / `RdmaSpec::new` and the rate controls' `Default`, and REFERENCE.md
/// states exactly those values.
#[test]
fn reference_states_the_transport_defaults() {
    use netstep_core::transport::CcSpec;
    use netstep_core::transport::rdma::dcqcn::DcqcnSpec;
    use netstep_core::transport::rdma::hpcc::HpccSpec;
    use netstep_core::transport::rdma::timely::TimelySpec;
    use netstep_core::transport::rdma::{RdmaCc, RdmaSpec, Recovery};
    use netstep_core::transport::tcp::{
        FctFrom, Recovery as TcpRecovery, RecoveryExit, RttSampling, SsthreshFrom, TcpSpec,
    };
    let t = TcpSpec::new(CcSpec::NewReno);
    check_table(
        "`kind = \"tcp\"` (the default transport",
        &[
            ("cc", format!("`\"{}\"`", t.cc.name())),
            ("dctcp_g", gain(CcSpec::DCTCP_DEFAULT_G)),
            ("sack", t.sack.to_string()),
            ("delayed_ack", t.delayed_ack.map_or("off".into(), duration)),
            ("pacing", t.pacing.to_string()),
            ("abc_limit", t.abc_limit.to_string()),
            ("mss", size(t.mss_bytes)),
            ("header", size(t.header_bytes)),
            ("initial_cwnd", t.initial_cwnd.to_string()),
            ("rto_min", duration(t.rto_min)),
            ("rto_initial", duration(t.rto_initial)),
            ("rto_max", duration(t.rto_max)),
            ("max_retries", t.max_retries.to_string()),
            ("profile", "`\"netstep\"`".into()),
            ("sack_blocks", t.sack_blocks.to_string()),
            ("sack_option_bytes", t.sack_option_bytes.to_string()),
            (
                "rtt_sampling",
                match t.rtt_sampling {
                    RttSampling::Echo => "`\"echo\"`".into(),
                    RttSampling::Karn => "`\"karn\"`".into(),
                },
            ),
            (
                "recovery",
                match t.recovery {
                    TcpRecovery::Classic => "`\"classic\"`".into(),
                    TcpRecovery::Prr => "`\"prr\"`".into(),
                    TcpRecovery::PrrNs3 => "`\"prr_ns3\"`".into(),
                },
            ),
            (
                "recovery_exit",
                match t.recovery_exit {
                    RecoveryExit::Flight => "`\"flight\"`".into(),
                    RecoveryExit::Ssthresh => "`\"ssthresh\"`".into(),
                },
            ),
            (
                "recovery_rto",
                if t.recovery_restarts_rto {
                    "`\"restart\"`".into()
                } else {
                    "`\"keep\"`".into()
                },
            ),
            (
                "partial_ack_retransmit",
                t.partial_ack_retransmit.to_string(),
            ),
            (
                "ssthresh_from",
                match t.ssthresh_from {
                    SsthreshFrom::Flight => "`\"flight\"`".into(),
                    SsthreshFrom::Pipe => "`\"pipe\"`".into(),
                    SsthreshFrom::Cwnd => "`\"cwnd\"`".into(),
                },
            ),
            ("handshake", t.handshake.to_string()),
            ("syn_options", size(t.syn_option_bytes)),
            ("syn_rto", duration(t.syn_rto)),
            ("syn_retries", t.syn_retries.to_string()),
            (
                "fct_from",
                match t.fct_from {
                    FctFrom::FirstData => "`\"first_data\"`".into(),
                    FctFrom::ConnectionStart => "`\"connection_start\"`".into(),
                },
            ),
        ],
    );
    let d = DcqcnSpec::default();
    let r = RdmaSpec::new(RdmaCc::Dcqcn(d));
    let (tm, h) = (TimelySpec::default(), HpccSpec::default());
    assert_eq!(
        (
            tm.rate_ai_bps,
            tm.rate_hai_bps,
            tm.min_rate_bps,
            h.min_rate_bps
        ),
        (
            d.rate_ai_bps,
            d.rate_hai_bps,
            d.min_rate_bps,
            d.min_rate_bps
        ),
        "the rate steps are documented once for the three rate controls"
    );
    assert_eq!(
        (h.rate_ai_bps, h.base_rtt),
        (None, None),
        "HPCC's defaults depend on the flow"
    );
    check_table(
        "### `kind = \"rdma\"`",
        &[
            ("cc", "`\"dcqcn\"`".into()),
            ("mtu", size(r.mtu_bytes)),
            ("header", size(r.header_bytes)),
            ("ack_size", "the `header`".into()),
            ("rto", duration(r.rto)),
            ("max_retries", r.max_retries.to_string()),
            ("nack_interval", duration(r.nack_interval)),
            ("ack_every", r.ack_every.to_string()),
            (
                "recovery",
                match r.recovery {
                    Recovery::GoBackN => "`\"go_back_n\"`".into(),
                    Recovery::SelectiveRepeat => "`\"selective_repeat\"`".into(),
                },
            ),
            ("g", gain(d.g)),
            ("alpha_interval", duration(d.alpha_interval)),
            ("decrease_interval", duration(d.decrease_interval)),
            ("increase_interval", duration(d.increase_interval)),
            ("fast_recovery_stages", d.fast_recovery_stages.to_string()),
            ("rate_ai", rate(d.rate_ai_bps)),
            ("rate_hai", rate(d.rate_hai_bps)),
            ("min_rate", rate(d.min_rate_bps)),
            ("timely_alpha", tm.alpha.to_string()),
            ("timely_beta", tm.beta.to_string()),
            ("t_low", duration(tm.t_low)),
            ("t_high", duration(tm.t_high)),
            ("min_rtt", duration(tm.min_rtt)),
            ("eta", h.eta.to_string()),
            ("max_stage", h.max_stage.to_string()),
            ("base_rtt", "the flow's unloaded round trip".into()),
            ("fast_react", h.fast_react.to_string()),
            (
                "max_rate",
                match r.max_rate_bps {
                    None => "the NIC's line rate".into(),
                    Some(x) => rate(x),
                },
            ),
            (
                "window",
                match r.window {
                    None => "none".into(),
                    Some(w) => w.bytes.to_string(),
                },
            ),
            (
                "variable_window",
                r.window.is_some_and(|w| w.variable).to_string(),
            ),
        ],
    );
}

/// The NIC, switch and open-loop defaults: `NicConfig::default`, `SharedBuffer`'s and
/// `PfcSpec`'s constants, `OpenLoopSpec::DEFAULT_PACKET_SIZE`, as REFERENCE.md states them.
#[test]
fn reference_states_the_element_defaults() {
    use netstep_core::nic::NicConfig;
    use netstep_core::pfc::StaticPfc;
    use netstep_core::queue::SharedBuffer;
    use netstep_core::transport::OpenLoopSpec;
    use netstep_core::units::BufferSize;
    let nic = NicConfig::default();
    check_table(
        "## `[nic]` (every host's NIC)",
        &[
            ("buffer", buffer(nic.buffer)),
            ("per_flow", buffer(nic.per_flow)),
            ("scheduler", format!("`\"{}\"`", nic.scheduler.name())),
            (
                "shaper",
                nic.shaper
                    .map_or("none (line rate)".into(), |_| "a shaper".into()),
            ),
        ],
    );
    check_table(
        "## `[switch]` (every switch)",
        &[
            ("shared_buffer", "none".into()),
            ("alpha", SharedBuffer::DEFAULT_ALPHA.to_string()),
            ("pfc", "none (every class lossy)".into()),
            ("ack_priority", "false".into()),
            ("admission_room", "none".into()),
        ],
    );
    let reference = include_str!("../../../scenarios/REFERENCE.md");
    let headroom = buffer(BufferSize::Bytes(StaticPfc::DEFAULT_HEADROOM));
    assert!(
        reference.contains(&format!("`headroom` (default {headroom})")),
        "REFERENCE.md's PFC section states the headroom default {headroom}"
    );
    // Dynamic thresholds: reserve, resume offset, headroom in BDPs, shift.
    use netstep_core::pfc::DynamicPfc;
    for stated in [
        format!(
            "`reserve` bytes (default {})",
            size(DynamicPfc::DEFAULT_RESERVE.0 as u32)
        ),
        format!(
            "`resume_offset` (default {})",
            size(DynamicPfc::DEFAULT_RESUME_OFFSET.0 as u32)
        ),
        format!(
            "link bandwidth-delay products, default {})",
            DynamicPfc::DEFAULT_HEADROOM_BDPS
        ),
        format!("(default {}, one eighth)", DynamicPfc::DEFAULT_SHIFT),
    ] {
        assert!(
            reference.replace('\n', " ").contains(&stated),
            "REFERENCE.md's dynamic PFC text states {stated}"
        );
    }
    check_table(
        "`kind = \"open_loop\"`:",
        &[
            (
                "packet_size",
                size(OpenLoopSpec::DEFAULT_PACKET_SIZE.0 as u32),
            ),
            ("interval", "—".into()),
            ("rate", "—".into()),
            ("exponential", "false".into()),
            ("size_distribution", "`\"constant\"`".into()),
            ("ecn", "false".into()),
        ],
    );
}

/// The simulation, link, routing and trace defaults: the constants on their config types
/// (`SimulationConfig`, `TraceTablesConfig`) and in `topology.rs`, as REFERENCE.md states.
#[test]
fn reference_states_the_run_and_link_defaults() {
    use crate::config::{SimulationConfig, TraceTablesConfig};
    check_table(
        "## `[simulation]`",
        &[
            ("duration", "until no event is left".into()),
            ("seed", SimulationConfig::DEFAULT_SEED.to_string()),
            ("threads", SimulationConfig::DEFAULT_THREADS.to_string()),
            ("window", "`\"exact\"`".into()),
        ],
    );
    check_table(
        "`defaults` and per-link fields for `custom`",
        &[
            ("rate", rate(crate::topology::DEFAULT_RATE.0 as f64)),
            ("delay", duration(crate::topology::DEFAULT_DELAY)),
            ("buffer", buffer(crate::topology::DEFAULT_BUFFER)),
            ("loss", "0".into()),
            ("scheduler", "FIFO".into()),
            ("aqm", "none (tail drop)".into()),
            ("shaper", "none".into()),
            ("policer", "none".into()),
        ],
    );
    let mode = toml::Value::try_from(crate::config::RoutingMode::default()).unwrap();
    check_table(
        "## `[routing]`",
        &[
            ("mode", format!("`\"{}\"`", mode.as_str().unwrap())),
            ("flowlet_gap", "—".into()),
            ("weighted", "false".into()),
        ],
    );
    check_table(
        "## `[[failures]]`",
        &[
            ("link", "—".into()),
            ("down", "—".into()),
            ("up", "never".into()),
        ],
    );
    check_table(
        "## `[trace]`",
        &[
            ("tables", "`[]`".into()),
            (
                "sample_interval",
                duration(TraceTablesConfig::DEFAULT_SAMPLE_INTERVAL),
            ),
            ("flows", "all".into()),
            ("nodes", "all".into()),
            ("from", duration(netstep_core::units::SimTime::ZERO)),
            ("until", "no limit".into()),
            (
                "sample_one_in",
                TraceTablesConfig::DEFAULT_SAMPLE_ONE_IN.to_string(),
            ),
        ],
    );
}

/// The scenario format's defaults are the spec types' own: a transport table with no
/// field set resolves to `TcpSpec::new` / `RdmaSpec::new`.
#[test]
fn unset_transport_fields_resolve_to_the_spec_defaults() {
    use netstep_core::transport::CcSpec;
    use netstep_core::transport::TransportSpec;
    use netstep_core::transport::rdma::dcqcn::DcqcnSpec;
    use netstep_core::transport::rdma::{RdmaCc, RdmaSpec};
    use netstep_core::transport::tcp::TcpSpec;
    let resolved = |kind: &str| {
        let text = format!(
            "[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n[[traffic]]\nkind = \"flows\"\ntransport = {{ kind = \"{kind}\" }}\nflows = [{{ src = \"l0\", dst = \"r0\", size = \"10KB\" }}]\n"
        );
        let limits = crate::limits::Limits::machine();
        let s =
            crate::load_str(&text, "defaults.toml", "defaults", None, &[], &limits).expect("loads");
        s.model.flows.flows[0].transport.clone()
    };
    match &*resolved("tcp") {
        TransportSpec::Tcp(spec) => assert_eq!(*spec, TcpSpec::new(CcSpec::NewReno)),
        other => panic!("expected TCP, got {other:?}"),
    }
    match &*resolved("rdma") {
        TransportSpec::Rdma(spec) => {
            assert_eq!(*spec, RdmaSpec::new(RdmaCc::Dcqcn(DcqcnSpec::default())))
        }
        other => panic!("expected RDMA, got {other:?}"),
    }
}
