//! Every integration test of the model, in one binary (one link per crate).

mod datapath;
mod ecn;
mod events;
mod import_graph;
mod phase_order;
mod reference_model;
