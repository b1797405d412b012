//! Level Zero bindings: the subset of `ze_api.h`/`ze_ddi.h` (Debian `libze-dev`,
//! API 1.4) that this project's adapter and host driver use. No linking: the
//! adapter opens the loader at run time and the driver is called by it.
//!
//! `types.rs` is written by hand; `generated.rs` comes from the headers via
//! `generate.py`. `tests/abi.rs` compares both with what gcc says about the
//! headers.
#![no_std]

mod generated;
mod types;

pub use generated::*;
pub use types::*;
