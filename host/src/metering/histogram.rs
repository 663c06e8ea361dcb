//! A fixed histogram of call durations, from which the savings report reads its percentiles.
//!
//! The report used to keep every call's duration, which grows without bound in a proxy that
//! runs for weeks. The histogram's memory is fixed from its creation, however many calls it
//! records.

use std::fmt;

/// The relative error of a reported percentile: 1%.
const ALPHA: f64 = 0.01;

/// Bucket `i` ends at `MIN_MS · GAMMA^i`; `GAMMA = (1 + α) / (1 − α)`, so the midpoint
/// `2 · end / (GAMMA + 1)` is within α of every value of the bucket.
const GAMMA: f64 = (1.0 + ALPHA) / (1.0 - ALPHA);

/// The low end of the covered range: 100 ns.
const MIN_MS: f64 = 1e-4;

/// How many buckets cover `MIN_MS` to 10,000,000 ms (about 2.8 hours):
/// `ceil(ln(1e7 / MIN_MS) / ln GAMMA)`, plus bucket 0 for everything at or under `MIN_MS`.
pub(crate) const BUCKETS: usize = 1_268;

/// Durations in milliseconds, counted in log-spaced buckets.
///
/// # Error bound
///
/// A percentile read from it ([`Histogram::percentile`]) is within 1% of the exact
/// nearest-rank percentile of the recorded values, for values from 100 ns to 10,000,000 ms
/// (floating-point rounding at a bucket's edge may add a few parts in a million). Below
/// 100 ns the error is under 100 ns; above 10,000,000 ms a value counts as that much. Every
/// answer is clamped to the smallest and largest value recorded, which are kept exactly, as is
/// the sum.
///
/// # Memory
///
/// [`BUCKETS`] counters, allocated once (about 10 KB), whatever the number of calls.
#[derive(Clone)]
pub(crate) struct Histogram {
    counts: Box<[u64]>,
    total: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            counts: vec![0; BUCKETS].into_boxed_slice(),
            total: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl fmt::Debug for Histogram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("total", &self.total)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl Histogram {
    /// Counts one duration. A negative or NaN duration counts as 0.
    pub(crate) fn record(&mut self, ms: f64) {
        let ms = if ms.is_nan() { 0.0 } else { ms.max(0.0) };
        self.counts[bucket_of(ms)] += 1;
        self.total += 1;
        self.sum += ms;
        self.min = self.min.min(ms);
        self.max = self.max.max(ms);
    }

    /// Adds every duration `other` counted.
    pub(crate) fn merge(&mut self, other: &Histogram) {
        for (count, more) in self.counts.iter_mut().zip(other.counts.iter()) {
            *count += more;
        }
        self.total += other.total;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The sum of every duration counted.
    pub(crate) fn sum(&self) -> f64 {
        self.sum
    }

    /// The nearest-rank percentile `pct` (0 to 100), within the bound in the type's docs; 0
    /// when nothing was counted.
    pub(crate) fn percentile(&self, pct: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((pct / 100.0) * self.total as f64).ceil() as u64;
        let rank = rank.clamp(1, self.total);
        let mut seen = 0;
        for (i, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return midpoint(i).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// How many counters the histogram holds (the same from creation on).
    #[cfg(test)]
    pub(crate) fn buckets(&self) -> usize {
        self.counts.len()
    }
}

/// The bucket of a duration: 0 at or under `MIN_MS`; `i` for `MIN_MS · GAMMA^(i−1) < ms ≤
/// MIN_MS · GAMMA^i`; the last one from 10,000,000 ms up.
fn bucket_of(ms: f64) -> usize {
    if ms <= MIN_MS {
        return 0;
    }
    let i = ((ms / MIN_MS).ln() / GAMMA.ln()).ceil();
    (i as usize).min(BUCKETS - 1)
}

/// The value a bucket stands for: the point within α of both of its ends.
fn midpoint(i: usize) -> f64 {
    if i == 0 {
        return MIN_MS / 2.0;
    }
    let end = MIN_MS * GAMMA.powi(i as i32);
    2.0 * end / (GAMMA + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The high end of the covered range.
    const MAX_MS: f64 = 1e7;

    /// The exact nearest-rank percentile of sorted values, as the report computed it before.
    fn exact(sorted: &[f64], pct: f64) -> f64 {
        let rank = ((pct / 100.0) * sorted.len() as f64).ceil() as usize;
        sorted[rank.clamp(1, sorted.len()) - 1]
    }

    fn within_bound(estimate: f64, exact: f64) -> bool {
        (estimate - exact).abs() <= exact * (ALPHA + 1e-6)
    }

    #[test]
    fn the_bucket_count_covers_the_range() {
        let needed = ((MAX_MS / MIN_MS).ln() / GAMMA.ln()).ceil() as usize + 1;
        assert_eq!(BUCKETS, needed);
        assert_eq!(bucket_of(MAX_MS), BUCKETS - 1);
        assert_eq!(bucket_of(f64::MAX), BUCKETS - 1);
    }

    #[test]
    fn memory_stays_fixed_over_a_million_calls() {
        let mut histogram = Histogram::default();
        assert_eq!(histogram.buckets(), BUCKETS);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..1_000_000 {
            // xorshift: durations spread from about 1 µs to 1 s.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            histogram.record(10f64.powf((state % 6_000) as f64 / 1_000.0 - 3.0));
        }
        assert_eq!(histogram.buckets(), BUCKETS);
        assert_eq!(histogram.total, 1_000_000);
    }

    #[test]
    fn percentiles_of_known_data_are_within_one_percent() {
        let mut histogram = Histogram::default();
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        for v in &values {
            histogram.record(*v);
        }
        for pct in [50.0, 99.0] {
            let (estimate, exact) = (histogram.percentile(pct), exact(&values, pct));
            assert!(
                within_bound(estimate, exact),
                "p{pct}: {estimate} vs {exact}"
            );
        }
        assert_eq!(histogram.sum(), 5050.0);
    }

    #[test]
    fn percentiles_of_spread_data_are_within_one_percent() {
        // From 100 ns to 100 s, log-uniform, in a scrambled order.
        let mut values: Vec<f64> = (0..20_000)
            .map(|i| 10f64.powf(((i * 7_919) % 20_000) as f64 / 2_500.0 - 4.0))
            .collect();
        let mut histogram = Histogram::default();
        for v in &values {
            histogram.record(*v);
        }
        values.sort_by(f64::total_cmp);
        for pct in [1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            let (estimate, exact) = (histogram.percentile(pct), exact(&values, pct));
            assert!(
                within_bound(estimate, exact),
                "p{pct}: {estimate} vs {exact}"
            );
        }
    }

    #[test]
    fn one_value_and_no_value_are_exact() {
        let mut histogram = Histogram::default();
        assert_eq!(histogram.percentile(50.0), 0.0);
        histogram.record(7.0);
        assert_eq!(histogram.percentile(50.0), 7.0);
        assert_eq!(histogram.percentile(99.0), 7.0);
        let mut zeros = Histogram::default();
        zeros.record(0.0);
        zeros.record(-1.0);
        zeros.record(f64::NAN);
        assert_eq!(zeros.percentile(99.0), 0.0);
    }

    #[test]
    fn merged_histograms_answer_as_one() {
        let (mut a, mut b, mut both) = (
            Histogram::default(),
            Histogram::default(),
            Histogram::default(),
        );
        for i in 1..=500 {
            let v = f64::from(i) * 0.013;
            if i % 3 == 0 { &mut a } else { &mut b }.record(v);
            both.record(v);
        }
        a.merge(&b);
        for pct in [50.0, 99.0] {
            assert_eq!(a.percentile(pct), both.percentile(pct));
        }
        assert!((a.sum() - both.sum()).abs() < 1e-9);
    }
}
