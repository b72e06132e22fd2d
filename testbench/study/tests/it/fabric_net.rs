//! The network reproductions' scenarios against the built-ins they name.

use scenario::Overrides;
use study::reproduce::fabric_net::{self, Transport};

/// The PowerTCP arm of `dsh-deadlock` and `dsh-collateral-fabric` (`Transport::apply` on
/// class 3) runs what `mmu-sim run dsh-deadlock-powertcp` runs: the same scenario hash.
/// The companion: the DCQCN arm is another scenario.
#[test]
fn the_powertcp_arm_is_the_built_in_dsh_deadlock_powertcp() {
    let ov = Overrides::default();
    let built_in = scenario::builtin::load("dsh-deadlock-powertcp").unwrap();
    let mut s = fabric_net::builtin("dsh-deadlock").unwrap();
    assert_ne!(s.hash(&ov), built_in.hash(&ov), "DCQCN is another scenario");
    Transport::PowerTcp.apply(&mut s, 3);
    assert_eq!(s.hash(&ov), built_in.hash(&ov));
}
