//! The invariant checker and the faults that break the model on purpose.
//!
//! [`Core::check`] recounts the whole buffer from the lists, independently of the counters
//! it verifies; each [`Fault`] corrupts one register or list so that a companion test can
//! show the check catching it.

use crate::config::QUEUES;
use crate::egress_port::Tx;
use crate::fault::Fault;
use crate::mmu::Core;
use crate::packet_queue::Desc;
use crate::policy::BufferPolicy;
use crate::wires::PacketHdr;
use bitvec::prelude::*;
use rtl::Clocked;

impl Core {
    /// HCF registers: each list length equals a recount of its packets (queued, or admitted
    /// and still being written), and every credit is within `0..=c0`.
    fn check_hcf(&self, queued: &[Desc]) -> Result<(), String> {
        for h in &self.hcf.queues {
            let (p, q) = (h.p.port, h.p.queue);
            let mut len = [0u32; 2];
            let pending = self.ingress.ports.iter().flat_map(|i| i.pending.iter());
            for d in queued.iter().chain(pending) {
                if d.hdr.dst == p && d.hdr.prio == q {
                    len[d.sub as usize] += h.units(d.ncells);
                }
            }
            if len != h.len {
                return Err(format!(
                    "egress p{p} q{q}: HCF length registers {:?}, recount of the lists {len:?}",
                    h.len
                ));
            }
            h.check_credits()
                .map_err(|e| format!("egress p{p} q{q}: {e}"))?;
        }
        Ok(())
    }

    /// ECM queue lengths: each equals the pages of the packets queued or being written.
    fn check_ecm(&self, queued: &[Desc]) -> Result<(), String> {
        let mut want = vec![0u32; self.ecm.cps.len()];
        let pending = self.ingress.ports.iter().flat_map(|i| i.pending.iter());
        for d in queued.iter().chain(pending) {
            if let Some(cp) = self.ecm.cp(d.hdr.dst as usize, d.hdr.prio as usize) {
                want[cp] += crate::ecm_cp::pages(d.hdr.len);
            }
        }
        for (cp, w) in self.ecm.cps.iter().zip(want) {
            if cp.qlen != w {
                return Err(format!(
                    "egress p{} q{}: ECM qlen {} pages, recount {w}",
                    cp.port, cp.queue, cp.qlen
                ));
            }
        }
        Ok(())
    }

    /// ECN queue lengths: each equals the units of the packets queued or being written.
    fn check_ecn(&self, queued: &[Desc]) -> Result<(), String> {
        let mut want = vec![0u32; self.ecn.queues.len()];
        let pending = self.ingress.ports.iter().flat_map(|i| i.pending.iter());
        for d in queued.iter().chain(pending) {
            if let Some(i) = self.ecn.queue(d.hdr.dst as usize, d.hdr.prio as usize) {
                want[i] += crate::ecn_marker::units(self.ecn.params.unit, d.hdr.len, d.ncells);
            }
        }
        for (m, w) in self.ecn.queues.iter().zip(want) {
            if m.qlen != w {
                return Err(format!(
                    "egress p{} q{}: ECN qlen {}, recount {w}",
                    m.port, m.queue, m.qlen
                ));
            }
        }
        Ok(())
    }

    /// The policy's registers (L2BM: each `N` equals a recount of the queue's packets that
    /// are queued, being written, or being sent with their first cell not yet read;
    /// `t_total` the sum of their `due - t_prev`; `tau = t_total / N`; `C` the sum of `tau`).
    fn check_policy<P: BufferPolicy>(&self, policy: &P, queued: &[Desc]) -> Result<(), String> {
        let pending = self.ingress.ports.iter().flat_map(|i| i.pending.iter());
        let sending = self.egress.ports().iter().filter_map(|e| match &e.tx {
            Tx::Data(t) if t.k == 0 => Some(self.queues.desc_of(t.head)),
            _ => None,
        });
        let packets = queued
            .iter()
            .chain(pending)
            .chain(sending)
            .map(|d| (d.hdr.src as usize * QUEUES + d.hdr.prio as usize, d.due));
        policy.check_registers(packets)
    }

    /// Full structural check, independent of the counters it verifies:
    /// - every cell is exactly once either free, in a queue, being written or being sent;
    /// - every ingress and egress counter and every total equals a recount of the lists;
    /// - the lossless shared segment and headroom are within their sizes;
    /// - every watermark is at or above the counter it watches.
    pub(crate) fn check<P: BufferPolicy>(&self, policy: &P) -> Result<(), String> {
        let total = self.d.total_cells as usize;
        let mut owner: BitVec = bitvec![0; total];
        let mut claim = |c: u32, what: &str| -> Result<(), String> {
            let i = c as usize;
            if i >= total {
                return Err(format!("{what}: cell pointer {c} out of range"));
            }
            if owner[i] {
                return Err(format!("cell {c} is used twice ({what})"));
            }
            owner.set(i, true);
            Ok(())
        };
        for c in self.free.iter() {
            claim(c, "free list")?;
        }
        let ports = self.d.ports;
        let mut ing = vec![0u32; ports * QUEUES];
        let mut eg = vec![0u32; ports * QUEUES];
        let mut charge = |h: &PacketHdr, ncells: u16, from: u16| {
            let r = (ncells - from) as u32;
            ing[h.src as usize * QUEUES + h.prio as usize] += r;
            eg[h.dst as usize * QUEUES + h.prio as usize] += r;
        };
        let cell_link = &self.queues.cell_link;
        let mut walk_cells = |first: u32, count: u32, what: &str| -> Result<(), String> {
            let mut c = first;
            for i in 0..count {
                claim(c, what)?;
                if i + 1 < count {
                    c = cell_link.backdoor(c as usize);
                }
            }
            Ok(())
        };
        let mut queued: Vec<Desc> = Vec::new();
        for p in 0..ports {
            for q in 0..QUEUES {
                for li in self.queues.lists_of(p * QUEUES + q) {
                    let mut cells = 0u32;
                    self.queues.walk(li, |d| {
                        cells += d.ncells as u32;
                        queued.push(*d);
                    });
                    let regs = &self.queues.lists[li];
                    if cells != regs.cells {
                        return Err(format!(
                            "egress p{p} q{q} list {li}: register says {} cells, list holds {cells}",
                            regs.cells
                        ));
                    }
                }
            }
        }
        self.check_hcf(&queued)?;
        self.check_ecm(&queued)?;
        self.check_ecn(&queued)?;
        self.check_policy(policy, &queued)?;
        for d in &queued {
            walk_cells(d.head, d.ncells as u32, "queued packet")?;
            charge(&d.hdr, d.ncells, 0);
        }
        for (p, ip) in self.ingress.ports.iter().enumerate() {
            for (i, d) in ip.pending.iter().enumerate() {
                if i == 0 && ip.written > 0 {
                    walk_cells(d.head, ip.written as u32, "packet being written")?;
                }
                charge(&d.hdr, d.ncells, 0);
            }
            if ip.pending.len() > ip.fifo.len() + 2 {
                return Err(format!(
                    "ingress p{p}: {} pending packets for {} FIFO cells",
                    ip.pending.len(),
                    ip.fifo.len()
                ));
            }
        }
        for e in self.egress.ports() {
            if let Tx::Data(t) = e.tx {
                let left = (t.ncells - t.k) as u32;
                if left > 0 {
                    let first = t
                        .cell_ptr
                        .unwrap_or_else(|| cell_link.backdoor(t.last_ptr as usize));
                    walk_cells(first, left, "packet being sent")?;
                    charge(&e.header(&t, &self.queues), t.ncells, t.k);
                }
            }
        }
        if let Some(leak) = owner.iter_zeros().next() {
            return Err(format!(
                "cell {leak} is neither free nor in any list (leak); {} cells unaccounted",
                owner.count_zeros()
            ));
        }
        let acct = &self.acct;
        let (mut shared, mut lossy_shared, mut all, mut lossy_all) = (0u32, 0u32, 0u32, 0u32);
        let mut port_shared = vec![0u32; ports];
        let mut port_headroom = vec![0u32; ports];
        let per_port = policy.headroom_per_port();
        for p in 0..ports {
            for pg in 0..QUEUES {
                let got = acct.group(p, pg);
                let want = ing[p * QUEUES + pg];
                if got.iter().sum::<u32>() != want {
                    return Err(format!("ingress p{p} pg{pg}: counters [private, shared, headroom] = {got:?} sum to {}, recount = {want}", got.iter().sum::<u32>()));
                }
                let phi = if self.d.is_lossless(pg as u8) {
                    self.d.private_cells
                } else {
                    self.d.lossy_private_cells
                };
                if got[0] > phi {
                    return Err(format!(
                        "ingress p{p} pg{pg}: private {} cells exceeds phi = {phi}",
                        got[0]
                    ));
                }
                if self.d.is_lossless(pg as u8) {
                    shared += got[1];
                    port_shared[p] += got[1];
                    port_headroom[p] += got[2];
                    // SIH: eta per queue. DSH: eta per port, checked below.
                    if !per_port && got[2] > self.d.eta_cells[p] {
                        return Err(format!(
                            "ingress p{p} pg{pg}: headroom {} cells exceeds eta = {}",
                            got[2], self.d.eta_cells[p]
                        ));
                    }
                } else {
                    lossy_shared += got[1];
                    lossy_all += got.iter().sum::<u32>();
                }
                all += got.iter().sum::<u32>();
                let e = acct.egress[p * QUEUES + pg].get();
                if e != eg[p * QUEUES + pg] {
                    return Err(format!(
                        "egress p{p} q{pg}: counter {e}, recount {}",
                        eg[p * QUEUES + pg]
                    ));
                }
            }
        }
        for (name, got, want) in [
            ("shared total", acct.shared_total.get(), shared),
            (
                "lossy shared total",
                acct.lossy_shared_total.get(),
                lossy_shared,
            ),
            ("buffer total", acct.total.get(), all),
            ("lossy total", acct.lossy_total.get(), lossy_all),
            (
                "headroom total",
                acct.headroom_total.get(),
                port_headroom.iter().sum(),
            ),
        ] {
            if got != want {
                return Err(format!(
                    "{name}: counter {got}, sum of queue counters {want}"
                ));
            }
        }
        for p in 0..ports {
            let (s, h) = (acct.port_shared[p].get(), acct.port_headroom[p].get());
            if s != port_shared[p] || h != port_headroom[p] {
                return Err(format!(
                    "ingress p{p}: port counters shared {s} / headroom {h}, sums of its groups {} / {}",
                    port_shared[p], port_headroom[p]
                ));
            }
            if per_port && h > self.d.eta_cells[p] {
                return Err(format!(
                    "ingress p{p}: insurance headroom {h} cells exceeds eta = {} (Eq. 4)",
                    self.d.eta_cells[p]
                ));
            }
        }
        if shared > self.d.shared_cells {
            return Err(format!(
                "shared segment holds {shared} cells, B_s = {}",
                self.d.shared_cells
            ));
        }
        if let Some((name, wm, now)) = acct.check_watermarks() {
            return Err(format!(
                "{name}: watermark {wm} cells below the counter's {now}"
            ));
        }
        Ok(())
    }

    /// Break the model on purpose.
    pub(crate) fn inject<P: BufferPolicy>(&mut self, policy: &mut P, f: Fault) {
        // A corrupted total or free count shows in the next cycle's sample.
        self.global_next = true;
        match f {
            Fault::DoubleFreeCell => {
                let first = self.free.iter().next();
                if let Some(p) = first {
                    self.free.push(p);
                    self.free
                        .commit(self.cycle)
                        .expect("the free list's edge cannot fail");
                }
            }
            Fault::LeakCell => {
                self.free.pop();
            }
            Fault::SkewCounter => {
                self.acct.ingress[0][1]
                    .add(1)
                    .expect("room for one more cell");
            }
            Fault::IntStuckTxBytes => self.int.stuck = true,
            Fault::HcfNoSwap => self.hcf.queues.iter_mut().for_each(|h| h.swap = false),
            Fault::HcfCreditAboveC0 => {
                if let Some(h) = self.hcf.queues.first_mut() {
                    h.force_credit(0, u32::MAX);
                }
            }
            Fault::HcfSkewLength => {
                if let Some(h) = self.hcf.queues.first_mut() {
                    h.len[0] += 1;
                }
            }
            Fault::EcmSkewQlen => {
                if let Some(cp) = self.ecm.cps.first_mut() {
                    cp.qlen += 1;
                }
            }
            Fault::EcnSkewQlen => {
                if let Some(m) = self.ecn.queues.first_mut() {
                    m.qlen += 1;
                }
            }
            Fault::EcnNoPmax => self.ecn.drop_pmax(),
            Fault::L2bmSkewCount | Fault::L2bmSkewTotal | Fault::L2bmMeterStuck => policy.inject(f),
            Fault::LowWatermark => {
                let a = &mut self.acct;
                if let Some(i) = a.ingress.iter().position(|g| g.iter().any(|c| c.get() > 0)) {
                    a.watermarks.ingress[i][0] = 0;
                }
            }
            Fault::XonFromNextT => self.read_next_t = true,
            Fault::NextEventIgnoresWakeups => self.ignore_wakeups = true,
            Fault::NextEventIgnoresResumes => self.ignore_resumes = true,
            Fault::DirtyIgnoresFreeCount => self.ignore_free_count = true,
        }
    }
}
