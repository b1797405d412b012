//! `urUsmP2P*Exp`: access from one device to another's device memory.
//!
//! Both handles must be devices of this adapter. A device reaches its own
//! memory without asking, so the core answers a pair of one device itself:
//! the query says yes, enabling and disabling change nothing (CUDA would
//! refuse a context as its own peer; SYCL never asks).

use super::obj;
use crate::abi::*;
use crate::device::Device;
use crate::boundary::ffi_call;
use crate::hal::{Backend};
use crate::info::InfoOut;
use crate::UrResult;
use core::ffi::c_void;

/// The two devices of a call, or `None` for a device and itself.
///
/// # Safety
/// As for [`obj`].
unsafe fn pair<'a, B: Backend>(
    command: ur_device_handle_t,
    peer: ur_device_handle_t,
) -> UrResult<Option<(&'a Device<B>, &'a Device<B>)>> {
    let command = obj::<B, Device<B>>(command)?;
    let peer = obj::<B, Device<B>>(peer)?;
    Ok((!core::ptr::eq(command, peer)).then_some((command, peer)))
}

/// `urUsmP2PEnablePeerAccessExp` as `ENABLE`, else
/// `urUsmP2PDisablePeerAccessExp`.
pub(super) unsafe extern "C" fn set_peer_access<B: Backend, const ENABLE: bool>(
    command: ur_device_handle_t,
    peer: ur_device_handle_t,
) -> ur_result_t {
    ffi_call(|| pair::<B>(command, peer)?.map_or(Ok(()), |(c, p)| c.set_peer_access(p, ENABLE)))
}

pub(super) unsafe extern "C" fn peer_access_get_info<B: Backend>(
    command: ur_device_handle_t,
    peer: ur_device_handle_t,
    prop: ur_exp_peer_info_t,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> ur_result_t {
    ffi_call(|| {
        let devices = pair::<B>(command, peer)?;
        super::prop_in_range(prop.0, UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT.0, &[])?;
        let out = InfoOut::new(size, value, size_ret)?;
        let answer = match devices {
            None => 1,
            Some((c, p)) => c.peer_info(p, prop)?,
        };
        out.value(answer)
    })
}
