//! Tests of the pools with real host memory, and randomised tests of the
//! whole engine (`property`, `stress`).

mod placement;
mod pool;
mod property;
mod stress;
mod vm;
