//! Every case, one file per UR object. A new file adds its `CASES` here.

use crate::harness::Case;

pub mod adapter;
pub mod context;
pub mod device;
pub mod enqueue;
pub mod event;
pub mod loader;
pub mod platform;
pub mod queue;
pub mod unsupported;
pub mod usm;

/// All cases, in the order they run.
pub fn all() -> Vec<&'static Case> {
    [
        loader::CASES,
        adapter::CASES,
        platform::CASES,
        device::CASES,
        context::CASES,
        queue::CASES,
        event::CASES,
        usm::CASES,
        enqueue::CASES,
        unsupported::CASES,
    ]
    .into_iter()
    .flatten()
    .collect()
}
