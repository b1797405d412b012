//! Test helpers: a small deterministic PRNG (no extra dependency).

/// xorshift64* seeded through splitmix64; good enough to drive random tests.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((self.next() >> 32) * n) >> 32
    }

    pub(crate) fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() {
            None
        } else {
            Some(&items[self.below(items.len() as u64) as usize])
        }
    }
}

/// A list of `(base, len, value)` ranges: what the range maps are checked
/// against.
pub(crate) type Ranges = Vec<(usize, usize, u32)>;

/// A map of address ranges under a randomised test ([`random_ranges`]).
pub(crate) trait RangeModel {
    fn insert(&mut self, base: usize, len: usize, value: u32) -> Option<u32>;
    fn remove(&mut self, base: usize) -> Option<u32>;
    /// Checks every lookup at `probes` against `truth`.
    fn agrees(&self, truth: &[(usize, usize, u32)], probes: &mut dyn Iterator<Item = usize>);
}

/// `impl RangeModel for $map` through its own `insert` and `remove` and the
/// test module's `agrees(map, truth, probes)`.
macro_rules! range_model {
    ($map:ty) => {
        impl $crate::engine::testkit::RangeModel for $map {
            fn insert(&mut self, base: usize, len: usize, value: u32) -> Option<u32> {
                <$map>::insert(self, base, len, value)
            }
            fn remove(&mut self, base: usize) -> Option<u32> {
                <$map>::remove(self, base)
            }
            fn agrees(&self, truth: &[(usize, usize, u32)], probes: &mut dyn Iterator<Item = usize>) {
                agrees(self, truth, probes)
            }
        }
    };
}
pub(crate) use range_model;

/// `steps` random steps on `m`, checked against a plain list (returned):
/// half remove a listed range by its base (after `base + interior` is
/// refused), half insert the range `draw` gives where it overlaps none.
/// Every 64 steps, 60 addresses below `probe_end` are looked up; at the
/// end, every range's edges.
pub(crate) fn random_ranges(
    m: &mut impl RangeModel,
    rng: &mut Rng,
    steps: u32,
    interior: usize,
    probe_end: u64,
    mut draw: impl FnMut(&mut Rng) -> (usize, usize),
) -> Ranges {
    let mut truth = Ranges::new();
    for step in 0..steps {
        let (base, len) = draw(rng);
        let free = truth.iter().all(|&(b, l, _)| base + len <= b || b + l <= base);
        if rng.chance(2) {
            if let Some((b, _, v)) = rng.pick(&truth).copied() {
                // An interior address never removes.
                assert_eq!(m.remove(b + interior), None);
                assert_eq!(m.remove(b), Some(v));
                truth.retain(|t| t.0 != b);
            }
        } else if free {
            assert_eq!(m.insert(base, len, step), None);
            truth.push((base, len, step));
        }
        if step % 64 == 0 {
            m.agrees(&truth, &mut (0..60).map(|_| rng.below(probe_end) as usize));
        }
    }
    m.agrees(&truth, &mut truth.iter().flat_map(|&(b, l, _)| [b, b + l - 1, b + l]));
    truth
}
