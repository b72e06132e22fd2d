//! Deliberate corruptions of the model, for the companion tests that show each check
//! catches a real bug. A leaf: the blocks that apply a fault name it without knowing the
//! top level.

/// Deliberate corruptions for companion tests that show the checks catch real bugs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Push a pointer that is already free onto the free list again (double allocation).
    DoubleFreeCell,
    /// Pop a cell from the free list and forget it (leak).
    LeakCell,
    /// Add one to an ingress shared counter without a cell behind it.
    SkewCounter,
    /// HCF: stop swapping HP and LP at period starts (the reordering of HCF III-D).
    HcfNoSwap,
    /// HCF: set credit bin 0 of the first HCF queue to its register's all-ones value.
    HcfCreditAboveC0,
    /// HCF: add one to the first HCF queue's list-0 length register.
    HcfSkewLength,
    /// ECM: add one page to the first congestion point's queue length.
    EcmSkewQlen,
    /// ECN: add one unit to the first marking queue's length register.
    EcnSkewQlen,
    /// ECN: the marker's `span` register written as if `Pmax` were 1 (the RED line's
    /// `Pmax` factor lost), so marking between `Kmin` and `Kmax` is `1 / Pmax` too likely.
    EcnNoPmax,
    /// INT: the ports' transmitted-bytes counters stop counting (every hop stamps the
    /// same `bytes`, so a sender sees an idle link).
    IntStuckTxBytes,
    /// L2BM: add one packet to the `N` register of ingress queue (0, 0).
    L2bmSkewCount,
    /// L2BM: add one cycle to the `t_total` register of ingress queue (0, 0).
    L2bmSkewTotal,
    /// L2BM: the drain meters take no sample (`k` stays at its reset, the line rate).
    L2bmMeterStuck,
    /// Clear the total watermark of the first ingress group that holds cells (a
    /// watermark below its counter).
    LowWatermark,
    /// The policy's threshold units read the D input of the `T` register (the `T` the DT
    /// block is computing in the same phase) instead of its output: a block reading the
    /// next state of another block of its phase, which the phase-order test must catch.
    XonFromNextT,
    /// [`crate::Mmu::next_event`] leaves out the egress ports' wakes (cell read points, ends of
    /// frames, SRAM data due): a jump can pass a cycle in which a transmitter has work.
    NextEventIgnoresWakeups,
    /// [`crate::Mmu::next_event`] leaves out the received pauses that run out (the resumes of
    /// paused classes): a jump can pass the edge that frees a class.
    NextEventIgnoresResumes,
    /// The global signal block is not marked dirty when only the free cell count moved: a
    /// waveform sampling the dirty blocks loses those changes.
    DirtyIgnoresFreeCount,
}
