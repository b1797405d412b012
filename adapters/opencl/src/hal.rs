//! The OpenCL backend behind the C surface of `ur_core::api`: each UR
//! object's trait of `ur_core::hal`, translated to the objects of `core/`.
//! Arguments arrive checked; nothing here reads C memory.

use ur_core::extended_deleter::ExtendedDeleter;
use ur_core::usm_pool::ContextPools;
use crate::conv::{self, ClResultExt};
use crate::context::Context;
use crate::device::platform::{self, Platform};
use crate::device::{Device, UsmPath};
use crate::event::Event;
use crate::kernel::{self, Arg, Kernel};
use crate::memory::{self as usm, AllocRequest as ClRequest, UsmPool};
use crate::program::Program;
use crate::queue::Queue;
use crate::DDI;
use cl3::ext as sys;
use std::ffi::{c_void, CStr};
use std::sync::Arc;
use ur_core::adapter::{Adapter, AdapterSlot};
use ur_core::boundary::NativeOwnership;
use ur_core::engine::UsmKind;
use ur_core::hal::{self, AllocInfo, AllocRequest, Completion, Events, KernelArg, NdRange, UsmCommand};
use ur_core::handle::{arc_of, handle_of};
use ur_core::info::InfoOut;
use ur_core::partition::PartitionRequest;
use ur_core::usm_async::{PoolApi, PoolDesc};
use ur_core::usm_pool::PoolBase;
use ur_core::*;

pub static ADAPTER: AdapterSlot = AdapterSlot::new(&DDI, UR_BACKEND_OPENCL, "OPENCL");

/// This backend's marker type.
pub struct OpenCl;

impl ur_core::adapter::Backend for OpenCl {
    fn slot() -> &'static AdapterSlot {
        &ADAPTER
    }
}

impl hal::Backend for OpenCl {
    type Platform = Platform;
    type Device = Device;
    type Context = Context;
    type Queue = Queue;
    type Event = Event;
    type Pool = UsmPool;
    type Program = Program;
    type Kernel = Kernel;
}

impl hal::Platform<OpenCl> for Platform {
    fn all(_adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        Ok(platform::platforms().iter().map(|p| p.handle()).collect())
    }

    fn info(&self, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        match prop {
            UR_PLATFORM_INFO_NAME => out.string(&self.name),
            UR_PLATFORM_INFO_VENDOR_NAME => out.string(&self.vendor),
            UR_PLATFORM_INFO_VERSION => out.string(&self.version),
            UR_PLATFORM_INFO_EXTENSIONS => out.string(&self.extensions),
            UR_PLATFORM_INFO_PROFILE => out.string(&self.profile),
            UR_PLATFORM_INFO_ADAPTER => out.value(ur_core::handle::handle_of(&*ADAPTER.get_or_create())),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }

    fn backend_option(&self, frontend: &str) -> Option<&'static CStr> {
        Platform::backend_option(frontend)
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.id as ur_native_handle_t)
    }

    /// Platform ids are not reference counted: ownership changes nothing.
    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_platform_handle_t> {
        let platform = platform::platform_by_id(native as sys::cl_platform_id).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        Ok(platform.handle())
    }
}

impl hal::Device<OpenCl> for Device {
    fn all(platform: &Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        // A UR type OpenCL cannot name matches no device.
        let Some(filter) = conv::device_type_filter(device_type)? else { return Ok(Vec::new()) };
        Ok(platform.devices().iter().filter(|d| d.matches(filter)).map(|d| d.handle()).collect())
    }

    fn info(&self, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        self.kept().get_info(prop, out)
    }

    fn is_root(&self) -> bool {
        self.parent.is_none()
    }

    fn max_alloc_size(&self) -> u64 {
        self.max_mem_alloc
    }

    fn serves_usm(&self, kind: UsmKind) -> bool {
        let caps = match kind {
            UsmKind::Host => self.usm_host,
            UsmKind::Device => self.usm_device,
            UsmKind::Shared => self.usm_single_shared | self.usm_cross_shared,
        };
        caps != 0
    }

    /// An image compiled ahead of time for the device's kind beats generic
    /// SPIR-V.
    fn binary_targets(&self) -> &'static [&'static [u8]] {
        match conv::device_type(self.device_type) {
            UR_DEVICE_TYPE_CPU => &[b"spir64_x86_64", b"spir64"],
            UR_DEVICE_TYPE_GPU => &[b"spir64_gen", b"spir64"],
            UR_DEVICE_TYPE_FPGA => &[b"spir64_fpga", b"spir64"],
            _ => &[b"spir64"],
        }
    }

    fn global_timestamps(&self) -> UrResult<(u64, u64)> {
        Device::global_timestamps(self)
    }

    fn partition(&self, request: &PartitionRequest) -> UrResult<Vec<&Self>> {
        Ok(self.kept().partition(request)?.into_iter().map(|d| d as &Self).collect())
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.id as ur_native_handle_t)
    }

    /// The handle `urDeviceGet` hands out, or a sub-device `urDevicePartition`
    /// made: the adapter's devices hold their OpenCL ids as long as they
    /// live, so ownership changes nothing.
    fn from_native(native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        let device = platform::device_by_id(native as sys::cl_device_id).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        Ok(device.handle())
    }
}

fn kept_all(devices: &[&Device]) -> Vec<&'static Device> {
    devices.iter().map(|d| d.kept()).collect()
}

impl hal::Context<OpenCl> for Context {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Self>> {
        Context::new(kept_all(devices))
    }

    fn devices(&self) -> impl ExactSizeIterator<Item = &Device> {
        self.devices.iter().map(|d| *d)
    }

    fn extended_deleter(&self) -> &ExtendedDeleter {
        &self.deleter
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.cl.get() as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, devices: &[&Device], ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        Context::from_native(native as sys::cl_context, kept_all(devices), ownership)
    }

    fn usm_alloc(&self, r: AllocRequest<'_, OpenCl>) -> UrResult<*mut c_void> {
        let request = ClRequest {
            kind: r.kind.to_ur(),
            device: r.device.map(Device::kept),
            size: r.size,
            align: u32::try_from(r.align).map_err(|_| UR_RESULT_ERROR_INVALID_VALUE)?,
            host_flags: r.host_flags,
            device_flags: r.device_flags,
            pool: r.pool.map(arc_of),
        };
        usm::alloc(self, request)
    }

    fn usm_free(&self, ptr: *mut c_void) -> UrResult {
        usm::free(self, ptr)
    }

    fn usm_range(&self, ptr: *const c_void) -> Option<(usize, usize)> {
        usm::range_of(self, ptr)
    }

    fn usm_alloc_info(&self, ptr: *const c_void) -> Option<AllocInfo<OpenCl>> {
        let info = usm::pointer_info(self, ptr)?;
        let device = info.device.map_or(std::ptr::null_mut(), |d| d.handle());
        Some(AllocInfo::new(info.kind, info.base as *mut c_void, info.size, device, info.pool))
    }

    /// Pools are offered wherever USM is.
    fn pools_supported(&self) -> bool {
        self.usm_path() != UsmPath::None
    }

    fn pool_create(&self, device: Option<&Device>, desc: PoolDesc, api: PoolApi) -> UrResult<Arc<UsmPool>> {
        UsmPool::new(arc_of(self), device.map(Device::kept), desc, api)
    }

    fn pools(&self) -> &ContextPools<UsmPool> {
        &self.pools
    }

    fn make_default_pool(&self, device: &Device) -> UrResult<Arc<UsmPool>> {
        Ok(UsmPool::device_default(&arc_of(self), device.kept()))
    }
}

impl hal::Queue<OpenCl> for Queue {
    fn create(context: &Context, device: &Device, flags: ur_queue_flags_t) -> UrResult<Arc<Self>> {
        Queue::new(arc_of(context), device.kept(), flags)
    }

    fn context(&self) -> &Context {
        &self.context
    }

    fn device(&self) -> &Device {
        self.device
    }

    fn flags(&self) -> ur_queue_flags_t {
        self.flags
    }

    fn is_empty(&self) -> UrResult<bool> {
        Queue::is_empty(self)
    }

    fn finish(&self) -> UrResult {
        Queue::finish(self)
    }

    fn flush(&self) -> UrResult {
        self.cl.flush().ur()
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        // The user may enqueue on it from now on, unseen by this queue.
        self.handed_out();
        Ok(self.cl.get() as ur_native_handle_t)
    }

    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        device: Option<&Device>,
        flags: ur_queue_flags_t,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        let native = native as sys::cl_command_queue;
        Queue::from_native(arc_of(context), device.map(Device::kept), native, flags, ownership)
    }

    fn enqueue_usm(
        &self,
        command: UsmCommand<'_>,
        waits: Events<'_, OpenCl>,
        completion: Completion,
    ) -> UrResult<Option<Arc<Event>>> {
        Queue::enqueue_usm(self, command, waits.iter(), completion.want_event, completion.blocking)
    }

    fn async_alloc_supported(&self) -> bool {
        self.device.usm_path != UsmPath::None
    }

    fn alloc_async(
        &self,
        kind: UsmKind,
        pool: Option<&UsmPool>,
        size: usize,
        waits: Events<'_, OpenCl>,
        want_event: bool,
    ) -> UrResult<(*mut c_void, Option<Arc<Event>>)> {
        self.usm_alloc_async(kind, pool, size, waits.iter(), want_event)
    }

    fn free_async(
        &self,
        pool: Option<&UsmPool>,
        ptr: *mut c_void,
        waits: Events<'_, OpenCl>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        self.usm_free_async(pool, ptr, waits.iter(), want_event)
    }
}

/// The user's callback and data, moved to the runtime's thread.
struct UserCallback {
    f: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
    user_data: usize,
}

impl hal::Event<OpenCl> for Event {
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

    fn failed(&self) -> bool {
        Event::failed(self)
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

    /// `clSetEventCallback` takes submitted, running and complete.
    const CALLBACKS_BEFORE_COMPLETE: bool = true;

    fn set_callback(
        &self,
        on: ur_execution_info_t,
        f: unsafe extern "C" fn(ur_event_handle_t, ur_execution_info_t, *mut c_void),
        user_data: *mut c_void,
    ) -> UrResult {
        let status = conv::execution_info(on)?;
        let callback = UserCallback { f, user_data: user_data as usize };
        // The closure holds the event, so its handle stays valid for the call.
        let held = arc_of(self);
        self.on_status(
            status,
            Box::new(move |_| {
                // SAFETY: the user registered this callback for this event.
                unsafe { (callback.f)(handle_of(&*held), on, callback.user_data as *mut c_void) };
            }),
        )
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.cl.get() as ur_native_handle_t)
    }

    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        Event::from_native(arc_of(context), native as sys::cl_event, ownership)
    }
}

impl hal::Pool<OpenCl> for UsmPool {
    type DeviceRef = &'static Device;

    fn base(&self) -> &PoolBase<Context, &'static Device> {
        &self.base
    }
}

// SAFETY: programs and kernels are made only by `Arc::new` in `core/`.
unsafe impl ur_core::handle::ArcObject for Program {}
unsafe impl ur_core::handle::ArcObject for Kernel {}

fn kept<'a>(devices: &[&'a Device]) -> Vec<&'static Device> {
    devices.iter().map(|d| d.kept()).collect()
}

impl hal::Program<OpenCl> for Program {
    fn context(&self) -> &Context {
        &self.context
    }

    fn has_device(&self, device: &Device) -> bool {
        self.devices().is_ok_and(|ds| ds.iter().any(|d| std::ptr::eq(*d, device)))
    }

    fn create_with_il(context: &Context, il: &[u8]) -> UrResult<Arc<Self>> {
        Program::with_il(arc_of(context), il)
    }

    fn create_with_binary(context: &Context, images: &[(&Device, &[u8])]) -> UrResult<Arc<Self>> {
        let devices: Vec<&'static Device> = images.iter().map(|(d, _)| d.kept()).collect();
        let binaries: Vec<&[u8]> = images.iter().map(|(_, b)| *b).collect();
        Program::with_binaries(arc_of(context), &devices, &binaries)
    }

    fn build(&self, devices: &[&Device], options: &CStr) -> UrResult {
        Program::build(self, &kept(devices), options)
    }

    fn compile(&self, devices: &[&Device], options: &CStr) -> UrResult {
        Program::compile(self, &kept(devices), options)
    }

    fn link(
        context: &Context,
        devices: &[&Device],
        programs: &[&Self],
        options: &CStr,
    ) -> Result<Arc<Self>, (ur_result_t, Option<Arc<Self>>)> {
        let programs: Vec<Arc<Program>> = programs.iter().map(|p| arc_of(*p)).collect();
        Program::link(&arc_of(context), &kept(devices), &programs, options)
    }

    fn info(&self, prop: ur_program_info_t, out: InfoOut) -> UrResult {
        self.get_info(prop, out)
    }

    fn binaries(&self) -> UrResult<Vec<Vec<u8>>> {
        Program::binaries(self)
    }

    fn build_info(&self, device: &Device, prop: ur_program_build_info_t, out: InfoOut) -> UrResult {
        self.get_build_info(device, prop, out)
    }

    fn set_specialization_constants(&self, constants: &[ur_specialization_constant_info_t]) -> UrResult {
        constants.iter().try_for_each(|c| self.set_specialization_constant(c.id, c.size, c.pValue))
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.raw() as ur_native_handle_t)
    }

    /// A program over the user's `cl_program`, in whatever state the user
    /// left it (built: kernels at once; only created: `urProgramBuild` next).
    fn from_native(native: ur_native_handle_t, context: &Context, ownership: NativeOwnership) -> UrResult<Arc<Self>> {
        Program::from_native(arc_of(context), native as sys::cl_program, ownership)
    }
}

impl hal::Kernel<OpenCl> for Kernel {
    fn create(program: &Program, name: &CStr) -> UrResult<Arc<Self>> {
        Kernel::new(arc_of(program), name)
    }

    fn program(&self) -> &Program {
        &self.program
    }

    fn info(&self, prop: ur_kernel_info_t, out: InfoOut) -> UrResult {
        self.get_info(prop, out)
    }

    fn group_info(&self, device: &Device, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult {
        self.get_group_info(device, prop, out)
    }

    fn sub_group_info(&self, device: &Device, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult {
        self.get_sub_group_info(device, prop, out)
    }

    fn set_exec_info(&self, prop: ur_kernel_exec_info_t, value: *const c_void, size: usize) -> UrResult {
        Kernel::set_exec_info(self, prop, value, size)
    }

    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Ok(self.cl.get() as ur_native_handle_t)
    }

    /// Without a program handle, the kernel's own `cl_program` is wrapped
    /// (borrowed) as its program.
    fn from_native(
        native: ur_native_handle_t,
        context: &Context,
        program: Option<&Program>,
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        Kernel::from_native(&arc_of(context), program.map(arc_of), native as sys::cl_kernel, ownership)
    }

    /// OpenCL has no cooperative launch.
    fn launch(
        &self,
        queue: &Queue,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, OpenCl>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event>>> {
        if cooperative {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        let args: Vec<Arg> = args
            .iter()
            .map(|a| match *a {
                KernelArg::Value { index, bytes } => {
                    Arg::Value { index, size: bytes.len(), value: bytes.as_ptr() as *const c_void }
                }
                KernelArg::Pointer { index, ptr } => Arg::Pointer { index, ptr },
                KernelArg::Local { index, size } => Arg::Local { index, size },
            })
            .collect();
        let range = kernel::NdRange { offset: range.offset, global: range.global, local: range.local };
        let waits: Vec<&Event> = waits.iter().collect();
        // SAFETY: each value argument's bytes were read from the caller's
        // arguments and live for this call.
        unsafe { Kernel::launch(self, queue, &range, &args, &waits, want_event) }
    }
}
