//! Testbench for the `hw-model` MMU: stimulus, link partners, downstream sinks, a
//! monitor/scoreboard pair, scenario files and the `mmu-sim` command line.
//!
//! [`Sim`] builds everything from a [`Scenario`] and runs it, so tests and other tools can
//! drive the model without the command line:
//!
//! ```no_run
//! use testbench::{builtin, Overrides, Sim};
//! let scenario = builtin::load("small-smoke").unwrap();
//! let mut sim = Sim::new(&scenario, Overrides::default()).unwrap();
//! let summary = sim.run(|_cycles_done| {}).unwrap();
//! assert!(summary.ok(), "{summary}");
//! ```

pub mod builtin;
pub mod csv_file;
pub mod dcqcn;
pub mod events;
pub mod int_keys;
pub mod link_partner;
pub mod monitor;
pub mod ns3;
pub mod packet_run;
pub mod reaction_point;
pub mod reproduce;
pub mod scenario;
pub mod scenario_file;
pub mod scoreboard;
pub mod sim;
pub mod sink;
pub mod source;
pub mod summary;
pub mod sweep;
pub mod tcp;
pub mod timeline;
pub mod trace;
pub mod waves;

pub use scenario::{Overrides, Plan, Scenario, ScenarioError};
pub use sim::{RunError, Sim};
pub use summary::Summary;
