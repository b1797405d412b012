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
use crate::engine::UsmKind;
use crate::event::{Event, RawEvent};
use crate::pool::{RawPool, UsmPool};
use crate::UrResult;
use core::ffi::c_void;
use std::marker::PhantomData;
use std::ops::Deref;


/// A backend: its adapter slot and its object types.
pub trait Backend: crate::adapter::Backend + Sized {
    /// The backend's part of a platform and a device (`crate::device`).
    type RawPlatform: crate::device::RawPlatform<Self>;
    type RawDevice: crate::device::RawDevice<Self>;
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
    type DeviceRef: Deref<Target = crate::device::Device<Self>> + Clone + Send + Sync + 'static;
    /// The backend's part of a program and a kernel (`crate::program`);
    /// `NoProgram`/`NoKernel` for a backend that builds none.
    type RawProgram: crate::program::RawProgram<Self>;
    type RawKernel: crate::program::RawKernel<Self>;
    /// The backend's part of a buffer (`crate::mem`): `HostStorage` where a
    /// host allocation serves every device, a driver object's or another
    /// address's where the backend says.
    type RawMem: crate::mem::RawMem<Self>;

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

/// A USM fill, checked. `in_usm`: every range lies inside a live USM
/// allocation of the queue's context (the core looked them up, so an
/// adapter need not). `command`: what its event reports (`USM_FILL`, or
/// `MEM_BUFFER_FILL` for a buffer's).
#[derive(Clone, Copy, Debug)]
pub struct UsmFill<'a> {
    pub command: ur_command_t,
    pub dst: *mut c_void,
    pub pattern: &'a [u8],
    pub size: usize,
    pub in_usm: bool,
}

/// A USM copy, checked (the ranges do not overlap); `in_usm` and `command`
/// as for a fill (`USM_MEMCPY`, or a buffer's read, write or copy).
#[derive(Clone, Copy, Debug)]
pub struct UsmCopy {
    pub command: ur_command_t,
    pub dst: *mut c_void,
    pub src: *const c_void,
    pub size: usize,
    pub in_usm: bool,
}

/// A pitched 2D fill, checked: `height` rows of `width` bytes, each row
/// starting the pattern afresh.
#[derive(Clone, Copy, Debug)]
pub struct UsmFill2D<'a> {
    pub dst: *mut c_void,
    pub pitch: usize,
    pub pattern: &'a [u8],
    pub width: usize,
    pub height: usize,
}

/// A pitched 2D copy, checked; `command` as for a fill (`USM_MEMCPY_2D`, or
/// a buffer's rect read, write or copy).
#[derive(Clone, Copy, Debug)]
pub struct UsmCopy2D {
    pub command: ur_command_t,
    pub dst: *mut c_void,
    pub dst_pitch: usize,
    pub src: *const c_void,
    pub src_pitch: usize,
    pub width: usize,
    pub height: usize,
}

/// An enqueued USM command, checked, as the core dispatches it to the
/// backend's queue (`RawQueue`'s method of the same name).
#[derive(Clone, Copy, Debug)]
pub enum UsmCommand<'a> {
    /// `urEnqueueEventsWait` (`barrier: false`) or a barrier. An empty wait
    /// list means everything enqueued before on the queue.
    Wait { barrier: bool },
    Fill(UsmFill<'a>),
    Copy(UsmCopy),
    Fill2D(UsmFill2D<'a>),
    Copy2D(UsmCopy2D),
    Prefetch(UsmHint),
    Advise(UsmHint),
}

/// A prefetch or advice, checked: `flags` are the migration flags of a
/// prefetch, or the advice.
#[derive(Clone, Copy, Debug)]
pub struct UsmHint {
    pub ptr: *const c_void,
    pub size: usize,
    pub flags: u32,
}

impl UsmCommand<'_> {
    pub fn command_type(&self) -> ur_command_t {
        match self {
            UsmCommand::Wait { barrier: false } => UR_COMMAND_EVENTS_WAIT,
            UsmCommand::Wait { barrier: true } => UR_COMMAND_EVENTS_WAIT_WITH_BARRIER,
            UsmCommand::Fill(f) => f.command,
            UsmCommand::Copy(c) => c.command,
            UsmCommand::Fill2D(_) => UR_COMMAND_USM_FILL_2D,
            UsmCommand::Copy2D(c) => c.command,
            UsmCommand::Prefetch(_) => UR_COMMAND_USM_PREFETCH,
            UsmCommand::Advise(_) => UR_COMMAND_USM_ADVISE,
        }
    }
}

/// Whether `command` is an event wait or a barrier (not a hint, which a
/// backend may also run as a marker): those with an empty wait list wait
/// for everything enqueued before.
pub fn is_event_wait(command: ur_command_t) -> bool {
    command == UR_COMMAND_EVENTS_WAIT || command == UR_COMMAND_EVENTS_WAIT_WITH_BARRIER
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
    pub device: Option<&'a crate::device::Device<B>>,
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

/// A kernel argument of `urEnqueueKernelLaunchWithArgsExp`, checked.
#[derive(Clone, Copy, Debug)]
pub enum KernelArg<'a> {
    Value { index: u32, bytes: &'a [u8] },
    Pointer { index: u32, ptr: *const c_void },
    Local { index: u32, size: usize },
    /// A buffer as its driver object (OpenCL's `cl_mem`), from
    /// `RawMem::kernel_arg`; backends whose buffers are addresses get a
    /// `Pointer` instead.
    MemHandle { index: u32, handle: *mut c_void },
}

/// A launch's work ranges, checked: 1 to 3 dimensions, no zero sizes.
#[derive(Clone, Copy, Debug)]
pub struct NdRange<'a> {
    pub offset: Option<&'a [usize]>,
    pub global: &'a [usize],
    pub local: Option<&'a [usize]>,
}
