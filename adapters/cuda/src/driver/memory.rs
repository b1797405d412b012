//! Memory: device, managed and host allocations, fills and copies,
//! prefetch and advice, and native stream-ordered memory pools (`MemPool`).

use super::{check, code, default_mem_pool, CUdevice, CUdeviceptr, CUmemoryPool, CUresult, CUstream, CuResult};
use cudarc::driver::{result, sys};
use std::ffi::c_void;

// cudarc marks its allocations unsafe because the memory is uninitialised;
// the adapter hands it out as raw bytes, which UR leaves undefined anyway.

pub fn mem_alloc(size: usize) -> CuResult<CUdeviceptr> {
    // SAFETY: uninitialised device bytes, handed out as such.
    unsafe { result::malloc_sync(size) }.map_err(code)
}

/// # Safety
/// `p` must be a live `cuMemAlloc` allocation that no pending work uses.
pub unsafe fn mem_free(p: CUdeviceptr) -> CuResult {
    result::free_sync(p).map_err(code)
}

pub fn mem_alloc_managed(size: usize) -> CuResult<CUdeviceptr> {
    let global = sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL;
    // SAFETY: as for `mem_alloc`.
    unsafe { result::malloc_managed(size, global) }.map_err(code)
}

/// Page-locked host memory that every context can reach by the same address.
pub fn mem_host_alloc(size: usize) -> CuResult<*mut c_void> {
    let flags = sys::CU_MEMHOSTALLOC_PORTABLE | sys::CU_MEMHOSTALLOC_DEVICEMAP;
    // SAFETY: as for `mem_alloc`.
    unsafe { result::malloc_host(size, flags) }.map_err(code)
}

/// # Safety
/// `p` must be a live `cuMemHostAlloc` allocation that no pending work uses.
pub unsafe fn mem_free_host(p: *mut c_void) -> CuResult {
    result::free_host(p).map_err(code)
}

/// Fills `count` elements of `width` bytes (1, 2 or 4) with `value`.
///
/// # Safety
/// `dst .. dst + count * width` must be device-accessible memory of the
/// stream's context.
pub unsafe fn memset_async(
    dst: CUdeviceptr,
    value: u32,
    width: usize,
    count: usize,
    stream: CUstream,
) -> CuResult {
    match width {
        1 => result::memset_d8_async(dst, value as u8, count, stream).map_err(code),
        // cudarc's result layer has only the 8-bit fill.
        2 => check(sys::cuMemsetD16Async(dst, value as u16, count, stream)),
        4 => check(sys::cuMemsetD32Async(dst, value, count, stream)),
        _ => Err(CUresult::CUDA_ERROR_INVALID_VALUE),
    }
}

/// Writes `value` (1 or 4 bytes wide) into the first `width` elements of
/// `height` rows that start `pitch` bytes apart.
///
/// # Safety
/// Every row must be device-accessible memory of the stream's context.
pub unsafe fn memset_2d_async(
    dst: CUdeviceptr,
    pitch: usize,
    value: u32,
    element: usize,
    width: usize,
    height: usize,
    stream: CUstream,
) -> CuResult {
    check(match element {
        1 => sys::cuMemsetD2D8Async(dst, pitch, value as u8, width, height, stream),
        4 => sys::cuMemsetD2D32Async(dst, pitch, value, width, height, stream),
        _ => CUresult::CUDA_ERROR_INVALID_VALUE,
    })
}

/// # Safety
/// Both ranges must be valid for `size` bytes (unified addressing decides the
/// direction) and stay valid until the copy completes.
pub unsafe fn memcpy_async(
    dst: CUdeviceptr,
    src: CUdeviceptr,
    size: usize,
    stream: CUstream,
) -> CuResult {
    check(sys::cuMemcpyAsync(dst, src, size, stream))
}

fn device_location(dev: CUdevice) -> sys::CUmemLocation {
    sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: dev,
    }
}

fn host_location() -> sys::CUmemLocation {
    sys::CUmemLocation {
        type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
        id: 0,
    }
}

/// Migrates managed memory to `dev`, or to the host when `dev` is `None`.
///
/// # Safety
/// The range must be managed memory.
pub unsafe fn mem_prefetch_async(
    p: CUdeviceptr,
    size: usize,
    dev: Option<CUdevice>,
    stream: CUstream,
) -> CuResult {
    let loc = dev.map_or_else(host_location, device_location);
    result::mem_prefetch_async(p, size, loc, stream).map_err(code)
}

/// # Safety
/// The range must be managed memory.
pub unsafe fn mem_advise(
    p: CUdeviceptr,
    size: usize,
    advice: sys::CUmem_advise,
    dev: Option<CUdevice>,
) -> CuResult {
    let loc = dev.map_or_else(host_location, device_location);
    result::mem_advise(p, size, advice, loc).map_err(code)
}

// --- memory pools -----------------------------------------------------------

/// A native stream-ordered memory pool. `owned` pools are destroyed on drop;
/// a device's default pool is only borrowed.
pub struct MemPool {
    raw: CUmemoryPool,
    owned: bool,
}

// SAFETY: CUDA memory pools may be used from any thread.
unsafe impl Send for MemPool {}
unsafe impl Sync for MemPool {}

pub use sys::CUmemPool_attribute as PoolAttr;

impl MemPool {
    /// A new pool of device memory on `dev`.
    pub fn new(dev: CUdevice) -> CuResult<MemPool> {
        // SAFETY: an all-zero props struct is valid (no handle types, no limits).
        let mut props: sys::CUmemPoolProps = unsafe { std::mem::zeroed() };
        props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        props.handleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        props.location = device_location(dev);
        // SAFETY: valid props, read during the call only.
        let raw = unsafe { result::mem_pool::create(&props) }.map_err(code)?;
        Ok(MemPool { raw, owned: true })
    }

    /// The device's default pool (what `cudaMallocAsync` uses).
    pub fn device_default(dev: CUdevice) -> CuResult<MemPool> {
        Ok(MemPool {
            raw: default_mem_pool(dev)?,
            owned: false,
        })
    }

    pub fn raw(&self) -> CUmemoryPool {
        self.raw
    }

    /// Reads a 64-bit attribute (thresholds and statistics).
    pub fn get_u64(&self, attr: PoolAttr) -> CuResult<u64> {
        let mut v = 0u64;
        let out = &mut v as *mut u64 as *mut c_void;
        // SAFETY: a live pool; the size-typed attributes are cuuint64_t.
        unsafe { result::mem_pool::get_attribute(self.raw, attr, out) }.map_err(code)?;
        Ok(v)
    }

    /// Writes a 64-bit attribute (the release threshold, or 0 to reset a
    /// high-water mark).
    pub fn set_u64(&self, attr: PoolAttr, mut v: u64) -> CuResult {
        let value = &mut v as *mut u64 as *mut c_void;
        // SAFETY: as for `get_u64`.
        unsafe { result::mem_pool::set_attribute(self.raw, attr, value) }.map_err(code)
    }

    pub fn trim_to(&self, keep: usize) -> CuResult {
        // SAFETY: a live pool.
        unsafe { result::mem_pool::trim_to(self.raw, keep) }.map_err(code)
    }

    /// Allocates `size` bytes, usable by work ordered after this point of
    /// `stream`.
    pub fn alloc_async(&self, size: usize, stream: CUstream) -> CuResult<CUdeviceptr> {
        // SAFETY: a live pool and stream; uninitialised bytes, handed out
        // as such.
        unsafe { result::mem_pool::alloc_async(self.raw, size, stream) }.map_err(code)
    }
}

/// Returns `p` to its pool once the work before this point of `stream` is done.
///
/// # Safety
/// `p` must be a live allocation from a stream-ordered pool.
pub unsafe fn free_async(p: CUdeviceptr, stream: CUstream) -> CuResult {
    result::free_async(p, stream).map_err(code)
}

impl Drop for MemPool {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own the pool; the caller freed its allocations.
            let _ = unsafe { result::mem_pool::destroy(self.raw) };
        }
    }
}

/// Page-locks the caller's `size` bytes at `p` for every context, by the
/// same address; `Ok(false)` when they were registered already (by this
/// process, for another buffer over the same memory).
///
/// # Safety
/// `p .. p + size` must be the caller's live host memory.
pub unsafe fn mem_host_register(p: *mut c_void, size: usize) -> CuResult<bool> {
    let flags = sys::CU_MEMHOSTREGISTER_PORTABLE | sys::CU_MEMHOSTREGISTER_DEVICEMAP;
    match sys::cuMemHostRegister_v2(p, size, flags) {
        sys::CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED => Ok(false),
        status => check(status).map(|()| true),
    }
}

/// # Safety
/// `p` must have been registered by [`mem_host_register`], with no pending
/// work using it.
pub unsafe fn mem_host_unregister(p: *mut c_void) -> CuResult {
    check(sys::cuMemHostUnregister(p))
}

/// Copies `height` rows of `width` bytes, rows `src_pitch` and `dst_pitch`
/// bytes apart; unified addressing tells the driver where each side is.
///
/// # Safety
/// Every row of both sides must be valid and stay so until the copy
/// completes.
pub unsafe fn memcpy_2d_async(
    (dst, dst_pitch): (CUdeviceptr, usize),
    (src, src_pitch): (CUdeviceptr, usize),
    width: usize,
    height: usize,
    stream: CUstream,
) -> CuResult {
    let unified = sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED;
    let copy = sys::CUDA_MEMCPY2D {
        srcXInBytes: 0,
        srcY: 0,
        srcMemoryType: unified,
        srcHost: std::ptr::null(),
        srcDevice: src,
        srcArray: std::ptr::null_mut(),
        srcPitch: src_pitch,
        dstXInBytes: 0,
        dstY: 0,
        dstMemoryType: unified,
        dstHost: std::ptr::null_mut(),
        dstDevice: dst,
        dstArray: std::ptr::null_mut(),
        dstPitch: dst_pitch,
        WidthInBytes: width,
        Height: height,
    };
    check(sys::cuMemcpy2DAsync_v2(&copy, stream))
}
