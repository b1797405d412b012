//! The native CPU backend behind the C surface of `ur_core::api`: each UR
//! object's trait of `ur_core::hal`, translated to the host objects of
//! `core/`. Arguments arrive checked; nothing here reads C memory.

use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::usm_pool::ContextPools;
use crate::context::Context;
use crate::device::{self, Device, Platform, ASYNC_USM_ALLOCATIONS_SUPPORT, USM_POOL_SUPPORT};
use crate::driver;
use crate::event::{Callback, Event};
use crate::memory::{AllocRequest as HostRequest, Pool, UsmKind};
use crate::queue::command::{resolve, Command, Pattern, UsmPtr};
use crate::queue::{Order, Queue, Submission};
use crate::DDI;
use std::ffi::{c_void, CStr};
use std::sync::Arc;
use ur_core::adapter::{Adapter, AdapterSlot};
use ur_core::hal::{self, region_bytes, AllocInfo, AllocRequest, Completion, Events, NoKernel, NoProgram, UsmCommand};
use ur_core::handle::arc_of;
use ur_core::info::InfoOut;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_NATIVE_CPU, "NATIVE_CPU");

/// This backend's marker type.
pub struct NativeCpu;

impl ur_core::adapter::Backend for NativeCpu {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }

    /// The last release also lets the platform go and joins the workers of
    /// released queues, so that a loader may unload the library afterwards.
    fn on_last_release() {
        Platform::adapter_released();
    }
}

impl hal::Backend for NativeCpu {
    type Platform = Platform;
    type Device = Device;
    type Context = Context;
    type Queue = Queue;
    type Event = Event;
    type Pool = Pool;
    type Program = NoProgram;
    type Kernel = NoKernel;
}

impl hal::Platform<NativeCpu> for Platform {
    fn all(adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(vec![Platform::of_adapter(adapter).handle()])
    }

    fn info(&self, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(Platform::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(Platform::VENDOR),
            UR_PLATFORM_INFO_VERSION => out.string(&Platform::version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(Platform::EXTENSIONS),
            UR_PLATFORM_INFO_PROFILE => out.string(Platform::PROFILE),
            UR_PLATFORM_INFO_ADAPTER => out.value(self.adapter_handle()),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn backend_option(&self, frontend: &str) -> Option<&'static CStr> {
        Platform::backend_option(frontend)
    }
}

impl hal::Device<NativeCpu> for Device {
    fn all(platform: &Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        let all = Device::matches(device_type);
        Ok(platform.devices.iter().filter(|_| all).map(|d| d.handle()).collect())
    }

    fn info(&self, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        device::info(self, prop, out)
    }

    fn max_alloc_size(&self) -> u64 {
        Device::max_alloc_size(self)
    }

    /// Only images built for native CPU fit: this adapter runs no SPIR-V or
    /// other device code.
    fn binary_targets(&self) -> &'static [&'static [u8]] {
        &[b"native_cpu"]
    }

    /// Device and host share one clock, the one of profiling timestamps.
    fn global_timestamps(&self) -> UrResult<(u64, u64)> {
        let now = driver::monotonic_ns();
        Ok((now, now))
    }

    /// Every device is the same host: each reaches the others' memory,
    /// atomics included, whether or not access was enabled.
    const PEER_ACCESS: bool = true;

    fn peer_info(&self, _peer: &Device, _prop: ur_exp_peer_info_t) -> UrResult<i32> {
        Ok(1)
    }

    fn set_peer_access(&self, peer: &Device, enable: bool) -> UrResult {
        self.peers.set(&ADAPTER.get_or_create(), self, peer, enable)
    }
}

impl hal::Context<NativeCpu> for Context {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        Ok(Context::new(devices.iter().map(|d| arc_of(*d)).collect()))
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| &**d)
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    fn usm_alloc(&self, r: AllocRequest<'_, NativeCpu>) -> UrResult<*mut c_void> {
        // Host and device flags and placement hints mean nothing here: all
        // host memory is one place.
        let device = r.device.map(arc_of);
        let pool = r.pool.map(arc_of);
        let request = HostRequest { kind: r.kind, size: r.size, align: r.align, device: device.as_ref(), pool: pool.as_ref() };
        Ok(Context::usm_alloc(self, request)? as *mut c_void)
    }

    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        Context::usm_free(self, ptr as *mut u8)
    }

    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        self.usm.live_span(&self.slabs, ptr as usize)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<NativeCpu>> {
        let addr = ptr as usize;
        if let Some(a) = self.usm.find(addr) {
            let device = a.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
            return Some(AllocInfo::new(a.kind.to_ur(), a.base() as *mut c_void, a.size(), device, std::ptr::null_mut()));
        }
        let block = self.pool_block(addr)?;
        let device = block.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
        Some(AllocInfo::new(block.kind.to_ur(), block.base as *mut c_void, block.size, device, block.pool.handle()))
    }

    fn pools_supported(&self) -> bool {
        USM_POOL_SUPPORT
    }

    fn pool_create(&self, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<Pool>> {
        Ok(Pool::create(&arc_of(self), device.map(arc_of), desc, api))
    }

    fn pools(&self) -> &ContextPools<Pool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<Pool>> {
        Ok(Pool::default_for(&arc_of(self), arc_of(device)))
    }
}

/// The wait list reduced to the events still pending.
fn pending(waits: &Events<'_, NativeCpu>) -> Vec<Arc<Event>> {
    waits.iter().filter(|e| !e.is_done()).map(arc_of).collect()
}

/// A pointer a command will access for `len` bytes (the core checked the
/// bounds): a USM allocation of the context is held by the command.
fn usm_ptr(queue: &Queue, addr: *const c_void, len: usize) -> UrResult<UsmPtr> {
    let owner = resolve(&queue.shared.context, addr as *const u8, len)?;
    // SAFETY: `owner` holds a range checked to cover `len` bytes, or the
    // caller vouches for host memory of its own, as UR requires.
    Ok(unsafe { UsmPtr::new(addr as *mut u8, owner) })
}

impl hal::Queue<NativeCpu> for Queue {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Self>> {
        // Priority, submission, device-queue and event-discarding flags are
        // hints a host device honours by changing nothing.
        let queue = Queue::new(arc_of(context), arc_of(device), flags);
        log::debug(&format!("queue {} created, flags {flags:#x}", queue.shared.id));
        Ok(queue)
    }

    fn context(&self) -> &Context {
        &self.shared.context
    }

    fn device(&self) -> &Device {
        &self.shared.device
    }

    fn flags(&self) -> ur_queue_flags_t {
        self.shared.flags
    }

    fn is_empty(&self) -> UrResult<bool> {
        Ok(Queue::is_empty(self))
    }

    /// A host synchronisation point: the context's pools take back what the
    /// finished work freed, and give back what is above their thresholds.
    fn finish(&self) -> UrResult {
        let outcome = Queue::finish(self);
        self.shared.context.collect_pools();
        outcome
    }

    /// Commands reach the workers as they are enqueued: nothing to flush.
    fn flush(&self) -> UrResult {
        Ok(())
    }

    fn enqueue_usm(
        &self,
        command: UsmCommand<'_>,
        waits: Events<'_, NativeCpu>,
        completion: Completion,
    ) -> UrResult<Option<Arc<Event>>> {
        let command_type = command.command_type();
        let mut order = Order::default();
        let command = match command {
            UsmCommand::Wait { barrier } => {
                order = Order { after_all: waits.is_empty(), fence: barrier };
                Command::Marker
            }
            UsmCommand::Fill { dst, pattern, size, .. } => {
                Command::Fill { dst: usm_ptr(self, dst, size)?, pattern: Pattern::new(pattern), size }
            }
            UsmCommand::Copy { dst, src, size, .. } => {
                Command::Copy { dst: usm_ptr(self, dst, size)?, src: usm_ptr(self, src, size)?, size }
            }
            UsmCommand::Fill2D { dst, pitch, pattern, width, height } => Command::Fill2D {
                dst: usm_ptr(self, dst, region_bytes(pitch, width, height)?)?,
                pitch,
                pattern: Pattern::new(pattern),
                width,
                height,
            },
            UsmCommand::Copy2D { dst, dst_pitch, src, src_pitch, width, height } => Command::Copy2D {
                dst: usm_ptr(self, dst, region_bytes(dst_pitch, width, height)?)?,
                dst_pitch,
                src: usm_ptr(self, src, region_bytes(src_pitch, width, height)?)?,
                src_pitch,
                width,
                height,
            },
            // Host memory has nowhere to migrate to, and ignores advice: the
            // command only keeps its place in the queue's order.
            UsmCommand::Prefetch { .. } | UsmCommand::Advise { .. } => Command::Marker,
        };
        let deps = pending(&waits);
        let submission = Submission {
            command_type,
            command,
            deps,
            order,
            want_event: completion.want_event,
            blocking: completion.blocking,
        };
        Ok(self.submit(submission)?.event)
    }

    fn async_alloc_supported(&self) -> bool {
        ASYNC_USM_ALLOCATIONS_SUPPORT
    }

    #[inline]
    fn alloc_async_hot(&self, kind: UsmKind, size: usize) -> Option<UrResult<*mut c_void>> {
        Queue::alloc_async_hot(self, kind, size).map(|r| r.map(|p| p as *mut c_void))
    }

    fn alloc_async(
        &self,
        kind: UsmKind,
        pool: Option<&Pool>,
        size: usize,
        waits: Events<'_, NativeCpu>,
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        let (ptr, event) = Queue::alloc_async(self, kind, pool, size, pending(&waits), want_event)?;
        Ok((ptr as *mut c_void, event))
    }

    #[inline]
    fn free_async_hot(&self, ptr: *mut c_void) -> bool {
        Queue::free_async_hot(self, ptr as *mut u8)
    }

    fn free_async(
        &self,
        pool: Option<&Pool>,
        ptr: *mut c_void,
        waits: Events<'_, NativeCpu>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        Queue::free_async(self, pool, ptr as *mut u8, pending(&waits), want_event)
    }
}

impl hal::Event<NativeCpu> for Event {
    fn queue(&self) -> Option<&Queue> {
        Some(Event::queue(self))
    }

    fn context(&self) -> &Context {
        &Event::queue(self).shared.context
    }

    fn command_type(&self) -> ur_command_t {
        Event::command_type(self)
    }

    fn status(&self) -> UrResult<ur_event_status_t> {
        Ok(Event::status(self))
    }

    fn failed(&self) -> bool {
        Event::failed(self)
    }

    fn profiling(&self, prop: ur_profiling_info_t) -> UrResult<u64> {
        self.profiling_time(prop)
    }

    fn wait(&self) -> UrResult {
        Event::wait(self)
    }

    fn host_sync(context: &Context) {
        context.collect_pools();
    }

    /// Workers mark commands running and complete: every stage calls back.
    const CALLBACKS_BEFORE_COMPLETE: bool = true;

    fn set_callback(
        &self,
        on: ur_execution_info_t,
        func: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
        user_data: *mut c_void,
    ) -> UrResult {
        Event::set_callback(&arc_of(self), Callback { on, func, user_data });
        Ok(())
    }
}

impl hal::Pool<NativeCpu> for Pool {
    type DeviceRef = Arc<Device>;

    fn base(&self) -> &PoolBase<Context, Arc<Device>> {
        &self.base
    }
}
