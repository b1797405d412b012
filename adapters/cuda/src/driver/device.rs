//! The driver, devices and contexts: versions and counts, device
//! properties, peer access, primary contexts and the current context.

use super::{check, code, Attr, CUcontext, CUdevice, CUmemoryPool, CuResult, P2PAttr};
use cudarc::driver::{result, sys};
use std::ffi::{c_char, c_int, CStr};
use std::ptr::null_mut;

pub fn driver_version() -> CuResult<i32> {
    let mut v = 0;
    // SAFETY: one out int.
    check(unsafe { sys::cuDriverGetVersion(&mut v) })?;
    Ok(v)
}

pub fn device_count() -> CuResult<i32> {
    result::device::get_count().map_err(code)
}

pub fn device_get(ordinal: i32) -> CuResult<CUdevice> {
    result::device::get(ordinal).map_err(code)
}

pub fn device_name(dev: CUdevice) -> CuResult<String> {
    result::device::get_name(dev).map_err(code)
}

pub fn device_total_mem(dev: CUdevice) -> CuResult<usize> {
    // SAFETY: the driver checks the device; only an out size is written.
    unsafe { result::device::total_mem(dev) }.map_err(code)
}

pub fn device_attribute(dev: CUdevice, attr: Attr) -> CuResult<i32> {
    // SAFETY: as for `device_total_mem`, one out int.
    unsafe { result::device::get_attribute(dev, attr) }.map_err(code)
}

pub fn device_uuid(dev: CUdevice) -> CuResult<[u8; 16]> {
    let uuid = result::device::get_uuid(dev).map_err(code)?;
    Ok(uuid.bytes.map(|b| b as u8))
}

pub fn device_pci_bus_id(dev: CUdevice) -> CuResult<String> {
    let mut buf = [0 as c_char; 64];
    // SAFETY: the driver writes at most `len` bytes, NUL-terminated.
    check(unsafe { sys::cuDeviceGetPCIBusId(buf.as_mut_ptr(), buf.len() as c_int, dev) })?;
    // SAFETY: NUL-terminated within the buffer.
    Ok(unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned())
}

/// What kernels on `src` may do with `dst`'s memory (one P2P attribute).
pub fn p2p_attribute(attr: P2PAttr, src: CUdevice, dst: CUdevice) -> CuResult<i32> {
    let mut v = 0;
    // SAFETY: one out int; the driver checks the devices.
    check(unsafe { sys::cuDeviceGetP2PAttribute(&mut v, attr, src, dst) })?;
    Ok(v)
}

/// Whether kernels and copies on `dev` can reach `peer`'s memory.
pub fn can_access_peer(dev: CUdevice, peer: CUdevice) -> CuResult<bool> {
    let mut v = 0;
    // SAFETY: one out int; the driver checks the devices.
    check(unsafe { sys::cuDeviceCanAccessPeer(&mut v, dev, peer) })?;
    Ok(v != 0)
}

/// Lets the current context reach `peer`'s memory, or stops it.
pub fn set_peer_access(peer: CUcontext, enable: bool) -> CuResult {
    // SAFETY: `peer` is a retained primary context; the driver checks it.
    check(unsafe {
        if enable {
            sys::cuCtxEnablePeerAccess(peer, 0)
        } else {
            sys::cuCtxDisablePeerAccess(peer)
        }
    })
}

pub fn default_mem_pool(dev: CUdevice) -> CuResult<CUmemoryPool> {
    // SAFETY: as for `device_total_mem`, one out handle.
    unsafe { result::device::get_default_mem_pool(dev) }.map_err(code)
}

/// Retains the device's primary context. It is never released: the adapter
/// uses it until the process ends, as CUDA's runtime does.
pub fn primary_ctx_retain(dev: CUdevice) -> CuResult<CUcontext> {
    // SAFETY: as for `device_total_mem`, one out handle.
    unsafe { result::primary_ctx::retain(dev) }.map_err(code)
}

/// Gives back one reference of the device's primary context (one the user
/// handed over with a native context it owned).
pub fn primary_ctx_release(dev: CUdevice) -> CuResult {
    // SAFETY: releases a reference the caller holds.
    unsafe { result::primary_ctx::release(dev) }.map_err(code)
}

/// Makes `ctx` current on this thread unless it already is. Callers of the
/// adapter may switch contexts between our calls, so ask the driver (about
/// 8 ns on an H200) rather than remember.
#[inline]
pub fn activate(ctx: CUcontext) -> CuResult {
    if current_context()? != ctx {
        // SAFETY: `ctx` is a retained primary context.
        unsafe { result::ctx::set_current(ctx) }.map_err(code)?;
    }
    Ok(())
}

/// The calling thread's current context (null when none is).
pub fn current_context() -> CuResult<CUcontext> {
    let current = result::ctx::get_current().map_err(code)?;
    Ok(current.unwrap_or(null_mut()))
}

/// Waits for all work of the current context.
pub fn ctx_synchronize() -> CuResult {
    result::ctx::synchronize().map_err(code)
}

/// `(free, total)` bytes of the current context's device.
pub fn mem_get_info() -> CuResult<(usize, usize)> {
    result::mem_get_info().map_err(code)
}
