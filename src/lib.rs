//! Core of a Unified Runtime 0.12 compatible runtime.
//!
//! No backend lives here. The crate holds the C ABI (`abi`), the pieces every
//! adapter shares at the C boundary (`handle`, `info`, `boundary`, `ddi`), the
//! logger, the dispatcher of event callbacks (`event_callback`), the
//! asynchronous pool engine (`engine`) and what adapters share around it
//! (`usm_async`, `usm_pool`).

pub mod abi;
pub mod adapter;
/// cbindgen:ignore
pub mod api;
pub mod boundary;
pub mod context;
pub mod device;
pub mod ddi;
/// cbindgen:ignore
pub mod engine;
pub mod event;
/// cbindgen:ignore
pub mod event_callback;
/// cbindgen:ignore
pub mod extended_deleter;
/// cbindgen:ignore
pub mod hal;
pub mod handle;
pub mod info;
/// cbindgen:ignore
pub mod lock_order;
pub mod log;
pub mod mem;
/// cbindgen:ignore
pub mod partition;
pub mod peer;
pub mod poll;
pub mod pool;
pub mod program;
pub mod queue;
/// cbindgen:ignore
pub mod usm_align;
/// cbindgen:ignore
pub mod usm_async;
/// cbindgen:ignore
pub mod usm_pool;
/// cbindgen:ignore
pub mod usm_registry;
/// cbindgen:ignore
#[cfg(test)]
mod test_backend;

pub use abi::*;

/// The result of every inner function: `Err` carries the UR error code.
pub type UrResult<T = ()> = Result<T, ur_result_t>;
