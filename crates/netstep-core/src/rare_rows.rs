//! The fields few rows of a compact table have, kept beside its columns: a list of `(row,
//! value)` sorted by row, so a table of millions of rows holds them only for the rows that
//! have any ([`crate::flow::FlowOutcomes`], [`crate::engine::PortOutcomes`]).

/// The rows with a rare value, ascending by row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RareRows<R> {
    rows: Vec<(u32, R)>,
}

impl<R> Default for RareRows<R> {
    fn default() -> Self {
        RareRows { rows: Vec::new() }
    }
}

impl<R: Copy> RareRows<R> {
    /// Records `value` for `row`, which is above every row recorded so far.
    pub(crate) fn push(&mut self, row: u32, value: R) {
        debug_assert!(self.rows.last().is_none_or(|&(last, _)| last < row));
        self.rows.push((row, value));
    }

    /// The value of `row`, if it has one.
    pub(crate) fn get(&self, row: usize) -> Option<R> {
        let i = self
            .rows
            .binary_search_by_key(&(row as u32), |&(r, _)| r)
            .ok()?;
        Some(self.rows[i].1)
    }

    /// Rows with a value.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }
}

/// Reads a [`RareRows`] along an in-order walk of its table's rows, without searching.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RareCursor {
    next: usize,
}

impl RareCursor {
    /// The value of `row` in `rare`, if it has one; rows must come in ascending order.
    #[inline]
    pub(crate) fn at<R: Copy>(&mut self, rare: &RareRows<R>, row: usize) -> Option<R> {
        match rare.rows.get(self.next) {
            Some(&(r, value)) if r as usize == row => {
                self.next += 1;
                Some(value)
            }
            _ => None,
        }
    }
}
