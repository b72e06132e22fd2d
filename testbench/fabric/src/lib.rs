//! The fabric's foundation: the switch-agnostic parts a network of cycle-level MMUs is built
//! on (issue 24, items 3-5).
//!
//! - [`topology`]: the ns-3 data-centre topology file (HPCC, ns3-datacenter), failed links;
//! - [`generate`]: leaf-spine, three-layer Clos and k-ary fat-tree from a few keys;
//! - [`routing`]: shortest paths from every switch to every host, ECMP by a hash of the
//!   5-tuple with a per-switch seed;
//! - [`flows`]: the ns-3 flow file;
//! - [`cdf`]: flow size distributions (the workload CDF files under `data/`);
//! - [`workload`]: Poisson arrivals at a load, fan-in bursts, permutation, all-to-all.
//!
//! Every reader returns a typed error naming the line and field and the allowed values; a
//! command line turns it into exit 2. See `docs/fabric.md`.

pub mod cdf;
pub mod flows;
pub mod generate;
pub mod input;
pub mod routing;
pub mod topology;
pub mod units;
pub mod workload;
