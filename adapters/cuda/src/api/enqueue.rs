//! `urEnqueue*`: commands on a queue.

use super::{borrow, give_event, wait_list};
use crate::core::kernel::{Arg, Kernel, NdRange};
use crate::core::queue::Queue;
use crate::core::usm::UsmKind;
use crate::core::usm_pool::UsmPool;
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::boundary::{ffi_call, slice_arg};
use ur_core::handle::clone_arc;
use ur_core::*;

/// The queue of an enqueue call, as an owned reference (commands keep it in
/// their events).
#[inline]
unsafe fn queue(h: ur_queue_handle_t) -> UrResult<Arc<Queue>> {
    clone_arc::<Queue>(h, &crate::DDI)
}

pub unsafe extern "C" fn urEnqueueEventsWait(
    hQueue: ur_queue_handle_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(phEvent, q.wait_events(&wait, false, !phEvent.is_null())?);
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueEventsWaitWithBarrier(
    hQueue: ur_queue_handle_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(phEvent, q.wait_events(&wait, true, !phEvent.is_null())?);
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueEventsWaitWithBarrierExt(
    hQueue: ur_queue_handle_t,
    pProperties: *const ur_exp_enqueue_ext_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        if !pProperties.is_null() && (*pProperties).flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(phEvent, q.wait_events(&wait, true, !phEvent.is_null())?);
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueUSMFill(
    hQueue: ur_queue_handle_t,
    pMem: *mut c_void,
    patternSize: usize,
    pPattern: *const c_void,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        if pMem.is_null() || pPattern.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if patternSize == 0 || size == 0 || patternSize > size || !size.is_multiple_of(patternSize)
        {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if !patternSize.is_power_of_two() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        q.context.usm.check_range(pMem as usize, size)?;
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        let pattern = std::slice::from_raw_parts(pPattern as *const u8, patternSize);
        give_event(
            phEvent,
            q.usm_fill(pMem, pattern, size, &wait, !phEvent.is_null())?,
        );
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueUSMMemcpy(
    hQueue: ur_queue_handle_t,
    blocking: bool,
    pDst: *mut c_void,
    pSrc: *const c_void,
    size: usize,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        if pDst.is_null() || pSrc.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        q.context.usm.check_range(pDst as usize, size)?;
        q.context.usm.check_range(pSrc as usize, size)?;
        let (d, s) = (pDst as usize, pSrc as usize);
        if d < s + size && s < d + size {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(
            phEvent,
            q.usm_memcpy(blocking, pDst, pSrc, size, &wait, !phEvent.is_null())?,
        );
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueUSMPrefetch(
    hQueue: ur_queue_handle_t,
    pMem: *const c_void,
    size: usize,
    flags: ur_usm_migration_flags_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        if pMem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if flags & UR_USM_MIGRATION_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        q.context.usm.check_range(pMem as usize, size)?;
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(
            phEvent,
            q.usm_prefetch(pMem, size, flags, &wait, !phEvent.is_null())?,
        );
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueUSMAdvise(
    hQueue: ur_queue_handle_t,
    pMem: *const c_void,
    size: usize,
    advice: ur_usm_advice_flags_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        if pMem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if advice & UR_USM_ADVICE_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        q.context.usm.check_range(pMem as usize, size)?;
        give_event(
            phEvent,
            q.usm_advise(pMem, size, advice, !phEvent.is_null())?,
        );
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueKernelLaunchWithArgsExp(
    hQueue: ur_queue_handle_t,
    hKernel: ur_kernel_handle_t,
    workDim: u32,
    pGlobalWorkOffset: *const usize,
    pGlobalWorkSize: *const usize,
    pLocalWorkSize: *const usize,
    numArgs: u32,
    pArgs: *const ur_exp_kernel_arg_properties_t,
    launchPropList: *const ur_kernel_launch_ext_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        let kernel = borrow::<Kernel>(hKernel)?;
        if pGlobalWorkSize.is_null() || (pArgs.is_null() && numArgs > 0) {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if !(1..=3).contains(&workDim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let mut cooperative = false;
        if !launchPropList.is_null() {
            let props = &*launchPropList;
            if props.flags & UR_KERNEL_LAUNCH_FLAGS_MASK != 0 {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
            }
            if !props.pNext.is_null() {
                return Err(UR_RESULT_ERROR_INVALID_OPERATION);
            }
            cooperative = props.flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE.0 != 0;
        }
        let n = workDim as usize;
        let range = NdRange {
            offset: (!pGlobalWorkOffset.is_null())
                .then(|| std::slice::from_raw_parts(pGlobalWorkOffset, n)),
            global: std::slice::from_raw_parts(pGlobalWorkSize, n),
            local: (!pLocalWorkSize.is_null())
                .then(|| std::slice::from_raw_parts(pLocalWorkSize, n)),
        };
        let mut args = Vec::with_capacity(numArgs as usize);
        for a in slice_arg(pArgs, numArgs)? {
            if a.r#type.0 > UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0 {
                return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
            }
            let arg = match a.r#type {
                UR_EXP_KERNEL_ARG_TYPE_VALUE => {
                    let p = a.value.value as *const u8;
                    if p.is_null() && a.size > 0 {
                        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
                    }
                    Arg::Value(if a.size == 0 {
                        Vec::new()
                    } else {
                        std::slice::from_raw_parts(p, a.size).to_vec()
                    })
                }
                UR_EXP_KERNEL_ARG_TYPE_POINTER => Arg::Pointer(a.value.pointer as usize),
                UR_EXP_KERNEL_ARG_TYPE_LOCAL => Arg::Local(a.size),
                // No memory objects or samplers in this adapter.
                _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_FEATURE),
            };
            args.push((a.index, arg));
        }
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(
            phEvent,
            q.launch(kernel, range, &args, cooperative, &wait, !phEvent.is_null())?,
        );
        Ok(())
    })
}

unsafe fn alloc_async(
    kind: UsmKind,
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> UrResult {
    let q = queue(hQueue)?;
    if !pProperties.is_null() && (*pProperties).flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    if ppMem.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    let pool: Option<Arc<UsmPool>> = if pPool.is_null() {
        None
    } else {
        Some(clone_arc::<UsmPool>(pPool, &crate::DDI)?)
    };
    let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
    let (ptr, event) = q.usm_alloc_async(kind, pool, size, &wait, !phEvent.is_null())?;
    *ppMem = ptr;
    give_event(phEvent, event);
    Ok(())
}

pub unsafe extern "C" fn urEnqueueUSMDeviceAllocExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        alloc_async(
            UsmKind::Device,
            hQueue,
            pPool,
            size,
            pProperties,
            numEventsInWaitList,
            phEventWaitList,
            ppMem,
            phEvent,
        )
    })
}

pub unsafe extern "C" fn urEnqueueUSMSharedAllocExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        alloc_async(
            UsmKind::Shared,
            hQueue,
            pPool,
            size,
            pProperties,
            numEventsInWaitList,
            phEventWaitList,
            ppMem,
            phEvent,
        )
    })
}

pub unsafe extern "C" fn urEnqueueUSMHostAllocExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    size: usize,
    pProperties: *const ur_exp_async_usm_alloc_properties_t,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    ppMem: *mut *mut c_void,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        alloc_async(
            UsmKind::Host,
            hQueue,
            pPool,
            size,
            pProperties,
            numEventsInWaitList,
            phEventWaitList,
            ppMem,
            phEvent,
        )
    })
}

pub unsafe extern "C" fn urEnqueueUSMFreeExp(
    hQueue: ur_queue_handle_t,
    pPool: ur_usm_pool_handle_t,
    pMem: *mut c_void,
    numEventsInWaitList: u32,
    phEventWaitList: *const ur_event_handle_t,
    phEvent: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = queue(hQueue)?;
        if pMem.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let pool = if pPool.is_null() {
            None
        } else {
            Some(borrow::<UsmPool>(pPool)?)
        };
        let wait = wait_list(phEventWaitList, numEventsInWaitList)?;
        give_event(
            phEvent,
            q.usm_free_async(pool, pMem, &wait, !phEvent.is_null())?,
        );
        Ok(())
    })
}
