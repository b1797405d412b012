//! `urDeviceGetSelected`: the platform's devices filtered by
//! `ONEAPI_DEVICE_SELECTOR`, in the form SYCL users write it:
//! `[!]backend:filter[,filter...]` terms separated by `;`, where backend is
//! `level_zero`, `opencl`, `cuda`, `hip`, `native_cpu` or `*`, and a filter
//! is `*`, a device type (`cpu`, `gpu`, `fpga`) or a device index.

use crate::dispatch::table_for;
use ur_core::abi::*;
use ur_core::boundary::ffi_call;
use ur_core::UrResult;

#[derive(Debug, PartialEq)]
enum Filter {
    Any,
    Type(ur_device_type_t),
    Index(usize),
}

#[derive(Debug, PartialEq)]
struct Term {
    discard: bool,
    backend: Option<ur_backend_t>,
    filters: Vec<Filter>,
}

fn parse(selector: &str) -> UrResult<Vec<Term>> {
    let mut terms = Vec::new();
    for raw in selector.split(';').map(str::trim).filter(|t| !t.is_empty()) {
        let (discard, raw) = match raw.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, raw),
        };
        let (backend, filters) = raw.split_once(':').ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        let backend = match backend.trim().to_ascii_lowercase().as_str() {
            "*" => None,
            "level_zero" => Some(UR_BACKEND_LEVEL_ZERO),
            "opencl" => Some(UR_BACKEND_OPENCL),
            "cuda" => Some(UR_BACKEND_CUDA),
            "hip" => Some(UR_BACKEND_HIP),
            "native_cpu" => Some(UR_BACKEND_NATIVE_CPU),
            _ => return Err(UR_RESULT_ERROR_INVALID_VALUE),
        };
        let filters = filters
            .split(',')
            .map(|f| match f.trim().to_ascii_lowercase().as_str() {
                "*" => Ok(Filter::Any),
                "cpu" => Ok(Filter::Type(UR_DEVICE_TYPE_CPU)),
                "gpu" => Ok(Filter::Type(UR_DEVICE_TYPE_GPU)),
                "fpga" => Ok(Filter::Type(UR_DEVICE_TYPE_FPGA)),
                n => n.parse().map(Filter::Index).map_err(|_| UR_RESULT_ERROR_INVALID_VALUE),
            })
            .collect::<UrResult<Vec<_>>>()?;
        terms.push(Term { discard, backend, filters });
    }
    Ok(terms)
}

/// Whether device number `index` of a platform of `backend`, of type `ty`,
/// is selected by `terms`.
fn selected(terms: &[Term], backend: ur_backend_t, index: usize, ty: ur_device_type_t) -> bool {
    let matches = |t: &Term| {
        t.backend.is_none_or(|b| b == backend)
            && t.filters.iter().any(|f| match f {
                Filter::Any => true,
                Filter::Type(want) => *want == ty,
                Filter::Index(i) => *i == index,
            })
    };
    if terms.iter().any(|t| t.discard && matches(t)) {
        return false;
    }
    let positive: Vec<&Term> = terms.iter().filter(|t| !t.discard).collect();
    positive.is_empty() || positive.into_iter().any(matches)
}

unsafe fn info<T: Copy + Default>(
    f: Option<unsafe extern "C" fn(*mut core::ffi::c_void, u32, usize, *mut core::ffi::c_void, *mut usize) -> ur_result_t>,
    h: *mut core::ffi::c_void,
    prop: u32,
) -> UrResult<T> {
    let f = f.ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
    let mut v = T::default();
    let r = f(h, prop, std::mem::size_of::<T>(), &mut v as *mut T as *mut _, std::ptr::null_mut());
    if r != UR_RESULT_SUCCESS {
        return Err(r);
    }
    Ok(v)
}

#[no_mangle]
pub unsafe extern "C" fn urDeviceGetSelected(
    hPlatform: ur_platform_handle_t,
    DeviceType: ur_device_type_t,
    NumEntries: u32,
    phDevices: *mut ur_device_handle_t,
    pNumDevices: *mut u32,
) -> ur_result_t {
    ffi_call(|| {
        let table = table_for(hPlatform)?;
        if DeviceType.0 > UR_DEVICE_TYPE_CUSTOM.0 || DeviceType.0 == 0 {
            return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
        }
        // The reference names INVALID_VALUE here, where urDeviceGet says INVALID_SIZE.
        if NumEntries == 0 && !phDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_VALUE);
        }
        if phDevices.is_null() && pNumDevices.is_null() {
            return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
        }
        let get = table.Device.pfnGet.ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
        let release = table.Device.pfnRelease.ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
        let terms = match std::env::var("ONEAPI_DEVICE_SELECTOR") {
            Ok(s) => parse(&s)?,
            Err(_) => Vec::new(),
        };
        let mut count = 0u32;
        let r = get(hPlatform, DeviceType, 0, std::ptr::null_mut(), &mut count);
        if r != UR_RESULT_SUCCESS {
            return Err(r);
        }
        let mut all = vec![std::ptr::null_mut(); count as usize];
        let r = get(hPlatform, DeviceType, count, all.as_mut_ptr(), std::ptr::null_mut());
        if r != UR_RESULT_SUCCESS {
            return Err(r);
        }
        // The info getters have the same shape for platforms and devices;
        // they are called through type-erased pointers of that shape.
        type ErasedInfo =
            unsafe extern "C" fn(*mut core::ffi::c_void, u32, usize, *mut core::ffi::c_void, *mut usize) -> ur_result_t;
        // SAFETY: ur_platform_info_t and ur_device_info_t are u32 newtypes
        // and handles are pointers: the erased signature is ABI-identical.
        let platform_info: Option<ErasedInfo> = std::mem::transmute(table.Platform.pfnGetInfo);
        let device_info: Option<ErasedInfo> = std::mem::transmute(table.Device.pfnGetInfo);
        let backend: ur_backend_t = info(platform_info, hPlatform as _, UR_PLATFORM_INFO_BACKEND.0)?;
        let mut chosen = 0u32;
        for (i, &d) in all.iter().enumerate() {
            let ty: ur_device_type_t = info(device_info, d as _, UR_DEVICE_INFO_TYPE.0)?;
            if selected(&terms, backend, i, ty) {
                if chosen < NumEntries && !phDevices.is_null() {
                    *phDevices.add(chosen as usize) = d;
                } else {
                    release(d);
                }
                chosen += 1;
            } else {
                release(d);
            }
        }
        if !pNumDevices.is_null() {
            *pNumDevices = chosen;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_selector_selects_everything() {
        assert!(selected(&[], UR_BACKEND_OPENCL, 3, UR_DEVICE_TYPE_GPU));
    }

    #[test]
    fn backend_and_type_terms() {
        let t = parse("opencl:cpu;native_cpu:*").unwrap();
        assert!(selected(&t, UR_BACKEND_OPENCL, 0, UR_DEVICE_TYPE_CPU));
        assert!(!selected(&t, UR_BACKEND_OPENCL, 0, UR_DEVICE_TYPE_GPU));
        assert!(selected(&t, UR_BACKEND_NATIVE_CPU, 0, UR_DEVICE_TYPE_CPU));
        assert!(!selected(&t, UR_BACKEND_CUDA, 0, UR_DEVICE_TYPE_GPU));
    }

    #[test]
    fn discard_terms_and_indices() {
        let t = parse("!opencl:1").unwrap();
        assert!(selected(&t, UR_BACKEND_OPENCL, 0, UR_DEVICE_TYPE_CPU));
        assert!(!selected(&t, UR_BACKEND_OPENCL, 1, UR_DEVICE_TYPE_CPU));
        assert!(parse("vulkan:*").is_err());
        assert!(parse("opencl").is_err());
    }
}
