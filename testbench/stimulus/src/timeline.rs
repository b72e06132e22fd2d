//! The per-flow event queue of the closed-loop senders (TCP, DCQCN): events ordered by
//! cycle, and events of the same cycle in the order they were pushed, so a run does not
//! depend on how the heap breaks ties.

use hw_model::Departure;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Per scenario flow id, the index of its closed-loop sender (TCP or DCQCN) in that
/// sender's own list; `None` for the flows it does not drive.
#[derive(Debug, Clone)]
pub struct FlowIndex(Vec<Option<u32>>);

impl FlowIndex {
    /// No flow of the `flows` scenario flows driven yet.
    pub fn new(flows: usize) -> Self {
        Self(vec![None; flows])
    }

    /// Scenario flow `id` is the sender's flow `i`.
    pub fn set(&mut self, id: u32, i: u32) {
        self.0[id as usize] = Some(i);
    }

    /// The sender's flow of scenario flow `id`, if it drives it.
    #[inline]
    pub fn of(&self, id: u32) -> Option<u32> {
        *self.0.get(id as usize)?
    }

    /// The sender's flow whose packet `dep` completes (its last cell), if it drives it: what
    /// the receiving NIC answers (an ACK, a CNP).
    #[inline]
    pub fn completed(&self, dep: &Departure) -> Option<u32> {
        if !dep.beat.eop() {
            return None;
        }
        self.of(dep.beat.hdr.flow)
    }
}

#[derive(Debug, Clone)]
pub struct Timeline<E> {
    heap: BinaryHeap<Reverse<(u64, u64, u32, E)>>,
    pushed: u64,
}

impl<E: Ord + Copy> Timeline<E> {
    pub fn new() -> Self {
        Self {
            heap: BinaryHeap::new(),
            pushed: 0,
        }
    }

    /// Schedule `ev` of flow `flow` at cycle `at`.
    pub fn push(&mut self, at: u64, flow: u32, ev: E) {
        self.heap.push(Reverse((at, self.pushed, flow, ev)));
        self.pushed += 1;
    }

    /// The cycle of the earliest event, `u64::MAX` if none is pending.
    pub fn next_time(&self) -> u64 {
        self.heap.peek().map_or(u64::MAX, |Reverse((t, ..))| *t)
    }

    /// The earliest event due at or before `now`, removed: `(cycle, flow, event)`.
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, u32, E)> {
        match self.heap.peek() {
            Some(&Reverse((t, _, flow, ev))) if t <= now => {
                self.heap.pop();
                Some((t, flow, ev))
            }
            _ => None,
        }
    }
}

impl<E: Ord + Copy> Default for Timeline<E> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_leave_by_cycle_then_in_push_order() {
        let mut t = Timeline::new();
        t.push(5, 1, 'b');
        t.push(3, 9, 'z');
        t.push(5, 0, 'a');
        assert_eq!(t.next_time(), 3);
        assert_eq!(t.pop_due(2), None);
        assert_eq!(t.pop_due(5), Some((3, 9, 'z')));
        // Same cycle: push order, not flow or event order.
        assert_eq!(t.pop_due(5), Some((5, 1, 'b')));
        assert_eq!(t.pop_due(5), Some((5, 0, 'a')));
        assert_eq!(t.next_time(), u64::MAX);
    }
}
