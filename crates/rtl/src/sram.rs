//! A synchronous SRAM with explicit read and write ports.
//!
//! A read issued in cycle `c` returns the word as it was at the start of cycle `c` (read
//! before write) on `rdata` in cycle `c + latency`, and only in that cycle: like the
//! output of a real SRAM, the reader must capture it then. Writes land at the clock edge.
//! The number of reads per port and writes per cycle is bounded; exceeding it is a model
//! bug and panics with the memory's name, as a synthesis tool would refuse the design.
//!
//! A memory whose owner models its reads' timing itself (a fixed delay, with the word
//! known not to change before it) may be built with no read ports and read through
//! [`Sram::word`] or [`Sram::backdoor`]: the packet link and descriptor RAMs of the egress
//! queues, whose head refetch is such a delay (`hw-model/src/packet_queue.rs`).
//!
//! The clock edge costs time in proportion to the accesses of the cycle, not to the port
//! count: each read slot carries the cycle it was issued in, so stale slots need no
//! clearing, and a model may skip idle cycles without touching the memory (every access
//! names its cycle).

use crate::block::{BlockError, Clocked};

/// Memory of `T` words with `read_ports` read ports of `latency` cycles and `write_ports`
/// write ports.
#[derive(Debug, Clone)]
pub struct Sram<T: Copy + Default> {
    name: &'static str,
    mem: Vec<T>,
    latency: usize,
    /// Read slots: port `p`, issue cycle `c` lives at `p * latency + c % latency`, tagged
    /// with `c`.
    pipe: Vec<(u64, T)>,
    /// Reads issued this cycle: (port, word).
    issued: Vec<(usize, T)>,
    /// Cycle of the last read on each port (to refuse two reads on a port in one cycle).
    last_read: Vec<u64>,
    writes: Vec<(usize, T)>,
    write_ports: usize,
}

impl<T: Copy + Default> Sram<T> {
    pub fn new(
        name: &'static str,
        depth: usize,
        read_ports: usize,
        write_ports: usize,
        latency: usize,
    ) -> Self {
        assert!(
            latency >= 1,
            "{name}: a synchronous SRAM has read latency >= 1"
        );
        Self {
            name,
            mem: vec![T::default(); depth],
            latency,
            pipe: vec![(u64::MAX, T::default()); read_ports * latency],
            issued: Vec::with_capacity(read_ports),
            last_read: vec![u64::MAX; read_ports],
            writes: Vec::with_capacity(write_ports),
            write_ports,
        }
    }

    pub fn depth(&self) -> usize {
        self.mem.len()
    }

    pub fn latency(&self) -> usize {
        self.latency
    }

    /// Issue a read on `port` in cycle `now`; the word appears on `rdata(port, now +
    /// latency)`.
    #[inline]
    pub fn read(&mut self, port: usize, addr: usize, now: u64) {
        assert!(
            self.last_read[port] != now,
            "{}: two reads on port {port} in one cycle",
            self.name
        );
        self.last_read[port] = now;
        self.issued.push((port, self.mem[addr]));
    }

    /// The word on `port`'s read data in cycle `now`: the one read `latency` cycles
    /// earlier, if a read was issued then.
    #[inline]
    pub fn rdata(&self, port: usize, now: u64) -> Option<T> {
        let c = now.checked_sub(self.latency as u64)?;
        let (stamp, v) = self.pipe[port * self.latency + (c % self.latency as u64) as usize];
        (stamp == c).then_some(v)
    }

    /// Drive a write port; the word is stored at the clock edge.
    #[inline]
    pub fn write(&mut self, addr: usize, data: T) {
        assert!(
            self.writes.len() < self.write_ports,
            "{}: more than {} writes in one cycle",
            self.name,
            self.write_ports
        );
        assert!(
            addr < self.mem.len(),
            "{}: write to {addr} out of range",
            self.name
        );
        self.writes.push((addr, data));
    }

    /// Test and checker access that bypasses the ports (no timing, no port use).
    pub fn backdoor(&self, addr: usize) -> T {
        self.mem[addr]
    }

    /// The stored word at `addr`, by reference: a read whose timing the owner models (see
    /// the module doc), or checker access.
    #[inline]
    pub fn word(&self, addr: usize) -> &T {
        &self.mem[addr]
    }

    /// The stored word at `addr`, changed in place by its owner (a field rewritten as the
    /// word is read out, which the owner's timing covers), or by fault injection.
    #[inline]
    pub fn backdoor_mut(&mut self, addr: usize) -> &mut T {
        &mut self.mem[addr]
    }

    /// Fault injection and initialisation that bypasses the ports.
    pub fn backdoor_write(&mut self, addr: usize, data: T) {
        self.mem[addr] = data;
    }
}

impl<T: Copy + Default> Clocked for Sram<T> {
    /// The edge ending cycle `now`: latch its reads into their slots, then land the writes.
    #[inline]
    fn commit(&mut self, now: u64) -> Result<(), BlockError> {
        if !self.issued.is_empty() {
            let slot = (now % self.latency as u64) as usize;
            for &(p, v) in &self.issued {
                self.pipe[p * self.latency + slot] = (now, v);
            }
            self.issued.clear();
        }
        for &(addr, data) in &self.writes {
            self.mem[addr] = data;
        }
        self.writes.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_data_arrives_after_latency_and_reads_old_value() {
        let mut m: Sram<u32> = Sram::new("t", 8, 1, 1, 2);
        m.backdoor_write(3, 10);
        m.read(0, 3, 0);
        m.write(3, 20);
        m.commit(0).unwrap();
        assert_eq!(m.rdata(0, 1), None, "latency 2: nothing after one edge");
        m.commit(1).unwrap();
        assert_eq!(
            m.rdata(0, 2),
            Some(10),
            "read-before-write returns the old word"
        );
        m.commit(2).unwrap();
        assert_eq!(
            m.rdata(0, 3),
            None,
            "the data is on the bus for one cycle only"
        );
        assert_eq!(m.backdoor(3), 20);
    }

    #[test]
    fn back_to_back_reads_pipeline() {
        let mut m: Sram<u32> = Sram::new("t", 4, 1, 1, 2);
        for a in 0..4 {
            m.backdoor_write(a, a as u32 * 7);
        }
        let mut got = vec![];
        for a in 0..6 {
            if a < 4 {
                m.read(0, a, a as u64);
            }
            m.commit(a as u64).unwrap();
            got.push(m.rdata(0, a as u64 + 1));
        }
        assert_eq!(got, vec![None, Some(0), Some(7), Some(14), Some(21), None]);
    }

    #[test]
    #[should_panic(expected = "two reads on port 0")]
    fn read_port_count_is_enforced() {
        let mut m: Sram<u32> = Sram::new("t", 4, 1, 1, 1);
        m.read(0, 0, 5);
        m.read(0, 1, 5);
    }

    #[test]
    #[should_panic(expected = "more than 1 writes")]
    fn write_port_count_is_enforced() {
        let mut m: Sram<u32> = Sram::new("t", 4, 1, 1, 1);
        m.write(0, 1);
        m.write(1, 1);
    }
}
