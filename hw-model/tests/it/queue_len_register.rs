//! The queue-length register's delta (`hw_model::queue_len`) through its public interface:
//! what ECM and ECN read of a cycle before the edge.

use hw_model::queue_len::LenDelta;

/// The delta shows the cycle's arrivals and departures apart, each summed over the
/// cycle, and both restart at the edge.
#[test]
fn a_len_delta_shows_the_cycles_arrivals_and_departures() {
    let mut d = LenDelta::default();
    d.arrive(5);
    d.depart(3);
    d.arrive(2);
    d.depart(1);
    assert_eq!((d.arrived(), d.departed()), (7, 4));
    let mut q = 10;
    d.latch(&mut q, 8).unwrap();
    assert_eq!((q, d.arrived(), d.departed()), (13, 0, 0));
    d.depart(9);
    assert_eq!((d.arrived(), d.departed()), (0, 9));
}
