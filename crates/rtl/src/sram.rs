//! A synchronous SRAM with explicit read and write ports.
//!
//! A read issued in cycle `c` returns the word as it was at the start of cycle `c` (read
//! before write) in cycle `c + latency`. Writes land at the clock edge. The number of
//! reads and writes per cycle is bounded by the port counts; exceeding them is a model bug
//! and panics with the memory's name, as a synthesis tool would refuse the design.

/// Memory of `T` words with `read_ports` read ports of `latency` cycles and `write_ports`
/// write ports.
#[derive(Debug, Clone)]
pub struct Sram<T: Copy + Default> {
    name: &'static str,
    mem: Vec<T>,
    latency: usize,
    /// Read pipeline, `read_ports * latency` slots; stage `j` of port `p` is at
    /// `p * latency + (head + j) % latency`.
    pipe: Vec<Option<T>>,
    head: usize,
    /// Reads issued this cycle, one slot per port.
    issued: Vec<Option<T>>,
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
            pipe: vec![None; read_ports * latency],
            head: 0,
            issued: vec![None; read_ports],
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

    /// Issue a read on `port`; the word appears on `rdata(port)` after `latency` edges.
    #[inline]
    pub fn read(&mut self, port: usize, addr: usize) {
        assert!(
            self.issued[port].is_none(),
            "{}: two reads on port {port} in one cycle",
            self.name
        );
        self.issued[port] = Some(self.mem[addr]);
    }

    /// The word read `latency` cycles ago on `port`, if a read was issued then.
    #[inline]
    pub fn rdata(&self, port: usize) -> Option<T> {
        let last = (self.head + self.latency - 1) % self.latency;
        self.pipe[port * self.latency + last]
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

    /// The clock edge: advance the read pipelines, then land the writes.
    pub fn commit(&mut self) {
        let l = self.latency;
        // Rotating the ring by one moves every stage j to j + 1 and frees stage 0.
        self.head = (self.head + l - 1) % l;
        for (p, issued) in self.issued.iter_mut().enumerate() {
            self.pipe[p * l + self.head] = issued.take();
        }
        for (addr, data) in self.writes.drain(..) {
            self.mem[addr] = data;
        }
    }

    /// Test and checker access that bypasses the ports (no timing, no port use).
    pub fn backdoor(&self, addr: usize) -> T {
        self.mem[addr]
    }

    /// Fault injection and initialisation that bypasses the ports.
    pub fn backdoor_write(&mut self, addr: usize, data: T) {
        self.mem[addr] = data;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_data_arrives_after_latency_and_reads_old_value() {
        let mut m: Sram<u32> = Sram::new("t", 8, 1, 1, 2);
        m.backdoor_write(3, 10);
        m.read(0, 3);
        m.write(3, 20);
        m.commit();
        assert_eq!(m.rdata(0), None, "latency 2: nothing after one edge");
        m.commit();
        assert_eq!(
            m.rdata(0),
            Some(10),
            "read-before-write returns the old word"
        );
        m.commit();
        assert_eq!(m.rdata(0), None);
        assert_eq!(m.backdoor(3), 20);
    }

    #[test]
    fn back_to_back_reads_pipeline() {
        let mut m: Sram<u32> = Sram::new("t", 4, 1, 1, 1);
        for a in 0..4 {
            m.backdoor_write(a, a as u32 * 7);
        }
        let mut got = vec![];
        for a in 0..4 {
            m.read(0, a);
            m.commit();
            got.push(m.rdata(0));
        }
        assert_eq!(got, vec![Some(0), Some(7), Some(14), Some(21)]);
    }

    #[test]
    #[should_panic(expected = "more than 1 writes")]
    fn write_port_count_is_enforced() {
        let mut m: Sram<u32> = Sram::new("t", 4, 1, 1, 1);
        m.write(0, 1);
        m.write(1, 1);
    }
}
