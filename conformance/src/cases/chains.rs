//! `pNext` chains that never end: a link that points back into its own
//! chain must be refused with INVALID_VALUE, never walked forever, by every
//! entry point that reads a chain. The runner's per-case timeout turns a
//! hang into a failure.

use crate::harness::*;
use crate::{check, expect_result};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::device("urUSMPoolCreateExp.invalid_cyclic_chain", pool_create_exp),
    Case::device("urUSMPoolCreate.invalid_cyclic_chain", pool_create),
    Case::device("urUSMDeviceAlloc.invalid_cyclic_chain", device_alloc),
    Case::device("urQueueCreate.invalid_cyclic_chain", queue_create),
];

/// Two limits descriptors pointing at each other: a cycle of two links
/// behind whatever descriptor is given `first` as its `pNext`.
struct Cycle {
    links: Box<[ur_usm_pool_limits_desc_t; 2]>,
}

impl Cycle {
    fn new() -> Self {
        let limits = ur_usm_pool_limits_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
            pNext: null(),
            maxPoolableSize: 0,
            minDriverAllocSize: 0,
        };
        let mut links = Box::new([limits, limits]);
        let second = &links[1] as *const ur_usm_pool_limits_desc_t as *const c_void;
        let first = &links[0] as *const ur_usm_pool_limits_desc_t as *const c_void;
        links[0].pNext = second;
        links[1].pNext = first;
        Cycle { links }
    }

    fn first(&self) -> *const c_void {
        &self.links[0] as *const ur_usm_pool_limits_desc_t as *const c_void
    }
}

unsafe fn require_pools(fx: &DeviceFx) -> CaseResult {
    fx.require(UR_DEVICE_INFO_USM_POOL_SUPPORT, "USM pool support")
}

unsafe fn pool_create_exp(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let cycle = Cycle::new();
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: cycle.first(), flags: 0 };
    let mut pool = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urUSMPoolCreateExp(fx.context, fx.device, &mut desc, &mut pool));
    check!(pool.is_null(), "a refused urUSMPoolCreateExp wrote a pool handle");
    Ok(())
}

unsafe fn pool_create(fx: &DeviceFx) -> CaseResult {
    require_pools(fx)?;
    let cycle = Cycle::new();
    let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: cycle.first(), flags: 0 };
    let mut pool = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urUSMPoolCreate(fx.context, &mut desc, &mut pool));
    check!(pool.is_null(), "a refused urUSMPoolCreate wrote a pool handle");
    Ok(())
}

unsafe fn device_alloc(fx: &DeviceFx) -> CaseResult {
    fx.require_kind(UsmKind::Device)?;
    let cycle = Cycle::new();
    let desc = ur_usm_desc_t { stype: UR_STRUCTURE_TYPE_USM_DESC, pNext: cycle.first(), hints: 0, align: 0 };
    let mut p = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urUSMDeviceAlloc(fx.context, fx.device, &desc, null_mut(), 4096, &mut p));
    check!(p.is_null(), "a refused urUSMDeviceAlloc wrote a pointer");
    Ok(())
}

unsafe fn queue_create(fx: &DeviceFx) -> CaseResult {
    let cycle = Cycle::new();
    let props = ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: cycle.first() as *mut c_void, flags: 0 };
    let mut queue = null_mut();
    expect_result!(UR_RESULT_ERROR_INVALID_VALUE, fx.api.urQueueCreate(fx.context, fx.device, &props, &mut queue));
    check!(queue.is_null(), "a refused urQueueCreate wrote a queue handle");
    Ok(())
}
