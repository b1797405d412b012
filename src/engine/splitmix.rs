//! SplitMix64, the generator of `ur_bench`'s scenario 5 (random sizes under
//! a live-byte budget). It lives here so that the benchmark
//! (`bench/src/scenarios/mixed.rs`), the engine's example
//! (`examples/engine_bench.rs`) and the engine's tests (`tests/vm.rs`) draw
//! scenario 5's sequence from one definition.

/// A small deterministic generator: the same sequence for the same seed.
/// Its calls are `#[inline]`: the benchmarks draw from it inside timed
/// loops, from other crates.
pub struct SplitMix64(u64);

impl SplitMix64 {
    #[inline]
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
