//! The fabric: the switch-agnostic foundation (issue 24, items 3-5) and the network of
//! cycle-level MMUs built on it.
//!
//! - [`topology`]: the ns-3 data-centre topology file (HPCC, ns3-datacenter), failed links;
//! - [`generate`]: leaf-spine, three-layer Clos and k-ary fat-tree from a few keys;
//! - [`routing`]: shortest paths from every switch to every host, ECMP by a hash of the
//!   5-tuple with a per-switch seed;
//! - [`flows`]: the ns-3 flow file;
//! - [`cdf`]: flow size distributions (the workload CDF files under `data/`);
//! - [`workload`]: Poisson arrivals at a load, fan-in bursts, permutation, all-to-all;
//! - [`units`], [`input`]: ns-3's rate and time strings; bounded reads and the error style;
//! - [`network`]: the network of cycle-level MMUs (issue 24, items 1, 2, 6, 7): one
//!   `hw_model::Mmu` per switch, links carrying cells and PFC frames as timed messages
//!   ([`link`]), hosts' NICs and sinks, the event-driven cycle loop; [`report`]: its
//!   summary, checks and `fct.txt`; [`deadlock`]: the PFC deadlock detector;
//!   [`transport`]: the hosts' transports (open loop, TCP, DCTCP, DCQCN, HPCC, PowerTCP)
//!   with their ACKs and CNPs (and the switches' ECM frames) sent through the fabric;
//!   [`trace`]: each switch's golden-model event stream and its check scenario; `waves`:
//!   one waveform with a scope per switch;
//!   `parallel`: the loop over partitions of the switches, one thread each, with the
//!   same results (summaries, event streams, waveforms) for any number; `ranks` (feature
//!   `mpi`): the same partitions as MPI ranks, with the same results; [`memory`]: a run's
//!   peak memory, estimated before it is built.
//!
//! - [`build`]: a network scenario (`[fabric]`) turned into its network and run options,
//!   for `mmu-sim run`, the sweep engine and the reproductions alike; `headroom`: its
//!   check, with `run.expect_lossless`, of every lossless ingress queue against the
//!   packets its headroom was sized for.
//!
//! Every reader returns a typed error naming the line and field and the allowed values
//! ([`input::FieldError`]); a command line turns it into exit 2. See `docs/fabric.md`.
//!
//! Line numbers in the doc comments cite alibaba-edu/High-Precision-Congestion-Control at
//! commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be ("HPCC", `simulation/scratch/third.cc`
//! and `simulation/src/point-to-point/model/`) and inet-tub/ns3-datacenter at commit
//! 6ddb4a40f4db1c22f53bcf7d341f9da621d27816 ("ns3-datacenter", under
//! `simulator/ns-3.39/`).

mod barrier;
pub mod build;
pub mod cdf;
pub mod deadlock;
mod due;
pub mod flows;
pub mod generate;
mod headroom;
pub mod input;
pub mod link;
pub mod memory;
pub mod network;
mod parallel;
#[cfg(feature = "mpi")]
mod ranks;
pub mod report;
pub mod routing;
mod switch;
pub mod topology;
pub mod trace;
pub mod transport;
pub mod units;
mod waves;
pub mod workload;

pub use network::{BuildError, Network, RunOptions};
pub use report::FabricSummary;
pub use switch::SwitchError;
