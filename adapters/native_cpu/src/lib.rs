//! `libur_adapter_native_cpu.so.0`: the embedded default adapter of a
//! Unified Runtime 0.12 compatible runtime. The device is the host CPU, USM
//! is host memory, and commands run on worker threads owned by each queue;
//! there is no driver.
//!
//! The C surface is `ur_core`'s, written once for every adapter; each
//! object's module implements its backend trait of `ur_core::hal` beside the
//! object: the platform and devices in `device.rs`, then `context.rs`,
//! `queue/`, `event.rs` and `memory.rs` (USM pools). `driver.rs` is the host
//! below them, and `conv.rs` translates its values to UR's.
//!
//! # How the async pool engine plugs in
//!
//! - Each context has one engine graph (the core context's `engine`);
//!   each queue is a lane of it ([`queue::QueueShared::lane`]).
//! - Every command goes through [`queue::Queue::submit`], which records
//!   it on the lane under the queue's lock (its `seq` is its lane seq) and
//!   returns its event when one was asked for;
//!   [`event::Event::stamp`] names any event's command in the graph.
//!   Async allocations and frees go through
//!   [`queue::Queue::submit_engine`], where the engine records the
//!   command itself (or decides none is needed) under the same lock.
//! - Every command, with or without an event, completes in
//!   `event::complete_command`, on the worker that ran it: the engine
//!   hears of it there first.
//! - Pools ([`memory::Pool`]) are the engine's; blocking allocations
//!   from a pool run on the context's host lane. Host synchronisation points
//!   (`urQueueFinish`, `urEventWait`, blocking commands, queue release) call
//!   the context's `collect_pools`.

pub mod context;
mod conv;
pub mod device;
pub mod driver;
pub mod event;
pub mod memory;
pub mod queue;

use device::Device;
use ur_core::program::{NoKernel, NoProgram};
use ur_core::UR_BACKEND_NATIVE_CPU;

ur_core::adapter_backend! {
    /// This backend's marker type; programs and kernels are not served (their slots answer
    /// `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`).
    pub struct NativeCpu: UR_BACKEND_NATIVE_CPU, "NATIVE_CPU";
    objects {
        RawPlatform = device::PlatformHost, RawDevice = device::DeviceHost, RawContext = context::ContextHost, RawQueue = std::sync::Arc<queue::QueueShared>, RawEvent = event::CommandState, RawPool = memory::HostPool, DeviceRef = std::sync::Arc<Device>,
        RawProgram = NoProgram, RawKernel = NoKernel, RawMem = ur_core::mem::HostStorage,
    }
    /// The last release also lets the platform go and joins the workers of
    /// released queues, so that a loader may unload the library afterwards.
    on_last_release: device::PlatformHost::adapter_released;
}



