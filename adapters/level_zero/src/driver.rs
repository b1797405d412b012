//! Level Zero through its loader, opened at run time: the entry points this
//! adapter calls, resolved once into [`Ze`] (a missing library or symbol is
//! `None`, never a panic), and owning wrappers that give back what they
//! hold (contexts, command lists, event pools, events).
//!
//! Calls go through [`ze!`], which answers `ZE_RESULT_ERROR_UNINITIALIZED`
//! for an entry point the loader lacks; [`check`] turns a result into a
//! `Result` with the Level Zero code as its error.

use level_zero_sys::*;
use libloading::Library;
use std::sync::OnceLock;

macro_rules! ze_table {
    ($($name:ident: $pfn:ident),* $(,)?) => {
        /// The loader's entry points this adapter calls.
        pub struct Ze {
            _lib: Library,
            $(pub $name: $pfn,)*
        }

        impl Ze {
            /// # Safety
            /// `lib` is a Level Zero loader: its symbols have the signatures
            /// of `ze_api.h`.
            unsafe fn resolve(lib: Library) -> Ze {
                $(
                    let $name: $pfn = lib
                        .get::<$pfn>(concat!(stringify!($name), "\0").as_bytes())
                        .ok()
                        .and_then(|s| *s);
                )*
                Ze { _lib: lib, $($name,)* }
            }
        }
    };
}

ze_table! {
    zeInit: ze_pfnInit_t,
    zeDriverGet: ze_pfnDriverGet_t,
    zeDriverGetApiVersion: ze_pfnDriverGetApiVersion_t,
    zeDriverGetProperties: ze_pfnDriverGetProperties_t,
    zeDeviceGet: ze_pfnDeviceGet_t,
    zeDeviceGetProperties: ze_pfnDeviceGetProperties_t,
    zeDeviceGetComputeProperties: ze_pfnDeviceGetComputeProperties_t,
    zeDeviceGetMemoryProperties: ze_pfnDeviceGetMemoryProperties_t,
    zeDeviceGetMemoryAccessProperties: ze_pfnDeviceGetMemoryAccessProperties_t,
    zeDeviceGetCommandQueueGroupProperties: ze_pfnDeviceGetCommandQueueGroupProperties_t,
    zeDeviceGetGlobalTimestamps: ze_pfnDeviceGetGlobalTimestamps_t,
    zeContextCreate: ze_pfnContextCreate_t,
    zeContextCreateEx: ze_pfnContextCreateEx_t,
    zeContextDestroy: ze_pfnContextDestroy_t,
    zeMemAllocHost: ze_pfnMemAllocHost_t,
    zeMemAllocDevice: ze_pfnMemAllocDevice_t,
    zeMemAllocShared: ze_pfnMemAllocShared_t,
    zeMemFree: ze_pfnMemFree_t,
    zeMemGetAllocProperties: ze_pfnMemGetAllocProperties_t,
    zeMemGetAddressRange: ze_pfnMemGetAddressRange_t,
    zeCommandListCreateImmediate: ze_pfnCommandListCreateImmediate_t,
    zeCommandListDestroy: ze_pfnCommandListDestroy_t,
    zeCommandListAppendBarrier: ze_pfnCommandListAppendBarrier_t,
    zeCommandListAppendMemoryCopy: ze_pfnCommandListAppendMemoryCopy_t,
    zeCommandListAppendMemoryFill: ze_pfnCommandListAppendMemoryFill_t,
    zeEventPoolCreate: ze_pfnEventPoolCreate_t,
    zeEventPoolDestroy: ze_pfnEventPoolDestroy_t,
    zeEventCreate: ze_pfnEventCreate_t,
    zeEventDestroy: ze_pfnEventDestroy_t,
    zeEventHostSynchronize: ze_pfnEventHostSynchronize_t,
    zeEventQueryStatus: ze_pfnEventQueryStatus_t,
    zeEventHostReset: ze_pfnEventHostReset_t,
    zeEventQueryKernelTimestamp: ze_pfnEventQueryKernelTimestamp_t,
}

/// The loader, opened once per process; `None` when it is not installed.
pub fn table() -> Option<&'static Ze> {
    static ZE: OnceLock<Option<Ze>> = OnceLock::new();
    ZE.get_or_init(|| {
        // SAFETY: opening Intel's loader runs its initialisers, which is what
        // using Level Zero means; its symbols are read with the signatures
        // of ze_api.h and live as long as the library kept beside them.
        unsafe { Library::new("libze_loader.so.1").ok().map(|lib| Ze::resolve(lib)) }
    })
    .as_ref()
}

/// Calls a loader entry point: `ze!(zeMemFree(ctx, ptr))` is the
/// `ze_result_t` of the call, `ZE_RESULT_ERROR_UNINITIALIZED` when the
/// loader or the symbol is missing. The call is unsafe: the caller vouches
/// for its arguments.
#[macro_export]
macro_rules! ze {
    ($name:ident($($arg:expr),* $(,)?)) => {
        match $crate::driver::table().and_then(|t| t.$name) {
            Some(f) => f($($arg),*),
            None => level_zero_sys::ZE_RESULT_ERROR_UNINITIALIZED,
        }
    };
}

/// A Level Zero result as a `Result`.
pub fn check(r: ze_result_t) -> Result<(), ze_result_t> {
    if r == ZE_RESULT_SUCCESS {
        Ok(())
    } else {
        Err(r)
    }
}

/// A Level Zero context, destroyed with the last holder when it is ours.
pub struct ZeContext(pub ze_context_handle_t, bool);

// SAFETY: Level Zero contexts may be used from any thread.
unsafe impl Send for ZeContext {}
unsafe impl Sync for ZeContext {}

impl ZeContext {
    pub fn create(driver: ze_driver_handle_t, devices: &[ze_device_handle_t]) -> Result<ZeContext, ze_result_t> {
        let desc = ze_context_desc_t { stype: ZE_STRUCTURE_TYPE_CONTEXT_DESC, pNext: std::ptr::null(), flags: 0 };
        let mut raw: ze_context_handle_t = std::ptr::null_mut();
        let mut devices = devices.to_vec();
        // SAFETY: a live driver, a valid descriptor and device list, an out
        // pointer we own.
        check(unsafe { ze!(zeContextCreateEx(driver, &desc, devices.len() as u32, devices.as_mut_ptr(), &mut raw)) })
            .or_else(|_| {
                // A driver without CreateEx: a context of every device.
                // SAFETY: as above.
                check(unsafe { ze!(zeContextCreate(driver, &desc, &mut raw)) })
            })?;
        Ok(ZeContext(raw, true))
    }

    /// The user's context: destroyed with the last holder when `owned`.
    pub fn from_native(raw: ze_context_handle_t, owned: bool) -> ZeContext {
        ZeContext(raw, owned)
    }
}

impl Drop for ZeContext {
    fn drop(&mut self) {
        if self.1 {
            // SAFETY: ours; every object made in it holds this wrapper, so
            // none is left.
            unsafe { ze!(zeContextDestroy(self.0)) };
        }
    }
}

/// An immediate command list: commands run as they are appended.
pub struct ImmediateList(pub ze_command_list_handle_t);

// SAFETY: the adapter serialises appends to one list (the queue's order
// lock); Level Zero lets a list be used from any thread.
unsafe impl Send for ImmediateList {}
unsafe impl Sync for ImmediateList {}

impl ImmediateList {
    pub fn create(context: &ZeContext, device: ze_device_handle_t, ordinal: u32) -> Result<Self, ze_result_t> {
        let desc = ze_command_queue_desc_t {
            stype: ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            pNext: std::ptr::null(),
            ordinal,
            index: 0,
            flags: 0,
            mode: ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            priority: ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
        };
        let mut raw: ze_command_list_handle_t = std::ptr::null_mut();
        // SAFETY: a live context and one of its devices; a valid descriptor.
        check(unsafe { ze!(zeCommandListCreateImmediate(context.0, device, &desc, &mut raw)) })?;
        Ok(ImmediateList(raw))
    }
}

impl Drop for ImmediateList {
    fn drop(&mut self) {
        // SAFETY: its owner waited for every command appended.
        unsafe { ze!(zeCommandListDestroy(self.0)) };
    }
}

/// An event pool of `count` host-visible events, with kernel timestamps
/// when `timestamps`.
pub struct EventPool(pub ze_event_pool_handle_t);

// SAFETY: event pools may be used from any thread.
unsafe impl Send for EventPool {}
unsafe impl Sync for EventPool {}

impl EventPool {
    pub fn create(context: &ZeContext, count: u32, timestamps: bool) -> Result<Self, ze_result_t> {
        let mut flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
        if timestamps {
            flags |= ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
        }
        let desc = ze_event_pool_desc_t { stype: ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, pNext: std::ptr::null(), flags, count };
        let mut raw: ze_event_pool_handle_t = std::ptr::null_mut();
        // SAFETY: a live context; no device list means every device of it.
        check(unsafe { ze!(zeEventPoolCreate(context.0, &desc, 0, std::ptr::null_mut(), &mut raw)) })?;
        Ok(EventPool(raw))
    }

    /// Event `index` of the pool, signalled and waited for device-wide and
    /// seen by the host.
    pub fn event(&self, index: u32) -> Result<ze_event_handle_t, ze_result_t> {
        let desc = ze_event_desc_t {
            stype: ZE_STRUCTURE_TYPE_EVENT_DESC,
            pNext: std::ptr::null(),
            index,
            signal: ZE_EVENT_SCOPE_FLAG_HOST,
            wait: ZE_EVENT_SCOPE_FLAG_HOST,
        };
        let mut raw: ze_event_handle_t = std::ptr::null_mut();
        // SAFETY: a live pool; `index` below its count (the caller's).
        check(unsafe { ze!(zeEventCreate(self.0, &desc, &mut raw)) })?;
        Ok(raw)
    }
}

impl Drop for EventPool {
    fn drop(&mut self) {
        // SAFETY: the pool's events were destroyed before (their cache
        // holds the pool).
        unsafe { ze!(zeEventPoolDestroy(self.0)) };
    }
}

/// Whether an event has been signalled (no wait).
pub fn event_signalled(event: ze_event_handle_t) -> Result<bool, ze_result_t> {
    // SAFETY: a live event.
    match unsafe { ze!(zeEventQueryStatus(event)) } {
        ZE_RESULT_SUCCESS => Ok(true),
        ZE_RESULT_NOT_READY => Ok(false),
        e => Err(e),
    }
}

/// Blocks until an event is signalled.
pub fn event_wait(event: ze_event_handle_t) -> Result<(), ze_result_t> {
    // SAFETY: a live event; u64::MAX waits without a timeout.
    check(unsafe { ze!(zeEventHostSynchronize(event, u64::MAX)) })
}

/// `(start, end)` device ticks of a signalled event of a timestamp pool.
pub fn event_timestamps(event: ze_event_handle_t) -> Result<(u64, u64), ze_result_t> {
    let mut result = ze_kernel_timestamp_result_t {
        global: ze_kernel_timestamp_data_t { kernelStart: 0, kernelEnd: 0 },
        context: ze_kernel_timestamp_data_t { kernelStart: 0, kernelEnd: 0 },
    };
    // SAFETY: a live event; an out struct we own.
    check(unsafe { ze!(zeEventQueryKernelTimestamp(event, &mut result)) })?;
    Ok((result.global.kernelStart, result.global.kernelEnd))
}

/// `(host, device)` timestamps of a device, in its ticks.
pub fn global_timestamps(device: ze_device_handle_t) -> Result<(u64, u64), ze_result_t> {
    let (mut host, mut dev) = (0u64, 0u64);
    // SAFETY: a live device; out pointers we own.
    check(unsafe { ze!(zeDeviceGetGlobalTimestamps(device, &mut host, &mut dev)) })?;
    Ok((host, dev))
}

/// A list query of the `(count, items)` form: the count first, then the items.
pub fn list<T: Copy>(
    default: T,
    mut get: impl FnMut(*mut u32, *mut T) -> ze_result_t,
) -> Result<Vec<T>, ze_result_t> {
    let mut count = 0u32;
    check(get(&mut count, std::ptr::null_mut()))?;
    let mut items = vec![default; count as usize];
    if count > 0 {
        check(get(&mut count, items.as_mut_ptr()))?;
        items.truncate(count as usize);
    }
    Ok(items)
}
