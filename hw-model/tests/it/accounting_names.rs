//! The accounting block's reports (`accounting.rs`): which queue a broken watermark names,
//! and the counters its probes show.

use crate::wires::Wires;
use hw_model::accounting::Accounting;

/// A watermark below its counter is reported with the queue's port and class: counter
/// index `port * 8 + queue`, here ingress 29 = port 3, pg 5 and egress 50 = port 6, q 2.
#[test]
fn a_broken_watermark_names_its_port_and_queue() {
    let mut acct = Accounting::new(8);
    acct.ingress[29][1].add(4).unwrap();
    acct.egress[50].add(7).unwrap();
    let first = acct.check_watermarks().unwrap();
    assert_eq!(first, ("ingress p3 pg5 total".to_string(), 0, 4));
    acct.watermarks.ingress[29] = [4, 4, 0];
    let next = acct.check_watermarks().unwrap();
    assert_eq!(next, ("egress p6 q2".to_string(), 0, 7));
}

/// The probes show an ingress queue's three counters (two for a lossy one) and an egress
/// queue's count.
#[test]
fn probes_show_the_queue_counters() {
    let mut acct = Accounting::new(8);
    acct.ingress[29][0].add(1).unwrap();
    acct.ingress[29][1].add(2).unwrap();
    acct.ingress[29][2].add(3).unwrap();
    acct.egress[50].add(7).unwrap();
    let mut lossless = Wires::default();
    acct.probe_group(3, 5, true, &mut lossless);
    assert_eq!(lossless.0, [(21, 1), (21, 2), (21, 3)]);
    let mut lossy = Wires::default();
    acct.probe_group(3, 5, false, &mut lossy);
    assert_eq!(lossy.0, [(21, 1), (21, 2)]);
    let mut egress = Wires::default();
    acct.probe_egress(6, 2, &mut egress);
    assert_eq!(egress.0, [(21, 7)]);
}
