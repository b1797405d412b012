//! The CUDA backend behind the C surface of `ur_core::api`: each UR
//! object's trait of `ur_core::hal`, translated to the objects of `core/`.
//! Arguments arrive checked; nothing here reads C memory.

use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::usm_pool::ContextPools;
use crate::context::Context;
use crate::device::{Device, Platform};
use crate::event::{now_ns, Event};
use crate::kernel::{self, Arg, Kernel};
use crate::program::Program;
use crate::queue::Queue;
use crate::memory::{AllocRequest as CudaRequest, UsmKind};
use crate::memory::pool::UsmPool;
use crate::driver::{self, CuEvent};
use crate::DDI;
use std::ffi::{c_void, CStr};
use std::sync::Arc;
use ur_core::adapter::{Adapter, AdapterSlot};
use ur_core::boundary::NativeOwnership;
use ur_core::engine;
use ur_core::hal::{
    self, AllocInfo, AllocRequest, Completion, Events, KernelArg, NdRange, UsmCommand,
};
use ur_core::handle::{arc_of, arc_ref, ArcObject};
use ur_core::info::InfoOut;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_CUDA, "CUDA");

/// This backend's marker type.
pub struct Cuda;

impl ur_core::adapter::Backend for Cuda {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}

impl hal::Backend for Cuda {
    type Platform = Platform;
    type Device = Device;
    type Context = Context;
    type Queue = Queue;
    type Event = Event;
    type Pool = UsmPool;
    type Program = Program;
    type Kernel = Kernel;
}

// SAFETY: each of these is made only by `Arc::new` (or `Arc::new_cyclic`)
// in `core/`, and handed out only from there.
unsafe impl ArcObject for Device {}
unsafe impl ArcObject for Context {}
unsafe impl ArcObject for Queue {}
unsafe impl ArcObject for Event {}
unsafe impl ArcObject for UsmPool {}
unsafe impl ArcObject for Program {}
unsafe impl ArcObject for Kernel {}

fn cuda_kind(kind: engine::UsmKind) -> UsmKind {
    match kind {
        engine::UsmKind::Host => UsmKind::Host,
        engine::UsmKind::Device => UsmKind::Device,
        engine::UsmKind::Shared => UsmKind::Shared,
    }
}

impl hal::Platform<Cuda> for Platform {
    /// One platform when the driver reports a GPU, none otherwise.
    fn all(_adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(Platform::get().map(|p| p.handle()).into_iter().collect())
    }

    fn info(&self, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(Platform::NAME),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(Platform::VENDOR),
            UR_PLATFORM_INFO_VERSION => out.string(&self.version()),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(""),
            UR_PLATFORM_INFO_PROFILE => out.string(Platform::PROFILE),
            // The value only: the caller holds the adapter while it uses
            // the platform.
            UR_PLATFORM_INFO_ADAPTER => {
                out.value(ur_core::handle::handle_of(&*ADAPTER.get_or_create()))
            }
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn backend_option(&self, frontend: &str) -> Option<&'static CStr> {
        Platform::backend_option(frontend)
    }

    // No native handle: the CUDA driver has no platform object.
}

impl hal::Device<Cuda> for Device {
    fn all(
        platform: &Platform,
        device_type: ur_device_type_t,
    ) -> UrResult<Vec<ur_device_handle_t>> {
        let matching: &[_] = match device_type {
            UR_DEVICE_TYPE_GPU | UR_DEVICE_TYPE_ALL => &platform.devices,
            UR_DEVICE_TYPE_DEFAULT => &platform.devices[..1],
            _ => &[],
        };
        Ok(matching.iter().map(|d| d.handle()).collect())
    }

    fn info(&self, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        Device::info(self, prop, out)
    }

    fn max_alloc_size(&self) -> u64 {
        Device::max_alloc_size(self)
    }

    /// Every GPU has device and host memory; shared memory is managed
    /// memory, which some do not offer.
    fn serves_usm(&self, kind: engine::UsmKind) -> bool {
        kind != engine::UsmKind::Shared || self.props.managed_memory
    }

    fn binary_targets(&self) -> &'static [&'static [u8]] {
        &[b"nvptx64"]
    }

    /// Device times (event profiling) are placed on the host's monotonic
    /// clock, so one reading serves both.
    fn global_timestamps(&self) -> UrResult<(u64, u64)> {
        let now = now_ns();
        Ok((now, now))
    }

    /// Each pair's answer is the driver's (`cuDeviceGetP2PAttribute`).
    const PEER_ACCESS: bool = true;

    fn peer_info(&self, peer: &Device, prop: ur_exp_peer_info_t) -> UrResult<i32> {
        Device::peer_info(self, peer, prop)
    }

    fn set_peer_access(&self, peer: &Device, enable: bool) -> UrResult {
        Device::set_peer_access(self, peer, enable)
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.cu as ur_native_handle_t)
    }

    /// A `CUdevice` is an ordinal-like integer: 0 is a device.
    const NATIVE_NULL_IS_VALID: bool = true;

    /// The same handle `urDeviceGet` hands out; a `CUdevice` the adapter
    /// did not find is `INVALID_VALUE` (spec/device.md).
    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        Device::find_native(native)
            .map(|d| d.handle())
            .ok_or(UR_RESULT_ERROR_INVALID_VALUE)
    }
}

impl hal::Context<Cuda> for Context {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        Context::new(devices.iter().map(|d| arc_of(*d)).collect())
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| &**d)
    }

    /// Not served yet: driver/memory.rs has a pitched fill but no pitched copy.
    fn usm_2d_supported(&self) -> bool {
        false
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    /// The primary CUDA context of the first device.
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.devices[0].activate()? as ur_native_handle_t)
    }

    fn from_native(
        native: ur_native_handle_t,
        devices: &[&Device],
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let devices = devices.iter().map(|d| arc_of(*d)).collect();
        Context::from_native(native as driver::CUcontext, devices, ownership)
    }

    /// Placement hints and host/device flags have no CUDA counterpart
    /// here and are ignored.
    fn usm_alloc(&self, r: AllocRequest<'_, Cuda>) -> UrResult<*mut c_void> {
        let device = r.device.map(arc_of);
        let pool = r.pool.map(arc_of);
        let request = CudaRequest {
            kind: cuda_kind(r.kind),
            size: r.size,
            align: r.align,
            device: device.as_ref(),
            pool: pool.as_ref(),
        };
        Context::usm_alloc(self, request)
    }

    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        Context::usm_free(self, ptr)
    }

    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        self.usm.live_span(&self.slabs, ptr as usize)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<Cuda>> {
        let registered = self.usm.with(ptr as usize, |a| {
            let device = a
                .device
                .and_then(|i| self.devices.get(i))
                .map_or(std::ptr::null_mut(), |d| d.handle());
            let pool = a.pool.as_ref().map_or(std::ptr::null_mut(), |p| p.handle());
            AllocInfo::new(a.kind.as_ur(), a.base as *mut c_void, a.size, device, pool)
        });
        if registered.is_some() {
            return registered;
        }
        // An engine block: its pool knows it; a destroyed pool reads as none.
        let owner = self.slabs.owner_of(ptr as usize)?;
        let (base, size) = owner.live_block(ptr as usize)?;
        let device = owner
            .device
            .as_ref()
            .map_or(std::ptr::null_mut(), |d| d.handle());
        let pool = owner.usm_pool_handle();
        Some(AllocInfo::new(owner.kind.as_ur(), base as *mut c_void, size, device, pool))
    }

    fn pools_supported(&self) -> bool {
        self.devices.iter().all(|d| d.props.memory_pools)
    }

    /// A pool belongs to one GPU: a context-wide pool needs a context of one.
    fn pool_create(
        &self,
        device: Option<&Device>,
        desc: PoolDesc,
        api: PoolApi,
    ) -> UrResult<Arc<UsmPool>> {
        UsmPool::create(&arc_of(self), device.map(arc_of).as_ref(), desc, api)
    }

    fn pools(&self) -> &ContextPools<UsmPool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<UsmPool>> {
        UsmPool::device_default(&arc_of(self), &arc_of(device))
    }
}

impl hal::Queue<Cuda> for Queue {
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
        Queue::is_empty(self)
    }

    /// A host synchronisation point: the context's pools take back what the
    /// finished work freed, and give back what is above their thresholds.
    fn finish(&self) -> UrResult {
        let outcome = Queue::finish(self);
        self.context.engine.collect_all();
        outcome
    }

    /// CUDA submits work as it is enqueued.
    fn flush(&self) -> UrResult {
        Ok(())
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        self.stream_given_out();
        Ok(self.first_stream().raw() as ur_native_handle_t)
    }

    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        device: Option<&Device>,
        flags: ur_queue_flags_t,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        Queue::from_native(
            arc_of(context),
            device.map(arc_of),
            native as driver::CUstream,
            flags,
            ownership,
        )
    }

    fn enqueue_usm(
        &self,
        command: UsmCommand<'_>,
        waits: Events<'_, Cuda>,
        completion: Completion,
    ) -> UrResult<Option<Arc<Event>>> {
        // Events keep their queue: commands need it as an `Arc` (borrowed;
        // an event clones it).
        let queue = arc_ref(self);
        let wait: Vec<&Event> = waits.iter().collect();
        let want = completion.want_event;
        // A blocking command's event is waited for by the core.
        match command {
            UsmCommand::Wait { barrier } => queue.wait_events(&wait, barrier, want),
            UsmCommand::Fill { dst, pattern, size, .. } => {
                queue.usm_fill(dst, pattern, size, &wait, want)
            }
            UsmCommand::Copy { dst, src, size, .. } => {
                queue.usm_memcpy(false, dst, src, size, &wait, want)
            }
            UsmCommand::Prefetch { ptr, size, flags } => {
                queue.usm_prefetch(ptr, size, flags, &wait, want)
            }
            UsmCommand::Advise { ptr, size, advice } => queue.usm_advise(ptr, size, advice, want),
            // The context's `usm_2d_supported` is false: the core never sends these.
            UsmCommand::Fill2D { .. } | UsmCommand::Copy2D { .. } => {
                Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
            }
        }
    }

    fn async_alloc_supported(&self) -> bool {
        self.device.props.memory_pools
    }

    fn alloc_async(
        &self,
        kind: engine::UsmKind,
        pool: Option<&UsmPool>,
        size: usize,
        waits: Events<'_, Cuda>,
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        let wait: Vec<&Event> = waits.iter().collect();
        // Borrowed: the queue's count is not written per command.
        arc_ref(self).usm_alloc_async(cuda_kind(kind), pool, size, &wait, want_event)
    }

    fn free_async(
        &self,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        waits: Events<'_, Cuda>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let wait: Vec<&Event> = waits.iter().collect();
        arc_ref(self).usm_free_async(pool, ptr, &wait, want_event)
    }
}

impl hal::Event<Cuda> for Event {
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
        context.engine.collect_all();
    }

    /// CUDA tells completion only; the earlier stages have no signal (the
    /// core answers them `UNSUPPORTED_ENUMERATION`).
    fn set_callback(
        &self,
        _on: ur_execution_info_t,
        callback: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
        user_data: *mut c_void,
    ) -> UrResult {
        arc_of(self).on_complete(callback, user_data)
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.cu_event().map_or(std::ptr::null_mut(), |e| e.raw()) as ur_native_handle_t)
    }

    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let owned = ownership == NativeOwnership::Owned;
        let native = CuEvent::from_raw(native as driver::CUevent, owned);
        Ok(Event::from_native(arc_of(context), native))
    }
}

/// Statistics, settings and trimming add the native pool to the engine's.
impl hal::Pool<Cuda> for UsmPool {
    type DeviceRef = Arc<Device>;

    fn base(&self) -> &PoolBase<Context, Arc<Device>> {
        &self.base
    }

    fn info(&self, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        UsmPool::info(self, prop)
    }

    fn set_info(&self, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        UsmPool::set_info(self, prop, value)
    }

    /// Trimming is a hint: a driver failure only leaves more memory kept.
    fn trim_to(&self, keep: usize) {
        if let Err(e) = UsmPool::trim_to(self, keep) {
            log::warning(&format!("trimming a USM pool failed: {e:?}"));
        }
    }
}

/// Build options as the driver's JIT log records them.
fn options_str(options: &CStr) -> UrResult<&str> {
    options.to_str().map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)
}

impl hal::Program<Cuda> for Program {
    fn context(&self) -> &Context {
        &self.context
    }

    fn has_device(&self, device: &Device) -> bool {
        self.images.iter().any(|im| std::ptr::eq(&*im.device, device))
    }

    /// PTX, cubin or fatbin images, one per device.
    fn create_with_binary(context: &Context, images: &[(&Device, &[u8])]) -> UrResult<Arc<Self>> {
        let images = images.iter().map(|(d, bytes)| (arc_of(*d), bytes.to_vec())).collect();
        Program::with_binaries(arc_of(context), images)
    }

    /// The driver loads every image; the devices named change nothing.
    fn build(&self, _devices: &[&Device], options: &CStr) -> UrResult {
        Program::build(self, options_str(options)?)
    }

    fn info(&self, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        Program::info(self, prop, out, None)
    }

    fn binaries(&self) -> UrResult<Vec<Vec<u8>>> {
        Ok(self.images.iter().map(|im| im.bytes.clone()).collect())
    }

    fn build_info(&self, device: &Device, prop: ur_program_build_info_t, out: InfoOut) -> UrResult {
        Program::build_info(self, device, prop, out)
    }

    fn global_variable(&self, device: &Device, name: &CStr) -> UrResult<(*mut c_void, usize)> {
        let (ptr, size) = Program::global_variable(self, device, name)?;
        Ok((ptr as *mut c_void, size))
    }

    /// The module of the program's first device.
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        let first = self.images.first().ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?;
        Ok(self.module_for(&first.device)?.raw() as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        Program::from_native(arc_of(context), native as driver::CUmodule, ownership)
    }
}

impl hal::Kernel<Cuda> for Kernel {
    fn create(program: &Program, name: &CStr) -> UrResult<Arc<Self>> {
        let name = name.to_str().map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?;
        Kernel::new(arc_of(program), name)
    }

    fn program(&self) -> &Program {
        &self.program
    }

    fn info(&self, prop: ur_kernel_info_t, out: InfoOut) -> UrResult {
        Kernel::info(self, prop, out)
    }

    fn group_info(&self, device: &Device, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult {
        Kernel::group_info(self, device, prop, out)
    }

    fn sub_group_info(&self, device: &Device, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult {
        Kernel::sub_group_info(self, device, prop, out)
    }

    fn suggested_local_work_size(&self, queue: &Queue, global: &[usize]) -> UrResult<Vec<usize>> {
        Ok(self.suggest_local(&queue.device, global)?.to_vec())
    }

    /// The function on the program's first device.
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        let device = &self.program.images.first().ok_or(UR_RESULT_ERROR_INVALID_PROGRAM)?.device;
        Ok(self.native_for(device)? as ur_native_handle_t)
    }

    /// A CUDA function does not name the UR program it came from: without
    /// one, `INVALID_NULL_HANDLE`, as the spec allows.
    fn from_native(
        native: ur_native_handle_t,
        _context: &Context,
        program: Option<&Program>,
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let program = program.ok_or(UR_RESULT_ERROR_INVALID_NULL_HANDLE)?;
        Kernel::from_native(arc_of(program), native as driver::CUfunction)
    }

    fn launch(
        &self,
        queue: &Queue,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, Cuda>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        let args: Vec<(u32, Arg)> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Value { index, bytes } => (index, Arg::Value(bytes.to_vec())),
                KernelArg::Pointer { index, ptr } => (index, Arg::Pointer(ptr as usize)),
                KernelArg::Local { index, size } => (index, Arg::Local(size)),
            })
            .collect();
        let range = kernel::NdRange { offset: range.offset, global: range.global, local: range.local };
        let waits: Vec<&Event> = waits.iter().collect();
        arc_ref(queue).launch(self, range, &args, cooperative, &waits, want_event)
    }
}
