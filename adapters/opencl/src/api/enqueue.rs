//! `urEnqueue*`: markers and barriers, USM fills and copies, kernel launches.

use super::{arc, obj};
use crate::cl::{call, wait_list_ptr};
use crate::conv::check;
use crate::core::context::Context;
use crate::core::kernel::{Arg, Kernel, NdRange};
use crate::core::queue::{Node, Queue};
use crate::core::usm;
use cl3::ext as sys;
use std::ffi::c_void;
use std::sync::Arc;
use sys::{cl_event, cl_int};
use ur_core::boundary::{ffi_call, for_each_in_chain, slice_arg, wait_list_arg};
use ur_core::*;

/// A marker (or barrier) behind `waits` on `queue`.
fn marker(queue: sys::cl_command_queue, barrier: bool, waits: &[cl_event], event: *mut cl_event) -> Result<(), cl_int> {
    let n = waits.len() as sys::cl_uint;
    if barrier {
        check(call!(clEnqueueBarrierWithWaitList(queue, n, wait_list_ptr(waits), event)))
    } else {
        check(call!(clEnqueueMarkerWithWaitList(queue, n, wait_list_ptr(waits), event)))
    }
}

unsafe fn events_wait(
    h_queue: ur_queue_handle_t,
    barrier: bool,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> UrResult {
    let q = arc::<Queue>(h_queue)?;
    let waits = wait_list_arg(ph_wait_list, num_events)?;
    let command = if barrier { UR_COMMAND_EVENTS_WAIT_WITH_BARRIER } else { UR_COMMAND_EVENTS_WAIT };
    // With an empty list both wait for everything enqueued before (which the
    // engine's graph records only for a barrier: knowing less is safe). On an
    // in-order queue every command already waits for the one before it, so
    // a barrier is a marker there.
    let node = if barrier { Node::Barrier } else { Node::Command };
    let barrier = barrier && q.out_of_order;
    q.submit_node(command, node, waits, ph_event, |w, ev| marker(q.cl.get(), barrier, w, ev))?;
    Ok(())
}

pub unsafe extern "C" fn urEnqueueEventsWait(
    h_queue: ur_queue_handle_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| events_wait(h_queue, false, num_events, ph_wait_list, ph_event))
}

pub unsafe extern "C" fn urEnqueueEventsWaitWithBarrier(
    h_queue: ur_queue_handle_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| events_wait(h_queue, true, num_events, ph_wait_list, ph_event))
}

pub unsafe extern "C" fn urEnqueueEventsWaitWithBarrierExt(
    h_queue: ur_queue_handle_t,
    p_properties: *const ur_exp_enqueue_ext_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        // Low-power events are a hint about how to wait; the barrier is the same.
        if !p_properties.is_null() && (*p_properties).flags & UR_EXP_ENQUEUE_EXT_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        events_wait(h_queue, true, num_events, ph_wait_list, ph_event)
    })
}

fn is_power_of_two(n: usize) -> bool {
    n != 0 && n & (n - 1) == 0
}

pub unsafe extern "C" fn urEnqueueUSMFill(
    h_queue: ur_queue_handle_t,
    p_mem: *mut c_void,
    pattern_size: usize,
    p_pattern: *const c_void,
    size: usize,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        if p_mem.is_null() || p_pattern.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if pattern_size == 0 || size == 0 || pattern_size > size || !size.is_multiple_of(pattern_size) {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        if !is_power_of_two(pattern_size) {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        usm::check_bounds(&q.context, p_mem, size)?;
        let pattern = std::slice::from_raw_parts(p_pattern as *const u8, pattern_size);
        q.submit(UR_COMMAND_USM_FILL, waits, ph_event, |w, ev| {
            usm::enqueue_fill(&q.context, q.cl.get(), p_mem, pattern, size, w, ev)
        })?;
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueUSMMemcpy(
    h_queue: ur_queue_handle_t,
    blocking: bool,
    p_dst: *mut c_void,
    p_src: *const c_void,
    size: usize,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        if p_dst.is_null() || p_src.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if size == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        usm::check_bounds(&q.context, p_dst, size)?;
        usm::check_bounds(&q.context, p_src, size)?;
        q.submit(UR_COMMAND_USM_MEMCPY, waits, ph_event, |w, ev| {
            usm::enqueue_copy(&q.context, q.cl.get(), blocking, p_dst, p_src, size, w, ev)
        })?;
        Ok(())
    })
}

/// Checks the allocation a prefetch or advice names.
fn check_hinted_range(ctx: &Context, p_mem: *const c_void, size: usize) -> UrResult {
    if p_mem.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if size == 0 {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    usm::check_bounds(ctx, p_mem, size)
}

/// Migration is a hint: a marker keeps its place in the queue's order, and
/// the memory is where both host and device reach it anyway (CPU devices,
/// fine-grained SVM, the runtime's own USM placement).
pub unsafe extern "C" fn urEnqueueUSMPrefetch(
    h_queue: ur_queue_handle_t,
    p_mem: *const c_void,
    size: usize,
    flags: ur_usm_migration_flags_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        check_hinted_range(&q.context, p_mem, size)?;
        if flags & UR_USM_MIGRATION_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        q.submit(UR_COMMAND_USM_PREFETCH, waits, ph_event, |w, ev| marker(q.cl.get(), false, w, ev))?;
        Ok(())
    })
}

/// Advice is a hint the runtimes here have no use for; the event still
/// orders after everything before it.
pub unsafe extern "C" fn urEnqueueUSMAdvise(
    h_queue: ur_queue_handle_t,
    p_mem: *const c_void,
    size: usize,
    advice: ur_usm_advice_flags_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        check_hinted_range(&q.context, p_mem, size)?;
        if advice & UR_USM_ADVICE_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        q.submit(UR_COMMAND_USM_ADVISE, &[], ph_event, |w, ev| marker(q.cl.get(), false, w, ev))?;
        Ok(())
    })
}

/// Runs `row` for every row, each behind `waits`, then joins the rows in
/// one marker whose event stands for the whole command. When `blocking`,
/// waits for that marker.
fn rows(
    queue: sys::cl_command_queue,
    height: usize,
    blocking: bool,
    waits: &[cl_event],
    event: *mut cl_event,
    mut row: impl FnMut(usize, &[cl_event], *mut cl_event) -> Result<(), cl_int>,
) -> Result<(), cl_int> {
    let mut row_events: Vec<opencl3::event::Event> = Vec::with_capacity(height);
    for r in 0..height {
        let mut e: cl_event = std::ptr::null_mut();
        let status = row(r, waits, &mut e);
        if !e.is_null() {
            row_events.push(opencl3::event::Event::new(e));
        }
        status?;
    }
    let joined: Vec<cl_event> = row_events.iter().map(|e| e.get()).collect();
    let mut own: cl_event = std::ptr::null_mut();
    let out = if event.is_null() && blocking { &mut own as *mut cl_event } else { event };
    marker(queue, false, &joined, out)?;
    let own = (!own.is_null()).then(|| opencl3::event::Event::new(own));
    if blocking {
        // SAFETY: `out` was just written by a successful enqueue.
        cl3::event::wait_for_events(&[unsafe { *out }])?;
    }
    drop(own);
    Ok(())
}

pub unsafe extern "C" fn urEnqueueUSMFill2D(
    h_queue: ur_queue_handle_t,
    p_mem: *mut c_void,
    pitch: usize,
    pattern_size: usize,
    p_pattern: *const c_void,
    width: usize,
    height: usize,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        if p_mem.is_null() || p_pattern.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let area = width.checked_mul(height).ok_or(UR_RESULT_ERROR_INVALID_SIZE)?;
        if pitch == 0
            || pitch < width
            || width == 0
            || height == 0
            || !is_power_of_two(pattern_size)
            || pattern_size > area
            || !area.is_multiple_of(pattern_size)
            || !width.is_multiple_of(pattern_size)
        {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        let extent = pitch.checked_mul(height - 1).and_then(|s| s.checked_add(width)).ok_or(UR_RESULT_ERROR_INVALID_SIZE)?;
        usm::check_bounds(&q.context, p_mem, extent)?;
        let pattern = std::slice::from_raw_parts(p_pattern as *const u8, pattern_size);
        let ctx = &q.context;
        let queue = q.cl.get();
        q.submit(UR_COMMAND_USM_FILL_2D, waits, ph_event, |w, ev| {
            if pitch == width {
                return usm::enqueue_fill(ctx, queue, p_mem, pattern, area, w, ev);
            }
            rows(queue, height, false, w, ev, |r, w, e| {
                usm::enqueue_fill(ctx, queue, (p_mem as *mut u8).add(r * pitch) as *mut c_void, pattern, width, w, e)
            })
        })?;
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueUSMMemcpy2D(
    h_queue: ur_queue_handle_t,
    blocking: bool,
    p_dst: *mut c_void,
    dst_pitch: usize,
    p_src: *const c_void,
    src_pitch: usize,
    width: usize,
    height: usize,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q = arc::<Queue>(h_queue)?;
        if p_dst.is_null() || p_src.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        if src_pitch == 0 || dst_pitch == 0 || src_pitch < width || dst_pitch < width || height == 0 || width == 0 {
            return Err(UR_RESULT_ERROR_INVALID_SIZE);
        }
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        let extent = |pitch: usize| {
            pitch.checked_mul(height - 1).and_then(|s| s.checked_add(width)).ok_or(UR_RESULT_ERROR_INVALID_SIZE)
        };
        usm::check_bounds(&q.context, p_dst, extent(dst_pitch)?)?;
        usm::check_bounds(&q.context, p_src, extent(src_pitch)?)?;
        let ctx = &q.context;
        let queue = q.cl.get();
        q.submit(UR_COMMAND_USM_MEMCPY_2D, waits, ph_event, |w, ev| {
            if src_pitch == width && dst_pitch == width {
                return usm::enqueue_copy(ctx, queue, blocking, p_dst, p_src, width * height, w, ev);
            }
            rows(queue, height, blocking, w, ev, |r, w, e| {
                let dst = (p_dst as *mut u8).add(r * dst_pitch) as *mut c_void;
                let src = (p_src as *const u8).add(r * src_pitch) as *const c_void;
                usm::enqueue_copy(ctx, queue, false, dst, src, width, w, e)
            })
        })?;
        Ok(())
    })
}

/// Reads the launch property list: flags must be known; cooperative
/// launches and cluster or work-group properties are not offered.
unsafe fn check_launch_properties(list: *const ur_kernel_launch_ext_properties_t) -> UrResult {
    for_each_in_chain(list as *const c_void, |stype, p| {
        if stype != UR_STRUCTURE_TYPE_KERNEL_LAUNCH_EXT_PROPERTIES {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        let flags = (*(p as *const ur_kernel_launch_ext_properties_t)).flags;
        if flags & UR_KERNEL_LAUNCH_FLAGS_MASK != 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        if flags & UR_KERNEL_LAUNCH_FLAG_COOPERATIVE.0 != 0 {
            return Err(UR_RESULT_ERROR_INVALID_OPERATION);
        }
        Ok(())
    })
}

pub unsafe extern "C" fn urEnqueueKernelLaunchWithArgsExp(
    h_queue: ur_queue_handle_t,
    h_kernel: ur_kernel_handle_t,
    work_dim: u32,
    p_global_work_offset: *const usize,
    p_global_work_size: *const usize,
    p_local_work_size: *const usize,
    num_args: u32,
    p_args: *const ur_exp_kernel_arg_properties_t,
    launch_prop_list: *const ur_kernel_launch_ext_properties_t,
    num_events: u32,
    ph_wait_list: *const ur_event_handle_t,
    ph_event: *mut ur_event_handle_t,
) -> ur_result_t {
    ffi_call(|| {
        let q: Arc<Queue> = arc::<Queue>(h_queue)?;
        let k = obj::<Kernel>(h_kernel)?;
        if p_global_work_size.is_null() || (p_args.is_null() && num_args > 0) {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let raw_args = slice_arg(p_args, num_args)?;
        if raw_args.iter().any(|a| a.r#type.0 > UR_EXP_KERNEL_ARG_TYPE_SAMPLER.0) {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        check_launch_properties(launch_prop_list)?;
        if !(1..=3).contains(&work_dim) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let global = slice_arg(p_global_work_size, work_dim)?;
        if global.contains(&0) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_DIMENSION);
        }
        let local = if p_local_work_size.is_null() { None } else { Some(slice_arg(p_local_work_size, work_dim)?) };
        if local.is_some_and(|l| l.contains(&0)) {
            return Err(UR_RESULT_ERROR_INVALID_WORK_GROUP_SIZE);
        }
        let offset = if p_global_work_offset.is_null() { None } else { Some(slice_arg(p_global_work_offset, work_dim)?) };
        let waits = wait_list_arg(ph_wait_list, num_events)?;
        let args = raw_args
            .iter()
            .map(|a| match a.r#type {
                UR_EXP_KERNEL_ARG_TYPE_VALUE => {
                    if a.value.value.is_null() {
                        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
                    }
                    Ok(Arg::Value { index: a.index, size: a.size, value: a.value.value })
                }
                UR_EXP_KERNEL_ARG_TYPE_POINTER => Ok(Arg::Pointer { index: a.index, ptr: a.value.pointer }),
                UR_EXP_KERNEL_ARG_TYPE_LOCAL => Ok(Arg::Local { index: a.index, size: a.size }),
                // This adapter makes no memory objects or samplers, so no
                // handle of either can be one of its own.
                UR_EXP_KERNEL_ARG_TYPE_MEM_OBJ => Err(UR_RESULT_ERROR_INVALID_MEM_OBJECT),
                _ => Err(UR_RESULT_ERROR_INVALID_SAMPLER),
            })
            .collect::<UrResult<Vec<Arg>>>()?;
        let range = NdRange { offset, global, local };
        k.launch(&q, &range, &args, waits, ph_event)
    })
}
