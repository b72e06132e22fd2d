//! The free list of cell pointers: a FIFO of free cell addresses held in its own RAM.
//!
//! Pops (one per cell written) take the pointers that were free at the start of the cycle;
//! pushes (one per cell read out) land at the clock edge, so a cell freed in cycle `c` can
//! be reused in cycle `c + 1` at the earliest.

use crate::config::{CNT_BITS, PTR_BITS};
use rtl::{BlockError, Clocked, Visit};

#[derive(Debug, Clone)]
pub struct FreeList {
    ring: Vec<u32>,
    head: usize,
    count: usize,
    pending_push: Vec<u32>,
}

impl FreeList {
    /// All `cells` pointers free, in address order.
    pub fn new(cells: u32) -> Self {
        debug_assert!(cells <= 1 << PTR_BITS);
        Self {
            ring: (0..cells).collect(),
            head: 0,
            count: cells as usize,
            pending_push: Vec::with_capacity(64),
        }
    }

    /// Free pointers as of the start of the cycle, minus those popped so far this cycle.
    #[inline]
    pub fn count(&self) -> usize {
        self.count
    }

    #[inline]
    pub fn pop(&mut self) -> Option<u32> {
        if self.count == 0 {
            return None;
        }
        let p = self.ring[self.head];
        self.head = self.wrap(self.head + 1);
        self.count -= 1;
        Some(p)
    }

    /// Ring index `i` brought into the ring, without a division when `i < 2 * len` (always,
    /// unless [`crate::fault::Fault::DoubleFreeCell`] over-filled the list).
    #[inline]
    fn wrap(&self, i: usize) -> usize {
        let n = self.ring.len();
        if i < n {
            i
        } else if i < 2 * n {
            i - n
        } else {
            i % n
        }
    }

    /// Return a pointer; it becomes poppable after the edge.
    #[inline]
    pub fn push(&mut self, p: u32) {
        self.pending_push.push(p);
    }

    /// The free pointers, oldest first (checker access).
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let n = self.ring.len();
        (0..self.count).map(move |i| self.ring[(self.head + i) % n])
    }

    /// `buffer.free_cells`: pointers on the list after the edge.
    pub fn probe<V: Visit>(&self, v: &mut V) {
        v.wire("free_cells", CNT_BITS, self.count as u64);
    }
}

impl Clocked for FreeList {
    fn commit(&mut self, _: u64) -> Result<(), BlockError> {
        let mut tail = self.wrap(self.head + self.count);
        for &p in &self.pending_push {
            self.ring[tail] = p;
            tail = self.wrap(tail + 1);
        }
        self.count += self.pending_push.len();
        self.pending_push.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushed_pointer_is_reusable_only_after_the_edge() {
        let mut f = FreeList::new(2);
        assert_eq!(f.pop(), Some(0));
        assert_eq!(f.pop(), Some(1));
        f.push(0);
        assert_eq!(f.pop(), None, "a push is not visible before the edge");
        f.commit(0).unwrap();
        assert_eq!(f.pop(), Some(0));
    }
}
