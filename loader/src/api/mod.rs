//! Entry points the loader answers itself: its config objects, init and
//! tear-down, and the calls that carry no handle to dispatch on.

mod adapter;
pub mod config;
mod init;
mod selector;

/// Bodies of list entry points that have no handle to dispatch on.
pub mod by_hand {
    pub use super::adapter::urAdapterGet;
}
