//! `libur_adapter_level_zero.so.0`: Unified Runtime 0.12 over Level Zero.
//!
//! It opens Intel's Level Zero loader (`libze_loader.so.1`) at run time, so
//! it builds and loads anywhere; without the loader or a driver it reports
//! zero platforms. Every Level Zero driver is a UR platform and each of its
//! devices a UR device. A queue is one immediate command list; every command
//! signals a Level Zero event from the context's event pools, which is how
//! UR events, profiling and the async pool engine learn of its completion.
//! The drivers this adapter is tested on build no modules, so programs and
//! kernels are left to the core's unsupported defaults.
//!
//! Layout: `driver` (the loader's entry points and thin owning wrappers),
//! `core/<object>.rs` (the objects), `hal` (the backend traits of
//! `ur_core::hal` over them: the C surface is `ur_core`'s, written once for
//! every adapter), `conv` (value and error translation).

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// Level Zero handles are opaque pointers that only the driver reads.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod conv;
pub mod core;
pub mod driver;
mod hal;

pub use hal::LevelZero;

use ur_core::abi::ur_dditable_t;

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend. Every handle this adapter makes points at it from offset 0.
pub static DDI: ur_dditable_t = ur_core::api::ddi_table::<LevelZero>();

ur_core::export_ddi_getters!(DDI);
