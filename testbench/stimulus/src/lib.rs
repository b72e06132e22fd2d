//! The traffic engines of the testbench: what plays a scenario's flows into the switch and
//! answers for the hosts and links around it. Each engine takes the validated parameters a
//! [`scenario::Plan`] holds (`scenario::params`) and knows nothing of the run that clocks it
//! (`switch-run`): a new transport goes here, its parameters into `scenario::params`.

pub mod dcqcn;
pub mod hpcc;
pub mod int_cc;
pub mod link_partner;
pub mod packet_run;
pub mod powertcp;
pub mod rdma_nic;
pub mod reaction_point;
pub mod sink;
pub mod source;
pub mod tcp;
pub mod timeline;
