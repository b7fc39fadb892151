//! The element settings of a scenario file resolved to the engine's specs: the host NIC,
//! link failures, load balancing, PFC and the shared switch buffer.

use netstep_core::units::{BufferSize, Bytes, SimTime, parse_buffer, parse_duration};

use crate::error::{FieldPath, Invalid};
use crate::limits::{self, Limits};
use crate::{config, topology};

pub(crate) fn nic_config(
    nic: &config::NicFileConfig,
) -> Result<netstep_core::nic::NicConfig, Invalid> {
    let path = FieldPath::of(&["nic"]);
    let defaults = netstep_core::nic::NicConfig::default();
    let buffer = |value: &Option<String>, field: &str, default: BufferSize| match value {
        None => Ok(default),
        Some(v) => {
            let b = parse_buffer(v).map_err(|e| Invalid::unit(path.key(field), e))?;
            if matches!(b, BufferSize::Packets(0) | BufferSize::Bytes(Bytes(0))) {
                return Err(Invalid::new(
                    path.key(field),
                    format!("must be positive, got {v:?} (a NIC that holds nothing never sends)"),
                ));
            }
            Ok(b)
        }
    };
    Ok(netstep_core::nic::NicConfig {
        buffer: buffer(&nic.buffer, "buffer", defaults.buffer)?,
        per_flow: buffer(&nic.per_flow, "per_flow", defaults.per_flow)?,
        scheduler: match nic.scheduler {
            None => defaults.scheduler,
            Some(config::NicSchedulerConfig::RoundRobin) => {
                netstep_core::nic::NicScheduler::RoundRobin
            }
            Some(config::NicSchedulerConfig::Fifo) => netstep_core::nic::NicScheduler::Fifo,
            Some(config::NicSchedulerConfig::Pull) => netstep_core::nic::NicScheduler::Pull,
        },
        shaper: nic
            .shaper
            .as_ref()
            .map(|s| topology::shaper_spec(s, &path.key("shaper")))
            .transpose()?,
    })
}

/// A `[[failures]]` entry with node indices: (one end, other end, down, up).
pub(crate) type ResolvedFailure = (u32, u32, SimTime, Option<SimTime>);

/// Resolves `[[failures]]` to (node, node, down, up), checking names, that exactly one link
/// joins the two nodes, and the times.
pub(crate) fn resolve_failures(
    list: &[config::FailureConfig],
    topology: &netstep_core::topology::TopologySpec,
    limits: &Limits,
) -> Result<Vec<ResolvedFailure>, Invalid> {
    if list.is_empty() {
        return Ok(Vec::new());
    }
    limits.check_count(
        list.len() as u64,
        limits::MAX_FAILURES,
        "link failures",
        &FieldPath::of(&["failures"]),
    )?;
    let names: std::collections::HashMap<&str, u32> = topology
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect();
    let mut links: std::collections::HashMap<(u32, u32), u32> = Default::default();
    for l in &topology.links {
        *links.entry((l.a.min(l.b), l.a.max(l.b))).or_insert(0) += 1;
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, f) in list.iter().enumerate() {
        let path = FieldPath::of(&["failures"]).index(i);
        let [a, b] = f.link.as_slice() else {
            return Err(Invalid::new(
                path.key("link"),
                format!(
                    "names the link's two end nodes, e.g. [\"agg0_0\", \"core0_0\"]; got {} names",
                    f.link.len()
                ),
            ));
        };
        let node = |name: &String| {
            names
                .get(name.as_str())
                .copied()
                .ok_or_else(|| Invalid::new(path.key("link"), format!("no node named {name:?}")))
        };
        let (na, nb) = (node(a)?, node(b)?);
        match links.get(&(na.min(nb), na.max(nb))).copied().unwrap_or(0) {
            1 => {}
            0 => {
                return Err(Invalid::new(
                    path.key("link"),
                    format!("no link joins {a:?} and {b:?}"),
                ));
            }
            n => {
                return Err(Invalid::new(
                    path.key("link"),
                    format!(
                        "{n} parallel links join {a:?} and {b:?}; a failure must name one link"
                    ),
                ));
            }
        }
        let time = |field: &str, text: &String| {
            let t = parse_duration(text).map_err(|e| Invalid::unit(path.key(field), e))?;
            if t > limits::MAX_START {
                return Err(Invalid::new(
                    path.key(field),
                    format!("{t} is later than the limit of {}", limits::MAX_START),
                ));
            }
            Ok(t)
        };
        let down = time("down", &f.down)?;
        let up = f.up.as_ref().map(|u| time("up", u)).transpose()?;
        if let Some(up) = up
            && up <= down
        {
            return Err(Invalid::new(
                path.key("up"),
                format!("must be after down ({down}), got {up}"),
            ));
        }
        out.push((na, nb, down, up));
    }
    Ok(out)
}

pub(crate) fn balance(
    config: &config::RoutingConfig,
) -> Result<netstep_core::balance::BalanceSpec, Invalid> {
    use config::RoutingMode;
    use netstep_core::balance::{BalanceSpec, LoadBalancing};
    let path = FieldPath::of(&["routing"]);
    let mode = config.mode.unwrap_or_default();
    let gap = match (&config.flowlet_gap, mode) {
        (Some(text), RoutingMode::Flowlet) => {
            let gap =
                parse_duration(text).map_err(|e| Invalid::unit(path.key("flowlet_gap"), e))?;
            if gap == SimTime::ZERO {
                return Err(Invalid::new(path.key("flowlet_gap"), "must be positive"));
            }
            gap
        }
        (None, RoutingMode::Flowlet) => {
            return Err(Invalid::new(
                path.key("flowlet_gap"),
                "mode = \"flowlet\" needs flowlet_gap (a duration such as \"50us\")",
            ));
        }
        (Some(_), _) => {
            return Err(Invalid::new(
                path.key("flowlet_gap"),
                "applies to mode = \"flowlet\" only",
            ));
        }
        (None, _) => SimTime::ZERO,
    };
    let weighted = config.weighted.unwrap_or(false);
    if weighted && matches!(mode, RoutingMode::SprayRoundRobin | RoutingMode::Adaptive) {
        return Err(Invalid::new(
            path.key("weighted"),
            "applies to ecmp, spray_random and flowlet (adaptive already counts link rates; round robin is unweighted)",
        ));
    }
    Ok(BalanceSpec {
        mode: match mode {
            RoutingMode::Ecmp => LoadBalancing::Ecmp,
            RoutingMode::SprayRandom => LoadBalancing::SprayRandom,
            RoutingMode::SprayRoundRobin => LoadBalancing::SprayRoundRobin,
            RoutingMode::Flowlet => LoadBalancing::Flowlet { gap },
            RoutingMode::Adaptive => LoadBalancing::Adaptive,
        },
        weighted,
    })
}

pub(crate) fn pfc(
    config: &config::SwitchFileConfig,
    classes: &[netstep_core::topology::LinkClass],
) -> Result<Option<netstep_core::pfc::PfcSpec>, Invalid> {
    let Some(pfc) = &config.pfc else {
        return Ok(None);
    };
    let path = FieldPath::of(&["switch", "pfc"]);
    let mut lossless = 0u8;
    for (i, &class) in pfc.classes.iter().enumerate() {
        if class > 7 {
            return Err(Invalid::new(
                path.key("classes").index(i),
                format!("traffic classes are 0-7, got {class}"),
            ));
        }
        lossless |= 1 << class;
    }
    if lossless == 0 {
        return Err(Invalid::new(
            path.key("classes"),
            "name at least one lossless class, e.g. classes = [3]",
        ));
    }
    let size = |field: &str, text: &str| {
        netstep_core::units::parse_size(text).map_err(|e| Invalid::unit(path.key(field), e))
    };
    // An optional size, or its default.
    let or = |field: &str, text: &Option<String>, default: Bytes| match text {
        Some(t) => size(field, t),
        None => Ok(default),
    };
    let dynamic = pfc.threshold == Some(config::PfcThresholdConfig::Dynamic);
    // Fields of the other kind of threshold are refused, not ignored.
    let (mode, needs, refused): (&str, &str, Vec<(&str, bool)>) = if dynamic {
        (
            "threshold = \"dynamic\"",
            "buffer",
            vec![
                ("xoff", pfc.xoff.is_some()),
                ("xon", pfc.xon.is_some()),
                ("headroom", pfc.headroom.is_some()),
            ],
        )
    } else {
        (
            "static thresholds",
            "xoff and xon",
            vec![
                ("buffer", pfc.buffer.is_some()),
                ("reserve", pfc.reserve.is_some()),
                ("resume_offset", pfc.resume_offset.is_some()),
                ("headroom_bdps", pfc.headroom_bdps.is_some()),
                ("shift", pfc.shift.is_some()),
            ],
        )
    };
    if let Some((field, _)) = refused.iter().find(|(_, set)| *set) {
        return Err(Invalid::new(
            path.key(field),
            format!("does not apply with {mode} (which take {needs})"),
        ));
    }
    let thresholds = if dynamic {
        let Some(buffer) = &pfc.buffer else {
            return Err(Invalid::new(
                path.key("buffer"),
                "threshold = \"dynamic\" needs the switch buffer, e.g. buffer = \"12MB\"",
            ));
        };
        let buffer = size("buffer", buffer)?;
        use netstep_core::pfc::DynamicPfc;
        let shift = pfc.shift.unwrap_or(DynamicPfc::DEFAULT_SHIFT);
        if buffer.0 == 0 || shift > 31 {
            return Err(Invalid::new(
                path.key(if buffer.0 == 0 { "buffer" } else { "shift" }),
                format!("need buffer > 0 and shift in 0..=31, got buffer {buffer}, shift {shift}"),
            ));
        }
        let spec = DynamicPfc {
            buffer,
            reserve: or("reserve", &pfc.reserve, DynamicPfc::DEFAULT_RESERVE)?,
            resume_offset: or(
                "resume_offset",
                &pfc.resume_offset,
                DynamicPfc::DEFAULT_RESUME_OFFSET,
            )?,
            headroom_bdps: pfc
                .headroom_bdps
                .unwrap_or(DynamicPfc::DEFAULT_HEADROOM_BDPS),
            shift,
            host_rate: 0,
        };
        netstep_core::pfc::PfcThresholds::Dynamic(spec)
    } else {
        let (Some(xoff), Some(xon)) = (&pfc.xoff, &pfc.xon) else {
            return Err(Invalid::new(
                path.key(if pfc.xoff.is_none() { "xoff" } else { "xon" }),
                "static PFC thresholds need xoff and xon, e.g. xoff = \"40KB\", xon = \"20KB\" (or threshold = \"dynamic\" with a buffer)",
            ));
        };
        let xoff = size("xoff", xoff)?;
        let xon = size("xon", xon)?;
        if xoff.0 == 0 || xon > xoff {
            return Err(Invalid::new(
                path.key("xon"),
                format!("need 0 < xoff and xon <= xoff, got xoff {xoff}, xon {xon}"),
            ));
        }
        let headroom = or(
            "headroom",
            &pfc.headroom,
            netstep_core::pfc::StaticPfc::DEFAULT_HEADROOM,
        )?;
        netstep_core::pfc::PfcThresholds::Static(netstep_core::pfc::StaticPfc {
            xoff,
            xon,
            headroom,
        })
    };
    if let Some(class) = classes
        .iter()
        .find(|c| !netstep_core::queue::Queue::supports_pfc(&c.scheduler))
    {
        return Err(Invalid::new(
            path.clone(),
            format!(
                "PFC pauses classes on fifo and strict_priority ports; a link runs {:?}",
                class.scheduler.name()
            ),
        ));
    }
    Ok(Some(netstep_core::pfc::PfcSpec {
        lossless,
        thresholds,
    }))
}

/// `[switch] admission_room`: above zero when given.
pub(crate) fn admission_room(config: &config::SwitchFileConfig) -> Result<Option<u32>, Invalid> {
    let path = FieldPath::of(&["switch", "admission_room"]);
    let Some(room) = crate::fields::optional_size(&config.admission_room, path.clone())? else {
        return Ok(None);
    };
    if room.0 == 0 || room.0 > u32::MAX as u64 {
        return Err(Invalid::new(
            path,
            format!("must be between 1 B and 4294967295 B, got {room}"),
        ));
    }
    Ok(Some(room.0 as u32))
}

pub(crate) fn shared_buffer(
    config: &config::SwitchFileConfig,
) -> Result<Option<netstep_core::queue::SharedBuffer>, Invalid> {
    let path = FieldPath::of(&["switch"]);
    let Some(size) = &config.shared_buffer else {
        if config.alpha.is_some() {
            return Err(Invalid::new(
                path.key("alpha"),
                "applies to a shared buffer; set switch.shared_buffer too",
            ));
        }
        return Ok(None);
    };
    let size = netstep_core::units::parse_size(size)
        .map_err(|e| Invalid::unit(path.key("shared_buffer"), e))?;
    if size.0 == 0 {
        return Err(Invalid::new(path.key("shared_buffer"), "must be positive"));
    }
    let alpha = config
        .alpha
        .unwrap_or(netstep_core::queue::SharedBuffer::DEFAULT_ALPHA);
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(Invalid::new(
            path.key("alpha"),
            format!("must be a positive number, got {alpha}"),
        ));
    }
    Ok(Some(netstep_core::queue::SharedBuffer { size, alpha }))
}
