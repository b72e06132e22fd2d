//! The free list's ring (`free_list.rs`) when a double free (`Fault::DoubleFreeCell`)
//! over-fills it: the ring indices still wrap modulo its length, so the model keeps
//! running and the checker reports the double free, instead of the model panicking.

use hw_model::free_list::FreeList;
use rtl::Clocked;

/// Pointers pushed beyond the ring's length land at `(head + count + k) % len`, overwriting
/// older ones, and pops read from `head` on: a reference ring written with `%` gives the
/// pointers the list must hand out, for a one-cell list and a three-cell one, each
/// over-filled to four times its length.
#[test]
fn an_over_filled_list_wraps_its_ring_indices() {
    for len in [1usize, 3] {
        let mut list = FreeList::new(len as u32);
        let mut ring: Vec<u32> = (0..len as u32).collect();
        let mut count = len;
        for round in 0..3u32 {
            for k in 0..len {
                let p = 100 * (round + 1) + k as u32;
                list.push(p);
                ring[(count + k) % len] = p;
            }
            count += len;
            list.commit(round as u64).unwrap();
            assert_eq!(list.count(), count);
        }
        let popped: Vec<u32> = (0..count).map(|_| list.pop().unwrap()).collect();
        let expected: Vec<u32> = (0..count).map(|j| ring[j % len]).collect();
        assert_eq!(popped, expected, "a ring of {len}");
        assert_eq!(list.pop(), None);
    }
}
