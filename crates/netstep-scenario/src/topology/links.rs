//! Link classes: the `links`, per-tier and per-link tables resolved from defaults to the most
//! specific, with their scheduler, AQM, shaper and policer tables.

use netstep_core::topology::LinkClass;
use netstep_core::units::{BitsPerSec, Bytes, parse_buffer, parse_duration, parse_rate};

use super::{DEFAULT_BUFFER, DEFAULT_DELAY, DEFAULT_RATE};
use crate::config::LinkConfig;
use crate::error::{FieldPath, Invalid};

/// The class of one tier of a generated topology: `[topology] links` under the tier's own
/// table `[topology] <field>` (either may be absent).
pub(crate) fn tier_class(
    links: &Option<Box<LinkConfig>>,
    tier: &Option<Box<LinkConfig>>,
    field: &str,
) -> Result<LinkClass, Invalid> {
    let top = FieldPath::of(&["topology"]);
    resolve_class(&[
        (links.as_deref(), top.key("links")),
        (tier.as_deref(), top.key(field)),
    ])
}

/// Resolves one link class: `layers` from most general to most specific, each with its path.
pub(crate) fn resolve_class(
    layers: &[(Option<&LinkConfig>, FieldPath)],
) -> Result<LinkClass, Invalid> {
    let mut class = LinkClass::new(DEFAULT_RATE, DEFAULT_DELAY, DEFAULT_BUFFER);
    for (layer, path) in layers {
        let Some(layer) = layer else { continue };
        if let Some(rate) = &layer.rate {
            class.rate = parse_rate(rate).map_err(|e| Invalid::unit(path.key("rate"), e))?;
            if class.rate.0 == 0 {
                return Err(Invalid::new(
                    path.key("rate"),
                    format!("rate {rate:?} is zero; expected a positive rate such as \"100Gbps\""),
                ));
            }
        }
        if let Some(delay) = &layer.delay {
            class.delay = parse_duration(delay).map_err(|e| Invalid::unit(path.key("delay"), e))?;
        }
        if let Some(buffer) = &layer.buffer {
            class.buffer =
                parse_buffer(buffer).map_err(|e| Invalid::unit(path.key("buffer"), e))?;
        }
        if let Some(scheduler) = &layer.scheduler {
            class.scheduler = scheduler_spec(scheduler, &path.key("scheduler"))?;
        }
        if let Some(aqm) = &layer.aqm {
            class.aqm = aqm_spec(aqm, &path.key("aqm"))?;
        }
        if let Some(shaper) = &layer.shaper {
            class.shaper = Some(shaper_spec(shaper, &path.key("shaper"))?);
        }
        if let Some(policer) = &layer.policer {
            class.policer = Some(policer_spec(policer, &path.key("policer"))?);
        }
        if class.aqm != netstep_core::queue::AqmSpec::None
            && class.scheduler != netstep_core::queue::SchedulerSpec::Fifo
            && (layer.aqm.is_some() || layer.scheduler.is_some())
        {
            return Err(Invalid::new(
                path.key("aqm"),
                format!(
                    "an aqm runs on a FIFO port; this link's scheduler is {:?}",
                    class.scheduler.name()
                ),
            ));
        }
        if let Some(loss) = layer.loss {
            if !(0.0..=1.0).contains(&loss) {
                return Err(Invalid::new(
                    path.key("loss"),
                    format!("must be a probability in [0, 1], got {loss}"),
                ));
            }
            class.loss_ppm = (loss * 1e6).round() as u32;
        }
    }
    Ok(class)
}

/// The host and fabric classes of a two-tier generated topology: `links` under
/// `host_links` and under `fabric_links`.
pub(crate) fn tiers(
    links: &Option<LinkConfig>,
    host: &Option<LinkConfig>,
    fabric: &Option<LinkConfig>,
) -> Result<(LinkClass, LinkClass), Invalid> {
    let top = FieldPath::of(&["topology"]);
    let host_class = resolve_class(&[
        (links.as_ref(), top.key("links")),
        (host.as_ref(), top.key("host_links")),
    ])?;
    let fabric_class = resolve_class(&[
        (links.as_ref(), top.key("links")),
        (fabric.as_ref(), top.key("fabric_links")),
    ])?;
    Ok((host_class, fabric_class))
}

/// Resolves a `scheduler` table.
fn scheduler_spec(
    config: &crate::config::SchedulerConfig,
    path: &FieldPath,
) -> Result<netstep_core::queue::SchedulerSpec, Invalid> {
    use crate::config::SchedulerKind;
    use netstep_core::queue::{CLASSES, SchedulerSpec};
    let weights = || -> Result<[u16; CLASSES], Invalid> {
        let mut out = [1u16; CLASSES];
        if let Some(list) = &config.weights {
            if list.len() > CLASSES {
                return Err(Invalid::new(
                    path.key("weights"),
                    format!("{} weights for {CLASSES} traffic classes", list.len()),
                ));
            }
            for (i, &w) in list.iter().enumerate() {
                if w == 0 {
                    return Err(Invalid::new(
                        path.key("weights").index(i),
                        "weights must be at least 1",
                    ));
                }
                out[i] = w;
            }
        }
        Ok(out)
    };
    let only = |field: &str, present: bool, kinds: &str| only_for(path, field, present, kinds);
    Ok(match config.kind {
        SchedulerKind::Fifo | SchedulerKind::StrictPriority | SchedulerKind::FairQueueing => {
            only(
                "weights",
                config.weights.is_some(),
                "drr, wrr, wfq and virtual_clock",
            )?;
            only("quantum", config.quantum.is_some(), "drr")?;
            match config.kind {
                SchedulerKind::Fifo => SchedulerSpec::Fifo,
                SchedulerKind::StrictPriority => SchedulerSpec::StrictPriority,
                _ => SchedulerSpec::FairQueueing,
            }
        }
        SchedulerKind::Wfq => {
            only("quantum", config.quantum.is_some(), "drr")?;
            SchedulerSpec::Wfq {
                weights: weights()?,
            }
        }
        SchedulerKind::VirtualClock => {
            only("quantum", config.quantum.is_some(), "drr")?;
            SchedulerSpec::VirtualClock {
                weights: weights()?,
            }
        }
        SchedulerKind::Drr => {
            let quantum = match &config.quantum {
                None => 1500,
                Some(q) => {
                    let bytes = netstep_core::units::parse_size(q)
                        .map_err(|e| Invalid::unit(path.key("quantum"), e))?;
                    if bytes.0 == 0 || bytes.0 > u32::MAX as u64 {
                        return Err(Invalid::new(
                            path.key("quantum"),
                            format!("must be between 1 B and 4 GB, got {q:?}"),
                        ));
                    }
                    bytes.0 as u32
                }
            };
            SchedulerSpec::Drr {
                quantum,
                weights: weights()?,
            }
        }
        SchedulerKind::Wrr => {
            only("quantum", config.quantum.is_some(), "drr")?;
            SchedulerSpec::Wrr {
                weights: weights()?,
            }
        }
    })
}

/// Resolves a `shaper` table (a positive rate and burst).
pub fn shaper_spec(
    config: &crate::config::ShaperConfig,
    path: &FieldPath,
) -> Result<netstep_core::shaping::TokenBucketSpec, Invalid> {
    Ok(netstep_core::shaping::TokenBucketSpec {
        rate: positive_rate(&config.rate, &path.key("rate"))?,
        burst: positive_size(&config.burst, &path.key("burst"))?,
    })
}

/// Resolves a `policer` table (positive rates and sizes, `pir >= cir`).
fn policer_spec(
    config: &crate::config::PolicerConfig,
    path: &FieldPath,
) -> Result<netstep_core::shaping::TrTcmSpec, Invalid> {
    let spec = netstep_core::shaping::TrTcmSpec {
        cir: positive_rate(&config.cir, &path.key("cir"))?,
        cbs: positive_size(&config.cbs, &path.key("cbs"))?,
        pir: positive_rate(&config.pir, &path.key("pir"))?,
        pbs: positive_size(&config.pbs, &path.key("pbs"))?,
    };
    if spec.pir < spec.cir {
        return Err(Invalid::new(
            path.key("pir"),
            format!(
                "the peak rate must be at least the committed rate (RFC 2698): pir {} < cir {}",
                spec.pir, spec.cir
            ),
        ));
    }
    Ok(spec)
}

fn positive_rate(text: &str, path: &FieldPath) -> Result<BitsPerSec, Invalid> {
    let rate = parse_rate(text).map_err(|e| Invalid::unit(path.clone(), e))?;
    if rate.0 == 0 {
        return Err(Invalid::new(
            path.clone(),
            format!("must be positive, got {text:?}"),
        ));
    }
    Ok(rate)
}

fn positive_size(text: &str, path: &FieldPath) -> Result<Bytes, Invalid> {
    let size = netstep_core::units::parse_size(text).map_err(|e| Invalid::unit(path.clone(), e))?;
    if size.0 == 0 {
        return Err(Invalid::new(
            path.clone(),
            format!("must be positive, got {text:?}"),
        ));
    }
    Ok(size)
}

/// An error when `field` is `present` but applies only to other `kinds` of the table.
fn only_for(path: &FieldPath, field: &str, present: bool, kinds: &str) -> Result<(), Invalid> {
    if present {
        return Err(Invalid::new(
            path.key(field),
            format!("applies only to {kinds}"),
        ));
    }
    Ok(())
}

/// Resolves an `aqm` table.
fn aqm_spec(
    config: &crate::config::AqmConfig,
    path: &FieldPath,
) -> Result<netstep_core::queue::AqmSpec, Invalid> {
    use crate::config::AqmKind;
    use netstep_core::queue::{AqmSpec, RedSpec};
    let size = |value: &Option<String>, field: &str| -> Result<Option<u64>, Invalid> {
        value
            .as_ref()
            .map(|v| {
                netstep_core::units::parse_size(v)
                    .map(|b| b.0)
                    .map_err(|e| Invalid::unit(path.key(field), e))
            })
            .transpose()
    };
    let refuse = |field: &str, present: bool, kind: &str| only_for(path, field, present, kind);
    let at_dequeue = config.mark_at == Some(crate::config::MarkAt::Dequeue);
    match config.kind {
        AqmKind::Decbit => {
            if config.mark_at.is_some() {
                return Err(Invalid::new(
                    path.key("mark_at"),
                    "is for red and step (DECbit sets its bit as packets arrive)",
                ));
            }
            refuse("spread", config.spread.is_some(), "red")?;
            // DECbit takes no parameters (its threshold is an average of one packet).
            for (field, present) in [
                ("min", config.min.is_some()),
                ("max", config.max.is_some()),
                ("max_p", config.max_p.is_some()),
                ("weight", config.weight.is_some()),
                ("ecn", config.ecn.is_some()),
            ] {
                refuse(field, present, "red")?;
            }
            refuse("k", config.k.is_some(), "step")?;
            Ok(AqmSpec::DecBit)
        }
        AqmKind::Step => {
            for (field, present) in [
                ("min", config.min.is_some()),
                ("max", config.max.is_some()),
                ("max_p", config.max_p.is_some()),
                ("weight", config.weight.is_some()),
                ("ecn", config.ecn.is_some()),
            ] {
                refuse(field, present, "red")?;
            }
            refuse("spread", config.spread.is_some(), "red")?;
            let k_bytes = size(&config.k, "k")?.ok_or_else(|| {
                Invalid::new(path.clone(), "step marking needs k, e.g. k = \"30KB\"")
            })?;
            Ok(AqmSpec::Step {
                k_bytes,
                at_dequeue,
            })
        }
        AqmKind::Red => {
            refuse("k", config.k.is_some(), "step")?;
            let need = |v: Option<u64>, field: &str| {
                v.ok_or_else(|| Invalid::new(path.clone(), format!("red needs {field}")))
            };
            let min_bytes = need(size(&config.min, "min")?, "min")?;
            let max_bytes = need(size(&config.max, "max")?, "max")?;
            if max_bytes <= min_bytes {
                return Err(Invalid::new(path.key("max"), "must be larger than min"));
            }
            let max_p = config.max_p.unwrap_or(0.1);
            if !(max_p > 0.0 && max_p <= 1.0) {
                return Err(Invalid::new(
                    path.key("max_p"),
                    format!("must be in (0, 1], got {max_p}"),
                ));
            }
            let weight = config.weight.unwrap_or(0.002);
            if !(1e-6..=1.0).contains(&weight) {
                return Err(Invalid::new(
                    path.key("weight"),
                    format!("must be in [0.000001, 1], got {weight}"),
                ));
            }
            let ecn = config.ecn.unwrap_or(false);
            if at_dequeue && !ecn {
                return Err(Invalid::new(
                    path.key("mark_at"),
                    "\"dequeue\" only marks: it needs ecn = true",
                ));
            }
            Ok(AqmSpec::Red(RedSpec {
                min_bytes,
                max_bytes,
                max_p_ppm: (max_p * 1e6).round() as u32,
                weight_ppm: (weight * 1e6).round() as u32,
                ecn,
                spread: config.spread.unwrap_or(true),
                at_dequeue,
            }))
        }
    }
}
