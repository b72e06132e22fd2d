//! `reproduce dsh-theorem` on a few small points: the model's first PAUSE of the bursting
//! queues lands where DSH Theorems 1-2 put it, within the error packet granularity
//! explains, and the CSV has the header.

use hw_model::Policy;
use study::reproduce::dsh_theorem::{self, granularity_bound, measure_all, Case, Point};
use study::reproduce::NoProgress;

const MB: u64 = 1 << 20;
const KB: u32 = 1 << 10;

fn point(policy: Policy, n: u32, m: u32, r: f64, alpha_log2: i32) -> Point {
    Point {
        policy,
        n,
        m,
        r,
        alpha_log2,
        buffer_bytes: MB,
        eta_bytes: 8 * KB,
        lossless_queues: 2,
    }
}

#[test]
fn first_pause_matches_the_theorems_on_small_points() {
    let points = [
        // Case 1, DSH (Eq. 16).
        point(Policy::Dsh, 1, 1, 2.0, -1),
        // Case 1 by the corrected boundary, case 2 by the printed one.
        point(Policy::Dsh, 2, 2, 2.0, 0),
        // Case 2, SIH (Eq. 21, t_2).
        point(Policy::Sih, 2, 2, 4.0, 0),
    ];
    let dir = std::env::temp_dir().join(format!("dsh-theorem-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let outcomes = measure_all(&dir.join("sweep"), &points, &mut NoProgress).unwrap();
    for o in &outcomes {
        let bound = granularity_bound(&o.point, &o.prediction);
        assert!(bound < 0.05, "{:?}: bound {bound}", o.point);
        assert!(
            o.rel_error().abs() <= bound,
            "{:?}: predicted {} ns, measured {} ns, error {} > bound {bound}",
            o.point,
            o.prediction.ns,
            o.measured_ns,
            o.rel_error()
        );
        // The PAUSE frame leaves within a few frame times of the QOFF decision.
        assert!(o.transmitted_ns - o.measured_ns < 20.0, "{o:?}");
    }
    assert_eq!(outcomes[0].prediction.case, Case::One);
    assert_eq!(outcomes[2].prediction.case, Case::Two);
    // The paper's printed boundary would pick Eq. 19 here; the model follows Eq. 16.
    let disputed = &outcomes[1];
    assert_eq!(disputed.prediction.case, Case::One);
    assert_eq!(disputed.prediction.printed_case, Case::Two);
    let printed_err =
        (disputed.measured_ns - disputed.prediction.printed_ns) / disputed.prediction.printed_ns;
    assert!(printed_err.abs() > 0.2, "{disputed:?}");

    std::fs::create_dir_all(&dir).unwrap();
    dsh_theorem::write_csv(&dir, &outcomes).unwrap();
    let csv = std::fs::read_to_string(dir.join("theorem.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("policy,N,M,R,alpha,buffer_bytes,eta_bytes,predicted_ns,measured_ns,rel_error")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), points.len());
    assert!(rows.iter().all(|r| r.len() == 10), "{csv}");
    assert_eq!(
        rows[0][..7],
        ["dsh", "1", "1", "2", "0.5", "1048576", "8192"]
    );

    dsh_theorem::write_plot(&dir, &outcomes).unwrap();
    let png = std::fs::read(dir.join("theorem.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    let report = dsh_theorem::report(&outcomes);
    assert!(report.contains("0 outside 5 %"), "{report}");
}

#[test]
fn grid_covers_both_cases_policies_and_every_parameter() {
    let grid = dsh_theorem::grid();
    assert!(grid.len() >= 20);
    let cases = |policy| {
        grid.iter()
            .filter(|p| p.policy == policy)
            .map(|p| {
                let d = p.switch().build().unwrap();
                dsh_theorem::predict(p, &d).case
            })
            .collect::<Vec<_>>()
    };
    for policy in [Policy::Dsh, Policy::Sih] {
        let c = cases(policy);
        assert!(c.contains(&Case::One) && c.contains(&Case::Two));
    }
    let distinct = |f: &dyn Fn(&Point) -> String| {
        let mut v: Vec<String> = grid.iter().map(f).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    assert!(distinct(&|p| p.n.to_string()) >= 3);
    assert!(distinct(&|p| p.m.to_string()) >= 3);
    assert!(distinct(&|p| p.r.to_string()) >= 5);
    assert!(distinct(&|p| p.alpha_log2.to_string()) >= 4);
    assert!(distinct(&|p| p.buffer_bytes.to_string()) >= 4);
    assert!(distinct(&|p| p.eta_bytes.to_string()) >= 4);
}
