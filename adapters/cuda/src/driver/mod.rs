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
//! are missing too; `memory/vmm.rs` looks those up itself, as optional.
//!
//! cudarc panics when a library or symbol it needs is missing. [`load`]
//! therefore checks the library and every symbol this adapter's calls
//! resolve before anything else runs; once it has succeeded no binding can
//! panic, and when it fails the adapter reports zero platforms.
//!
//! Layout, by driver area: `device.rs` (driver, devices, contexts),
//! `stream.rs` (streams and events), `memory.rs` (allocations, fills,
//! copies, prefetch and advice, and native memory pools) and `module.rs`
//! (modules, kernels and launches). Their items are re-exported here, so
//! callers keep writing `driver::...`.

use cudarc::driver::{result, sys};
use std::ffi::c_void;
use std::sync::OnceLock;

pub use sys::{
    CUcontext, CUdevice, CUdevice_P2PAttribute as P2PAttr, CUdevice_attribute as Attr, CUdeviceptr, CUevent, CUfunction,
    CUmemoryPool, CUmodule, CUresult, CUstream,
};

mod device;
mod memory;
mod module;
mod stream;

pub use device::*;
pub use memory::*;
pub use module::*;
pub use stream::*;

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
    "cuMemHostRegister_v2",
    "cuMemHostUnregister",
    "cuMemcpy2DAsync_v2",
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
