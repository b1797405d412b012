//! The backend trait: what an adapter implements so that the C surface of
//! [`crate::api`], written once, can serve it.
//!
//! One marker type per backend implements [`Backend`]; its associated types
//! name the backend's object per UR object (platform, device, context,
//! queue, event, pool, program, kernel), each implementing the trait of the
//! same name here. Every method receives arguments the core has already
//! decoded and checked: live handles of this adapter turned into references,
//! enums in range, flag masks clean, `pNext` chains walked, wait lists
//! checked, out pointers present. A method translates to the driver and
//! answers in Rust types; the core writes the C outputs.
//!
//! Methods with a default body are capabilities a backend may lack: the
//! default answers as UR says a backend without the feature must.

use crate::abi::*;
use crate::adapter::Adapter;
use crate::boundary::NativeOwnership;
use crate::engine::{Lane, UsmKind};
use crate::queue::{EngineCommand, Waits};
use crate::context::Context;
use crate::event::{Event, RawEvent};
use crate::pool::{RawPool, UsmPool};
use crate::handle::UrObject;
use crate::info::InfoOut;
use crate::partition::PartitionRequest;
use crate::UrResult;
use core::ffi::c_void;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

const UNSUPPORTED: ur_result_t = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// A backend: its adapter slot and its object types.
pub trait Backend: crate::adapter::Backend + Sized {
    type Platform: Platform<Self>;
    type Device: Device<Self>;
    /// The backend's part of a context (`crate::context`).
    type RawContext: crate::context::RawContext<Self>;
    type Queue: Queue<Self>;
    /// The backend's part of an event (`crate::event`).
    type RawEvent: RawEvent<Self>;
    /// The backend's part of a USM pool (`crate::pool`).
    type RawPool: RawPool<Self>;
    /// How a pool holds its device (`Arc<Device>`, or `&'static Device`
    /// where devices live as long as the adapter).
    type DeviceRef: Deref<Target = Self::Device> + Clone + Send + Sync + 'static;
    type Program: Program<Self>;
    type Kernel: Kernel<Self>;

    /// The table every handle of this backend carries at offset 0.
    fn ddi() -> &'static ur_dditable_t {
        Self::slot().ddi()
    }
}

/// Checked event handles of one backend: the wait list of a command. Each
/// handle was checked to be a live event of the backend when the list was
/// made, and the caller keeps it alive for the call.
pub struct Events<'a, B: Backend> {
    handles: &'a [ur_event_handle_t],
    _backend: PhantomData<B>,
}

impl<'a, B: Backend> Events<'a, B> {
    /// # Safety
    /// Every handle is a live event of `B`, valid for `'a`.
    pub unsafe fn checked(handles: &'a [ur_event_handle_t]) -> Self {
        Events { handles, _backend: PhantomData }
    }

    pub const fn none() -> Self {
        Events { handles: &[], _backend: PhantomData }
    }

    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// The raw handles (for a driver that takes a list of its own events).
    pub fn handles(&self) -> &'a [ur_event_handle_t] {
        self.handles
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a Event<B>> + '_ {
        // SAFETY: checked in `checked`.
        self.handles.iter().map(|&h| unsafe { crate::handle::object_of::<Event<B>>(h) })
    }
}

impl<B: Backend> Clone for Events<'_, B> {
    fn clone(&self) -> Self {
        Events { handles: self.handles, _backend: PhantomData }
    }
}

/// What a command that returns an event asks for.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Completion {
    /// The caller wants the command's event (or the core needs it to block).
    pub want_event: bool,
    /// The call returns only once the command completed.
    pub blocking: bool,
}

/// An enqueued USM command, checked.
#[derive(Clone, Copy, Debug)]
pub enum UsmCommand<'a> {
    /// `urEnqueueEventsWait` (`barrier: false`) or a barrier. An empty wait
    /// list means everything enqueued before on the queue.
    Wait { barrier: bool },
    /// `in_usm`: every range lies inside a live USM allocation of the
    /// queue's context (the core looked them up, so an adapter need not).
    Fill { dst: *mut c_void, pattern: &'a [u8], size: usize, in_usm: bool },
    Copy { dst: *mut c_void, src: *const c_void, size: usize, in_usm: bool },
    Fill2D { dst: *mut c_void, pitch: usize, pattern: &'a [u8], width: usize, height: usize },
    Copy2D { dst: *mut c_void, dst_pitch: usize, src: *const c_void, src_pitch: usize, width: usize, height: usize },
    Prefetch { ptr: *const c_void, size: usize, flags: ur_usm_migration_flags_t },
    Advise { ptr: *const c_void, size: usize, advice: ur_usm_advice_flags_t },
}

impl UsmCommand<'_> {
    pub fn command_type(&self) -> ur_command_t {
        match self {
            UsmCommand::Wait { barrier: false } => UR_COMMAND_EVENTS_WAIT,
            UsmCommand::Wait { barrier: true } => UR_COMMAND_EVENTS_WAIT_WITH_BARRIER,
            UsmCommand::Fill { .. } => UR_COMMAND_USM_FILL,
            UsmCommand::Copy { .. } => UR_COMMAND_USM_MEMCPY,
            UsmCommand::Fill2D { .. } => UR_COMMAND_USM_FILL_2D,
            UsmCommand::Copy2D { .. } => UR_COMMAND_USM_MEMCPY_2D,
            UsmCommand::Prefetch { .. } => UR_COMMAND_USM_PREFETCH,
            UsmCommand::Advise { .. } => UR_COMMAND_USM_ADVISE,
        }
    }
}

/// The bytes a pitched 2D region spans (`height > 0`): every row but the
/// last takes a pitch. `INVALID_SIZE` when that overflows.
pub fn region_bytes(pitch: usize, width: usize, height: usize) -> UrResult<usize> {
    pitch.checked_mul(height - 1).and_then(|n| n.checked_add(width)).ok_or(UR_RESULT_ERROR_INVALID_SIZE)
}

/// A blocking USM allocation, checked.
pub struct AllocRequest<'a, B: Backend> {
    pub kind: UsmKind,
    pub size: usize,
    /// 0: the backend's natural alignment.
    pub align: usize,
    /// The allocation's device (none for host memory).
    pub device: Option<&'a B::Device>,
    /// A pool of the context serving `device`.
    pub pool: Option<&'a UsmPool<B>>,
    /// `ur_usm_desc_t::hints`.
    pub hints: ur_usm_advice_flags_t,
    /// Flags of a chained `ur_usm_host_desc_t`, checked.
    pub host_flags: ur_usm_host_mem_flags_t,
    /// Flags of a chained `ur_usm_device_desc_t`, checked.
    pub device_flags: ur_usm_device_mem_flags_t,
}

/// What `urUSMGetMemAllocInfo` reports of an allocation.
pub struct AllocInfo<B: Backend> {
    pub kind: ur_usm_type_t,
    pub base: *mut c_void,
    pub size: usize,
    pub device: *mut ur_device_handle_t_,
    pub pool: *mut ur_usm_pool_handle_t_,
    _backend: PhantomData<B>,
}

impl<B: Backend> AllocInfo<B> {
    pub fn new(
        kind: ur_usm_type_t,
        base: *mut c_void,
        size: usize,
        device: *mut ur_device_handle_t_,
        pool: *mut ur_usm_pool_handle_t_,
    ) -> Self {
        AllocInfo { kind, base, size, device, pool, _backend: PhantomData }
    }
}

pub trait Platform<B: Backend>: UrObject<Handle = ur_platform_handle_t_> {
    /// The adapter's platforms, as handles the caller does not own.
    fn all(adapter: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>>;
    /// Every query but `BACKEND` (the core answers it), in range.
    fn info(&self, prop: ur_platform_info_t, out: InfoOut) -> UrResult;
    /// The compiler option of this platform for a frontend option.
    fn backend_option(&self, frontend: &str) -> Option<&'static CStr>;
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Err(UNSUPPORTED)
    }
    fn from_native(_native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_platform_handle_t> {
        Err(UNSUPPORTED)
    }
}

pub trait Device<B: Backend>: UrObject<Handle = ur_device_handle_t_> {
    /// The platform's devices of one type (`ALL`/`DEFAULT` included; the
    /// core checked the enum), as handles the caller does not own.
    fn all(platform: &B::Platform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>>;
    /// Every query in range.
    fn info(&self, prop: ur_device_info_t, out: InfoOut) -> UrResult;
    /// Root devices count no references: their retain and release do
    /// nothing. Sub-devices count the user's, and live as long as their
    /// parent: a release frees nothing. Only a backend that partitions
    /// overrides this.
    fn is_root(&self) -> bool {
        true
    }
    /// The most bytes one allocation may take (`MAX_MEM_ALLOC_SIZE`).
    fn max_alloc_size(&self) -> u64;
    /// Whether the device serves USM of `kind` at all (its
    /// `*_MEMORY_SUPPORT` capabilities are not 0).
    fn serves_usm(&self, _kind: UsmKind) -> bool {
        true
    }
    /// Binary targets this device runs, best first.
    fn binary_targets(&self) -> &'static [&'static [u8]];
    /// `(device, host)` nanoseconds.
    fn global_timestamps(&self) -> UrResult<(u64, u64)>;
    /// The sub-devices of a checked request, kept by this device. The
    /// default refuses every request, as a device with no
    /// `SUPPORTED_PARTITIONS` must.
    fn partition(&self, request: &PartitionRequest) -> UrResult<Vec<&Self>> {
        request.check_against(&[], 0, 0, 0).map(|()| Vec::new())
    }
    /// Whether kernels on this device may reach memory of other devices
    /// of its backend (`USM_P2P_SUPPORT_EXP`); a backend that says so
    /// answers [`Device::peer_info`] per pair and overrides
    /// [`Device::set_peer_access`].
    const PEER_ACCESS: bool = false;
    /// `urUsmP2PPeerAccessGetInfoExp` for `peer`, another device of this
    /// backend (the core answers a device about itself): 1 or 0. The
    /// default says no, so that a client asking before it enables (as
    /// SYCL's `ext_oneapi_can_access_peer` does) learns "no" rather than
    /// an error.
    fn peer_info(&self, _peer: &Self, _prop: ur_exp_peer_info_t) -> UrResult<i32> {
        Ok(0)
    }
    /// `urUsmP2PEnablePeerAccessExp`/`DisablePeerAccessExp` for `peer`,
    /// another device of this backend.
    fn set_peer_access(&self, _peer: &Self, _enable: bool) -> UrResult {
        Err(UNSUPPORTED)
    }
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Err(UNSUPPORTED)
    }
    /// Whether 0 names a native device (a CUDA ordinal does).
    const NATIVE_NULL_IS_VALID: bool = false;
    /// The adapter's device for a native one (the core counts the caller's
    /// reference); `INVALID_VALUE` when the adapter has no such device.
    fn from_native(_native: ur_native_handle_t, _adapter: &Adapter) -> UrResult<ur_device_handle_t> {
        Err(UNSUPPORTED)
    }
}

pub trait Queue<B: Backend>: UrObject<Handle = ur_queue_handle_t_> {
    /// A queue with checked flags (no unknown bits, no contradictory pair,
    /// device-side flags refused) on a device of the context.
    fn create(context: &Context<B>, device: &B::Device, flags: ur_queue_flags_t) -> UrResult<Arc<Self>>;
    fn context(&self) -> &Context<B>;
    fn device(&self) -> &B::Device;
    fn flags(&self) -> ur_queue_flags_t;
    /// `UR_QUEUE_INFO_EMPTY`.
    fn is_empty(&self) -> UrResult<bool>;
    /// Waits for all work; a host synchronisation point for the pools.
    fn finish(&self) -> UrResult;
    fn flush(&self) -> UrResult;
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        Err(UNSUPPORTED)
    }
    fn from_native(
        _native: ur_native_handle_t,
        _context: &Context<B>,
        _device: Option<&B::Device>,
        _flags: ur_queue_flags_t,
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        Err(UNSUPPORTED)
    }

    /// A USM command, or an event wait or barrier. Returns the command's
    /// event when `completion.want_event`. The core blocks on it when
    /// `completion.blocking`.
    fn enqueue_usm(
        &self,
        command: UsmCommand<'_>,
        waits: Events<'_, B>,
        completion: Completion,
    ) -> UrResult<Option<Arc<Event<B>>>>;
    /// Whether async allocations are served (`ASYNC_USM_ALLOCATIONS_SUPPORT`).
    fn async_alloc_supported(&self) -> bool;

    // The submission seam of `crate::queue`: the async allocation and free
    // are written once there, over these.

    /// The queue's lane in its context's engine graph.
    fn lane(&self) -> &Arc<Lane>;
    /// This queue's copy of its device's default pool, taken on first use
    /// (see `ContextPools::with_current`).
    fn default_pool(&self) -> &OnceLock<Arc<UsmPool<B>>>;
    /// What the backend waits on for one event of a wait list.
    type RawWait<'a>;
    /// A checked wait list, translated for this queue. A backend that
    /// cannot wait on an event (one of another context) on the device may
    /// wait for it on the host here.
    fn translate<'a>(&self, events: Events<'a, B>) -> UrResult<Waits<Self::RawWait<'a>>>;
    /// Held from the engine's decision to the command's enqueue, so that
    /// the engine's sequence numbers follow the backend's queue.
    type Order<'a>
    where
        Self: 'a;
    /// The queue's order; `INVALID_QUEUE` for a queue that takes no more
    /// work.
    fn order(&self) -> UrResult<Self::Order<'_>>;
    /// Enqueues the command of an async allocation or free that the engine
    /// recorded: a zeroing fill (`command.zero`), or else a marker, after
    /// `waits` and `command.deps`, that reports `command.stamp` complete
    /// once it has run. Returns its event when `command.want_event`. A
    /// command that waits only on what the queue's order already implies
    /// may share an earlier command's completion rather than run.
    fn enqueue_recorded(
        &self,
        order: Self::Order<'_>,
        command: EngineCommand<'_>,
        waits: Waits<Self::RawWait<'_>>,
    ) -> UrResult<Option<Arc<Event<B>>>>;
    /// An async allocation that the backend serves itself rather than the
    /// engine (a driver's own pool): `None` leaves it to the engine.
    fn alloc_outside_engine(
        &self,
        _pool: &UsmPool<B>,
        _kind: UsmKind,
        _size: usize,
        _events: Events<'_, B>,
        _want_event: bool,
    ) -> Option<UrResult<(*mut c_void, Option<Arc<Event<B>>>)>> {
        None
    }
    /// An async free of a pointer no engine pool of the context holds. By
    /// default none is the backend's own: `INVALID_VALUE`, nothing freed.
    fn free_outside_engine(
        &self,
        _pool: Option<&UsmPool<B>>,
        _ptr: *mut c_void,
        _events: Events<'_, B>,
        _want_event: bool,
    ) -> UrResult<Option<Arc<Event<B>>>> {
        Err(UR_RESULT_ERROR_INVALID_VALUE)
    }
}

/// Program and kernel objects. A backend that builds none uses [`NoProgram`]
/// and [`NoKernel`]; the core then leaves every program and kernel slot to
/// the unsupported stubs.
pub trait Program<B: Backend>: UrObject<Handle = ur_program_handle_t_> {
    const SUPPORTED: bool = true;
    fn context(&self) -> &Context<B>;
    /// Whether the program holds an image for `device`.
    fn has_device(&self, device: &B::Device) -> bool;
    fn create_with_il(_context: &Context<B>, _il: &[u8]) -> UrResult<Arc<Self>> {
        Err(UNSUPPORTED)
    }
    /// One image per device (devices checked to be in the context; images
    /// not empty).
    fn create_with_binary(context: &Context<B>, images: &[(&B::Device, &[u8])]) -> UrResult<Arc<Self>>;
    /// Builds for `devices`, or for every device of the program when empty.
    fn build(&self, devices: &[&B::Device], options: &CStr) -> UrResult;
    fn compile(&self, _devices: &[&B::Device], _options: &CStr) -> UrResult {
        Err(UNSUPPORTED)
    }
    /// A failed link may still give a program that holds the log.
    fn link(
        _context: &Context<B>,
        _devices: &[&B::Device],
        _programs: &[&Self],
        _options: &CStr,
    ) -> Result<Arc<Self>, (ur_result_t, Option<Arc<Self>>)> {
        Err((UNSUPPORTED, None))
    }
    /// Every query in range but the reference count, the context and the
    /// binaries (the core answers those).
    fn info(&self, prop: ur_program_info_t, out: InfoOut) -> UrResult;
    /// The program's binaries, one per device in `DEVICES` order.
    fn binaries(&self) -> UrResult<Vec<Vec<u8>>>;
    fn build_info(&self, device: &B::Device, prop: ur_program_build_info_t, out: InfoOut) -> UrResult;
    fn set_specialization_constants(&self, _constants: &[ur_specialization_constant_info_t]) -> UrResult {
        Err(UNSUPPORTED)
    }
    /// `(address, size)` of a device global.
    fn global_variable(&self, _device: &B::Device, _name: &CStr) -> UrResult<(*mut c_void, usize)> {
        Err(UNSUPPORTED)
    }
    fn native_handle(&self) -> UrResult<ur_native_handle_t>;
    fn from_native(
        _native: ur_native_handle_t,
        _context: &Context<B>,
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        Err(UNSUPPORTED)
    }
}

/// A kernel argument of `urEnqueueKernelLaunchWithArgsExp`, checked.
#[derive(Clone, Copy, Debug)]
pub enum KernelArg<'a> {
    Value { index: u32, bytes: &'a [u8] },
    Pointer { index: u32, ptr: *const c_void },
    Local { index: u32, size: usize },
}

/// A launch's work ranges, checked: 1 to 3 dimensions, no zero sizes.
#[derive(Clone, Copy, Debug)]
pub struct NdRange<'a> {
    pub offset: Option<&'a [usize]>,
    pub global: &'a [usize],
    pub local: Option<&'a [usize]>,
}

pub trait Kernel<B: Backend>: UrObject<Handle = ur_kernel_handle_t_> {
    const SUPPORTED: bool = true;
    fn create(program: &B::Program, name: &CStr) -> UrResult<Arc<Self>>;
    fn program(&self) -> &B::Program;
    /// Every query in range but the reference count, the context and the
    /// program (the core answers those).
    fn info(&self, prop: ur_kernel_info_t, out: InfoOut) -> UrResult;
    fn group_info(&self, device: &B::Device, prop: ur_kernel_group_info_t, out: InfoOut) -> UrResult;
    fn sub_group_info(&self, device: &B::Device, prop: ur_kernel_sub_group_info_t, out: InfoOut) -> UrResult;
    /// USM indirect access, pointer lists and cache hints. The default
    /// accepts them: with unified addressing every USM pointer is reachable.
    fn set_exec_info(&self, _prop: ur_kernel_exec_info_t, _value: *const c_void, _size: usize) -> UrResult {
        Ok(())
    }
    fn suggested_local_work_size(&self, _queue: &B::Queue, _global: &[usize]) -> UrResult<Vec<usize>> {
        Err(UNSUPPORTED)
    }
    fn native_handle(&self) -> UrResult<ur_native_handle_t>;
    fn from_native(
        _native: ur_native_handle_t,
        _context: &Context<B>,
        _program: Option<&B::Program>,
        _ownership: NativeOwnership,
    ) -> UrResult<Arc<Self>> {
        Err(UNSUPPORTED)
    }
    /// Launches on `queue`; `cooperative` asks for a cooperative launch.
    fn launch(
        &self,
        queue: &B::Queue,
        range: &NdRange<'_>,
        args: &[KernelArg<'_>],
        cooperative: bool,
        waits: Events<'_, B>,
        want_event: bool,
    ) -> UrResult<Option<Arc<Event<B>>>>;
}

/// The program type of a backend without programs: no value exists.
pub enum NoProgram {}
/// The kernel type of a backend without kernels: no value exists.
pub enum NoKernel {}

// SAFETY: uninhabited, so no value is ever behind a handle.
unsafe impl UrObject for NoProgram {
    const KIND: crate::handle::ObjectKind = crate::handle::ObjectKind::Program;
    type Handle = ur_program_handle_t_;
}
// SAFETY: as above.
unsafe impl UrObject for NoKernel {
    const KIND: crate::handle::ObjectKind = crate::handle::ObjectKind::Kernel;
    type Handle = ur_kernel_handle_t_;
}

// The bodies are unreachable: no value of these types exists.
impl<B: Backend> Program<B> for NoProgram {
    const SUPPORTED: bool = false;
    fn context(&self) -> &Context<B> {
        match *self {}
    }
    fn has_device(&self, _: &B::Device) -> bool {
        match *self {}
    }
    fn create_with_binary(_: &Context<B>, _: &[(&B::Device, &[u8])]) -> UrResult<Arc<Self>> {
        Err(UNSUPPORTED)
    }
    fn build(&self, _: &[&B::Device], _: &CStr) -> UrResult {
        match *self {}
    }
    fn info(&self, _: ur_program_info_t, _: InfoOut) -> UrResult {
        match *self {}
    }
    fn binaries(&self) -> UrResult<Vec<Vec<u8>>> {
        match *self {}
    }
    fn build_info(&self, _: &B::Device, _: ur_program_build_info_t, _: InfoOut) -> UrResult {
        match *self {}
    }
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        match *self {}
    }
}

impl<B: Backend> Kernel<B> for NoKernel {
    const SUPPORTED: bool = false;
    fn create(_: &B::Program, _: &CStr) -> UrResult<Arc<Self>> {
        Err(UNSUPPORTED)
    }
    fn program(&self) -> &B::Program {
        match *self {}
    }
    fn info(&self, _: ur_kernel_info_t, _: InfoOut) -> UrResult {
        match *self {}
    }
    fn group_info(&self, _: &B::Device, _: ur_kernel_group_info_t, _: InfoOut) -> UrResult {
        match *self {}
    }
    fn sub_group_info(&self, _: &B::Device, _: ur_kernel_sub_group_info_t, _: InfoOut) -> UrResult {
        match *self {}
    }
    fn native_handle(&self) -> UrResult<ur_native_handle_t> {
        match *self {}
    }
    fn launch(
        &self,
        _: &B::Queue,
        _: &NdRange<'_>,
        _: &[KernelArg<'_>],
        _: bool,
        _: Events<'_, B>,
        _: bool,
    ) -> UrResult<Option<Arc<Event<B>>>> {
        match *self {}
    }
}
