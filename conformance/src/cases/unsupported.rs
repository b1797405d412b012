//! Entry points outside the supported subset answer
//! UR_RESULT_ERROR_UNSUPPORTED_FEATURE (never a crash or a null table slot),
//! even when every argument is valid; and like every entry point, they check
//! their handle arguments first.

use crate::harness::*;
use crate::names::result_name;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urMemImageCreate.unsupported_and_no_image_support", images),
    Case::device("urSamplerCreate.unsupported", sampler),
    Case::device("urCommandBufferCreateExp.unsupported", command_buffer),
    Case::device("urPhysicalMemCreate.unsupported", physical_mem),
    Case::device("urVirtualMemReserve.unsupported", virtual_mem),
    Case::adapter("urMemBufferCreate.null_handles_first_in_every_entry_point", null_handles_everywhere),
    Case::device("urEventGetNativeHandle.null_output", event_native_null_output),
];

/// Expects UNSUPPORTED_FEATURE; on a success, runs `undo` to release what
/// the call made before failing the case.
fn expect_unsupported(call: &str, code: ur_result_t, undo: impl FnOnce()) -> CaseResult {
    if code == UR_RESULT_SUCCESS {
        undo();
    }
    if code != UR_RESULT_ERROR_UNSUPPORTED_FEATURE {
        return Err(format!("{call}, outside the supported subset, returned {}", result_name(code)).into());
    }
    Ok(())
}

/// [`expect_unsupported`] of a create through `create(out)`, whose object
/// `release` releases should the create succeed.
unsafe fn create_unsupported<T>(
    call: &str,
    release: Option<unsafe extern "C" fn(*mut T) -> ur_result_t>,
    create: impl FnOnce(*mut *mut T) -> Result<ur_result_t, String>,
) -> CaseResult {
    let mut made = null_mut();
    let code = create(&mut made)?;
    expect_unsupported(call, code, || {
        if let Some(release) = release {
            release(made);
        }
    })
}

/// No backend serves images (spec/memory_objects.md): every device says
/// so, whatever its driver offers, with every image limit 0, and
/// urMemImageCreate is UNSUPPORTED_FEATURE, so that libsycl never tries.
unsafe fn images(fx: &DeviceFx) -> CaseResult {
    let support: bool = fx.api.device_info(fx.device, UR_DEVICE_INFO_IMAGE_SUPPORT)?;
    if support {
        return Err("UR_DEVICE_INFO_IMAGE_SUPPORT is true".into());
    }
    for prop in [UR_DEVICE_INFO_IMAGE2D_MAX_WIDTH, UR_DEVICE_INFO_IMAGE3D_MAX_DEPTH, UR_DEVICE_INFO_IMAGE_MAX_BUFFER_SIZE] {
        let limit: usize = fx.api.device_info(fx.device, prop)?;
        if limit != 0 {
            return Err(format!("{prop:?} is {limit}, with no image support").into());
        }
    }
    let format = ur_image_format_t { channelOrder: UR_IMAGE_CHANNEL_ORDER_RGBA, channelType: UR_IMAGE_CHANNEL_TYPE_UNORM_INT8 };
    let desc = ur_image_desc_t {
        stype: UR_STRUCTURE_TYPE_IMAGE_DESC,
        pNext: null(),
        r#type: UR_MEM_TYPE_IMAGE2D,
        width: 16,
        height: 16,
        depth: 1,
        arraySize: 1,
        rowPitch: 0,
        slicePitch: 0,
        numMipLevel: 0,
        numSamples: 0,
    };
    create_unsupported("urMemImageCreate", fx.api.fns.urMemRelease, |image| {
        fx.api.urMemImageCreate(fx.context, UR_MEM_FLAG_READ_WRITE.0, &format, &desc, null_mut(), image)
    })
}

unsafe fn sampler(fx: &DeviceFx) -> CaseResult {
    let desc = ur_sampler_desc_t {
        stype: UR_STRUCTURE_TYPE_SAMPLER_DESC,
        pNext: null(),
        normalizedCoords: false,
        addressingMode: UR_SAMPLER_ADDRESSING_MODE_NONE,
        filterMode: UR_SAMPLER_FILTER_MODE_NEAREST,
    };
    create_unsupported("urSamplerCreate", fx.api.fns.urSamplerRelease, |sampler| {
        fx.api.urSamplerCreate(fx.context, &desc, sampler)
    })
}

unsafe fn command_buffer(fx: &DeviceFx) -> CaseResult {
    let desc = ur_exp_command_buffer_desc_t {
        stype: UR_STRUCTURE_TYPE_EXP_COMMAND_BUFFER_DESC,
        pNext: null(),
        isUpdatable: 0,
        isInOrder: 1,
        enableProfiling: 0,
    };
    create_unsupported("urCommandBufferCreateExp", fx.api.fns.urCommandBufferReleaseExp, |buffer| {
        fx.api.urCommandBufferCreateExp(fx.context, fx.device, &desc, buffer)
    })
}

unsafe fn physical_mem(fx: &DeviceFx) -> CaseResult {
    create_unsupported("urPhysicalMemCreate", fx.api.fns.urPhysicalMemRelease, |memory| {
        fx.api.urPhysicalMemCreate(fx.context, fx.device, 2 << 20, null(), memory)
    })
}

unsafe fn virtual_mem(fx: &DeviceFx) -> CaseResult {
    const SIZE: usize = 2 << 20;
    let mut start = null_mut();
    let code = fx.api.urVirtualMemReserve(fx.context, null(), SIZE, &mut start)?;
    expect_unsupported("urVirtualMemReserve", code, || {
        let _ = fx.api.urVirtualMemFree(fx.context, start, SIZE);
    })
}

/// Every entry point in a DDI table whose reference @returns list names a
/// required handle, called with every argument zero (null handles, null
/// pointers, zero counts): each must answer INVALID_NULL_HANDLE, supported
/// or not. Through a loader that checks nothing (Intel's, with one adapter)
/// this reaches the adapter's own entry points and unsupported stubs.
unsafe fn null_handles_everywhere(fx: &AdapterFx) -> CaseResult {
    use std::collections::HashMap;
    let required: HashMap<&str, usize> =
        ur_core::abi::null_checks::NULL_CHECKS.iter().map(|(name, handles, _)| (*name, handles.len())).collect();
    let mut wrong = Vec::new();
    let mut called = 0;
    macro_rules! call_all {
        ($($member:ident . $field:ident => $name:ident ( $($p:ident : $t:ty),* ) via $via:tt;)*) => {
            $(
                if required.get(stringify!($name)).copied().unwrap_or(0) > 0 {
                    called += 1;
                    // SAFETY: all-zero is a valid bit pattern of every C
                    // parameter type (pointers, integers, enums, Option<fn>,
                    // plain structs); a required handle is null, which the
                    // entry point must reject before reading anything.
                    let code = fx.api.$name($(std::mem::zeroed::<$t>()),*)?;
                    if code != UR_RESULT_ERROR_INVALID_NULL_HANDLE {
                        wrong.push(format!("{} returned {}", stringify!($name), result_name(code)));
                    }
                }
            )*
        };
    }
    ur_core::for_each_entry_point!(call_all);
    let _ = fx.adapter;
    if !wrong.is_empty() {
        return Err(format!(
            "{} of {called} entry points did not answer INVALID_NULL_HANDLE to null handles: {}",
            wrong.len(),
            wrong.join("; ")
        )
        .into());
    }
    Ok(())
}

/// A null output is INVALID_NULL_POINTER whether or not the adapter has
/// native events (native CPU has none: its stub checks before answering
/// UNSUPPORTED_FEATURE).
unsafe fn event_native_null_output(fx: &DeviceFx) -> CaseResult {
    let mut event = null_mut();
    let code = fx.api.urEnqueueEventsWait(fx.queue, 0, null(), &mut event)?;
    if code != UR_RESULT_SUCCESS {
        return Err(format!("urEnqueueEventsWait returned {}", result_name(code)).into());
    }
    let event = fx.own_event(event);
    let code = fx.api.urEventGetNativeHandle(event.get(), null_mut())?;
    if code != UR_RESULT_ERROR_INVALID_NULL_POINTER {
        return Err(format!("urEventGetNativeHandle(event, NULL) returned {}", result_name(code)).into());
    }
    Ok(())
}
