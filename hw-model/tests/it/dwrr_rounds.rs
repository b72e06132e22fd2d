//! DWRR (`sched/dwrr.rs`) at the bound of its combinational pick: the longest pick the
//! loop must finish, and the deficits it leaves and shows.

use crate::wires::Wires;
use hw_model::sched::dwrr::Dwrr;

/// Two eligible queues with 65535-byte heads, no deficit and the pointer on a queue that
/// is not eligible: the pick steps onto queue 1, then alternates quanta between queues 1
/// and 2 until queue 1 holds `turns = ceil(65535 / 1600) = 41` quanta, which is
/// `2 * turns` steps, the most a pick of two queues can take. Queue 1 sends and keeps
/// `41 * 1600 - 65535 = 65` bytes of deficit; queue 2 got 40 quanta, 64000 bytes.
#[test]
fn the_longest_pick_of_two_queues_sends_within_its_bound() {
    let mut dwrr = Dwrr::new(1600, 7);
    assert_eq!(dwrr.pick(0b110, |_| 65535), Some(1));
    assert_eq!((dwrr.deficit(1), dwrr.deficit(2)), (65, 64000));
    let mut wires = Wires::default();
    dwrr.probe_queue(2, &mut wires);
    assert_eq!(wires.0, [(17, 64000)], "egress.pNN.q2.deficit");
}
