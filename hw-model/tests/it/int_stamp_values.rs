//! INT's stamps as values (`int_stamp.rs`): the transmitter stamps from the registers and
//! the port's earlier stamps of the cycle, and the registers take the stamps at the edge.

use hw_model::accounting::Accounting;
use hw_model::int_stamp::{IntStamper, BYTE_UNIT};
use hw_model::{PacketHdr, SwitchConfig};

/// Two packets stamped for port 1 in one cycle: the second's `bytes` counts the first's
/// (the port's earlier stamps, which the transmitter passes), and after the edge the next
/// stamp of each port counts its own.
#[test]
fn a_stamp_counts_the_ports_earlier_stamps_and_the_edge_takes_them() {
    let d = SwitchConfig {
        int: true,
        ..SwitchConfig::small()
    }
    .build()
    .unwrap();
    let mut int = IntStamper::new(&d);
    let acct = Accounting::new(d.ports);
    let hdr = PacketHdr::default();
    let len = 10 * BYTE_UNIT as u16;
    let first = int.stamp(5, 1, &hdr, len, 7, &acct, &[]);
    let other = int.stamp(5, 2, &hdr, len, 7, &acct, &[]);
    let second = int.stamp(5, 1, &hdr, len, 7, &acct, &[first]);
    assert_eq!(
        [first.hop.bytes, other.hop.bytes, second.hop.bytes],
        [0, 0, 10]
    );
    let before = int.stamp(6, 1, &hdr, len, 7, &acct, &[]);
    assert_eq!(before.hop.bytes, 0, "the registers wait for the edge");
    int.departures(&[first, other, second]);
    assert_eq!(int.stamp(6, 1, &hdr, len, 7, &acct, &[]).hop.bytes, 20);
    assert_eq!(int.stamp(6, 2, &hdr, len, 7, &acct, &[]).hop.bytes, 10);
}
