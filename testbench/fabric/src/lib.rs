//! The fabric's foundation: the switch-agnostic parts a network of cycle-level MMUs is built
//! on (issue 24, items 3-5).
//!
//! - [`topology`]: the ns-3 data-centre topology file (HPCC, ns3-datacenter), failed links;
//! - [`generate`]: leaf-spine, three-layer Clos and k-ary fat-tree from a few keys;
//! - [`routing`]: shortest paths from every switch to every host, ECMP by a hash of the
//!   5-tuple with a per-switch seed;
//! - [`flows`]: the ns-3 flow file;
//! - [`cdf`]: flow size distributions (the workload CDF files under `data/`);
//! - [`workload`]: Poisson arrivals at a load, fan-in bursts, permutation, all-to-all;
//! - [`units`], [`input`]: ns-3's rate and time strings; bounded reads and the error style.
//!
//! Every reader returns a typed error naming the line and field and the allowed values
//! ([`input::FieldError`]); a command line turns it into exit 2. See `docs/fabric.md`.
//!
//! Line numbers in the doc comments cite alibaba-edu/High-Precision-Congestion-Control at
//! commit 9f4be2a9ead8a90e8bf732c66bd758c00e58e5be ("HPCC", `simulation/scratch/third.cc`
//! and `simulation/src/point-to-point/model/`) and inet-tub/ns3-datacenter at commit
//! 6ddb4a40f4db1c22f53bcf7d341f9da621d27816 ("ns3-datacenter", under
//! `simulator/ns-3.39/`).

pub mod cdf;
pub mod flows;
pub mod generate;
pub mod input;
pub mod routing;
pub mod topology;
pub mod units;
pub mod workload;
