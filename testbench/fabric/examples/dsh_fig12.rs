//! DSH's Fig. 12 on the network of MMUs, small scale: `cargo run --release -p fabric
//! --example dsh_fig12 -- [sih|dsh|l2bm] [fan-in 1-15] [microseconds] [buffer MiB]`. Prints the summary
//! (with the deadlock, if one forms, and the run's speed).

use fabric::deadlock::DeadlockOptions;
use fabric::flows::Flow;
use fabric::generate::LeafSpine;
use fabric::routing::Ecmp;
use fabric::transport::Transports;
use fabric::units::Picos;
use fabric::{Network, RunOptions};
use hw_model::{Policy, SwitchConfig};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let policy = match Policy::parse(&arg(0, "sih")) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("policy: {e}");
            return ExitCode::from(2);
        }
    };
    let (Ok(fan_in @ 1..=15), Ok(us @ 1..), Ok(mib @ 1..=1024)) = (
        arg(1, "8").parse::<u32>(),
        arg(2, "200").parse::<u64>(),
        arg(3, "4").parse::<u64>(),
    ) else {
        eprintln!(
            "fan-in: allowed 1..=15; microseconds: allowed 1 or more; buffer MiB: allowed 1..=1024"
        );
        return ExitCode::from(2);
    };
    let mut topo = LeafSpine::dsh().build().expect("the preset builds");
    // Hosts 0-63, leaves L0-L3 = 64-67, spines S0, S1 = 68, 69: fail S0-L3 and S1-L0.
    topo.fail_links(&[(68, 67), (69, 64)])
        .expect("both are links");
    let mut flows = Vec::new();
    for (from, to) in [(0, 3), (3, 0), (1, 2), (2, 1)] {
        for s in 1..=fan_in {
            flows.push(Flow {
                src: from * 16 + s,
                dst: to * 16,
                pg: 3,
                dport: 100,
                size: 100_000_000,
                start: Picos(0),
            });
        }
    }
    let cfg = SwitchConfig {
        policy,
        lossless_priorities: vec![3],
        buffer_bytes: mib << 20,
        ..SwitchConfig::tomahawk()
    };
    let mut net = match Network::new(
        topo,
        &flows,
        Ecmp { fabric_seed: 1 },
        &Transports::open_loop(),
        |_| cfg.clone(),
    ) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let opts = RunOptions {
        end_cycle: us * 1000,
        deadlock: DeadlockOptions::default(),
        stop_at_deadlock: false,
        threads: 1,
        horizon_error: 0,
    };
    match net.run(&opts) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("switch {}: {}", e.switch, e.error.what);
            ExitCode::FAILURE
        }
    }
}
