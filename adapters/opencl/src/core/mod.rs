//! The objects behind the handles, in safe Rust over `opencl3`/`cl3`.

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
pub mod usm_exp;
