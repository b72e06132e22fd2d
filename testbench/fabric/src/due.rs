//! The due cycles of a switch's NICs as a tournament tree (a binary min-tree over the
//! NICs): the earliest at the root, so the switch's wake costs one read and not a scan of
//! every NIC, and the NICs due at a cycle are found by descending only into subtrees with
//! one due. A ToR of the DSH leaf-spine has 32 NICs; a change of one NIC's due cycle
//! walks five levels up, and stops where the minimum above does not move.

/// Per item, the cycle it is due (`u64::MAX`: never), with their minimum kept.
#[derive(Debug, Clone)]
pub(crate) struct DueCycles {
    /// Leaves in use; the tree has `2 * width` nodes, node 1 the root, node `k`'s children
    /// `2k` and `2k + 1`, item `i` at node `width + i` (leaves past the items never due).
    len: usize,
    width: usize,
    tree: Vec<u64>,
}

impl DueCycles {
    /// `len` items, none due.
    pub fn idle(len: usize) -> Self {
        let width = len.next_power_of_two();
        Self {
            len,
            width,
            tree: vec![u64::MAX; 2 * width],
        }
    }

    /// The earliest due cycle (`u64::MAX`: none).
    pub fn min(&self) -> u64 {
        self.tree[1]
    }

    /// Item `i`'s due cycle.
    pub fn get(&self, i: usize) -> u64 {
        self.tree[self.width + i]
    }

    /// Item `i` is due at `at`.
    pub fn set(&mut self, i: usize, at: u64) {
        let mut k = self.width + i;
        // A visited NIC's sink is mostly where it was: nothing above moves.
        if self.tree[k] == at {
            return;
        }
        self.tree[k] = at;
        while k > 1 {
            k /= 2;
            let m = self.tree[2 * k].min(self.tree[2 * k + 1]);
            if self.tree[k] == m {
                break;
            }
            self.tree[k] = m;
        }
    }

    /// Item `i` is due at `at` if that is earlier than it was.
    pub fn lower(&mut self, i: usize, at: u64) {
        let mut k = self.width + i;
        if self.tree[k] <= at {
            return;
        }
        self.tree[k] = at;
        while k > 1 {
            k /= 2;
            if self.tree[k] <= at {
                break;
            }
            self.tree[k] = at;
        }
    }

    /// Append the items due at or before `now` to `out`, in increasing order.
    pub fn due(&self, now: u64, out: &mut Vec<usize>) {
        if self.min() > now {
            return;
        }
        let mut k = 1;
        loop {
            if self.tree[k] <= now {
                if k < self.width {
                    k *= 2;
                    continue;
                }
                out.push(k - self.width);
            }
            // The next subtree in order: up while a right child, then the right sibling.
            while k & 1 == 1 {
                k /= 2;
            }
            if k == 0 {
                return;
            }
            k += 1;
        }
    }

    /// Every inner node holds the minimum of its children, and no leaf past the items is
    /// due: what `min` and `due` rest on.
    pub fn holds(&self) -> bool {
        let inner =
            (1..self.width).all(|k| self.tree[k] == self.tree[2 * k].min(self.tree[2 * k + 1]));
        inner
            && self.tree[self.width + self.len..]
                .iter()
                .all(|&c| c == u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree against a dense array under random sets and lowers: the same minimum and
    /// the same items due, in order.
    #[test]
    fn matches_a_dense_scan() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut draw = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for len in [0, 1, 2, 3, 5, 32, 33] {
            let mut tree = DueCycles::idle(len);
            let mut dense = vec![u64::MAX; len];
            for _ in 0..2_000 {
                if len > 0 {
                    let i = draw(len as u64) as usize;
                    let at = if draw(8) == 0 { u64::MAX } else { draw(100) };
                    if draw(2) == 0 {
                        tree.set(i, at);
                        dense[i] = at;
                    } else {
                        tree.lower(i, at);
                        dense[i] = dense[i].min(at);
                    }
                }
                assert!(tree.holds());
                assert_eq!(tree.min(), dense.iter().copied().min().unwrap_or(u64::MAX));
                let now = draw(100);
                let mut due = Vec::new();
                tree.due(now, &mut due);
                let want: Vec<usize> = (0..len).filter(|&i| dense[i] <= now).collect();
                assert_eq!(due, want, "len {len}, now {now}");
                assert!((0..len).all(|i| tree.get(i) == dense[i]));
            }
        }
    }

    /// Companion: an inner node left above its children's minimum (a `set` that did not
    /// walk up) is what `holds` catches, and `due` then misses the item under it.
    #[test]
    fn a_stale_inner_node_is_caught() {
        let mut tree = DueCycles::idle(4);
        tree.set(2, 10);
        tree.tree[tree.width + 3] = 5;
        assert!(!tree.holds());
        let mut due = Vec::new();
        tree.due(7, &mut due);
        assert!(due.is_empty());
    }
}
