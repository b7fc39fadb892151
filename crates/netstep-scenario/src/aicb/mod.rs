//! AICB / SimAI AI-training workloads (issue 35): the workload files AICB generates for SimAI
//! ([`workload`], with line 1 in [`header`]) and SimAI's communication groups and ring channels
//! ([`groups`]). What each follows in SimAI and AICB, and where netstep decides differently,
//! is in each file's docs; the pinned versions are SimAI `f5efb5a` and AICB `23eec3c`.
//!
//! [`schedule`] turns a workload into the ops and flows of a job, which
//! `netstep_core::job`'s walkers run; the `aicb` traffic kind puts it in a scenario.

pub mod groups;
pub mod header;
pub mod schedule;
pub mod workload;

pub use groups::{Dimension, Group, GroupLayout, Ring};
pub use header::{Header, Policy};
pub use workload::{CollectiveKind, Comm, Phase, Row, Workload, WorkloadError, parse, read};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod error_tests;
