//! The C ABI of Unified Runtime 0.12: every type, enumerator, struct layout and
//! DDI table, as `#[repr(C)]` Rust. cbindgen reads this module to write
//! `include/ur_api.h` and `include/ur_ddi.h`.
//!
//! Enumerations are `#[repr(transparent)]` newtypes over their integer rather
//! than Rust enums: a C caller may pass any value, and an out-of-range Rust
//! enum would be undefined behaviour before we could reject it.

pub mod ddi;
#[macro_use]
pub mod entry_points;
pub mod null_checks;
pub mod prototypes;
pub mod types;

pub use ddi::*;
pub use entry_points::LOADER_ONLY_ENTRY_POINTS;
pub use types::*;

/// The API version this implementation speaks.
pub const UR_API_VERSION_IMPLEMENTED: ur_api_version_t = UR_API_VERSION_0_12;

/// `UR_MAKE_VERSION` of the reference header.
pub const fn make_version(major: u32, minor: u32) -> u32 {
    (major << 16) | (minor & 0xffff)
}

const _: () = assert!(UR_API_VERSION_0_12.0 == make_version(0, 12));
const _: () = assert!(core::mem::size_of::<ur_result_t>() == 4);
const _: () = assert!(core::mem::size_of::<ur_bool_t>() == 1);
