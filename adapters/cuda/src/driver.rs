//! The CUDA driver API for this adapter, over cudarc (libcuda loaded with
//! dlopen at run time). Calls go through cudarc's `driver::result` layer
//! (always spelled `result::...`, which the symbol test below relies on);
//! its `DriverError` becomes the driver's `CUresult` in one place, [`code`],
//! and `conv::cu_error` maps that to UR. The owning wrappers (`Stream`,
//! `CuEvent`, `Module`, `MemPool`) release what they hold when dropped.
//!
//! cudarc's result layer lacks the following, called here through `sys`:
//! `cuDriverGetVersion`, `cuDeviceGetPCIBusId`, `cuStreamGetCtx`, the 16-
//! and 32-bit and 2D fills (`cuMemsetD16Async`, `cuMemsetD32Async`,
//! `cuMemsetD2D8Async`, `cuMemsetD2D32Async`; it has `cuMemsetD8Async`
//! only), `cuMemcpyAsync` (it has only the copies of a fixed direction; this
//! one lets unified addressing decide), `cuModuleLoadDataEx` (it loads
//! without JIT options, so without the error log), `cuFuncGetModule`,
//! `cuFuncGetName` and `cuFuncGetParamInfo`. The virtual memory entry points
//! (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, `cuMemSetAccess`, ...)
//! are missing too; `core/vmm.rs` looks those up itself, as optional.
//!
//! cudarc panics when a library or symbol it needs is missing. [`load`]
//! therefore checks the library and every symbol this adapter's calls
//! resolve before anything else runs; once it has succeeded no binding can
//! panic, and when it fails the adapter reports zero platforms.

use cudarc::driver::{result, sys};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr::null_mut;
use std::sync::OnceLock;

pub use sys::{
    CUcontext, CUdevice, CUdevice_P2PAttribute as P2PAttr, CUdevice_attribute as Attr, CUdeviceptr, CUevent, CUfunction,
    CUmemoryPool, CUmodule, CUresult, CUstream,
};

pub type CuResult<T = ()> = Result<T, CUresult>;

/// Every driver symbol this adapter's calls resolve, checked once by
/// [`load`]: the `sys::` calls here and the symbols behind the cudarc
/// functions called (some are `_v2` versions). A test keeps this list in
/// step with the sources.
pub const SYMBOLS: &[&str] = &[
    "cuInit",
    "cuDriverGetVersion",
    "cuGetErrorName",
    "cuDeviceGetCount",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceTotalMem_v2",
    "cuDeviceGetAttribute",
    "cuDeviceGetUuid_v2",
    "cuDeviceGetPCIBusId",
    "cuDeviceGetP2PAttribute",
    "cuDeviceCanAccessPeer",
    "cuCtxEnablePeerAccess",
    "cuCtxDisablePeerAccess",
    "cuDevicePrimaryCtxRetain",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxSynchronize",
    "cuMemGetInfo_v2",
    "cuStreamCreate",
    "cuStreamDestroy_v2",
    "cuStreamSynchronize",
    "cuStreamWaitEvent",
    "cuLaunchHostFunc",
    "cuEventCreate",
    "cuEventRecord",
    "cuEventQuery",
    "cuEventSynchronize",
    "cuEventDestroy_v2",
    "cuEventElapsedTime_v2",
    "cuMemAlloc_v2",
    "cuMemFree_v2",
    "cuMemAllocManaged",
    "cuMemHostAlloc",
    "cuMemFreeHost",
    "cuMemsetD8Async",
    "cuMemsetD16Async",
    "cuMemsetD32Async",
    "cuMemsetD2D8Async",
    "cuMemsetD2D32Async",
    "cuMemcpyAsync",
    "cuMemPrefetchAsync_v2",
    "cuMemAdvise_v2",
    "cuMemPoolCreate",
    "cuMemPoolDestroy",
    "cuMemPoolTrimTo",
    "cuMemPoolGetAttribute",
    "cuMemPoolSetAttribute",
    "cuMemAllocFromPoolAsync",
    "cuMemFreeAsync",
    "cuDeviceGetDefaultMemPool",
    "cuModuleLoadDataEx",
    "cuLinkCreate_v2",
    "cuLinkAddData_v2",
    "cuLinkComplete",
    "cuLinkDestroy",
    "cuModuleUnload",
    "cuModuleGetFunction",
    "cuModuleGetGlobal_v2",
    "cuFuncGetAttribute",
    "cuFuncGetParamInfo",
    "cuLaunchKernel",
    "cuLaunchCooperativeKernel",
    "cuStreamGetCtx",
    "cuDevicePrimaryCtxRelease_v2",
    "cuFuncGetModule",
    "cuFuncGetName",
];

/// cudarc's error as the driver's code: the one conversion, so that the
/// adapter keeps a single `CUresult` to UR mapping (`conv::cu_error`).
#[inline]
fn code(e: result::DriverError) -> CUresult {
    e.0
}

/// A hand-written `sys` call's code as a `Result`.
#[inline]
fn check(r: CUresult) -> CuResult {
    r.result().map_err(code)
}

/// Loads `libcuda`, checks every symbol in [`SYMBOLS`] and calls `cuInit`,
/// once per process. `Err` says why CUDA is unusable here.
pub fn load() -> Result<(), &'static str> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            // SAFETY: only dlopen/dlsym; no symbol is called before it is found.
            unsafe {
                if !sys::is_culib_present() {
                    return Err("libcuda.so.1 not found".into());
                }
                let lib = sys::culib();
                if let Some(missing) = SYMBOLS
                    .iter()
                    .find(|s| lib.get::<*const c_void>(s.as_bytes()).is_err())
                {
                    return Err(format!("the CUDA driver lacks {missing}"));
                }
            }
            result::init().map_err(|e| format!("cuInit failed: {}", error_name(code(e))))
        })
        .as_ref()
        .map(|_| ())
        .map_err(|e| e.as_str())
}

/// The driver's name for an error code (`CUDA_ERROR_OUT_OF_MEMORY`).
pub fn error_name(e: CUresult) -> String {
    // Never `{:?}` of a DriverError: that calls cuGetErrorString, which
    // `load` does not check.
    match result::DriverError::error_name(&result::DriverError(e)) {
        Ok(name) => name.to_string_lossy().into_owned(),
        Err(_) => format!("{e:?}"),
    }
}

// --- driver, devices, contexts -------------------------------------------

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

// --- streams and events -----------------------------------------------------

/// A stream of the current context, destroyed on drop unless borrowed.
pub struct Stream {
    raw: CUstream,
    owned: bool,
}

// SAFETY: CUDA streams may be used from any thread.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A stream that does not synchronise with the legacy default stream.
    pub fn new() -> CuResult<Stream> {
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(code)?;
        Ok(Stream { raw, owned: true })
    }

    /// A stream the caller made (a native handle): destroyed on drop only
    /// when `owned` (CUDA streams have no reference count, so a borrowed
    /// one is left to its owner).
    pub fn from_raw(raw: CUstream, owned: bool) -> Stream {
        Stream { raw, owned }
    }

    pub fn raw(&self) -> CUstream {
        self.raw
    }

    /// The context the stream belongs to.
    pub fn context(&self) -> CuResult<CUcontext> {
        let mut ctx = null_mut();
        // SAFETY: a live stream, one out handle.
        check(unsafe { sys::cuStreamGetCtx(self.raw, &mut ctx) })?;
        Ok(ctx)
    }

    pub fn synchronize(&self) -> CuResult {
        // SAFETY: a live stream.
        unsafe { result::stream::synchronize(self.raw) }.map_err(code)
    }

    /// Makes later work on this stream wait for `event`'s last record.
    pub fn wait(&self, event: CUevent) -> CuResult {
        let flags = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
        // SAFETY: a live stream and a live event.
        unsafe { result::stream::wait_event(self.raw, event, flags) }.map_err(code)
    }

    /// Has a driver thread call `f(data)` once the work before it on this
    /// stream has completed.
    ///
    /// # Safety
    /// `f` must make no CUDA call (the driver forbids it there), must not
    /// unwind, and must be able to take `data` whenever it runs, from
    /// any thread.
    pub unsafe fn launch_host_fn(
        &self,
        f: unsafe extern "C" fn(*mut c_void),
        data: *mut c_void,
    ) -> CuResult {
        result::stream::launch_host_function(self.raw, f, data).map_err(code)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own the stream; pending work still completes.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}

/// A CUDA event, destroyed on drop unless borrowed.
pub struct CuEvent {
    raw: CUevent,
    owned: bool,
}

// SAFETY: CUDA events may be used from any thread.
unsafe impl Send for CuEvent {}
unsafe impl Sync for CuEvent {}

impl CuEvent {
    /// `timing`: whether the event records a timestamp (slower to record).
    pub fn new(timing: bool) -> CuResult<CuEvent> {
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        let raw = result::event::create(flags).map_err(code)?;
        Ok(CuEvent { raw, owned: true })
    }

    /// An event the caller made (a native handle): destroyed on drop only
    /// when `owned` (CUDA events have no reference count).
    pub fn from_raw(raw: CUevent, owned: bool) -> CuEvent {
        CuEvent { raw, owned }
    }

    pub fn raw(&self) -> CUevent {
        self.raw
    }

    pub fn record(&self, stream: CUstream) -> CuResult {
        // SAFETY: a live event and stream of the same context.
        unsafe { result::event::record(self.raw, stream) }.map_err(code)
    }

    /// Whether the work before the last record has completed.
    pub fn is_complete(&self) -> CuResult<bool> {
        // SAFETY: a live event.
        match unsafe { result::event::query(self.raw) } {
            Ok(()) => Ok(true),
            Err(result::DriverError(CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(e) => Err(code(e)),
        }
    }

    pub fn synchronize(&self) -> CuResult {
        // SAFETY: a live event.
        unsafe { result::event::synchronize(self.raw) }.map_err(code)
    }

    /// Milliseconds from `self` to `end` (both recorded with timing).
    pub fn elapsed_ms(&self, end: &CuEvent) -> CuResult<f32> {
        // SAFETY: two live timing events.
        unsafe { result::event::elapsed(self.raw, end.raw) }.map_err(code)
    }
}

impl Drop for CuEvent {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own the event.
            let _ = unsafe { result::event::destroy(self.raw) };
        }
    }
}

// --- memory -------------------------------------------------------------------

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

// --- modules and kernels -----------------------------------------------------

/// A loaded module (PTX or cubin), unloaded on drop unless borrowed.
pub struct Module {
    raw: CUmodule,
    owned: bool,
}

// SAFETY: CUDA modules may be used from any thread.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

/// The JIT's info and error log buffers, passed as options to a load or a
/// link.
struct JitLogs {
    info: Vec<u8>,
    error: Vec<u8>,
}

impl JitLogs {
    const SIZE: usize = 16 * 1024;

    fn new() -> JitLogs {
        JitLogs { info: vec![0u8; Self::SIZE], error: vec![0u8; Self::SIZE] }
    }

    /// The options and their values; the driver reads sizes passed by
    /// value in the pointer slots. Valid while `self` lives and is not moved.
    fn options(&mut self) -> ([sys::CUjit_option; 4], [*mut c_void; 4]) {
        use sys::CUjit_option as Opt;
        (
            [
                Opt::CU_JIT_INFO_LOG_BUFFER,
                Opt::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                Opt::CU_JIT_ERROR_LOG_BUFFER,
                Opt::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            ],
            [
                self.info.as_mut_ptr().cast(),
                Self::SIZE as *mut c_void,
                self.error.as_mut_ptr().cast(),
                Self::SIZE as *mut c_void,
            ],
        )
    }

    fn text(buf: &[u8]) -> String {
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    fn info(&self) -> String {
        Self::text(&self.info)
    }

    fn error(&self) -> String {
        Self::text(&self.error)
    }
}

/// Compiles PTX (ending in a NUL byte) for the current context's GPU into
/// a cubin, which loads on any GPU of the same compute capability without
/// compiling again. Returns the cubin and the JIT's info log, or the error
/// with its error log.
pub fn compile_ptx(ptx: &[u8]) -> Result<(Vec<u8>, String), (CUresult, String)> {
    let mut logs = JitLogs::new();
    let (mut options, mut values) = logs.options();
    let mut link: sys::CUlinkState = null_mut();
    // SAFETY: the log buffers outlive the link state, destroyed below.
    check(unsafe { sys::cuLinkCreate_v2(4, options.as_mut_ptr(), values.as_mut_ptr(), &mut link) })
        .map_err(|e| (e, String::new()))?;
    let result = (|| {
        // SAFETY: a live link state; the image is complete PTX that the
        // driver reads during the call only; no per-input options.
        check(unsafe {
            sys::cuLinkAddData_v2(
                link,
                sys::CUjitInputType::CU_JIT_INPUT_PTX,
                ptx.as_ptr() as *mut c_void,
                ptx.len(),
                c"ur_program".as_ptr(),
                0,
                null_mut(),
                null_mut(),
            )
        })?;
        let (mut cubin, mut size) = (null_mut(), 0usize);
        // SAFETY: the cubin belongs to the link state and is copied before
        // the state is destroyed.
        check(unsafe { sys::cuLinkComplete(link, &mut cubin, &mut size) })?;
        Ok(unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec())
    })();
    // SAFETY: made above, destroyed once.
    let _ = unsafe { sys::cuLinkDestroy(link) };
    match result {
        Ok(cubin) => Ok((cubin, logs.info())),
        Err(e) => Err((e, logs.error())),
    }
}

impl Module {
    /// Loads an image into the current context. PTX must end in a NUL byte.
    /// Returns the module, or the error with the JIT's error log.
    pub fn load(image: &[u8]) -> Result<(Module, String), (CUresult, String)> {
        let mut logs = JitLogs::new();
        let (mut options, mut values) = logs.options();
        let mut m = null_mut();
        // SAFETY: `image` is a complete image; the log buffers outlive the call.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut m,
                image.as_ptr().cast(),
                4,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        match check(r) {
            Ok(()) => Ok((Module { raw: m, owned: true }, logs.info())),
            Err(e) => Err((e, logs.error())),
        }
    }

    /// A module the caller loaded (a native handle): unloaded on drop only
    /// when `owned`.
    pub fn from_raw(raw: CUmodule, owned: bool) -> Module {
        Module { raw, owned }
    }

    /// The kernel called `name`; `CUDA_ERROR_NOT_FOUND` when there is none.
    pub fn function(&self, name: &CStr) -> CuResult<CUfunction> {
        // SAFETY: a live module (cudarc takes the name as an owned CString).
        unsafe { result::module::get_function(self.raw, name.to_owned()) }.map_err(code)
    }

    /// `(address, size)` of the global variable called `name`.
    pub fn global(&self, name: &CStr) -> CuResult<(CUdeviceptr, usize)> {
        // SAFETY: as for `function`.
        unsafe { result::module::get_global(self.raw, name.to_owned()) }.map_err(code)
    }

    pub fn raw(&self) -> CUmodule {
        self.raw
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own the module; kernels made from it are gone.
            let _ = unsafe { result::module::unload(self.raw) };
        }
    }
}

pub use sys::CUfunction_attribute as FuncAttr;

pub fn func_attribute(f: CUfunction, attr: FuncAttr) -> CuResult<i32> {
    // SAFETY: a live function, one out int.
    unsafe { result::function::get_function_attribute(f, attr) }.map_err(code)
}

/// The module a kernel belongs to.
pub fn func_module(f: CUfunction) -> CuResult<CUmodule> {
    let mut m = null_mut();
    // SAFETY: a live function, one out handle.
    check(unsafe { sys::cuFuncGetModule(&mut m, f) })?;
    Ok(m)
}

/// A kernel's name.
pub fn func_name(f: CUfunction) -> CuResult<String> {
    let mut name: *const c_char = std::ptr::null();
    // SAFETY: a live function; the driver writes a pointer to a string it
    // keeps as long as the function.
    check(unsafe { sys::cuFuncGetName(&mut name, f) })?;
    if name.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: a NUL-terminated string of the driver's.
    Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
}

/// `(offset, size)` in bytes of each parameter of a kernel, in order.
pub fn func_params(f: CUfunction) -> CuResult<Vec<(usize, usize)>> {
    let mut params = Vec::new();
    loop {
        let (mut offset, mut size) = (0, 0);
        // SAFETY: a live function, two out sizes; past the last parameter the
        // driver answers CUDA_ERROR_INVALID_VALUE.
        match unsafe { sys::cuFuncGetParamInfo(f, params.len(), &mut offset, &mut size) } {
            CUresult::CUDA_SUCCESS => params.push((offset, size)),
            CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(params),
            e => return Err(e),
        }
    }
}

/// Grid and block dimensions and dynamic shared memory of one launch.
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
}

/// # Safety
/// `params` must hold one pointer per kernel parameter, each pointing at a
/// value of that parameter's size; they are copied before this returns.
pub unsafe fn launch_kernel(
    f: CUfunction,
    dims: &LaunchDims,
    stream: CUstream,
    params: &mut [*mut c_void],
    cooperative: bool,
) -> CuResult {
    let [gx, gy, gz] = dims.grid;
    let [bx, by, bz] = dims.block;
    let (grid, block) = ((gx, gy, gz), (bx, by, bz));
    // cudarc passes the slice's pointer, never null; a kernel without
    // parameters reads none, so one null slot keeps that pointer valid.
    let mut no_params = [null_mut()];
    let params = if params.is_empty() {
        &mut no_params[..]
    } else {
        params
    };
    let shared = dims.shared_bytes;
    if cooperative {
        result::launch_cooperative_kernel(f, grid, block, shared, stream, params)
    } else {
        result::launch_kernel(f, grid, block, shared, stream, params)
    }
    .map_err(code)
}

/// A NUL-terminated copy of `bytes` unless it already ends in NUL (the
/// driver reads PTX up to its terminator).
pub fn nul_terminated(bytes: &[u8]) -> Vec<u8> {
    let mut v = bytes.to_vec();
    if v.last() != Some(&0) {
        v.push(0);
    }
    v
}

/// A Rust string as a C string for the driver; an interior NUL is an error.
pub fn c_string(s: &str) -> Option<CString> {
    CString::new(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The driver symbol behind each cudarc function called here. cudarc's
    /// loader looks a symbol up by the name of the `sys` function that calls
    /// it; with the `cuda-13000` feature some of those are `_v2` versions.
    /// `the_cudarc_table_matches_its_source` reads them back from cudarc.
    const VIA_CUDARC: &[(&str, &str)] = &[
        ("init", "cuInit"),
        ("DriverError::error_name", "cuGetErrorName"),
        ("device::get_count", "cuDeviceGetCount"),
        ("device::get", "cuDeviceGet"),
        ("device::get_name", "cuDeviceGetName"),
        ("device::total_mem", "cuDeviceTotalMem_v2"),
        ("device::get_attribute", "cuDeviceGetAttribute"),
        ("device::get_uuid", "cuDeviceGetUuid_v2"),
        ("device::get_default_mem_pool", "cuDeviceGetDefaultMemPool"),
        ("primary_ctx::retain", "cuDevicePrimaryCtxRetain"),
        ("primary_ctx::release", "cuDevicePrimaryCtxRelease_v2"),
        ("ctx::get_current", "cuCtxGetCurrent"),
        ("ctx::set_current", "cuCtxSetCurrent"),
        ("ctx::synchronize", "cuCtxSynchronize"),
        ("mem_get_info", "cuMemGetInfo_v2"),
        ("stream::create", "cuStreamCreate"),
        ("stream::synchronize", "cuStreamSynchronize"),
        ("stream::wait_event", "cuStreamWaitEvent"),
        ("stream::launch_host_function", "cuLaunchHostFunc"),
        ("stream::destroy", "cuStreamDestroy_v2"),
        ("event::create", "cuEventCreate"),
        ("event::record", "cuEventRecord"),
        ("event::query", "cuEventQuery"),
        ("event::synchronize", "cuEventSynchronize"),
        ("event::elapsed", "cuEventElapsedTime_v2"),
        ("event::destroy", "cuEventDestroy_v2"),
        ("malloc_sync", "cuMemAlloc_v2"),
        ("free_sync", "cuMemFree_v2"),
        ("malloc_managed", "cuMemAllocManaged"),
        ("malloc_host", "cuMemHostAlloc"),
        ("free_host", "cuMemFreeHost"),
        ("memset_d8_async", "cuMemsetD8Async"),
        ("mem_prefetch_async", "cuMemPrefetchAsync_v2"),
        ("mem_advise", "cuMemAdvise_v2"),
        ("mem_pool::create", "cuMemPoolCreate"),
        ("mem_pool::destroy", "cuMemPoolDestroy"),
        ("mem_pool::trim_to", "cuMemPoolTrimTo"),
        ("mem_pool::get_attribute", "cuMemPoolGetAttribute"),
        ("mem_pool::set_attribute", "cuMemPoolSetAttribute"),
        ("mem_pool::alloc_async", "cuMemAllocFromPoolAsync"),
        ("free_async", "cuMemFreeAsync"),
        ("module::get_function", "cuModuleGetFunction"),
        ("module::get_global", "cuModuleGetGlobal_v2"),
        ("module::unload", "cuModuleUnload"),
        ("function::get_function_attribute", "cuFuncGetAttribute"),
        ("launch_kernel", "cuLaunchKernel"),
        ("launch_cooperative_kernel", "cuLaunchCooperativeKernel"),
    ];

    /// Calls in the adapter's sources: `(sys, cudarc)`, the names of the
    /// `sys` functions called directly and the paths of the `result`
    /// functions called (the tuple struct `DriverError` left out).
    fn calls_in_sources() -> (BTreeSet<String>, BTreeSet<String>) {
        let (mut sys_calls, mut cudarc_calls) = (BTreeSet::new(), BTreeSet::new());
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut dirs = vec![std::path::PathBuf::from(src)];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    sys_calls.extend(called_paths(&text, "sys::cu").map(|n| format!("cu{n}")));
                    cudarc_calls.extend(called_paths(&text, "result::"));
                }
            }
        }
        // cudarc's own helper, not a driver entry point.
        sys_calls.remove("culib");
        cudarc_calls.remove("DriverError");
        (sys_calls, cudarc_calls)
    }

    /// The paths that follow `prefix` (at the start of a word) and are
    /// called: `a::b` in `prefix a::b(`.
    fn called_paths<'a>(text: &'a str, prefix: &'a str) -> impl Iterator<Item = String> + 'a {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        text.match_indices(prefix).filter_map(move |(at, _)| {
            if text[..at].chars().next_back().is_some_and(word) {
                return None;
            }
            let rest = &text[at + prefix.len()..];
            let path: String = rest.chars().take_while(|&c| word(c) || c == ':').collect();
            (!path.is_empty() && rest[path.len()..].starts_with('(')).then_some(path)
        })
    }

    /// `load` checks exactly the symbols the calls in the sources resolve,
    /// so none can reach cudarc's panicking loader unchecked.
    #[test]
    fn symbols_are_the_ones_called() {
        let (sys_calls, cudarc_calls) = calls_in_sources();
        let listed: BTreeSet<&str> = VIA_CUDARC.iter().map(|(path, _)| *path).collect();
        let cudarc_calls: BTreeSet<&str> = cudarc_calls.iter().map(String::as_str).collect();
        assert_eq!(cudarc_calls, listed, "cudarc calls in the sources vs VIA_CUDARC");
        let mut called: BTreeSet<&str> = sys_calls.iter().map(String::as_str).collect();
        called.extend(VIA_CUDARC.iter().map(|(_, symbol)| *symbol));
        let checked: BTreeSet<&str> = SYMBOLS.iter().copied().collect();
        assert_eq!(checked.len(), SYMBOLS.len(), "SYMBOLS lists a name twice");
        let unchecked: Vec<_> = called.difference(&checked).collect();
        assert!(unchecked.is_empty(), "called but not checked at load: {unchecked:?}");
        let uncalled: Vec<_> = checked.difference(&called).collect();
        assert!(uncalled.is_empty(), "checked at load but never called: {uncalled:?}");
    }

    /// Each `VIA_CUDARC` symbol is the one its cudarc function calls, read
    /// from the cudarc source in Cargo's registry at the version Cargo.lock
    /// names (skipped when that source is elsewhere, e.g. vendored).
    #[test]
    fn the_cudarc_table_matches_its_source() {
        let Some(source) = cudarc_result_source() else {
            eprintln!("cudarc's result.rs not found in Cargo's registry: not compared");
            return;
        };
        for (path, symbol) in VIA_CUDARC {
            let body = function_body(&source, path)
                .unwrap_or_else(|| panic!("cudarc's result layer has no {path}"));
            let called: BTreeSet<String> =
                called_paths(body, "sys::cu").map(|n| format!("cu{n}")).collect();
            assert!(called.contains(*symbol), "{path} calls {called:?}, not {symbol}");
            // Any other name must be the pre-13.0 twin of a `_v2` symbol,
            // compiled out by the cuda-13000 feature.
            for other in called.iter().filter(|c| c != symbol) {
                assert_eq!(format!("{other}_v2"), *symbol, "{path} also calls {other}");
            }
        }
    }

    /// cudarc's `src/driver/result.rs`, where Cargo unpacked it.
    fn cudarc_result_source() -> Option<String> {
        let lock = concat!(env!("CARGO_MANIFEST_DIR"), "/../../Cargo.lock");
        let lock = std::fs::read_to_string(lock).ok()?;
        let after = &lock[lock.find("name = \"cudarc\"\nversion = \"")? + 26..];
        let version = &after[..after.find('"')?];
        let home = std::env::var_os("CARGO_HOME").map(std::path::PathBuf::from).or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cargo"))
        })?;
        std::fs::read_dir(home.join("registry/src")).ok()?.find_map(|index| {
            let file = index.ok()?.path().join(format!("cudarc-{version}/src/driver/result.rs"));
            std::fs::read_to_string(file).ok()
        })
    }

    /// The body of the function at `path` (`name`, `module::name` or
    /// `Type::method`) in cudarc's result.rs.
    fn function_body<'a>(source: &'a str, path: &str) -> Option<&'a str> {
        let (scope, name) = match path.rsplit_once("::") {
            Some((scope, name)) => {
                let start = source
                    .find(&format!("pub mod {scope} {{"))
                    .or_else(|| source.find(&format!("impl {scope} {{")))?;
                (start, name)
            }
            None => (0, path),
        };
        // A top-level function starts its line; one in a scope is indented.
        let at = if scope == 0 {
            ["\npub fn ", "\npub unsafe fn "]
                .iter()
                .find_map(|p| source.find(&format!("{p}{name}(")))?
        } else {
            scope + source[scope..].find(&format!("fn {name}("))?
        };
        let open = at + source[at..].find('{')?;
        let mut depth = 0;
        for (i, c) in source[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => return Some(&source[open..open + i]),
                '}' => depth -= 1,
                _ => {}
            }
        }
        None
    }

    #[test]
    fn nul_termination() {
        assert_eq!(nul_terminated(b"ab"), b"ab\0");
        assert_eq!(nul_terminated(b"ab\0"), b"ab\0");
    }

    /// Without a driver (CI), loading fails cleanly instead of panicking.
    #[test]
    fn load_never_panics() {
        let r = std::panic::catch_unwind(load);
        assert!(r.is_ok());
    }
}
