//! One switch's run: [`Sim`] clocks the `hw-model` MMU with the `stimulus` engines around it,
//! a monitor/scoreboard pair checks it, and it writes the summary, waveforms, traces and
//! ns-3-style outputs. A new output of a run goes here; a network of switches would be a
//! crate beside this one.
//!
//! [`Sim`] builds everything from a [`Scenario`](scenario::Scenario) and runs it, so tests
//! and other tools can drive the model without the command line:
//!
//! ```no_run
//! use scenario::{builtin, Overrides};
//! use switch_run::Sim;
//! let scenario = builtin::load("small-smoke").unwrap();
//! let mut sim = Sim::new(&scenario, Overrides::default()).unwrap();
//! let summary = sim.run(|_cycles_done| {}).unwrap();
//! assert!(summary.ok(), "{summary}");
//! ```

pub mod csv_file;
pub mod events;
pub mod monitor;
pub mod ns3;
pub mod scoreboard;
pub mod sim;
pub mod summary;
pub mod trace;
pub mod waves;

pub use sim::{RunError, Sim};
pub use summary::Summary;
