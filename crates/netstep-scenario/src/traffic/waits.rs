//! The names and `after` lists of explicit flows: recorded as blocks are generated and
//! resolved once every block is (a flow may wait for one listed later).

use std::collections::HashMap;

use netstep_core::flow::{Dependencies, DependencyError, FlowSpec};
use netstep_core::units::SimTime;

use super::flows::ExplicitFlow;
use crate::error::{FieldPath, Invalid};
use crate::fields::duration_at;

/// The names and `after` lists of explicit flows, resolved once every block is generated (a
/// flow may wait for one listed later).
#[derive(Default)]
pub(crate) struct Waits<'a> {
    /// Flow id and field path of every named flow.
    named: HashMap<&'a str, (u32, FieldPath)>,
    /// Waiting flows: id, `after`, `delay`, field path.
    waiting: Vec<(u32, &'a [String], &'a Option<String>, FieldPath)>,
    /// Field path of each waiting or named flow by id (for cycle errors).
    paths: HashMap<u32, FieldPath>,
}

impl<'a> Waits<'a> {
    /// Records flow `id`'s name and dependencies.
    pub(crate) fn note(
        &mut self,
        id: u32,
        f: &'a ExplicitFlow,
        path: &FieldPath,
    ) -> Result<(), Invalid> {
        if let Some(name) = &f.name {
            if name.is_empty() {
                return Err(Invalid::new(path.key("name"), "must not be empty"));
            }
            if let Some((_, first)) = self.named.get(name.as_str()) {
                return Err(Invalid::new(
                    path.key("name"),
                    format!("{name:?} is already the name of {first}; names must be unique"),
                ));
            }
            self.named.insert(name, (id, path.clone()));
            self.paths.insert(id, path.clone());
        }
        match &f.after {
            Some(after) if after.is_empty() => {
                return Err(Invalid::new(
                    path.key("after"),
                    "is empty: list the names of flows to wait for, or leave it out",
                ));
            }
            Some(after) => {
                self.waiting.push((id, after, &f.delay, path.clone()));
                self.paths.insert(id, path.clone());
            }
            None if f.delay.is_some() => {
                return Err(Invalid::new(
                    path.key("delay"),
                    "is the time after the flows in `after` finish; give `after` too, or use `start`",
                ));
            }
            None => {}
        }
        Ok(())
    }

    /// Sets every waiting flow's dependencies; refuses unknown names and cycles.
    pub(crate) fn resolve(&self, flows: &mut [FlowSpec]) -> Result<(), Invalid> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        for (id, after, delay, path) in &self.waiting {
            let mut deps = Vec::with_capacity(after.len());
            for (i, name) in after.iter().enumerate() {
                match self.named.get(name.as_str()) {
                    Some(&(dep, _)) if dep == *id => {
                        return Err(Invalid::new(
                            path.key("after").index(i),
                            format!("{name:?} is this flow itself; a flow cannot wait for itself"),
                        ));
                    }
                    Some(&(dep, _)) if deps.contains(&dep) => {
                        return Err(Invalid::new(
                            path.key("after").index(i),
                            format!("{name:?} is listed twice"),
                        ));
                    }
                    Some(&(dep, _)) => deps.push(dep),
                    None => {
                        return Err(Invalid::new(
                            path.key("after").index(i),
                            format!(
                                "no flow is named {name:?} (give the flow to wait for `name = {name:?}`)"
                            ),
                        ));
                    }
                }
            }
            let delay = duration_at(delay, path.key("delay"), SimTime::ZERO)?;
            flows[*id as usize].after = Some(Box::new(Dependencies {
                flows: deps.into_boxed_slice(),
                delay,
            }));
        }
        match netstep_core::flow::check_dependencies(flows) {
            Ok(()) => Ok(()),
            Err(DependencyError::Cycle { flow, cycle }) => {
                let label = |f: &u32| {
                    let name = flows_name(&self.named, *f);
                    match name {
                        Some(n) => format!("{n:?}"),
                        None => format!("flow {f}"),
                    }
                };
                let chain: Vec<String> = cycle.iter().map(label).collect();
                let path = self
                    .paths
                    .get(&flow)
                    .cloned()
                    .unwrap_or_else(|| FieldPath::of(&["traffic"]));
                Err(Invalid::new(
                    path.key("after"),
                    format!(
                        "waits for itself: {} (each waits for the next); a cycle of flows never starts",
                        chain.join(" -> ")
                    ),
                ))
            }
            Err(e) => Err(Invalid::new(FieldPath::of(&["traffic"]), e.to_string())),
        }
    }
}

/// The name of flow `id`, if it has one.
fn flows_name<'a>(named: &HashMap<&'a str, (u32, FieldPath)>, id: u32) -> Option<&'a str> {
    named
        .iter()
        .find(|(_, (f, _))| *f == id)
        .map(|(name, _)| *name)
}
