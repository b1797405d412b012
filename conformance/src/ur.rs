//! A UR loader opened by path, its entry points resolved by name, and the
//! adapters, platforms and devices it reports. Shared by `ur_conformance`
//! and `urinfo`.
//!
//! Every entry point becomes a method of [`Api`] with the C parameter list. A
//! symbol the library lacks makes that method return `Err`, so a missing entry
//! point fails the cases that call it and nothing else.

use crate::names::{backend_name, result_name};
use core::ffi::{c_char, c_void};
use libloading::Library;
use std::ffi::CStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::ptr::{null, null_mut};
use ur_core::abi::*;

/// File name of a UR loader, as applications `dlopen` it.
pub const LOADER_FILE_NAME: &str = "libur_loader.so.0";

/// Declares the `EntryPoints` table and one `Api` method per entry point from
/// the lines of `ur_core::for_each_entry_point!`, with the loader-only entry
/// points (passed first, in braces) in the same form.
macro_rules! declare_entry_points {
    ({ $($loader_only:tt)* } $($ddi:tt)*) => {
        declare_entry_points!(@all $($loader_only)* $($ddi)*);
    };
    (@all $( $table:ident . $slot:ident => $name:ident ( $($param:ident : $ty:ty),* $(,)? ) via $via:tt ; )*) => {
        /// Every entry point of the loader, resolved by name; `None` where the
        /// library does not export it. Each type is the reference's
        /// `ur_pfn<Name>_t` without its `Option`.
        #[allow(non_snake_case)]
        pub struct EntryPoints {
            $( pub $name: Option<unsafe extern "C" fn($($ty),*) -> ur_result_t>, )*
        }

        impl EntryPoints {
            /// The name of every entry point this program knows.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            fn resolve(library: &Library) -> Self {
                EntryPoints {
                    $( $name: {
                        type Pfn = unsafe extern "C" fn($($ty),*) -> ur_result_t;
                        // SAFETY: the symbol, when present, is the UR entry
                        // point of that name, whose C type is `Pfn`.
                        unsafe { library.get::<Pfn>(concat!(stringify!($name), "\0").as_bytes()) }
                            .ok()
                            .map(|symbol| *symbol)
                    }, )*
                }
            }

            /// Names of the entry points the library does not export.
            pub fn missing(&self) -> Vec<&'static str> {
                let mut missing = Vec::new();
                $( if self.$name.is_none() { missing.push(stringify!($name)); } )*
                missing
            }
        }

        #[allow(non_snake_case)]
        impl Api {
            $(
                /// Calls the entry point of this name; `Err` when the loader lacks it.
                ///
                /// # Safety
                /// The arguments must satisfy the entry point's C contract, except
                /// where a case deliberately passes what UR names as an error.
                pub unsafe fn $name(&self, $($param: $ty),*) -> Result<ur_result_t, String> {
                    match self.fns.$name {
                        Some(entry) => Ok(entry($($param),*)),
                        None => Err(missing_symbol(stringify!($name))),
                    }
                }
            )*
        }
    };
}

ur_core::for_each_entry_point!(declare_entry_points, {
    Loader.pfnConfigCreate => urLoaderConfigCreate(phLoaderConfig: *mut ur_loader_config_handle_t) via none;
    Loader.pfnConfigRetain => urLoaderConfigRetain(hLoaderConfig: ur_loader_config_handle_t) via hLoaderConfig;
    Loader.pfnConfigRelease => urLoaderConfigRelease(hLoaderConfig: ur_loader_config_handle_t) via hLoaderConfig;
    Loader.pfnConfigGetInfo => urLoaderConfigGetInfo(hLoaderConfig: ur_loader_config_handle_t, propName: ur_loader_config_info_t, propSize: usize, pPropValue: *mut c_void, pPropSizeRet: *mut usize) via hLoaderConfig;
    Loader.pfnConfigEnableLayer => urLoaderConfigEnableLayer(hLoaderConfig: ur_loader_config_handle_t, pLayerName: *const c_char) via hLoaderConfig;
    Loader.pfnConfigSetCodeLocationCallback => urLoaderConfigSetCodeLocationCallback(hLoaderConfig: ur_loader_config_handle_t, pfnCodeloc: ur_code_location_callback_t, pUserData: *mut c_void) via hLoaderConfig;
    Loader.pfnConfigSetMockingEnabled => urLoaderConfigSetMockingEnabled(hLoaderConfig: ur_loader_config_handle_t, enable: ur_bool_t) via hLoaderConfig;
    Loader.pfnInit => urLoaderInit(device_flags: ur_device_init_flags_t, hLoaderConfig: ur_loader_config_handle_t) via none;
    Loader.pfnTearDown => urLoaderTearDown() via none;
    Loader.pfnDeviceGetSelected => urDeviceGetSelected(hPlatform: ur_platform_handle_t, DeviceType: ur_device_type_t, NumEntries: u32, phDevices: *mut ur_device_handle_t, pNumDevices: *mut u32) via hPlatform;
});

fn missing_symbol(name: &str) -> String {
    format!("the loader does not export {name}")
}

/// A loader library and its entry points.
pub struct Api {
    pub fns: EntryPoints,
    pub path: PathBuf,
}

impl Api {
    /// Opens the loader at `path` and resolves every entry point by name.
    ///
    /// The library is never closed: loaders keep adapter threads and exit
    /// handlers that must outlive any handle this program still holds.
    pub fn load(path: &Path) -> Result<Api, String> {
        // SAFETY: opening a UR loader runs its initialisers, which is what any
        // UR application does; nothing else is assumed about the library.
        let library = unsafe { Library::new(path) }.map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        let library: &'static Library = Box::leak(Box::new(library));
        Ok(Api { fns: EntryPoints::resolve(library), path: path.to_path_buf() })
    }
}

/// Our loader, `libur_loader.so.0` beside the running executable
/// (`target/release` or `target/debug`).
pub fn default_loader_path() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent().unwrap_or(Path::new(".")).join(LOADER_FILE_NAME)
}

/// A failed call: which entry point and query, and the code it returned
/// (`None` when the entry point is missing).
#[derive(Debug, Clone)]
pub struct CallError {
    pub call: String,
    pub code: Option<ur_result_t>,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            Some(code) => write!(f, "{} returned {}", self.call, result_name(code)),
            None => write!(f, "{}", self.call),
        }
    }
}

impl From<CallError> for String {
    fn from(e: CallError) -> String {
        e.to_string()
    }
}

/// Turns a call's outcome into `Ok` on `UR_RESULT_SUCCESS`.
pub fn success(call: impl Into<String>, outcome: Result<ur_result_t, String>) -> Result<(), CallError> {
    match outcome {
        Ok(code) if code == UR_RESULT_SUCCESS => Ok(()),
        Ok(code) => Err(CallError { call: call.into(), code: Some(code) }),
        Err(missing) => Err(CallError { call: missing, code: None }),
    }
}

/// The C type of every `ur*GetInfo` entry point.
pub type InfoFn<H, P> = unsafe extern "C" fn(H, P, usize, *mut c_void, *mut usize) -> ur_result_t;

/// Runs an info query with the two-call protocol (size, then bytes).
///
/// # Safety
/// `handle` must be valid for `query`.
pub unsafe fn info_bytes<H: Copy, P: Copy + fmt::Debug>(
    query: Option<InfoFn<H, P>>,
    name: &str,
    handle: H,
    prop: P,
) -> Result<Vec<u8>, CallError> {
    let call = || format!("{name}({prop:?})");
    let Some(query) = query else {
        return Err(CallError { call: missing_symbol(name), code: None });
    };
    let mut size = 0usize;
    let code = query(handle, prop, 0, null_mut(), &mut size);
    if code != UR_RESULT_SUCCESS {
        return Err(CallError { call: call(), code: Some(code) });
    }
    let mut bytes = vec![0u8; size];
    let code = query(handle, prop, size, bytes.as_mut_ptr().cast(), null_mut());
    if code != UR_RESULT_SUCCESS {
        return Err(CallError { call: call(), code: Some(code) });
    }
    Ok(bytes)
}

/// Runs an info query whose answer is one plain value of type `T`.
///
/// # Safety
/// `handle` must be valid, and `T` must be the type the reference names for
/// `prop` (any bit pattern of `T` valid).
pub unsafe fn info_value<T: Copy, H: Copy, P: Copy + fmt::Debug>(
    query: Option<InfoFn<H, P>>,
    name: &str,
    handle: H,
    prop: P,
) -> Result<T, CallError> {
    let Some(query) = query else {
        return Err(CallError { call: missing_symbol(name), code: None });
    };
    let mut value = std::mem::MaybeUninit::<T>::zeroed();
    let mut size_ret = 0usize;
    let code = query(handle, prop, size_of::<T>(), value.as_mut_ptr().cast(), &mut size_ret);
    if code != UR_RESULT_SUCCESS {
        return Err(CallError { call: format!("{name}({prop:?})"), code: Some(code) });
    }
    if size_ret != size_of::<T>() {
        return Err(CallError {
            call: format!("{name}({prop:?}) reported size {size_ret}, expected {}", size_of::<T>()),
            code: None,
        });
    }
    Ok(value.assume_init())
}

/// Runs an info query whose answer is a null-terminated string.
///
/// # Safety
/// `handle` must be valid for `query`.
pub unsafe fn info_string<H: Copy, P: Copy + fmt::Debug>(
    query: Option<InfoFn<H, P>>,
    name: &str,
    handle: H,
    prop: P,
) -> Result<String, CallError> {
    let bytes = info_bytes(query, name, handle, prop)?;
    match CStr::from_bytes_with_nul(&bytes) {
        Ok(s) => Ok(s.to_string_lossy().into_owned()),
        Err(_) => Err(CallError {
            call: format!("{name}({prop:?}) answered {} bytes that are not one null-terminated string", bytes.len()),
            code: None,
        }),
    }
}

/// Typed info helpers per object, so callers name only the handle and query.
macro_rules! info_helpers {
    ($( $value_fn:ident, $string_fn:ident => $entry:ident($handle:ty, $prop:ty); )*) => {
        impl Api {
            $(
                /// A plain value from this object's info query.
                ///
                /// # Safety
                /// As for [`info_value`].
                pub unsafe fn $value_fn<T: Copy>(&self, handle: $handle, prop: $prop) -> Result<T, CallError> {
                    info_value(self.fns.$entry, stringify!($entry), handle, prop)
                }

                /// A string from this object's info query.
                ///
                /// # Safety
                /// As for [`info_string`].
                pub unsafe fn $string_fn(&self, handle: $handle, prop: $prop) -> Result<String, CallError> {
                    info_string(self.fns.$entry, stringify!($entry), handle, prop)
                }
            )*
        }
    };
}

info_helpers! {
    adapter_info, adapter_info_string => urAdapterGetInfo(ur_adapter_handle_t, ur_adapter_info_t);
    platform_info, platform_info_string => urPlatformGetInfo(ur_platform_handle_t, ur_platform_info_t);
    device_info, device_info_string => urDeviceGetInfo(ur_device_handle_t, ur_device_info_t);
    context_info, context_info_string => urContextGetInfo(ur_context_handle_t, ur_context_info_t);
    queue_info, queue_info_string => urQueueGetInfo(ur_queue_handle_t, ur_queue_info_t);
    event_info, event_info_string => urEventGetInfo(ur_event_handle_t, ur_event_info_t);
    pool_info, pool_info_string => urUSMPoolGetInfo(ur_usm_pool_handle_t, ur_usm_pool_info_t);
    loader_config_info, loader_config_info_string => urLoaderConfigGetInfo(ur_loader_config_handle_t, ur_loader_config_info_t);
}

/// Runs a `ur*Get` enumeration with the two-call protocol (count, then handles).
fn enumerate<H: Copy>(
    call: &str,
    mut get: impl FnMut(u32, *mut H, *mut u32) -> Result<ur_result_t, String>,
) -> Result<Vec<H>, CallError> {
    let mut count = 0u32;
    success(call, get(0, null_mut(), &mut count))?;
    if count == 0 {
        return Ok(Vec::new());
    }
    let mut handles = Vec::with_capacity(count as usize);
    let mut written = 0u32;
    success(call, get(count, handles.as_mut_ptr(), &mut written))?;
    // SAFETY: the entry point wrote `count` handles on success.
    unsafe { handles.set_len(count as usize) };
    Ok(handles)
}

/// An adapter the loader reported.
pub struct AdapterEntry {
    pub handle: ur_adapter_handle_t,
    pub backend: ur_backend_t,
}

/// A platform of one adapter.
pub struct PlatformEntry {
    pub handle: ur_platform_handle_t,
    pub adapter: ur_adapter_handle_t,
    pub backend: ur_backend_t,
    /// Position among the platforms of the same backend.
    pub index_in_backend: usize,
}

/// A root device of one platform.
pub struct DeviceEntry {
    pub handle: ur_device_handle_t,
    /// Index into [`Topology::platforms`].
    pub platform: usize,
    /// Position among the devices of the same backend (`cuda:1`), the
    /// numbering of `ONEAPI_DEVICE_SELECTOR`.
    pub index_in_backend: usize,
}

/// What the loader reports after `urLoaderInit`.
pub struct Topology<'a> {
    pub api: &'a Api,
    pub adapters: Vec<AdapterEntry>,
    pub platforms: Vec<PlatformEntry>,
    pub devices: Vec<DeviceEntry>,
}

impl<'a> Topology<'a> {
    /// `urLoaderInit(0, NULL)`, then `urAdapterGet`, `urPlatformGet` and
    /// `urDeviceGet(ALL)` for every adapter and platform.
    pub fn discover(api: &'a Api) -> Result<Topology<'a>, String> {
        // SAFETY: flags 0 and no config are valid arguments.
        success("urLoaderInit(0, NULL)", unsafe { api.urLoaderInit(0, null_mut()) })?;
        let mut topology = Topology { api, adapters: Vec::new(), platforms: Vec::new(), devices: Vec::new() };
        // SAFETY (all calls below): out pointers come from `enumerate`, and
        // every handle passed was just returned by the loader.
        let adapters = enumerate("urAdapterGet", |n, out, count| unsafe { api.urAdapterGet(n, out, count) })?;
        for adapter in adapters {
            let backend = unsafe { api.adapter_info(adapter, UR_ADAPTER_INFO_BACKEND) }?;
            topology.adapters.push(AdapterEntry { handle: adapter, backend });
        }
        for a in 0..topology.adapters.len() {
            let adapter = topology.adapters[a].handle;
            let platforms =
                enumerate("urPlatformGet", |n, out, count| unsafe { api.urPlatformGet(adapter, n, out, count) })?;
            for platform in platforms {
                let backend = unsafe { api.platform_info(platform, UR_PLATFORM_INFO_BACKEND) }?;
                let index_in_backend = topology.platforms.iter().filter(|p| p.backend == backend).count();
                topology.platforms.push(PlatformEntry { handle: platform, adapter, backend, index_in_backend });
            }
        }
        for p in 0..topology.platforms.len() {
            let platform = topology.platforms[p].handle;
            let devices = enumerate("urDeviceGet", |n, out, count| unsafe {
                api.urDeviceGet(platform, UR_DEVICE_TYPE_ALL, n, out, count)
            })?;
            for device in devices {
                let backend = topology.platforms[p].backend;
                let index_in_backend =
                    topology.devices.iter().filter(|d| topology.platforms[d.platform].backend == backend).count();
                topology.devices.push(DeviceEntry { handle: device, platform: p, index_in_backend });
            }
        }
        Ok(topology)
    }

    /// `native_cpu:0`: the backend and the device's index within it.
    pub fn device_label(&self, device: &DeviceEntry) -> String {
        format!("{}:{}", backend_name(self.platforms[device.platform].backend), device.index_in_backend)
    }

    /// `native_cpu:p0`: the backend and the platform's index within it.
    pub fn platform_label(&self, platform: &PlatformEntry) -> String {
        format!("{}:p{}", backend_name(platform.backend), platform.index_in_backend)
    }
}

impl Drop for Topology<'_> {
    fn drop(&mut self) {
        // SAFETY: each handle holds one reference that `discover` took.
        for device in &self.devices {
            let _ = unsafe { self.api.urDeviceRelease(device.handle) };
        }
        for adapter in &self.adapters {
            let _ = unsafe { self.api.urAdapterRelease(adapter.handle) };
        }
    }
}

/// A null `const` pointer, for the negative cases.
pub fn null_const<T>() -> *const T {
    null()
}
