//! Entry points the loader answers itself: its config objects, init and
//! tear-down, and the calls that carry no handle to dispatch on.

mod adapter;
mod config;
mod init;
mod selector;
