//! The queue-length register's delta (`hw_model::queue_len`) through its public interface:
//! what ECM and ECN read of a cycle before the edge.

use hw_model::queue_len::LenDelta;

/// The delta sums the cycle's arrivals (which ECM reads before the edge) and departures
/// (which only the edge applies), and both restart at the edge.
#[test]
fn a_len_delta_sums_the_cycles_arrivals_and_departures() {
    let mut d = LenDelta::default();
    d.arrive(5);
    d.depart(3);
    d.arrive(2);
    d.depart(1);
    assert_eq!(d.arrived(), 7);
    let mut q = 10;
    d.latch(&mut q, 8).unwrap();
    assert_eq!((q, d), (13, LenDelta::default()), "10 + 7 - 4");
    d.depart(9);
    assert_eq!(d.arrived(), 0);
    d.latch(&mut q, 8).unwrap();
    assert_eq!(q, 4, "the last cycle's departures alone");
}
