//! Modules and kernels: JIT compilation and loading with the JIT's logs,
//! kernel attributes, names and parameters, and launches.

use super::{check, code, CUdeviceptr, CUfunction, CUmodule, CUresult, CUstream, CuResult};
use cudarc::driver::{result, sys};
use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;

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
