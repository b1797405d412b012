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
//! Layout, the same in every adapter: `driver` (the loader's entry points
//! and thin owning wrappers), `conv` (value and error translation), and one
//! module per object: `device` (platforms and devices), `context`, `queue`
//! (command submission, USM commands, async allocation and free), `event`,
//! `memory` (blocking USM, USM pools, the engine's memory source). Each
//! holds its objects' traits of `ur_core::hal`: the C surface is
//! `ur_core`'s, written once for every adapter; arguments arrive checked,
//! and nothing here reads C memory.

#![allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments)]
// Level Zero handles are opaque pointers that only the driver reads.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod context;
pub mod conv;
pub mod device;
pub mod driver;
pub mod event;
pub mod memory;
pub mod queue;

use context::Context;
use device::{Device, Platform};
use event::Event;
use memory::UsmPool;
use queue::Queue;
use ur_core::abi::ur_dditable_t;
use ur_core::adapter::AdapterSlot;
use ur_core::hal::{self, NoKernel, NoProgram};
use ur_core::UR_BACKEND_LEVEL_ZERO;

static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_LEVEL_ZERO, "LEVEL_ZERO");

/// This backend's marker type.
pub struct LevelZero;

impl ur_core::adapter::Backend for LevelZero {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}

/// The drivers this adapter serves build no modules: programs and kernels
/// are the core's unsupported defaults.
impl hal::Backend for LevelZero {
    type Platform = Platform;
    type Device = Device;
    type Context = Context;
    type Queue = Queue;
    type Event = Event;
    type Pool = UsmPool;
    type Program = NoProgram;
    type Kernel = NoKernel;
}

/// The adapter's full dispatch table: the C surface of `ur_core::api` for
/// this backend. Every handle this adapter makes points at it from offset 0.
pub static DDI: ur_dditable_t = ur_core::api::ddi_table::<LevelZero>();

ur_core::export_ddi_getters!(DDI);
