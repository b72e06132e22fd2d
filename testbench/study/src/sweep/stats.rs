//! The statistics of sweeps and reproductions, in one place: mean, population variance and
//! standard deviation, nearest-rank percentiles and Jain's fairness index.

/// Mean and population variance of `xs` (0, 0 when empty): `sum x / n` and
/// `sum (x - mean)^2 / n`.
fn moments(xs: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = xs.clone().count() as f64;
    if n == 0.0 {
        return (0.0, 0.0);
    }
    let mean = xs.clone().sum::<f64>() / n;
    let var = xs.map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var)
}

/// Mean of `xs` (0 when empty).
pub fn mean(xs: impl Iterator<Item = f64> + Clone) -> f64 {
    moments(xs).0
}

/// Mean and population standard deviation of `xs` (0, 0 when empty).
pub fn mean_std(xs: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let (mean, var) = moments(xs);
    (mean, var.sqrt())
}

/// Population variance of `xs` (0 when empty).
pub fn variance(xs: &[f64]) -> f64 {
    moments(xs.iter().copied()).1
}

/// The nearest-rank `q` percentile (0 < q <= 1) of `xs`, which it sorts: the smallest
/// value with at least `q n` values at or below it; 0 if empty.
pub fn percentile(xs: &mut [f64], q: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

/// Jain's fairness index of `xs`: `(sum x)^2 / (n sum x^2)`, from `1/n` (one takes all) to
/// 1 (all equal); 1 when every value is 0.
pub fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (xs.len() as f64 * s2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_variance_and_std() {
        assert_eq!(mean_std([1.0, 3.0].into_iter()), (2.0, 1.0));
        assert_eq!(mean_std(std::iter::empty()), (0.0, 0.0));
        assert_eq!(variance(&[1.0, 3.0]), 1.0);
        assert_eq!(variance(&[]), 0.0);
        assert_eq!(variance(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]), 4.0);
        assert_eq!(mean([2.0, 4.0, 9.0].into_iter()), 5.0);
        assert_eq!(mean(std::iter::empty()), 0.0);
        // The sum is taken before the division: the same bits as the reproductions had.
        let xs = [0.1, 0.2, 0.3];
        assert_eq!(mean(xs.into_iter()), (0.1 + 0.2 + 0.3) / 3.0);
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut xs: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(percentile(&mut xs, 0.99), 99.0);
        assert_eq!(percentile(&mut xs, 0.5), 50.0);
        assert_eq!(percentile(&mut xs, 1.0), 100.0);
        assert_eq!(percentile(&mut xs, 0.001), 1.0, "rank at least 1");
        assert_eq!(percentile(&mut [7.0, 3.0, 5.0], 0.5), 5.0);
        assert_eq!(percentile(&mut [3.0, 1.0], 0.5), 1.0, "the lower of two");
        assert_eq!(percentile(&mut [], 0.99), 0.0);
        // A percentile is a value of the data, and never below a smaller percentile.
        let mut data = [4.5, -1.0, 3.25, 8.0, 0.0, 2.5, 8.0];
        let mut last = f64::NEG_INFINITY;
        for q in [0.1, 0.25, 0.5, 0.75, 0.9, 1.0] {
            let p = percentile(&mut data, q);
            assert!(data.contains(&p) && p >= last, "q {q}: {p}");
            last = p;
        }
    }

    #[test]
    fn jain_index_bounds() {
        assert_eq!(jain(&[5.0, 5.0]), 1.0);
        assert_eq!(jain(&[1.0, 0.0]), 0.5);
        assert_eq!(jain(&[1.0, 0.0, 0.0, 0.0]), 0.25, "one of n takes all: 1/n");
        assert_eq!(jain(&[0.0, 0.0]), 1.0);
        assert!((jain(&[1.0, 2.0, 3.0]) - 36.0 / 42.0).abs() < 1e-15);
    }
}
