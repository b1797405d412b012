//! The Level Zero backend behind the C surface of `ur_core::api`: each UR
//! object's trait of `ur_core::hal`, translated to the objects of `core/`.
//! Arguments arrive checked; nothing here reads C memory.

use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::usm_pool::ContextPools;
use crate::core::context::Context;
use crate::core::device::Device;
use crate::core::event::Event;
use crate::core::platform::Platform;
use crate::core::queue::Queue;
use crate::core::usm::{self, Request};
use crate::core::usm_pool::UsmPool;
use crate::DDI;
use std::ffi::{c_void, CStr};
use std::sync::Arc;
use level_zero_sys::{ze_context_handle_t, ze_event_handle_t};
use ur_core::adapter::{Adapter, AdapterSlot};
use ur_core::boundary::NativeOwnership;
use ur_core::engine::UsmKind;
use ur_core::hal::{self, AllocInfo, AllocRequest, Completion, Events, NoKernel, NoProgram, UsmCommand};
use ur_core::handle::{arc_of, handle_of};
use ur_core::info::InfoOut;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_LEVEL_ZERO, "LEVEL_ZERO");

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

impl hal::Platform<LevelZero> for Platform {
    fn all(_adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(Platform::all().iter().map(|p| p.handle()).collect())
    }

    fn info(&self, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(Platform::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string("Intel(R) Corporation"),
            UR_PLATFORM_INFO_VERSION => out.string(&self.version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(""),
            UR_PLATFORM_INFO_PROFILE => out.string(Platform::PROFILE),
            // The value only: the caller holds the adapter while it uses
            // the platform.
            UR_PLATFORM_INFO_ADAPTER => out.value(handle_of(&*ADAPTER.get_or_create())),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn backend_option(&self, frontend: &str) -> Option<&'static CStr> {
        Platform::backend_option(frontend)
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.ze as ur_native_handle_t)
    }

    /// Drivers are not reference counted: ownership changes nothing.
    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_platform_handle_t> {
        let p = Platform::all().iter().find(|p| p.ze as ur_native_handle_t == native);
        p.map(|p| p.handle()).ok_or(UR_RESULT_ERROR_INVALID_VALUE)
    }
}

impl hal::Device<LevelZero> for Device {
    fn all(platform: &Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        let matching = |d: &&Arc<Device>| match device_type {
            UR_DEVICE_TYPE_ALL | UR_DEVICE_TYPE_DEFAULT => true,
            t => d.device_type() == t,
        };
        let mut found: Vec<ur_device_handle_t> = platform.devices.iter().filter(matching).map(|d| d.handle()).collect();
        if device_type == UR_DEVICE_TYPE_DEFAULT {
            found.truncate(1);
        }
        Ok(found)
    }

    fn info(&self, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        Device::info(self, prop, out)
    }

    fn max_alloc_size(&self) -> u64 {
        Device::max_alloc_size(self)
    }

    fn serves_usm(&self, kind: UsmKind) -> bool {
        self.usm_supported(kind.to_ur())
    }

    /// This adapter builds no modules, so it runs no image of any target.
    fn binary_targets(&self) -> &'static [&'static [u8]] {
        &[]
    }

    fn global_timestamps(&self) -> UrResult<(u64, u64)> {
        let (host, device) = crate::driver::global_timestamps(self.ze).map_err(crate::conv::result)?;
        Ok((self.ticks_to_ns(device), host))
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.ze as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        Platform::all()
            .iter()
            .find_map(|p| p.device_by_ze(native as level_zero_sys::ze_device_handle_t))
            .map(|d| d.handle())
            .ok_or(UR_RESULT_ERROR_INVALID_VALUE)
    }
}

impl hal::Context<LevelZero> for Context {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        Context::new(devices.iter().map(|d| arc_of(*d)).collect())
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| &**d)
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.ze.0 as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, devices: &[&Device], ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        let devices = devices.iter().map(|d| arc_of(*d)).collect();
        Context::from_native(native as ze_context_handle_t, devices, ownership == NativeOwnership::Owned)
    }

    /// Placement hints and host/device flags have no Level Zero
    /// counterpart here and are ignored.
    fn usm_alloc(&self, r: AllocRequest<'_, LevelZero>) -> UrResult<*mut c_void> {
        let device = r.device.map(arc_of);
        let request = Request { kind: r.kind, device: device.as_ref(), size: r.size, align: r.align, pool: r.pool.map(arc_of) };
        usm::alloc(self, request)
    }

    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        usm::free(self, ptr)
    }

    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        usm::range_of(self, ptr)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<LevelZero>> {
        let info = usm::pointer_info(self, ptr)?;
        let device = info.device.as_ref().map_or(std::ptr::null_mut(), |d| d.handle());
        Some(AllocInfo::new(info.kind, info.base as *mut c_void, info.size, device, info.pool))
    }

    fn pools_supported(&self) -> bool {
        true
    }

    fn pool_create(&self, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool>> {
        Ok(UsmPool::new(arc_of(self), device.map(arc_of), desc, api))
    }

    fn pools(&self) -> &ContextPools<UsmPool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<UsmPool>> {
        Ok(UsmPool::device_default(&arc_of(self), &arc_of(device)))
    }
}

impl hal::Queue<LevelZero> for Queue {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Self>> {
        Queue::new(arc_of(context), arc_of(device), flags)
    }

    fn context(&self) -> &Context {
        &self.context
    }

    fn device(&self) -> &Device {
        &self.device
    }

    fn flags(&self) -> ur_queue_flags_t {
        self.flags
    }

    fn is_empty(&self) -> UrResult<bool> {
        Ok(Queue::is_empty(self))
    }

    /// A host synchronisation point for the context's pools.
    fn finish(&self) -> UrResult {
        let outcome = Queue::finish(self);
        self.context.collect_pools();
        outcome
    }

    /// Immediate command lists submit as they append.
    fn flush(&self) -> UrResult {
        Ok(())
    }

    fn enqueue_usm(
        &self,
        command: UsmCommand<'_>,
        waits: Events<'_, LevelZero>,
        completion: Completion,
    ) -> UrResult<Option<Arc<Event>>> {
        arc_of(self).enqueue_usm(command, waits.iter(), completion.want_event)
    }

    fn async_alloc_supported(&self) -> bool {
        true
    }

    fn alloc_async(
        &self,
        kind: UsmKind,
        pool: Option<&UsmPool>,
        size: usize,
        waits: Events<'_, LevelZero>,
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        arc_of(self).alloc_async(kind, pool, size, waits.iter(), want_event)
    }

    fn free_async(
        &self,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        waits: Events<'_, LevelZero>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        arc_of(self).free_async(pool, ptr, waits.iter(), want_event)
    }
}

impl hal::Event<LevelZero> for Event {
    fn queue(&self) -> Option<&Queue> {
        self.queue.as_deref()
    }

    fn context(&self) -> &Context {
        &self.context
    }

    fn command_type(&self) -> ur_command_t {
        self.command
    }

    fn status(&self) -> UrResult<ur_event_status_t> {
        Event::status(self)
    }

    fn profiling(&self, prop: ur_profiling_info_t) -> UrResult<u64> {
        Event::profiling(self, prop)
    }

    fn wait(&self) -> UrResult {
        Event::wait(self)
    }

    fn host_sync(context: &Context) {
        context.collect_pools();
    }

    // Level Zero events tell completion only: `set_callback` is the core's
    // default.

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.done.raw as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        let owned = ownership == NativeOwnership::Owned;
        Event::from_native(arc_of(context), native as ze_event_handle_t, owned)
    }
}

impl hal::Pool<LevelZero> for UsmPool {
    type DeviceRef = Arc<Device>;

    fn base(&self) -> &PoolBase<Context, Arc<Device>> {
        &self.base
    }
}
