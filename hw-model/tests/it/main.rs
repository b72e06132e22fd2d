//! Every integration test of the model, in one binary (one link per crate).

mod accounting_names;
mod admission_stats;
mod datapath;
mod dwrr_rounds;
mod ecm_congestion_point;
mod ecn;
mod ecn_marker_registers;
mod events;
mod free_list_ring;
mod hcf_admission;
mod hcf_unit;
mod import_graph;
mod int_hop;
mod int_stamp_values;
mod l2bm_units;
mod pfc_generation;
mod phase_order;
mod policy_units;
mod queue_len_register;
mod reference_model;
mod wires;
