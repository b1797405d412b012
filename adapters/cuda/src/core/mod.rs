//! The adapter's objects, safe Rust over the driver wrappers.

pub mod callback;
pub mod context;
pub mod device;
pub mod engine;
pub mod enqueue;
pub mod event;
pub mod kernel;
pub mod platform;
pub mod program;
pub mod queue;
pub mod usm;
pub mod usm_pool;
pub mod vmm;
