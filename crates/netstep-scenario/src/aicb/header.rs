//! Line 1 of an AICB / SimAI workload file: the policy and the `key: value` header
//! (`Workload.cc:1152-1269`, SimAI `f5efb5a`).
//!
//! Forms AICB writes (`aicb@23eec3c`):
//!
//! ```text
//! HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 40 ga: 4 all_gpus: 64 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0
//! HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 8 checkpoints: 0 checkpoint_initiates: 0
//! MICRO
//! ```
//!
//! The first is the current training generator's; the second, with TP only (after a tab in
//! the files), is every file in AICB's `workload/simAI/model_workload/`; the third is its micro benchmarks. SimAI's own
//! `example/workload_analytical.txt` writes `pp_comm` without its colon.

use super::groups::GroupLayout;

/// The walker a file asks for (line 1's first token). SimAI knows more policies (DLRM,
/// `MODEL`, `HYBRID_CUSTOMIZED`, ...); netstep refuses them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// `HYBRID_TRANSFORMER`.
    HybridTransformer,
    /// `HYBRID_TRANSFORMER_FWD_IN_BCKWD`: as `HYBRID_TRANSFORMER`, plus forward collectives of
    /// under 4,096 bytes raised to 4,096 and checkpoint recompute. What AICB writes.
    HybridTransformerFwdInBckwd,
    /// `DATA`: forward compute only, weight-gradient collectives. SimAI reads no header keys
    /// for it and leaves TP uninitialised on ns-3; netstep reads the keys as for the others.
    Data,
    /// `MICRO`: a collective micro benchmark (AICB's `micro_test` files). On SimAI-ns3 it runs
    /// row 0 only, over an undefined group; netstep support for it is an extension.
    Micro,
}

impl Policy {
    /// The supported policies with their names.
    const NAMES: [(&'static str, Policy); 4] = [
        (
            "HYBRID_TRANSFORMER_FWD_IN_BCKWD",
            Policy::HybridTransformerFwdInBckwd,
        ),
        ("HYBRID_TRANSFORMER", Policy::HybridTransformer),
        ("DATA", Policy::Data),
        ("MICRO", Policy::Micro),
    ];

    /// Policies SimAI decodes (`Workload.cc:1046-1071`) that netstep does not run.
    const SIMAI_ONLY: [&'static str; 7] = [
        "HYBRID_DLRM",
        "HYBRID_DLRM_ENHANCED",
        "MODEL",
        "HYBRID_DATA_MODEL",
        "HYBRID_MODEL_DATA",
        "HYBRID_CUSTOMIZED",
        "DISTRIBUTED_INFERENCE",
    ];

    /// The name as written in files.
    pub fn name(self) -> &'static str {
        Policy::NAMES
            .iter()
            .find(|(_, p)| *p == self)
            .map_or("", |(name, _)| name)
    }
}

/// Line 1 after the policy, with netstep's defaults for keys the file leaves out. SimAI leaves
/// `model_parallel_NPU_group`, `ep`, `pp`, `vpp`, `ga` and `all_gpus` uninitialised when a
/// header omits them (`Workload.hh:76-80`; it only warns), and every file in AICB's
/// `workload/simAI/` omits all but TP. netstep fills them as documented per field and lists
/// the keys it filled in [`Header::defaulted`], for callers to report.
///
/// Values are positive integers (`pp_comm` a non-negative one). A key may appear once;
/// an unknown key is refused. Where `all_gpus` is given, TP·PP must divide it and EP must
/// divide DP = `all_gpus / (TP·PP)` (Megatron's rule; SimAI's groups, with PP forced to 1, need
/// only EP to divide `all_gpus / TP`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Line 1's first token.
    pub policy: Policy,
    /// `model_parallel_NPU_group:` (tensor parallelism). Default 1. SimAI takes 0 to mean
    /// "every GPU"; netstep refuses 0.
    pub tp: u32,
    /// `ep:` (expert parallelism; AICB's micro generator spells it
    /// `expert_parallel_npu_group:`, which SimAI never reads and netstep takes as `ep:`).
    /// Default 1.
    pub ep: u32,
    /// `pp:` (pipeline stages). Default 1. SimAI forms its groups with PP = 1 whatever this
    /// says, and uses it only in its bubble and bus-bandwidth reports.
    pub pp: u32,
    /// `vpp:` (AICB writes the model's layer count). Default 1.
    pub vpp: u32,
    /// `ga:` (gradient accumulation steps, already unrolled into the rows by AICB). Default 1.
    pub ga: u32,
    /// `all_gpus:` (the world size AICB generated for). Default: none, meaning the topology's
    /// GPU count, which is also what SimAI forms its groups from.
    pub all_gpus: Option<u32>,
    /// `checkpoints: N l1 .. lN`: layers whose forward is recomputed. Default none. (SimAI reads
    /// `l1` N times, a bug; netstep reads the N layers. AICB always writes 0.)
    pub checkpoints: Vec<u32>,
    /// `checkpoint_initiates: N l1 .. lN`: layers that start a recompute. Default none.
    pub checkpoint_initiates: Vec<u32>,
    /// `pp_comm:` or `pp_comm` (bytes sent between pipeline stages). Default 0, as in SimAI.
    /// AICB may print it as a float (`5242880.0`); like SimAI's `stoi`, netstep drops the
    /// fraction.
    pub pp_comm: u64,
    /// The keys among `model_parallel_NPU_group`, `ep`, `pp`, `vpp`, `ga` and `all_gpus` the file
    /// left out, which hold netstep's defaults.
    pub defaulted: Vec<&'static str>,
}

impl Header {
    /// The group layout of this header on `world` GPUs in servers of `gpus_per_server` (SimAI
    /// forms groups from the topology's GPU count, not `all_gpus`).
    pub fn group_layout(&self, world: u32, gpus_per_server: u32) -> Result<GroupLayout, String> {
        GroupLayout::new(world, gpus_per_server, self.tp, self.ep)
    }
}

/// The keys holding one positive integer, by the name errors and [`Header::defaulted`] use.
const SIZE_KEYS: [&str; 6] = [
    "model_parallel_NPU_group",
    "ep",
    "pp",
    "vpp",
    "ga",
    "all_gpus",
];

/// Every key as written (with its colon), for the unknown-key message.
const KEYS_SHOWN: &str = "model_parallel_NPU_group:, ep:, pp:, vpp:, ga:, all_gpus:, \
                          checkpoints:, checkpoint_initiates:, pp_comm:";

/// Parses line 1; an error is (field, message).
pub(super) fn parse_header(line: &str) -> Result<Header, (&'static str, String)> {
    let mut tokens = line.split_whitespace();
    let Some(first) = tokens.next() else {
        return Err((
            "policy",
            "line 1 is empty: expected a policy such as HYBRID_TRANSFORMER_FWD_IN_BCKWD".into(),
        ));
    };
    let policy = parse_policy(first)?;
    let mut sizes: [Option<u32>; 6] = [None; 6];
    let mut checkpoints = None;
    let mut checkpoint_initiates = None;
    let mut pp_comm = None;
    while let Some(token) = tokens.next() {
        let key = match token {
            "model_parallel_NPU_group:" => "model_parallel_NPU_group",
            "ep:" | "expert_parallel_npu_group:" => "ep",
            "pp:" => "pp",
            "vpp:" => "vpp",
            "ga:" => "ga",
            "all_gpus:" => "all_gpus",
            "checkpoints:" => "checkpoints",
            "checkpoint_initiates:" => "checkpoint_initiates",
            "pp_comm:" | "pp_comm" => "pp_comm",
            _ => {
                return Err((
                    "header",
                    format!("unknown header key {token:?}: expected one of {KEYS_SHOWN}"),
                ));
            }
        };
        let mut value = |what: &str| {
            tokens.next().ok_or_else(|| {
                (
                    key,
                    format!("expected {what} after {token:?}, found the end of line 1"),
                )
            })
        };
        let duplicate = || (key, format!("{token:?} appears twice; expected it once"));
        if let Some(slot) = SIZE_KEYS.iter().position(|k| *k == key) {
            let text = value("a positive integer")?;
            let number = text.parse::<u32>().ok().filter(|&n| n > 0).ok_or_else(|| {
                (
                    key,
                    format!("expected a positive integer after {token:?}, got {text:?}"),
                )
            })?;
            if sizes[slot].replace(number).is_some() {
                return Err(duplicate());
            }
        } else if key == "pp_comm" {
            let text = value("a number of bytes")?;
            let bytes = parse_bytes(text).ok_or_else(|| {
                (
                    key,
                    format!(
                        "expected a non-negative number of bytes after {token:?}, got {text:?}"
                    ),
                )
            })?;
            if pp_comm.replace(bytes).is_some() {
                return Err(duplicate());
            }
        } else {
            let layers = parse_layer_list(key, token, &mut tokens)?;
            let slot = if key == "checkpoints" {
                &mut checkpoints
            } else {
                &mut checkpoint_initiates
            };
            if slot.replace(layers).is_some() {
                return Err(duplicate());
            }
        }
    }
    let defaulted = SIZE_KEYS
        .iter()
        .zip(&sizes)
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| *k)
        .collect();
    let [tp, ep, pp, vpp, ga, all_gpus] = sizes;
    let header = Header {
        policy,
        tp: tp.unwrap_or(1),
        ep: ep.unwrap_or(1),
        pp: pp.unwrap_or(1),
        vpp: vpp.unwrap_or(1),
        ga: ga.unwrap_or(1),
        all_gpus,
        checkpoints: checkpoints.unwrap_or_default(),
        checkpoint_initiates: checkpoint_initiates.unwrap_or_default(),
        pp_comm: pp_comm.unwrap_or(0),
        defaulted,
    };
    check_sizes(&header)?;
    Ok(header)
}

/// The policy token.
fn parse_policy(token: &str) -> Result<Policy, (&'static str, String)> {
    if let Some((_, policy)) = Policy::NAMES.iter().find(|(name, _)| *name == token) {
        return Ok(*policy);
    }
    let expected = "expected HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER, DATA or MICRO";
    let message = if Policy::SIMAI_ONLY.contains(&token) {
        format!("SimAI's policy {token} is not supported by netstep: {expected}")
    } else {
        format!("unknown policy {token:?}: {expected}")
    };
    Err(("policy", message))
}

/// `N l1 .. lN` after `checkpoints:` or `checkpoint_initiates:`.
fn parse_layer_list<'a>(
    key: &'static str,
    token: &str,
    tokens: &mut impl Iterator<Item = &'a str>,
) -> Result<Vec<u32>, (&'static str, String)> {
    let count_text = tokens.next().unwrap_or("");
    let count: usize = count_text.parse().map_err(|_| {
        (
            key,
            format!(
                "expected a count of layers after {token:?} (then that many layer numbers), \
                 got {count_text:?}"
            ),
        )
    })?;
    (0..count)
        .map(|i| {
            let text = tokens.next().unwrap_or("");
            text.parse::<u32>().map_err(|_| {
                (
                    key,
                    format!(
                        "expected {count} layer numbers after {token:?} {count}, got {text:?} \
                         as number {}",
                        i + 1
                    ),
                )
            })
        })
        .collect()
}

/// A byte count written as an integer or a decimal (`5242880.0`, fraction dropped).
fn parse_bytes(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(whole) && digits(fraction))
        .then(|| whole.parse().ok())
        .flatten()
}

/// The group sizes against `all_gpus`, when it is given.
fn check_sizes(header: &Header) -> Result<(), (&'static str, String)> {
    let Some(world) = header.all_gpus else {
        return Ok(());
    };
    let (tp, pp, ep) = (
        u64::from(header.tp),
        u64::from(header.pp),
        u64::from(header.ep),
    );
    let world = u64::from(world);
    if !world.is_multiple_of(tp) {
        return Err((
            "model_parallel_NPU_group",
            format!("TP {tp} does not divide all_gpus {world}: expected a divisor of it"),
        ));
    }
    if !world.is_multiple_of(tp * pp) {
        return Err((
            "pp",
            format!(
                "TP {tp} x PP {pp} = {} does not divide all_gpus {world}: expected TP x PP to \
                 divide it",
                tp * pp
            ),
        ));
    }
    let dp = world / (tp * pp);
    if !dp.is_multiple_of(ep) {
        return Err((
            "ep",
            format!(
                "EP {ep} does not divide DP = all_gpus {world} / (TP {tp} x PP {pp}) = {dp}: \
                 expected a divisor of it"
            ),
        ));
    }
    Ok(())
}
