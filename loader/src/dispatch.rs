//! Every entry point that has a handle to dispatch on, generated from the one
//! entry-point list: check the handle, find the adapter that owns it, call
//! that adapter's slot with the arguments unchanged.

use crate::registry;
use core::ffi::c_void;
use ur_core::abi::*;

/// A handle type the loader can dispatch on, with the error for a handle of
/// this type that no loaded adapter owns.
pub trait Dispatchable: Copy {
    const FOREIGN: ur_result_t;
    fn as_ptr(self) -> *const c_void;
}

macro_rules! dispatchable {
    ($($t:ty => $e:expr),* $(,)?) => {
        $(impl Dispatchable for $t {
            const FOREIGN: ur_result_t = $e;
            #[inline]
            fn as_ptr(self) -> *const c_void { self as *const c_void }
        })*
    };
}

dispatchable! {
    ur_adapter_handle_t => UR_RESULT_ERROR_INVALID_ARGUMENT,
    ur_platform_handle_t => UR_RESULT_ERROR_INVALID_PLATFORM,
    ur_device_handle_t => UR_RESULT_ERROR_INVALID_DEVICE,
    ur_context_handle_t => UR_RESULT_ERROR_INVALID_CONTEXT,
    ur_event_handle_t => UR_RESULT_ERROR_INVALID_EVENT,
    ur_program_handle_t => UR_RESULT_ERROR_INVALID_PROGRAM,
    ur_kernel_handle_t => UR_RESULT_ERROR_INVALID_KERNEL,
    ur_queue_handle_t => UR_RESULT_ERROR_INVALID_QUEUE,
    ur_sampler_handle_t => UR_RESULT_ERROR_INVALID_SAMPLER,
    ur_mem_handle_t => UR_RESULT_ERROR_INVALID_MEM_OBJECT,
    ur_physical_mem_handle_t => UR_RESULT_ERROR_INVALID_ARGUMENT,
    ur_usm_pool_handle_t => UR_RESULT_ERROR_INVALID_ARGUMENT,
    ur_exp_external_mem_handle_t => UR_RESULT_ERROR_INVALID_ARGUMENT,
    ur_exp_external_semaphore_handle_t => UR_RESULT_ERROR_INVALID_ARGUMENT,
    ur_exp_command_buffer_handle_t => UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_EXP,
    ur_exp_command_buffer_command_handle_t => UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_COMMAND_HANDLE_EXP,
    ur_exp_graph_handle_t => UR_RESULT_ERROR_INVALID_GRAPH,
    ur_exp_executable_graph_handle_t => UR_RESULT_ERROR_INVALID_GRAPH,
}

/// The DDI table of the adapter that owns `h`.
///
/// A null handle is `INVALID_NULL_HANDLE`; one whose first word names no
/// loaded adapter's table is the handle type's `INVALID_*` error.
#[inline]
pub fn table_for<H: Dispatchable>(h: H) -> Result<&'static ur_dditable_t, ur_result_t> {
    let p = h.as_ptr();
    if p.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_HANDLE);
    }
    let registry = registry::current()?;
    if (p as usize) % std::mem::align_of::<usize>() != 0 {
        return Err(H::FOREIGN);
    }
    // SAFETY: a UR handle points at an object whose first word is its
    // adapter's DDI table pointer; we only compare that word with the tables
    // we know, and never follow an unknown one.
    let ddi = unsafe { *(p as *const *const ur_dditable_t) };
    match registry.by_handle_ddi(ddi) {
        Some(adapter) => Ok(adapter.table),
        None => Err(H::FOREIGN),
    }
}

/// The table for the first handle of a C array of handles.
///
/// # Safety
/// `list`, when non-null and `count > 0`, must point at `count` handles.
#[inline]
pub unsafe fn table_for_first<H: Dispatchable>(list: *const H, count: u32) -> Result<&'static ur_dditable_t, ur_result_t> {
    if list.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if count == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    table_for(*list)
}

/// The exported function: the call itself in `direct`, and, while a layer is
/// on, the same call run through `layers::call` with its arguments described.
macro_rules! exported {
    ($name:ident ($($p:ident : $t:ty),*) $direct:expr) => {
        #[no_mangle]
        pub unsafe extern "C" fn $name($($p: $t),*) -> ur_result_t {
            #[inline(always)]
            unsafe fn direct($($p: $t),*) -> ur_result_t {
                $direct
            }
            if crate::layers::on() {
                let args = [$(crate::layers::Arg { name: stringify!($p), ty: stringify!($t), val: &$p }),*];
                return crate::layers::call(stringify!($name), &args, &mut || direct($($p),*));
            }
            direct($($p),*)
        }
    };
}

macro_rules! export_one {
    // Entry points with no handle, or a handle array: bodies written by hand
    // (`by_hand` here, `api/`), exported here like the others.
    ($member:ident $field:ident $name:ident ($($p:ident : $t:ty),*) none) => {
        exported!($name ($($p : $t),*) crate::api::by_hand::$name($($p),*));
    };
    ($member:ident $field:ident $name:ident ($($p:ident : $t:ty),*) [$arr:ident]) => {
        exported!($name ($($p : $t),*) by_hand::$name($($p),*));
    };
    ($member:ident $field:ident $name:ident ($($p:ident : $t:ty),*) $h:ident) => {
        exported!($name ($($p : $t),*)
            match table_for($h) {
                // SAFETY: the slot was filled by the owning adapter (or is a
                // stub) with this entry point's exact signature.
                Ok(t) => match t.$member.$field {
                    Some(f) => f($($p),*),
                    None => UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
                },
                Err(e) => e,
            });
    };
}

macro_rules! export_all {
    ($($member:ident . $field:ident => $name:ident ( $($p:ident : $t:ty),* ) via $via:tt;)*) => {
        $( export_one!($member $field $name ($($p : $t),*) $via); )*
    };
}

ur_core::for_each_entry_point!(export_all);

mod by_hand {
    use super::*;

    /// `urContextCreate`: dispatched on the first device of the list.
    #[inline(always)]
    pub unsafe fn urContextCreate(
        DeviceCount: u32,
        phDevices: *const ur_device_handle_t,
        pProperties: *const ur_context_properties_t,
        phContext: *mut ur_context_handle_t,
    ) -> ur_result_t {
        match table_for_first(phDevices, DeviceCount) {
            Ok(t) => match t.Context.pfnCreate {
                Some(f) => f(DeviceCount, phDevices, pProperties, phContext),
                None => UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
            },
            Err(e) => e,
        }
    }

    /// `urEventWait`: dispatched on the first event of the list.
    #[inline(always)]
    pub unsafe fn urEventWait(numEvents: u32, phEventWaitList: *const ur_event_handle_t) -> ur_result_t {
        match table_for_first(phEventWaitList, numEvents) {
            Ok(t) => match t.Event.pfnWait {
                Some(f) => f(numEvents, phEventWaitList),
                None => UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
            },
            Err(UR_RESULT_ERROR_INVALID_SIZE) => UR_RESULT_ERROR_INVALID_VALUE,
            Err(e) => e,
        }
    }
}
