//! Entry points outside the supported subset answer
//! UR_RESULT_ERROR_UNSUPPORTED_FEATURE (never a crash or a null table slot),
//! even when every argument is valid.

use crate::harness::*;
use crate::names::result_name;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urMemBufferCreate.unsupported", mem_buffer),
    Case::device("urSamplerCreate.unsupported", sampler),
    Case::device("urCommandBufferCreateExp.unsupported", command_buffer),
    Case::device("urPhysicalMemCreate.unsupported", physical_mem),
    Case::device("urVirtualMemReserve.unsupported", virtual_mem),
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

unsafe fn mem_buffer(fx: &DeviceFx) -> CaseResult {
    let mut buffer = null_mut();
    let code = fx.api.urMemBufferCreate(fx.context, UR_MEM_FLAG_READ_WRITE.0, 1024, null(), &mut buffer)?;
    expect_unsupported("urMemBufferCreate", code, || {
        let _ = fx.api.urMemRelease(buffer);
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
    let mut sampler = null_mut();
    let code = fx.api.urSamplerCreate(fx.context, &desc, &mut sampler)?;
    expect_unsupported("urSamplerCreate", code, || {
        let _ = fx.api.urSamplerRelease(sampler);
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
    let mut buffer = null_mut();
    let code = fx.api.urCommandBufferCreateExp(fx.context, fx.device, &desc, &mut buffer)?;
    expect_unsupported("urCommandBufferCreateExp", code, || {
        let _ = fx.api.urCommandBufferReleaseExp(buffer);
    })
}

unsafe fn physical_mem(fx: &DeviceFx) -> CaseResult {
    let mut memory = null_mut();
    let code = fx.api.urPhysicalMemCreate(fx.context, fx.device, 2 << 20, null(), &mut memory)?;
    expect_unsupported("urPhysicalMemCreate", code, || {
        let _ = fx.api.urPhysicalMemRelease(memory);
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
