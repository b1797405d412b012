//! The objects behind the handles, over the loader's entry points in
//! `driver`.

pub mod context;
pub mod device;
pub mod engine;
pub mod enqueue;
pub mod event;
pub mod platform;
pub mod queue;
pub mod usm;
pub mod usm_pool;
