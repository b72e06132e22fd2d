//! INT's hop record, field by field (`hw_model::int_stamp`): what the stamper writes at a
//! dequeue, from the port's registers as they are before the packet. The HPCC and
//! PowerTCP senders of the testbench only see the rates these fields give, so an error of
//! one unit, or a packet counted in its own stamp, passes their tests (docs/testing.md).

use crate::wires::Wires;
use hw_model::accounting::{Accounting, Cells};
use hw_model::config::QUEUES;
use hw_model::int_stamp::{
    IntHop, IntStamp, IntStamper, BYTES_BITS, QLEN_BITS, RATE_BITS, TIME_BITS, TX_BYTES_BITS,
};
use hw_model::{PacketHdr, SwitchConfig};

const PORT: usize = 2;
/// `SwitchConfig::small`'s cell: 208 B.
const CELL: u64 = 208;

/// A stamper of the small profile with INT on: 8 ports of 100 Gb/s (rate code 2) at
/// `clock_mhz`.
fn stamper(clock_mhz: u32) -> IntStamper {
    let mut c = SwitchConfig::small();
    c.int = true;
    c.core_clock_mhz = clock_mhz;
    let d = c.build().unwrap();
    assert_eq!(d.cfg.cell_bytes as u64, CELL);
    IntStamper::new(&d)
}

/// Packet `hdr` of `len` bytes and `ncells` cells dequeued on `PORT` alone in cycle `now`:
/// its stamp, then the cycle's edge.
fn depart(
    s: &mut IntStamper,
    now: u64,
    hdr: &PacketHdr,
    len: u16,
    ncells: u16,
    acct: &Accounting,
) -> IntStamp {
    let stamp = s.stamp(now, PORT, hdr, len, ncells, acct, &[]);
    s.departures(&[stamp]);
    stamp
}

fn hdr(flow: u32, seq: u32) -> PacketHdr {
    PacketHdr {
        flow,
        seq,
        ..PacketHdr::default()
    }
}

/// Egress counters of `PORT`: `cells[q]` in queue `q`; every queue of the ports beside it
/// holds cells the stamp must not count.
fn queued(cells: [u32; QUEUES]) -> Accounting {
    let mut a = Accounting::new(8);
    for (i, c) in a.egress.iter_mut().enumerate() {
        let n = if i / QUEUES == PORT {
            cells[i % QUEUES]
        } else {
            1000
        };
        *c = Cells::try_new(n).unwrap();
    }
    a
}

/// The exact hop of three packets dequeued one after the other on one port: `qlen` is the
/// port's queued cells (every queue of it) without the packet's own, in units of 80 B
/// rounded down; `bytes` is the port's transmitted-bytes counter before the packet, in
/// units of 128 B rounded down; `time` is the cycle in ns; `rate` the port's code.
#[test]
fn a_hop_carries_the_ports_registers_before_the_packet() {
    let mut s = stamper(1000);
    // 7 + 2 + 4 = 13 cells queued at the port, 3 of them the packet's: 10 * 208 B = 2080 B
    // = 26 units of 80 B.
    let mut cells = [0; QUEUES];
    (cells[0], cells[3], cells[7]) = (7, 2, 4);
    let first = depart(&mut s, 1234, &hdr(9, 40), 600, 3, &queued(cells));
    // 12 cells, 1 of them the packet's: 11 * 208 = 2288 B = 28.6 units.
    cells[0] = 6;
    let second = depart(&mut s, 1300, &hdr(9, 41), 1000, 1, &queued(cells));
    // The packet's own cells only: nothing else queued.
    let own = [0, 5, 0, 0, 0, 0, 0, 0];
    let third = depart(&mut s, 1301, &hdr(7, 1), 64, 5, &queued(own));
    let stamps = [first, second, third];
    let hop = |time, bytes, qlen| IntHop {
        time,
        bytes,
        qlen,
        rate: 2,
    };
    let stamp = |flow, seq, hop, len| IntStamp {
        port: PORT as u8,
        flow,
        seq,
        hop,
        len,
    };
    assert_eq!(
        stamps,
        [
            stamp(9, 40, hop(1234, 0, 26), 600),
            // 600 B sent before it: 4 units of 128 B (4.69 rounded down).
            stamp(9, 41, hop(1300, 4, 28), 1000),
            // 1600 B: 12.5 units.
            stamp(7, 1, hop(1301, 12, 0), 64),
        ]
    );
    assert_eq!(stamps[0].hop.line_rate_bps(), 100_000_000_000);
    assert_eq!(stamps[1].hop.qlen_bytes(), 28 * 80);
}

/// `time` is the cycle in ns at the core clock, modulo `2^24`; `qlen` saturates at its
/// 17 bits instead of wrapping.
#[test]
fn time_wraps_at_24_bits_and_qlen_saturates_at_17() {
    // 1250 MHz: cycle 5 * 2^22 + 5 is 2^24 + 4 ns.
    let mut s = stamper(1250);
    let now = 5 * (1 << 22) + 5;
    // 2^17 units of 80 B are 50412.3 cells of 208 B: 50412 cells (with the packet's one)
    // leave 50411 * 208 / 80 = 131068 units, one cell more saturates.
    let mut cells = [0; QUEUES];
    cells[1] = 50412;
    let first = depart(&mut s, now, &hdr(1, 1), 64, 1, &queued(cells));
    cells[1] = 50414;
    let second = depart(&mut s, now + 1, &hdr(1, 2), 64, 1, &queued(cells));
    let hops = [first.hop, second.hop];
    assert_eq!(hops[0].time, 4);
    assert_eq!(
        [hops[0].qlen, hops[1].qlen],
        [131_068, (1 << QLEN_BITS) - 1]
    );
}

/// `egress.pNN.int.*`: the port's counter after the packet, then the fields of the last
/// hop it stamped, at their widths; a port that stamped nothing shows zeros.
#[test]
fn the_int_probe_shows_the_counter_and_the_last_hop() {
    let mut s = stamper(1000);
    let mut cells = [0; QUEUES];
    cells[2] = 9;
    depart(&mut s, 77, &hdr(3, 3), 1500, 2, &queued(cells));
    depart(&mut s, 78, &hdr(3, 4), 300, 1, &queued(cells));
    let mut w = Wires::default();
    s.probe_port(PORT, &mut w);
    // qlen: 8 * 208 / 80 = 20.8; bytes: 1500 / 128 = 11.7.
    assert_eq!(
        w.0,
        [
            (TX_BYTES_BITS, 1800),
            (TIME_BITS, 78),
            (BYTES_BITS, 11),
            (QLEN_BITS, 20),
            (RATE_BITS, 2),
        ]
    );
    let mut other = Wires::default();
    s.probe_port(PORT + 1, &mut other);
    assert_eq!(
        other.0,
        [
            (TX_BYTES_BITS, 0),
            (TIME_BITS, 0),
            (BYTES_BITS, 0),
            (QLEN_BITS, 0),
            (RATE_BITS, 0)
        ]
    );
}

/// Off (`int = false`), the block has no registers and shows no wire.
#[test]
fn without_int_the_stamper_shows_nothing() {
    let d = SwitchConfig::small().build().unwrap();
    let mut s = IntStamper::new(&d);
    assert!(!s.on());
    s.departures(&[]);
    let mut w = Wires::default();
    s.probe_port(PORT, &mut w);
    assert!(w.0.is_empty());
}
