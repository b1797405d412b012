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
use crate::engine::UsmKind;
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
use std::sync::Arc;

const UNSUPPORTED: ur_result_t = UR_RESULT_ERROR_UNSUPPORTED_FEATURE;

/// A backend: its adapter slot and its object types.
pub trait Backend: crate::adapter::Backend + Sized {
    type Platform: Platform<Self>;
    type Device: Device<Self>;
    /// The backend's part of a context (`crate::context`).
    type RawContext: crate::context::RawContext<Self>;
    /// The backend's part of a queue (`crate::queue::object`).
    type RawQueue: crate::queue::object::RawQueue<Self>;
    /// The backend's part of an event (`crate::event`).
    type RawEvent: RawEvent<Self>;
    /// The backend's part of a USM pool (`crate::pool`).
    type RawPool: RawPool<Self>;
    /// How a pool holds its device (`Arc<Device>`, or `&'static Device`
    /// where devices live as long as the adapter).
    type DeviceRef: Deref<Target = Self::Device> + Clone + Send + Sync + 'static;
    /// The backend's part of a program and a kernel (`crate::program`);
    /// `NoProgram`/`NoKernel` for a backend that builds none.
    type RawProgram: crate::program::RawProgram<Self>;
    type RawKernel: crate::program::RawKernel<Self>;

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
