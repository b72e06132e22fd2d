//! The barrier the partitions' threads meet at, twice a window: its waiters spin for up to
//! [`SPIN`] before they sleep. A window of `leafspine-256-websearch` lasts about half a
//! millisecond and the threads reach its end within tens of microseconds of each other;
//! waking a sleeping thread (`std::sync::Barrier`: a mutex and a condition variable) costs
//! about as much again, twice a window on every thread (docs/performance.md). Spinning
//! costs the CPU time it spins, which the run's `cpu_seconds` counts. With more threads
//! than the cores the process may run on (`available_parallelism`: `taskset` counts) a
//! spinning waiter would take the core from a thread with work, so there it sleeps at
//! once, as with the standard barrier.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a waiter spins before it sleeps.
pub const SPIN: Duration = Duration::from_micros(200);

/// A reusable barrier for `n` threads.
pub struct SpinBarrier {
    n: usize,
    /// [`SPIN`], or zero when the threads outnumber the cores.
    spin: Duration,
    arrived: AtomicUsize,
    /// Bumped by the last arrival of each round: what the waiters watch.
    round: AtomicUsize,
    /// Waiters asleep in this round, and the condition they sleep on.
    sleepers: Mutex<usize>,
    wake: Condvar,
}

impl SpinBarrier {
    pub fn new(n: usize) -> Self {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        Self::with_spin(n, if n <= cores { SPIN } else { Duration::ZERO })
    }

    fn with_spin(n: usize, spin: Duration) -> Self {
        Self {
            n,
            spin,
            arrived: AtomicUsize::new(0),
            round: AtomicUsize::new(0),
            sleepers: Mutex::new(0),
            wake: Condvar::new(),
        }
    }

    /// Wait until all `n` threads have called `wait` in this round.
    pub fn wait(&self) {
        let round = self.round.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            // No waiter of this round returns before `round` moves, so none arrives for
            // the next one before `arrived` is reset.
            self.arrived.store(0, Ordering::Relaxed);
            let sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
            self.round.fetch_add(1, Ordering::Release);
            if *sleepers > 0 {
                self.wake.notify_all();
            }
            return;
        }
        let t0 = Instant::now();
        let mut spins = 0u32;
        while self.round.load(Ordering::Acquire) == round {
            std::hint::spin_loop();
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) && t0.elapsed() >= self.spin {
                break;
            }
        }
        let mut sleepers = self.sleepers.lock().unwrap_or_else(|e| e.into_inner());
        *sleepers += 1;
        while self.round.load(Ordering::Acquire) == round {
            sleepers = self.wake.wait(sleepers).unwrap_or_else(|e| e.into_inner());
        }
        *sleepers -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// `threads` threads meet at `b` twice a round, adding the round's number to a shared
    /// sum between; whether every thread saw each round's whole sum after its first wait.
    /// With `pause`, thread 0 arrives that late every seventh round.
    fn rounds_are_kept(
        b: &SpinBarrier,
        threads: usize,
        rounds: u64,
        pause: Option<Duration>,
    ) -> bool {
        let sum = AtomicU64::new(0);
        let ok = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..threads {
                let (sum, ok) = (&sum, &ok);
                s.spawn(move || {
                    let mut good = true;
                    for r in 1..=rounds {
                        if let Some(p) = pause.filter(|_| t == 0 && r % 7 == 0) {
                            std::thread::sleep(p);
                        }
                        sum.fetch_add(r, Ordering::SeqCst);
                        b.wait();
                        good &= sum.load(Ordering::SeqCst) == threads as u64 * r * (r + 1) / 2;
                        b.wait();
                    }
                    if good {
                        ok.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        ok.load(Ordering::SeqCst) == threads
    }

    #[test]
    fn every_thread_waits_for_the_others_spinning_or_asleep() {
        assert!(rounds_are_kept(&SpinBarrier::new(2), 2, 2000, None));
        assert!(rounds_are_kept(&SpinBarrier::new(3), 3, 500, None));
        // A thread late by more than the spin: the others sleep and are woken.
        assert!(rounds_are_kept(&SpinBarrier::new(2), 2, 30, Some(SPIN * 3)));
        // More threads than cores: no spin, every waiter sleeps.
        let sleeping = SpinBarrier::with_spin(2, Duration::ZERO);
        assert!(rounds_are_kept(&sleeping, 2, 500, None));
    }

    #[test]
    fn a_barrier_that_holds_nobody_is_caught() {
        // The companion: sized for one thread, the barrier lets each of two through at
        // once, and a thread sees a round's sum before the other has added to it (thread 0
        // sleeps every seventh round, so the other runs ahead).
        let b = SpinBarrier::new(1);
        assert!(!rounds_are_kept(&b, 2, 70, Some(Duration::from_millis(2))));
    }
}
