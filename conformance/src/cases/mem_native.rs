//! urMemBufferCreateWithNativeHandle (spec/memory_objects.md): a buffer over
//! another buffer's native handle sees its data; where buffers are
//! addresses, a USM allocation of the context is a native handle too; bad
//! handles, outputs and properties. Which native handles a backend takes is
//! probed: whether a buffer's native handle is a USM allocation of its
//! context (an address) or not (a driver object, OpenCL's `cl_mem`).

use super::mem::{buffer, read_all};
use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, skip};
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urMemBufferCreateWithNativeHandle.round_trip", round_trip),
    Case::device("urMemBufferCreateWithNativeHandle.usm_allocation", usm_allocation),
    Case::device("urMemBufferCreateWithNativeHandle.other_context", other_context),
    Case::device("urMemBufferCreateWithNativeHandle.bad_inputs", bad_inputs),
];

const SIZE: usize = 4096;

fn borrowed() -> ur_mem_native_properties_t {
    ur_mem_native_properties_t { stype: UR_STRUCTURE_TYPE_MEM_NATIVE_PROPERTIES, pNext: null_mut(), isNativeHandleOwned: false }
}

unsafe fn native_of(fx: &DeviceFx, mem: ur_mem_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native: ur_native_handle_t = 0;
    expect_success!(fx.api.urMemGetNativeHandle(mem, fx.device, &mut native));
    Ok(native)
}

/// Creates a buffer over `native` in `context`; a skip where the backend
/// takes no native buffers.
unsafe fn import(fx: &DeviceFx, context: ur_context_handle_t, native: ur_native_handle_t) -> Result<(ur_result_t, ur_mem_handle_t), Outcome> {
    let props = borrowed();
    let mut mem = null_mut();
    let code = fx.api.urMemBufferCreateWithNativeHandle(native, context, &props, &mut mem)?;
    if code == UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        skip!("the adapter takes no native buffers (urMemBufferCreateWithNativeHandle answers UNSUPPORTED_FEATURE)");
    }
    Ok((code, mem))
}

/// Whether buffers' native handles are addresses: a buffer's is a USM
/// allocation of the context.
unsafe fn handles_are_addresses(fx: &DeviceFx) -> Result<bool, Outcome> {
    let mem = buffer(fx, UR_MEM_FLAG_READ_WRITE.0, SIZE, null_mut())?;
    let native = native_of(fx, mem)?;
    let mut kind = UR_USM_TYPE_UNKNOWN;
    let size = std::mem::size_of::<ur_usm_type_t>();
    let code = fx.api.urUSMGetMemAllocInfo(fx.context, native as *const _, UR_USM_ALLOC_INFO_TYPE, size, (&mut kind as *mut ur_usm_type_t).cast(), null_mut())?;
    expect_success!(fx.api.urMemRelease(mem));
    Ok(code == UR_RESULT_SUCCESS && kind != UR_USM_TYPE_UNKNOWN)
}

/// A buffer over another's native handle (borrowed) reads its data and
/// writes into it; releasing it leaves the first buffer whole.
unsafe fn round_trip(fx: &DeviceFx) -> CaseResult {
    let data: Vec<u8> = (0..SIZE).map(|i| (i * 7) as u8).collect();
    let first = buffer(fx, UR_MEM_FLAG_ALLOC_COPY_HOST_POINTER.0, SIZE, data.as_ptr() as *mut _)?;
    let (code, second) = import(fx, fx.context, native_of(fx, first)?)?;
    expect_result!(UR_RESULT_SUCCESS, Ok::<_, Outcome>(code));
    let mut size = 0usize;
    expect_success!(fx.api.urMemGetInfo(second, UR_MEM_INFO_SIZE, 8, (&mut size as *mut usize).cast(), null_mut()));
    check_eq!(size, SIZE);
    check!(read_all(fx, second, 0, SIZE)? == data, "the imported buffer does not read the first one's data");
    let word = [0x5au8; 16];
    expect_success!(fx.api.urEnqueueMemBufferWrite(fx.queue, second, true, 32, 16, word.as_ptr().cast(), 0, null(), null_mut()));
    expect_success!(fx.api.urMemRelease(second));
    check!(read_all(fx, first, 32, 16)? == word, "a write through the imported buffer is not in the first one");
    expect_success!(fx.api.urMemRelease(first));
    Ok(())
}

/// Where buffers are addresses, a USM allocation's base is a native
/// buffer; an interior address is `INVALID_VALUE`.
unsafe fn usm_allocation(fx: &DeviceFx) -> CaseResult {
    if !handles_are_addresses(fx)? {
        skip!("a buffer's native handle here is a driver object, not a USM address");
    }
    let kind = [UsmKind::Device, UsmKind::Shared, UsmKind::Host].into_iter().find(|k| fx.supports(*k).unwrap_or(false));
    let Some(kind) = kind else { skip!("the device supports no USM") };
    let usm = fx.alloc(kind, SIZE)?;
    fx.fill(fx.queue, usm.ptr, &[0x3c], SIZE, &[])?;
    let (code, _) = import(fx, fx.context, usm.at(64) as ur_native_handle_t)?;
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, Ok::<_, Outcome>(code));
    let (code, mem) = import(fx, fx.context, usm.ptr as ur_native_handle_t)?;
    expect_result!(UR_RESULT_SUCCESS, Ok::<_, Outcome>(code));
    check!(read_all(fx, mem, 0, SIZE)?.iter().all(|&b| b == 0x3c), "a buffer over USM does not read its data");
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

/// Another context's buffer: `INVALID_CONTEXT` for a driver object,
/// `INVALID_VALUE` for an address (it is no allocation of this context).
unsafe fn other_context(fx: &DeviceFx) -> CaseResult {
    let addresses = handles_are_addresses(fx)?;
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreate(1, &fx.device, null(), &mut context));
    let context = fx.own_context(context);
    // A view of the fixture in the other context: it owns nothing.
    let other = std::mem::ManuallyDrop::new(DeviceFx { context: context.get(), ..*fx });
    let mem = buffer(&other, UR_MEM_FLAG_READ_WRITE.0, SIZE, null_mut())?;
    let (code, _) = import(fx, fx.context, native_of(fx, mem)?)?;
    let expected = if addresses { UR_RESULT_ERROR_INVALID_VALUE } else { UR_RESULT_ERROR_INVALID_CONTEXT };
    expect_result!(expected, Ok::<_, Outcome>(code));
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}

unsafe fn bad_inputs(fx: &DeviceFx) -> CaseResult {
    let mem = buffer(fx, UR_MEM_FLAG_READ_WRITE.0, SIZE, null_mut())?;
    let native = native_of(fx, mem)?;
    let props = borrowed();
    let mut out = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urMemBufferCreateWithNativeHandle(0, fx.context, &props, &mut out));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_POINTER, fx.api.urMemBufferCreateWithNativeHandle(native, fx.context, &props, null_mut()));
    let wrong = ur_mem_native_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, ..props };
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urMemBufferCreateWithNativeHandle(native, fx.context, &wrong, &mut out));
    expect_result!(UR_RESULT_ERROR_INVALID_NULL_HANDLE, fx.api.urMemBufferCreateWithNativeHandle(native, null_mut(), &props, &mut out));
    expect_success!(fx.api.urMemRelease(mem));
    Ok(())
}
