//! Integer keys through the command line: a full 64-bit seed through a file and back (the
//! keys' own tests are `scenario`'s).

use crate::common::mmu_sim;

/// A seed of 2^64 - 1 through a file, as a decimal or a hexadecimal string, runs as
/// `--seed` does, and the summary JSON gives it back whole.
#[test]
fn a_full_u64_seed_goes_through_a_file_and_back() {
    let dir = std::env::temp_dir().join(format!("mmu-sim-seed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = scenario::builtin::find("poisson-cdf")
        .unwrap()
        .toml()
        .replace("cycles = 200_000", "cycles = 20_000");
    let run = |seed_line: &str, args: &[&str]| {
        let file = dir.join("seed.toml");
        std::fs::write(&file, text.replace("seed = 11", seed_line)).unwrap();
        let json = dir.join("s.json");
        let mut all = vec!["run", file.to_str().unwrap(), "--summary-json"];
        all.push(json.to_str().unwrap());
        all.extend(args);
        let o = mmu_sim(&all);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v.as_object_mut().unwrap().remove("run");
        v
    };
    let decimal = run("seed = \"18446744073709551615\"", &[]);
    assert_eq!(decimal["seed"].as_u64(), Some(u64::MAX));
    assert_eq!(run("seed = \"0xFFFF_FFFF_FFFF_FFFF\"", &[]), decimal);
    assert_eq!(
        run("seed = 1", &["--seed", "18446744073709551615"]),
        decimal
    );
    let back = format!("seed = \"{}\"", decimal["seed"]);
    assert_eq!(run(&back, &[]), decimal);
    assert_ne!(run("seed = 9223372036854775807", &[]), decimal);
    std::fs::remove_dir_all(&dir).unwrap();
}
