//! The queue-length register of the egress blocks that count a packet from its admission to
//! its dequeue (the ECM congestion point, the ECN marker): a register written only at the
//! edge, whose D input is the length as of the last edge plus this cycle's arrivals less its
//! departures. The arrivals come from one phase and the departures from another, so writing
//! the register in either would make the other phase's result depend on the order of the
//! two; as a delta latched at the edge, both read the registered length.

/// This cycle's arrivals and departures of one queue-length register, in its unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LenDelta {
    arrived: u32,
    departed: u32,
}

impl LenDelta {
    /// Units arrived in this cycle.
    #[inline]
    pub fn arrived(&self) -> u32 {
        self.arrived
    }

    /// `n` units arrive; returns whether it is the register's first change of the cycle
    /// (its block lists it for the edge then: a packet has at least one unit).
    #[inline]
    pub fn arrive(&mut self, n: u32) -> bool {
        let first = *self == Self::default();
        self.arrived += n;
        first
    }

    /// `n` units depart; returns whether it is the register's first change of the cycle.
    #[inline]
    pub fn depart(&mut self, n: u32) -> bool {
        let first = *self == Self::default();
        self.departed += n;
        first
    }

    /// The edge: `qlen + arrived - departed` into the `bits`-wide register `qlen`. A result
    /// below zero or above the register is a model bug, named by the values it came from.
    pub fn latch(&mut self, qlen: &mut u32, bits: u32) -> Result<(), String> {
        let next = (*qlen as u64 + self.arrived as u64).checked_sub(self.departed as u64);
        match next {
            Some(n) if n < 1 << bits => {
                *qlen = n as u32;
                *self = Self::default();
                Ok(())
            }
            _ => Err(format!(
                "qlen {} + {} - {} leaves the {bits}-bit register",
                qlen, self.arrived, self.departed
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latch_applies_the_cycle_and_restarts() {
        let mut q = 10;
        let mut d = LenDelta::default();
        assert!(d.arrive(3));
        assert!(!d.depart(5), "second change of the cycle");
        assert_eq!(q, 10, "the register waits for the edge");
        d.latch(&mut q, 8).unwrap();
        assert_eq!((q, d), (8, LenDelta::default()));
        assert!(d.depart(1), "first change of the next cycle");
    }

    /// Companion: a departure below zero and a length above the register are refused.
    #[test]
    fn latch_refuses_underflow_and_overflow() {
        let mut q = 2;
        let mut d = LenDelta::default();
        d.depart(3);
        let e = d.latch(&mut q, 8).unwrap_err();
        assert_eq!(e, "qlen 2 + 0 - 3 leaves the 8-bit register");
        let mut d = LenDelta::default();
        d.arrive(254);
        assert!(d.latch(&mut q, 8).is_err(), "2 + 254 = 256 needs 9 bits");
        assert_eq!(q, 2);
    }
}
