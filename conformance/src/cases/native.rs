//! ur*CreateWithNativeHandle for platforms, devices, contexts, queues,
//! events, programs and kernels.
//!
//! Every backend: a native handle from `ur*GetNativeHandle` makes a UR object
//! that answers the same native handle and works (a device or platform comes
//! back as the very handle `urDeviceGet`/`urPlatformGet` gave); the argument
//! errors. Whether an adapter has native objects at all is probed: where
//! `ur*GetNativeHandle` answers UNSUPPORTED_FEATURE, the cases skip, saying
//! so.
//!
//! OpenCL (probed: the platform's native handle is one of the platforms the
//! ICD loader `libOpenCL.so.1` lists): native objects made here through the
//! ICD loader and wrapped, with their
//! OpenCL reference counts checked: a borrowed object (not owned) has the
//! count it had once the UR object is released, an owned one has one less
//! (the UR object released the reference it was given). A program built by
//! `clBuildProgram` from OpenCL C makes kernels that run, and one only
//! created builds through `urProgramBuild`.

use super::kernel::{check_words, launch, pointer_arg, run_fill_index, value_arg, words, N};
use super::program::{built_program, own_program, KERNEL_SOURCE};
use super::common::SysLib;
use crate::harness::*;
use crate::{check, check_eq, expect_result, expect_success, names::result_name, native_props, skip, ur::Api};
use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;
use ur_core::abi::*;

pub const CASES: &[Case] = &[
    Case::platform("urPlatformCreateWithNativeHandle.round_trip_same_handle", platform_round_trip),
    Case::platform("urPlatformCreateWithNativeHandle.unknown_native_platform", platform_unknown),
    Case::platform("urPlatformCreateWithNativeHandle.null_handle", platform_null_handle),
    Case::platform("urPlatformCreateWithNativeHandle.null_pointer", platform_null_pointer),
    Case::platform("urPlatformCreateWithNativeHandle.null_adapter", platform_null_adapter),
    Case::platform("urPlatformCreateWithNativeHandle.invalid_properties_stype", platform_bad_stype),
    Case::device("urDeviceCreateWithNativeHandle.round_trip_same_handle", device_round_trip),
    Case::device("urDeviceCreateWithNativeHandle.sub_device_round_trip", device_sub_device_round_trip),
    Case::device("urDeviceCreateWithNativeHandle.unknown_native_device", device_unknown),
    Case::platform("urDeviceCreateWithNativeHandle.null_handle", device_null_handle),
    Case::device("urDeviceCreateWithNativeHandle.null_pointer", device_null_pointer),
    Case::device("urDeviceCreateWithNativeHandle.null_adapter", device_null_adapter),
    Case::device("urContextCreateWithNativeHandle.round_trip", context_round_trip),
    Case::device("urContextCreateWithNativeHandle.all_devices_when_none_named", context_all_devices),
    Case::device("urContextCreateWithNativeHandle.queues_usm_and_async_usm_work", context_works),
    Case::device("urContextCreateWithNativeHandle.null_handle", context_null_handle),
    Case::device("urContextCreateWithNativeHandle.null_pointer", context_null_pointer),
    Case::device("urContextCreateWithNativeHandle.null_adapter", context_null_adapter),
    Case::device("urContextCreateWithNativeHandle.invalid_properties_stype", context_bad_stype),
    Case::device("urContextCreateWithNativeHandle.opencl_ownership", context_opencl_ownership),
    Case::device("urQueueCreateWithNativeHandle.round_trip", queue_round_trip),
    Case::device("urQueueCreateWithNativeHandle.device_from_native_queue", queue_device_from_native),
    Case::device("urQueueCreateWithNativeHandle.null_handle", queue_null_handle),
    Case::device("urQueueCreateWithNativeHandle.null_pointer", queue_null_pointer),
    Case::device("urQueueCreateWithNativeHandle.null_context", queue_null_context),
    Case::device("urQueueCreateWithNativeHandle.invalid_properties_stype", queue_bad_stype),
    Case::device("urQueueCreateWithNativeHandle.opencl_ownership_and_order", queue_opencl_ownership),
    Case::device("urEventCreateWithNativeHandle.round_trip", event_round_trip),
    Case::device("urEventCreateWithNativeHandle.null_handle", event_null_handle),
    Case::device("urEventCreateWithNativeHandle.null_pointer", event_null_pointer),
    Case::device("urEventCreateWithNativeHandle.null_context", event_null_context),
    Case::device("urEventCreateWithNativeHandle.invalid_properties_stype", event_bad_stype),
    Case::device("urEventCreateWithNativeHandle.opencl_user_event_completion", event_opencl_user_event),
    Case::device("urProgramCreateWithNativeHandle.round_trip_and_launch", program_round_trip),
    Case::device("urProgramCreateWithNativeHandle.null_handle", program_null_handle),
    Case::device("urProgramCreateWithNativeHandle.null_pointer", program_null_pointer),
    Case::device("urProgramCreateWithNativeHandle.null_context", program_null_context),
    Case::device("urProgramCreateWithNativeHandle.invalid_properties_stype", program_bad_stype),
    Case::device("urProgramCreateWithNativeHandle.foreign_context", program_foreign_context),
    Case::device("urProgramCreateWithNativeHandle.opencl_built_from_source", program_opencl_from_source),
    Case::device("urProgramCreateWithNativeHandle.opencl_unbuilt_then_urProgramBuild", program_opencl_unbuilt),
    Case::device("urKernelCreateWithNativeHandle.round_trip_and_launch", kernel_round_trip),
    Case::device("urKernelCreateWithNativeHandle.without_program_handle", kernel_without_program),
    Case::device("urKernelCreateWithNativeHandle.null_handle", kernel_null_handle),
    Case::device("urKernelCreateWithNativeHandle.null_pointer", kernel_null_pointer),
    Case::device("urKernelCreateWithNativeHandle.null_context", kernel_null_context),
    Case::device("urKernelCreateWithNativeHandle.invalid_properties_stype", kernel_bad_stype),
    Case::device("urKernelCreateWithNativeHandle.opencl_ownership", kernel_opencl_ownership),
];

/// An id no adapter hands out as a native device or platform: no pointer a
/// runtime returns, and too large for a CUDA device ordinal. Adapters only
/// compare it with their own ids.
const NOT_A_NATIVE_ID: ur_native_handle_t = 0x7e57_0000_0000_7e57;

/// A native handle, or a skip where the adapter has none for this object
/// (`ur*GetNativeHandle` answers UNSUPPORTED_FEATURE).
fn native_or_skip(what: &str, call: Result<ur_result_t, String>, native: ur_native_handle_t) -> Result<ur_native_handle_t, Outcome> {
    match call? {
        UR_RESULT_SUCCESS => Ok(native),
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE => {
            skip!("the adapter has no native {what} (its GetNativeHandle answers UNSUPPORTED_FEATURE)")
        }
        code => Err(format!("ur{what}GetNativeHandle returned {}", result_name(code)).into()),
    }
}

pub unsafe fn native_platform(api: &Api, platform: ur_platform_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Platform", api.urPlatformGetNativeHandle(platform, &mut native), native)
}

pub unsafe fn native_device(api: &Api, device: ur_device_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Device", api.urDeviceGetNativeHandle(device, &mut native), native)
}

pub unsafe fn native_context(fx: &DeviceFx, context: ur_context_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Context", fx.api.urContextGetNativeHandle(context, &mut native), native)
}

pub unsafe fn native_queue(fx: &DeviceFx, queue: ur_queue_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Queue", fx.api.urQueueGetNativeHandle(queue, null_mut(), &mut native), native)
}

unsafe fn native_event(fx: &DeviceFx, event: ur_event_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Event", fx.api.urEventGetNativeHandle(event, &mut native), native)
}

unsafe fn native_program(fx: &DeviceFx, program: ur_program_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Program", fx.api.urProgramGetNativeHandle(program, &mut native), native)
}

unsafe fn native_kernel(fx: &DeviceFx, kernel: ur_kernel_handle_t) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    native_or_skip("Kernel", fx.api.urKernelGetNativeHandle(kernel, &mut native), native)
}

/// A structure type no native-properties structure has.
const WRONG_STYPE: ur_structure_type_t = UR_STRUCTURE_TYPE_USM_DESC;

/// The argument a `ur*CreateWithNativeHandle` error case spoils: the native
/// handle (0), the output, the owner (adapter or context), or the stype of
/// the properties.
#[derive(Clone, Copy)]
enum Spoil {
    NullHandle,
    NullPointer,
    NullOwner,
    BadStype,
}

/// One call of `create(native, owner, properties, out)` with the argument
/// `spoil` names wrong and the rest valid, which must answer that argument's
/// error code. `wrong_stype`: properties of a wrong structure type. Every
/// kind checks these four the same way; only the call's shape differs.
unsafe fn refuses<O, P, H>(
    entry: &str,
    spoil: Spoil,
    native: ur_native_handle_t,
    owner: *mut O,
    wrong_stype: P,
    create: impl FnOnce(ur_native_handle_t, *mut O, *const P, *mut *mut H) -> Result<ur_result_t, String>,
) -> CaseResult {
    let mut made = null_mut();
    let (expected, got, how) = match spoil {
        Spoil::NullHandle => (UR_RESULT_ERROR_INVALID_NULL_HANDLE, create(0, owner, null(), &mut made)?, "native handle 0"),
        Spoil::NullPointer => (UR_RESULT_ERROR_INVALID_NULL_POINTER, create(native, owner, null(), null_mut())?, "a null output"),
        Spoil::NullOwner => (UR_RESULT_ERROR_INVALID_NULL_HANDLE, create(native, null_mut(), null(), &mut made)?, "a null owner"),
        Spoil::BadStype => (UR_RESULT_ERROR_INVALID_VALUE, create(native, owner, &wrong_stype, &mut made)?, "a wrong stype"),
    };
    expect_code(expected, got, &format!("{entry} with {how}"))
}

/// Case functions named as `CASES` names them, each `$check(fx, Spoil::X)`.
macro_rules! spoil_cases {
    ($fx:ty, $check:ident: $($case:ident = $spoil:ident),+ $(,)?) => {
        $(unsafe fn $case(fx: &$fx) -> CaseResult {
            $check(fx, Spoil::$spoil)
        })+
    };
}

// ---------------------------------------------------------------------------
// OpenCL through the ICD loader

type ClInt = i32;
type ClUint = u32;
type Ptr = *mut c_void;

/// The OpenCL entry points the OpenCL cases call (from the same
/// `libOpenCL.so.1` the adapter uses).
#[allow(clippy::type_complexity)]
struct OpenCl {
    get_platform_ids: unsafe extern "C" fn(ClUint, *mut Ptr, *mut ClUint) -> ClInt,
    get_context_info: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
    create_context: unsafe extern "C" fn(*const isize, ClUint, *const Ptr, Ptr, Ptr, *mut ClInt) -> Ptr,
    retain_context: unsafe extern "C" fn(Ptr) -> ClInt,
    release_context: unsafe extern "C" fn(Ptr) -> ClInt,
    get_device_info: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
    create_queue: unsafe extern "C" fn(Ptr, Ptr, *const u64, *mut ClInt) -> Ptr,
    get_queue_info: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
    retain_queue: unsafe extern "C" fn(Ptr) -> ClInt,
    release_queue: unsafe extern "C" fn(Ptr) -> ClInt,
    create_user_event: unsafe extern "C" fn(Ptr, *mut ClInt) -> Ptr,
    set_user_event_status: unsafe extern "C" fn(Ptr, ClInt) -> ClInt,
    get_event_info: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
    retain_event: unsafe extern "C" fn(Ptr) -> ClInt,
    release_event: unsafe extern "C" fn(Ptr) -> ClInt,
    create_program: unsafe extern "C" fn(Ptr, ClUint, *const *const c_char, *const usize, *mut ClInt) -> Ptr,
    build_program: unsafe extern "C" fn(Ptr, ClUint, *const Ptr, *const c_char, Ptr, Ptr) -> ClInt,
    get_program_info: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
    retain_program: unsafe extern "C" fn(Ptr) -> ClInt,
    release_program: unsafe extern "C" fn(Ptr) -> ClInt,
    create_kernel: unsafe extern "C" fn(Ptr, *const c_char, *mut ClInt) -> Ptr,
    get_kernel_info: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
    retain_kernel: unsafe extern "C" fn(Ptr) -> ClInt,
    release_kernel: unsafe extern "C" fn(Ptr) -> ClInt,
}

const CL_SUCCESS: ClInt = 0;
const CL_COMPLETE: ClInt = 0;
const CL_CONTEXT_REFERENCE_COUNT: ClUint = 0x1080;
const CL_CONTEXT_PLATFORM: isize = 0x1084;
const CL_DEVICE_PLATFORM: ClUint = 0x1031;
const CL_DEVICE_QUEUE_ON_HOST_PROPERTIES: ClUint = 0x102A;
const CL_QUEUE_PROPERTIES: u64 = 0x1093;
const CL_QUEUE_REFERENCE_COUNT: ClUint = 0x1092;
const CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE: u64 = 1;
const CL_EVENT_REFERENCE_COUNT: ClUint = 0x11D2;
const CL_PROGRAM_REFERENCE_COUNT: ClUint = 0x1160;
const CL_KERNEL_REFERENCE_COUNT: ClUint = 0x1192;

impl OpenCl {
    fn load() -> Result<OpenCl, String> {
        let lib = SysLib::open("libOpenCL.so.1")?;
        // SAFETY: each field's type is the C type of the OpenCL entry point named.
        Ok(unsafe { OpenCl {
            get_platform_ids: lib.get("clGetPlatformIDs")?,
            get_context_info: lib.get("clGetContextInfo")?,
            create_context: lib.get("clCreateContext")?,
            retain_context: lib.get("clRetainContext")?,
            release_context: lib.get("clReleaseContext")?,
            get_device_info: lib.get("clGetDeviceInfo")?,
            create_queue: lib.get("clCreateCommandQueueWithProperties")?,
            get_queue_info: lib.get("clGetCommandQueueInfo")?,
            retain_queue: lib.get("clRetainCommandQueue")?,
            release_queue: lib.get("clReleaseCommandQueue")?,
            create_user_event: lib.get("clCreateUserEvent")?,
            set_user_event_status: lib.get("clSetUserEventStatus")?,
            get_event_info: lib.get("clGetEventInfo")?,
            retain_event: lib.get("clRetainEvent")?,
            release_event: lib.get("clReleaseEvent")?,
            create_program: lib.get("clCreateProgramWithSource")?,
            build_program: lib.get("clBuildProgram")?,
            get_program_info: lib.get("clGetProgramInfo")?,
            retain_program: lib.get("clRetainProgram")?,
            release_program: lib.get("clReleaseProgram")?,
            create_kernel: lib.get("clCreateKernel")?,
            get_kernel_info: lib.get("clGetKernelInfo")?,
            retain_kernel: lib.get("clRetainKernel")?,
            release_kernel: lib.get("clReleaseKernel")?,
        } })
    }

    /// One plain value from a `clGet*Info`.
    unsafe fn info<T: Copy + Default>(
        &self,
        f: unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt,
        object: Ptr,
        param: ClUint,
        what: &str,
    ) -> Result<T, Outcome> {
        let mut v = T::default();
        let status = f(object, param, size_of::<T>(), (&mut v as *mut T).cast(), null_mut());
        check!(status == CL_SUCCESS, "{what}: OpenCL status {status}");
        Ok(v)
    }
}

/// The ICD loader, for cases whose native handles are OpenCL objects,
/// probed: the platform's native handle is one the ICD loader lists. The
/// list is compared by value, so no foreign handle is ever passed to
/// OpenCL. A skip, naming why, elsewhere.
unsafe fn opencl(fx: &DeviceFx) -> Result<&'static OpenCl, Outcome> {
    let native = native_platform(fx.api, fx.platform)?;
    static CL: OnceLock<Result<OpenCl, String>> = OnceLock::new();
    let Ok(cl) = CL.get_or_init(OpenCl::load) else {
        skip!("no OpenCL ICD loader (libOpenCL.so.1) here to tell whether the native handles are OpenCL objects");
    };
    let mut count: ClUint = 0;
    // An ICD loader without platforms answers CL_PLATFORM_NOT_FOUND_KHR.
    if (cl.get_platform_ids)(0, null_mut(), &mut count) != CL_SUCCESS || count == 0 {
        skip!("the OpenCL ICD loader lists no platform, so the native platform handle is not an OpenCL platform");
    }
    let mut platforms = vec![null_mut(); count as usize];
    let status = (cl.get_platform_ids)(count, platforms.as_mut_ptr(), null_mut());
    check!(status == CL_SUCCESS, "clGetPlatformIDs: OpenCL status {status}");
    if !platforms.iter().any(|&p| p as ur_native_handle_t == native) {
        skip!("the platform's native handle is none of the {count} platforms the OpenCL ICD loader lists");
    }
    Ok(cl)
}

/// Reference counts of OpenCL objects.
unsafe fn context_refs(cl: &OpenCl, c: Ptr) -> Result<ClUint, Outcome> {
    cl.info(cl.get_context_info, c, CL_CONTEXT_REFERENCE_COUNT, "clGetContextInfo(REFERENCE_COUNT)")
}
unsafe fn queue_refs(cl: &OpenCl, q: Ptr) -> Result<ClUint, Outcome> {
    cl.info(cl.get_queue_info, q, CL_QUEUE_REFERENCE_COUNT, "clGetCommandQueueInfo(REFERENCE_COUNT)")
}
unsafe fn event_refs(cl: &OpenCl, e: Ptr) -> Result<ClUint, Outcome> {
    cl.info(cl.get_event_info, e, CL_EVENT_REFERENCE_COUNT, "clGetEventInfo(REFERENCE_COUNT)")
}
unsafe fn program_refs(cl: &OpenCl, p: Ptr) -> Result<ClUint, Outcome> {
    cl.info(cl.get_program_info, p, CL_PROGRAM_REFERENCE_COUNT, "clGetProgramInfo(REFERENCE_COUNT)")
}
unsafe fn kernel_refs(cl: &OpenCl, k: Ptr) -> Result<ClUint, Outcome> {
    cl.info(cl.get_kernel_info, k, CL_KERNEL_REFERENCE_COUNT, "clGetKernelInfo(REFERENCE_COUNT)")
}

/// An OpenCL object of the case's own, released when the guard drops.
struct ClObject {
    raw: Ptr,
    release: unsafe extern "C" fn(Ptr) -> ClInt,
}

impl ClObject {
    fn native(&self) -> ur_native_handle_t {
        self.raw as ur_native_handle_t
    }
}

impl Drop for ClObject {
    fn drop(&mut self) {
        // SAFETY: the guard holds one reference of the object.
        unsafe { (self.release)(self.raw) };
    }
}

/// Checks the OpenCL reference count of a native object around the life of
/// a UR object made from it: `make(owned)` wraps it, `release` releases the
/// UR object. Not owned: the count is what it was, and the object still
/// answers. Owned: the case gives the UR object a reference of its own
/// (retained first), and the count is one less again once it is released.
unsafe fn check_ownership(
    what: &str,
    refs: impl Fn() -> Result<ClUint, Outcome>,
    retain: impl Fn() -> ClInt,
    make: impl Fn(bool) -> Result<Box<dyn FnOnce() -> Result<ur_result_t, String>>, Outcome>,
) -> CaseResult {
    let before = refs()?;
    let release = make(false)?;
    expect_code(UR_RESULT_SUCCESS, release()?, &format!("releasing the UR {what} (not owned)"))?;
    let after = refs()?;
    check!(after == before, "not owned: the {what}'s OpenCL reference count is {after} after the UR object went, {before} before");

    check!(retain() == CL_SUCCESS, "retaining the {what} to hand the UR object a reference");
    let given = refs()?;
    let release = make(true)?;
    expect_code(UR_RESULT_SUCCESS, release()?, &format!("releasing the UR {what} (owned)"))?;
    let after = refs()?;
    check!(
        after + 1 == given,
        "owned: the {what}'s OpenCL reference count is {after} after the UR object went, {given} when it was handed over"
    );
    Ok(())
}

// ---------------------------------------------------------------------------
// Platforms and devices

unsafe fn platform_round_trip(fx: &PlatformFx) -> CaseResult {
    let native = native_platform(fx.api, fx.platform)?;
    for owned in [false, true] {
        let properties =
            native_props!(ur_platform_native_properties_t, UR_STRUCTURE_TYPE_PLATFORM_NATIVE_PROPERTIES, owned);
        let mut platform = null_mut();
        expect_success!(fx.api.urPlatformCreateWithNativeHandle(native, fx.adapter, &properties, &mut platform));
        check!(platform == fx.platform, "the platform from its native handle is {platform:?}, not {:?}", fx.platform);
    }
    let mut platform = null_mut();
    expect_success!(fx.api.urPlatformCreateWithNativeHandle(native, fx.adapter, null(), &mut platform));
    check_eq!(platform, fx.platform);
    let mut again = 0;
    expect_success!(fx.api.urPlatformGetNativeHandle(platform, &mut again));
    check_eq!(again, native);
    Ok(())
}

unsafe fn platform_unknown(fx: &PlatformFx) -> CaseResult {
    native_platform(fx.api, fx.platform)?;
    let mut platform = null_mut();
    // spec/platform.md: no platform of this adapter wraps it.
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urPlatformCreateWithNativeHandle(NOT_A_NATIVE_ID, fx.adapter, null(), &mut platform)
    );
    Ok(())
}

unsafe fn platform_refuses(fx: &PlatformFx, spoil: Spoil) -> CaseResult {
    let native = native_platform(fx.api, fx.platform)?;
    let wrong = native_props!(ur_platform_native_properties_t, WRONG_STYPE, false);
    refuses("urPlatformCreateWithNativeHandle", spoil, native, fx.adapter, wrong, |n, a, p, out| {
        fx.api.urPlatformCreateWithNativeHandle(n, a, p, out)
    })
}

spoil_cases!(PlatformFx, platform_refuses:
    platform_null_handle = NullHandle, platform_null_pointer = NullPointer,
    platform_null_adapter = NullOwner, platform_bad_stype = BadStype);

unsafe fn device_round_trip(fx: &DeviceFx) -> CaseResult {
    let native = native_device(fx.api, fx.device)?;
    for owned in [false, true] {
        let properties = native_props!(ur_device_native_properties_t, UR_STRUCTURE_TYPE_DEVICE_NATIVE_PROPERTIES, owned);
        let mut device = null_mut();
        expect_success!(fx.api.urDeviceCreateWithNativeHandle(native, fx.adapter, &properties, &mut device));
        check!(device == fx.device, "the device from its native handle is {device:?}, not {:?}", fx.device);
        // A handle the caller received: releasing it leaves the device.
        expect_success!(fx.api.urDeviceRelease(device));
    }
    let mut device = null_mut();
    expect_success!(fx.api.urDeviceCreateWithNativeHandle(native, fx.adapter, null(), &mut device));
    check_eq!(device, fx.device);
    let mut again = 0;
    expect_success!(fx.api.urDeviceGetNativeHandle(device, &mut again));
    check_eq!(again, native);
    expect_success!(fx.api.urDeviceRelease(device));
    // The device still answers.
    fx.api.device_info_string(fx.device, UR_DEVICE_INFO_NAME)?;
    Ok(())
}

/// A sub-device from `urDevicePartition` (EQUALLY, one compute unit each)
/// comes back from its native handle as the same handle, with a reference
/// of the caller's own.
unsafe fn device_sub_device_round_trip(fx: &DeviceFx) -> CaseResult {
    native_device(fx.api, fx.device)?;
    let mut size = 0usize;
    expect_success!(fx.api.urDeviceGetInfo(fx.device, UR_DEVICE_INFO_SUPPORTED_PARTITIONS, 0, null_mut(), &mut size));
    let mut kinds = vec![ur_device_partition_t(0); size / size_of::<ur_device_partition_t>()];
    if size > 0 {
        expect_success!(fx.api.urDeviceGetInfo(
            fx.device,
            UR_DEVICE_INFO_SUPPORTED_PARTITIONS,
            size,
            kinds.as_mut_ptr().cast(),
            null_mut()
        ));
    }
    if !kinds.contains(&UR_DEVICE_PARTITION_EQUALLY) {
        skip!("the device does not partition EQUALLY");
    }
    let property = ur_device_partition_property_t {
        r#type: UR_DEVICE_PARTITION_EQUALLY,
        value: ur_device_partition_value_t { count: 1 },
    };
    let properties = ur_device_partition_properties_t {
        stype: UR_STRUCTURE_TYPE_DEVICE_PARTITION_PROPERTIES,
        pNext: null_mut(),
        pProperties: &property,
        PropCount: 1,
    };
    let mut sub = null_mut();
    expect_success!(fx.api.urDevicePartition(fx.device, &properties, 1, &mut sub, null_mut()));
    let sub = Owned::new(sub, fx.api.fns.urDeviceRelease);
    let native = native_device(fx.api, sub.get())?;
    check!(native != native_device(fx.api, fx.device)?, "a sub-device has its parent's native handle");
    let mut again = null_mut();
    expect_success!(fx.api.urDeviceCreateWithNativeHandle(native, fx.adapter, null(), &mut again));
    let again = Owned::new(again, fx.api.fns.urDeviceRelease);
    check!(again.get() == sub.get(), "the sub-device from its native handle is {:?}, not {:?}", again.get(), sub.get());
    expect_success!(again.release());
    // The partition's own reference is still there.
    check!(fx.api.device_info::<u32>(sub.get(), UR_DEVICE_INFO_REFERENCE_COUNT)? >= 1, "the sub-device lost its reference");
    expect_success!(sub.release());
    Ok(())
}

unsafe fn device_unknown(fx: &DeviceFx) -> CaseResult {
    native_device(fx.api, fx.device)?;
    let mut device = null_mut();
    // spec/device.md: no device of this adapter wraps it.
    expect_result!(
        UR_RESULT_ERROR_INVALID_VALUE,
        fx.api.urDeviceCreateWithNativeHandle(NOT_A_NATIVE_ID, fx.adapter, null(), &mut device)
    );
    Ok(())
}

unsafe fn device_null_handle(fx: &PlatformFx) -> CaseResult {
    // Where 0 is some device's native handle (a CUDA device ordinal), it is
    // no null handle.
    let mut count = 0;
    expect_success!(fx.api.urDeviceGet(fx.platform, UR_DEVICE_TYPE_ALL, 0, null_mut(), &mut count));
    let mut devices = vec![null_mut(); count as usize];
    expect_success!(fx.api.urDeviceGet(fx.platform, UR_DEVICE_TYPE_ALL, count, devices.as_mut_ptr(), null_mut()));
    let Some(&first) = devices.first() else { skip!("the platform has no device") };
    native_device(fx.api, first)?;
    for &d in &devices {
        if native_device(fx.api, d)? == 0 {
            skip!("0 is the native handle of a device of this platform");
        }
    }
    let mut device = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_HANDLE,
        fx.api.urDeviceCreateWithNativeHandle(0, fx.adapter, null(), &mut device)
    );
    Ok(())
}

unsafe fn device_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let native = native_device(fx.api, fx.device)?;
    let wrong = native_props!(ur_device_native_properties_t, WRONG_STYPE, false);
    refuses("urDeviceCreateWithNativeHandle", spoil, native, fx.adapter, wrong, |n, a, p, out| {
        fx.api.urDeviceCreateWithNativeHandle(n, a, p, out)
    })
}

spoil_cases!(DeviceFx, device_refuses: device_null_pointer = NullPointer, device_null_adapter = NullOwner);

// ---------------------------------------------------------------------------
// Contexts

/// A UR context over `native` for `devices` (all of the native context's
/// when empty).
unsafe fn context_from(
    fx: &DeviceFx,
    native: ur_native_handle_t,
    devices: &[ur_device_handle_t],
    owned: bool,
) -> Result<OwnedContext, Outcome> {
    let properties = native_props!(ur_context_native_properties_t, UR_STRUCTURE_TYPE_CONTEXT_NATIVE_PROPERTIES, owned);
    let mut context = null_mut();
    expect_success!(fx.api.urContextCreateWithNativeHandle(
        native,
        fx.adapter,
        devices.len() as u32,
        if devices.is_empty() { null() } else { devices.as_ptr() },
        &properties,
        &mut context
    ));
    check!(!context.is_null(), "urContextCreateWithNativeHandle returned a null context");
    Ok(fx.own_context(context))
}

unsafe fn context_devices(fx: &DeviceFx, context: ur_context_handle_t) -> Result<Vec<ur_device_handle_t>, Outcome> {
    let n = fx.api.context_info::<u32>(context, UR_CONTEXT_INFO_NUM_DEVICES)?;
    let mut devices: Vec<ur_device_handle_t> = vec![null_mut(); n as usize];
    expect_success!(fx.api.urContextGetInfo(
        context,
        UR_CONTEXT_INFO_DEVICES,
        size_of_val(devices.as_slice()),
        devices.as_mut_ptr().cast(),
        null_mut()
    ));
    Ok(devices)
}

unsafe fn context_round_trip(fx: &DeviceFx) -> CaseResult {
    let native = native_context(fx, fx.context)?;
    let context = context_from(fx, native, &[fx.device], false)?;
    check!(context.get() != fx.context, "a new context is a new UR object");
    let mut again = 0;
    expect_success!(fx.api.urContextGetNativeHandle(context.get(), &mut again));
    check_eq!(again, native);
    check_eq!(context_devices(fx, context.get())?, vec![fx.device]);
    check_eq!(fx.api.context_info::<u32>(context.get(), UR_CONTEXT_INFO_REFERENCE_COUNT)?, 1);
    expect_success!(context.release());
    // The fixture's context, whose native object it was, still works.
    let usm_ok = fx.api.context_info::<u32>(fx.context, UR_CONTEXT_INFO_NUM_DEVICES)?;
    check_eq!(usm_ok, 1);
    let mut done = null_mut();
    expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 0, null(), &mut done));
    let done = fx.own_event(done);
    fx.wait(done.get())
}

unsafe fn context_all_devices(fx: &DeviceFx) -> CaseResult {
    let native = native_context(fx, fx.context)?;
    let context = context_from(fx, native, &[], false)?;
    check_eq!(context_devices(fx, context.get())?, vec![fx.device]);
    Ok(())
}

unsafe fn context_works(fx: &DeviceFx) -> CaseResult {
    let native = native_context(fx, fx.context)?;
    let context = context_from(fx, native, &[fx.device], false)?;
    let mut queue = null_mut();
    expect_success!(fx.api.urQueueCreate(context.get(), fx.device, null(), &mut queue));
    let queue = fx.own_queue(queue);
    // Blocking USM of the first kind the device has, filled and read back.
    let kind = [UsmKind::Device, UsmKind::Shared, UsmKind::Host].into_iter().find(|&k| fx.supports(k).unwrap_or(false));
    if let Some(kind) = kind {
        let mut p = null_mut();
        let code = match kind {
            UsmKind::Host => fx.api.urUSMHostAlloc(context.get(), null(), null_mut(), N * 4, &mut p)?,
            UsmKind::Device => fx.api.urUSMDeviceAlloc(context.get(), fx.device, null(), null_mut(), N * 4, &mut p)?,
            UsmKind::Shared => fx.api.urUSMSharedAlloc(context.get(), fx.device, null(), null_mut(), N * 4, &mut p)?,
        };
        expect_code(UR_RESULT_SUCCESS, code, "USM allocation in the context from a native handle")?;
        let pattern = 0x5eed_1234u32;
        expect_success!(fx.api.urEnqueueUSMFill(queue.get(), p, 4, (&pattern as *const u32).cast(), N * 4, 0, null(), null_mut()));
        let got = words(&fx.read(queue.get(), p, N * 4)?);
        check_words(&format!("{kind:?} USM filled in a context from a native handle"), &got, |_| pattern)?;
        expect_success!(fx.api.urUSMFree(context.get(), p));
    }
    // Async allocation: an allocation, a fill into it, a free, and a second
    // allocation of the same size filled too, all on the queue.
    if fx.api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP)? != 0 {
        let mut p = null_mut();
        expect_success!(fx.api.urEnqueueUSMDeviceAllocExp(queue.get(), null_mut(), N * 4, null(), 0, null(), &mut p, null_mut()));
        check!(!p.is_null(), "urEnqueueUSMDeviceAllocExp returned a null pointer");
        let pattern = 0x0a5f_c0deu32;
        expect_success!(fx.api.urEnqueueUSMFill(queue.get(), p, 4, (&pattern as *const u32).cast(), N * 4, 0, null(), null_mut()));
        let got = words(&fx.read(queue.get(), p, N * 4)?);
        check_words("async USM filled in a context from a native handle", &got, |_| pattern)?;
        expect_success!(fx.api.urEnqueueUSMFreeExp(queue.get(), null_mut(), p, 0, null(), null_mut()));
        let mut q = null_mut();
        expect_success!(fx.api.urEnqueueUSMDeviceAllocExp(queue.get(), null_mut(), N * 4, null(), 0, null(), &mut q, null_mut()));
        check!(!q.is_null(), "urEnqueueUSMDeviceAllocExp returned a null pointer");
        let second = 0x0b5e_55edu32;
        expect_success!(fx.api.urEnqueueUSMFill(queue.get(), q, 4, (&second as *const u32).cast(), N * 4, 0, null(), null_mut()));
        let got = words(&fx.read(queue.get(), q, N * 4)?);
        check_words("a second async allocation in a context from a native handle", &got, |_| second)?;
        expect_success!(fx.api.urEnqueueUSMFreeExp(queue.get(), null_mut(), q, 0, null(), null_mut()));
    } else if kind.is_none() {
        skip!("the device reports no USM at all");
    }
    expect_success!(fx.api.urQueueFinish(queue.get()));
    Ok(())
}

unsafe fn context_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let native = native_context(fx, fx.context)?;
    let wrong = native_props!(ur_context_native_properties_t, WRONG_STYPE, false);
    refuses("urContextCreateWithNativeHandle", spoil, native, fx.adapter, wrong, |n, a, p, out| {
        fx.api.urContextCreateWithNativeHandle(n, a, 1, &fx.device, p, out)
    })
}

spoil_cases!(DeviceFx, context_refuses:
    context_null_handle = NullHandle, context_null_adapter = NullOwner, context_bad_stype = BadStype);

unsafe fn context_null_pointer(fx: &DeviceFx) -> CaseResult {
    context_refuses(fx, Spoil::NullPointer)?;
    // A null device list with a count is a null pointer too.
    let native = native_context(fx, fx.context)?;
    let mut context = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_NULL_POINTER,
        fx.api.urContextCreateWithNativeHandle(native, fx.adapter, 1, null(), null(), &mut context)
    );
    Ok(())
}

/// A `cl_context` of the case's own on the fixture's device.
unsafe fn own_cl_context(fx: &DeviceFx, cl: &OpenCl) -> Result<ClObject, Outcome> {
    let device = native_device(fx.api, fx.device)? as Ptr;
    let platform: Ptr = cl.info(cl.get_device_info, device, CL_DEVICE_PLATFORM, "clGetDeviceInfo(PLATFORM)")?;
    let properties = [CL_CONTEXT_PLATFORM, platform as isize, 0];
    let mut status = 0;
    let raw = (cl.create_context)(properties.as_ptr(), 1, &device, null_mut(), null_mut(), &mut status);
    check!(status == CL_SUCCESS && !raw.is_null(), "clCreateContext: OpenCL status {status}");
    Ok(ClObject { raw, release: cl.release_context })
}

unsafe fn context_opencl_ownership(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let native = own_cl_context(fx, cl)?;
    check_ownership(
        "context",
        || context_refs(cl, native.raw),
        || (cl.retain_context)(native.raw),
        |owned| {
            let context = context_from(fx, native.native(), &[fx.device], owned)?;
            Ok(Box::new(move || context.release()))
        },
    )
}

// ---------------------------------------------------------------------------
// Queues

unsafe fn queue_from(
    fx: &DeviceFx,
    native: ur_native_handle_t,
    device: ur_device_handle_t,
    owned: bool,
) -> Result<OwnedQueue, Outcome> {
    let properties = native_props!(ur_queue_native_properties_t, UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, owned);
    let mut queue = null_mut();
    expect_success!(fx.api.urQueueCreateWithNativeHandle(native, fx.context, device, &properties, &mut queue));
    check!(!queue.is_null(), "urQueueCreateWithNativeHandle returned a null queue");
    Ok(fx.own_queue(queue))
}

/// A fill on `queue` into fresh USM, read back through the fixture's queue.
unsafe fn fill_works(fx: &DeviceFx, queue: ur_queue_handle_t, what: &str) -> CaseResult {
    let Some(kind) = [UsmKind::Device, UsmKind::Shared, UsmKind::Host].into_iter().find(|&k| fx.supports(k).unwrap_or(false))
    else {
        // A command with an event still shows the queue runs work.
        let mut e = null_mut();
        expect_success!(fx.api.urEnqueueEventsWait(queue, 0, null(), &mut e));
        let e = fx.own_event(e);
        return fx.wait(e.get());
    };
    let usm = fx.alloc(kind, N * 4)?;
    let pattern = 0x600d_f00du32;
    let mut e = null_mut();
    expect_success!(fx.api.urEnqueueUSMFill(queue, usm.ptr, 4, (&pattern as *const u32).cast(), N * 4, 0, null(), &mut e));
    let e = fx.own_event(e);
    fx.wait(e.get())?;
    let got = words(&fx.read(fx.queue, usm.ptr, N * 4)?);
    check_words(what, &got, |_| pattern)
}

unsafe fn queue_round_trip(fx: &DeviceFx) -> CaseResult {
    let native = native_queue(fx, fx.queue)?;
    let queue = queue_from(fx, native, fx.device, false)?;
    let mut again = 0;
    expect_success!(fx.api.urQueueGetNativeHandle(queue.get(), null_mut(), &mut again));
    check_eq!(again, native);
    check_eq!(fx.api.queue_info::<ur_context_handle_t>(queue.get(), UR_QUEUE_INFO_CONTEXT)?, fx.context);
    check_eq!(fx.api.queue_info::<ur_device_handle_t>(queue.get(), UR_QUEUE_INFO_DEVICE)?, fx.device);
    fill_works(fx, queue.get(), "a fill on a queue from a native handle")?;
    expect_success!(fx.api.urQueueFinish(queue.get()));
    expect_success!(queue.release());
    // The fixture's queue, whose native object it was, still works.
    fill_works(fx, fx.queue, "a fill on the queue whose native handle was wrapped and released")
}

unsafe fn queue_device_from_native(fx: &DeviceFx) -> CaseResult {
    let native = native_queue(fx, fx.queue)?;
    let queue = queue_from(fx, native, null_mut(), false)?;
    check_eq!(fx.api.queue_info::<ur_device_handle_t>(queue.get(), UR_QUEUE_INFO_DEVICE)?, fx.device);
    Ok(())
}

unsafe fn queue_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let native = native_queue(fx, fx.queue)?;
    let wrong = native_props!(ur_queue_native_properties_t, WRONG_STYPE, false);
    refuses("urQueueCreateWithNativeHandle", spoil, native, fx.context, wrong, |n, c, p, out| {
        fx.api.urQueueCreateWithNativeHandle(n, c, fx.device, p, out)
    })
}

spoil_cases!(DeviceFx, queue_refuses:
    queue_null_handle = NullHandle, queue_null_pointer = NullPointer,
    queue_null_context = NullOwner, queue_bad_stype = BadStype);

unsafe fn queue_opencl_ownership(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let context = native_context(fx, fx.context)? as Ptr;
    let device = native_device(fx.api, fx.device)? as Ptr;
    let host_properties: u64 =
        cl.info(cl.get_device_info, device, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, "clGetDeviceInfo(QUEUE_ON_HOST_PROPERTIES)")?;
    let mut orders = vec![0u64];
    if host_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0 {
        orders.push(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    }
    for order in orders {
        let properties = [CL_QUEUE_PROPERTIES, order, 0];
        let mut status = 0;
        let raw = (cl.create_queue)(context, device, properties.as_ptr(), &mut status);
        check!(status == CL_SUCCESS && !raw.is_null(), "clCreateCommandQueueWithProperties: OpenCL status {status}");
        let native = ClObject { raw, release: cl.release_queue };
        // The order comes from the OpenCL queue.
        let queue = queue_from(fx, native.native(), fx.device, false)?;
        let flags = fx.api.queue_info::<ur_queue_flags_t>(queue.get(), UR_QUEUE_INFO_FLAGS)?;
        let out_of_order = flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0;
        check!(
            out_of_order == (order != 0),
            "a queue over an OpenCL queue with properties 0x{order:x} reports flags 0x{flags:x}"
        );
        if order == 0 {
            fill_works(fx, queue.get(), "a fill on a queue over the case's own OpenCL queue")?;
        }
        expect_success!(fx.api.urQueueFinish(queue.get()));
        drop(queue);
        check_ownership(
            "queue",
            || queue_refs(cl, native.raw),
            || (cl.retain_queue)(native.raw),
            |owned| {
                let queue = queue_from(fx, native.native(), fx.device, owned)?;
                Ok(Box::new(move || queue.release()))
            },
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Events

unsafe fn event_from(fx: &DeviceFx, native: ur_native_handle_t, owned: bool) -> Result<OwnedEvent, Outcome> {
    let properties = native_props!(ur_event_native_properties_t, UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, owned);
    let mut event = null_mut();
    expect_success!(fx.api.urEventCreateWithNativeHandle(native, fx.context, &properties, &mut event));
    check!(!event.is_null(), "urEventCreateWithNativeHandle returned a null event");
    Ok(fx.own_event(event))
}

/// An event of a command on the fixture's queue, with its native handle
/// (a skip where events have none).
unsafe fn queue_event(fx: &DeviceFx) -> Result<(OwnedEvent, ur_native_handle_t), Outcome> {
    let mut e = null_mut();
    expect_success!(fx.api.urEnqueueEventsWaitWithBarrier(fx.queue, 0, null(), &mut e));
    let e = fx.own_event(e);
    let native = native_event(fx, e.get())?;
    if native == 0 {
        skip!("the command's event has no native event (it was complete when made)");
    }
    Ok((e, native))
}

unsafe fn event_round_trip(fx: &DeviceFx) -> CaseResult {
    let (original, native) = queue_event(fx)?;
    let event = event_from(fx, native, false)?;
    let mut again = 0;
    expect_success!(fx.api.urEventGetNativeHandle(event.get(), &mut again));
    check_eq!(again, native);
    check_eq!(fx.api.event_info::<ur_context_handle_t>(event.get(), UR_EVENT_INFO_CONTEXT)?, fx.context);
    fx.wait(event.get())?;
    check_eq!(fx.status(event.get())?, UR_EVENT_STATUS_COMPLETE);
    // Usable in a wait list.
    let mut after = null_mut();
    expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 1, &event.get(), &mut after));
    let after = fx.own_event(after);
    fx.wait(after.get())?;
    expect_success!(event.release());
    // The original event still answers.
    fx.wait(original.get())?;
    check_eq!(fx.status(original.get())?, UR_EVENT_STATUS_COMPLETE);
    Ok(())
}

unsafe fn event_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let (_event, native) = queue_event(fx)?;
    let wrong = native_props!(ur_event_native_properties_t, WRONG_STYPE, false);
    refuses("urEventCreateWithNativeHandle", spoil, native, fx.context, wrong, |n, c, p, out| {
        fx.api.urEventCreateWithNativeHandle(n, c, p, out)
    })
}

spoil_cases!(DeviceFx, event_refuses:
    event_null_handle = NullHandle, event_null_pointer = NullPointer,
    event_null_context = NullOwner, event_bad_stype = BadStype);

unsafe fn event_opencl_user_event(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let context = native_context(fx, fx.context)? as Ptr;
    let mut status = 0;
    let raw = (cl.create_user_event)(context, &mut status);
    check!(status == CL_SUCCESS && !raw.is_null(), "clCreateUserEvent: OpenCL status {status}");
    let native = ClObject { raw, release: cl.release_event };
    {
        let event = event_from(fx, native.native(), false)?;
        check!(fx.status(event.get())? != UR_EVENT_STATUS_COMPLETE, "an unset user event reads as complete");
        // A command waiting for it cannot complete before it does.
        let mut after = null_mut();
        expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 1, &event.get(), &mut after));
        let after = fx.own_event(after);
        expect_success!(fx.api.urQueueFlush(fx.queue));
        check!(fx.status(after.get())? != UR_EVENT_STATUS_COMPLETE, "a command waiting for an unset user event completed");
        check!((cl.set_user_event_status)(raw, CL_COMPLETE) == CL_SUCCESS, "clSetUserEventStatus(CL_COMPLETE)");
        fx.wait(event.get())?;
        check_eq!(fx.status(event.get())?, UR_EVENT_STATUS_COMPLETE);
        fx.wait(after.get())?;
    }
    check_ownership(
        "event",
        || event_refs(cl, native.raw),
        || (cl.retain_event)(native.raw),
        |owned| {
            let event = event_from(fx, native.native(), owned)?;
            Ok(Box::new(move || event.release()))
        },
    )
}

// ---------------------------------------------------------------------------
// Programs and kernels

unsafe fn program_from(
    fx: &DeviceFx,
    context: ur_context_handle_t,
    native: ur_native_handle_t,
    owned: bool,
) -> Result<OwnedProgram, Outcome> {
    let properties = native_props!(ur_program_native_properties_t, UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES, owned);
    let mut program = null_mut();
    expect_success!(fx.api.urProgramCreateWithNativeHandle(native, context, &properties, &mut program));
    check!(!program.is_null(), "urProgramCreateWithNativeHandle returned a null program");
    Ok(own_program(fx, program))
}

/// A built program of the suite's kernels and its native handle.
unsafe fn native_built_program(fx: &DeviceFx) -> Result<(OwnedProgram, ur_native_handle_t), Outcome> {
    let program = built_program(fx)?;
    let native = native_program(fx, program.get())?;
    Ok((program, native))
}

unsafe fn program_round_trip(fx: &DeviceFx) -> CaseResult {
    let (original, native) = native_built_program(fx)?;
    let program = program_from(fx, fx.context, native, false)?;
    let mut again = 0;
    expect_success!(fx.api.urProgramGetNativeHandle(program.get(), &mut again));
    check_eq!(again, native);
    run_fill_index(fx, program.get(), 7)?;
    expect_success!(program.release());
    run_fill_index(fx, original.get(), 11)
}

unsafe fn program_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let (_program, native) = native_built_program(fx)?;
    let wrong = native_props!(ur_program_native_properties_t, WRONG_STYPE, false);
    refuses("urProgramCreateWithNativeHandle", spoil, native, fx.context, wrong, |n, c, p, out| {
        fx.api.urProgramCreateWithNativeHandle(n, c, p, out)
    })
}

spoil_cases!(DeviceFx, program_refuses:
    program_null_handle = NullHandle, program_null_pointer = NullPointer,
    program_null_context = NullOwner, program_bad_stype = BadStype);

unsafe fn program_foreign_context(fx: &DeviceFx) -> CaseResult {
    let (_p, native) = native_built_program(fx)?;
    // Another context on the same device: a program of the fixture's
    // context does not belong to it.
    let mut other = null_mut();
    expect_success!(fx.api.urContextCreate(1, &fx.device, null(), &mut other));
    let other = fx.own_context(other);
    // The spec asks for INVALID_CONTEXT where the backend can tell: it
    // cannot when both UR contexts wrap one native context.
    if native_context(fx, other.get())? == native_context(fx, fx.context)? {
        skip!("both contexts wrap the same native context (a device's primary context), so no backend can tell them apart");
    }
    let mut program = null_mut();
    expect_result!(
        UR_RESULT_ERROR_INVALID_CONTEXT,
        fx.api.urProgramCreateWithNativeHandle(native, other.get(), null(), &mut program)
    );
    Ok(())
}

/// A `cl_program` of the suite's kernels from OpenCL C, in the fixture's
/// context; built for the fixture's device when `build`.
unsafe fn cl_program_from_source(fx: &DeviceFx, cl: &OpenCl, build: bool) -> Result<ClObject, Outcome> {
    let context = native_context(fx, fx.context)? as Ptr;
    let source = CString::new(KERNEL_SOURCE).map_err(|e| e.to_string())?;
    let text = source.as_ptr();
    let mut status = 0;
    let raw = (cl.create_program)(context, 1, &text, null(), &mut status);
    check!(status == CL_SUCCESS && !raw.is_null(), "clCreateProgramWithSource: OpenCL status {status}");
    let program = ClObject { raw, release: cl.release_program };
    if build {
        let device = native_device(fx.api, fx.device)? as Ptr;
        let status = (cl.build_program)(raw, 1, &device, c"".as_ptr(), null_mut(), null_mut());
        check!(status == CL_SUCCESS, "clBuildProgram of the suite's OpenCL C: OpenCL status {status}");
    }
    Ok(program)
}

unsafe fn program_opencl_from_source(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let native = cl_program_from_source(fx, cl, true)?;
    {
        let program = program_from(fx, fx.context, native.native(), false)?;
        let info = |prop| crate::ur::info_value::<usize, _, _>(fx.api.fns.urProgramGetInfo, "urProgramGetInfo", program.get(), prop);
        check_eq!(
            crate::ur::info_value::<u32, _, _>(fx.api.fns.urProgramGetInfo, "urProgramGetInfo", program.get(), UR_PROGRAM_INFO_NUM_DEVICES)?,
            1
        );
        check_eq!(info(UR_PROGRAM_INFO_DEVICES)?, fx.device as usize);
        check_eq!(info(UR_PROGRAM_INFO_CONTEXT)?, fx.context as usize);
        let mut binary_type = UR_PROGRAM_BINARY_TYPE_NONE;
        expect_success!(fx.api.urProgramGetBuildInfo(
            program.get(),
            fx.device,
            UR_PROGRAM_BUILD_INFO_BINARY_TYPE,
            size_of_val(&binary_type),
            (&mut binary_type as *mut ur_program_binary_type_t).cast(),
            null_mut()
        ));
        check_eq!(binary_type, UR_PROGRAM_BINARY_TYPE_EXECUTABLE);
        run_fill_index(fx, program.get(), 3)?;
    }
    check_ownership(
        "program",
        || program_refs(cl, native.raw),
        || (cl.retain_program)(native.raw),
        |owned| {
            let program = program_from(fx, fx.context, native.native(), owned)?;
            Ok(Box::new(move || program.release()))
        },
    )
}

unsafe fn program_opencl_unbuilt(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let native = cl_program_from_source(fx, cl, false)?;
    let program = program_from(fx, fx.context, native.native(), false)?;
    let code = fx.api.urProgramBuild(fx.context, program.get(), null())?;
    expect_code(UR_RESULT_SUCCESS, code, "urProgramBuild of a program made natively from OpenCL C")?;
    run_fill_index(fx, program.get(), 5)
}

unsafe fn kernel_from(
    fx: &DeviceFx,
    native: ur_native_handle_t,
    program: ur_program_handle_t,
    owned: bool,
) -> Result<OwnedKernel, Outcome> {
    let properties = native_props!(ur_kernel_native_properties_t, UR_STRUCTURE_TYPE_KERNEL_NATIVE_PROPERTIES, owned);
    let mut kernel = null_mut();
    expect_success!(fx.api.urKernelCreateWithNativeHandle(native, fx.context, program, &properties, &mut kernel));
    check!(!kernel.is_null(), "urKernelCreateWithNativeHandle returned a null kernel");
    Ok(Owned::new(kernel, fx.api.fns.urKernelRelease))
}

/// Launches `fill_index(out, base)` through `kernel` and checks the result.
unsafe fn launch_fill_index(fx: &DeviceFx, kernel: ur_kernel_handle_t, base: u32) -> CaseResult {
    let kind = [UsmKind::Device, UsmKind::Shared, UsmKind::Host]
        .into_iter()
        .find(|&k| fx.supports(k).unwrap_or(false))
        .ok_or("the device supports no USM")?;
    let out = fx.alloc(kind, N * 4)?;
    expect_success!(launch(fx, fx.queue, kernel, N, None, &[pointer_arg(0, out.ptr), value_arg(1, &base)], &[], null_mut()));
    let got = words(&fx.read(fx.queue, out.ptr, N * 4)?);
    check_words("fill_index through a kernel from a native handle", &got, |i| base + i as u32)
}

/// A built program, a `fill_index` kernel of it, and the kernel's native
/// handle.
unsafe fn native_fill_kernel(
    fx: &DeviceFx,
) -> Result<(OwnedProgram, OwnedKernel, ur_native_handle_t), Outcome> {
    let program = built_program(fx)?;
    let mut k = null_mut();
    expect_success!(fx.api.urKernelCreate(program.get(), c"fill_index".as_ptr(), &mut k));
    let k: OwnedKernel = Owned::new(k, fx.api.fns.urKernelRelease);
    let native = native_kernel(fx, k.get())?;
    Ok((program, k, native))
}

unsafe fn kernel_round_trip(fx: &DeviceFx) -> CaseResult {
    let (program, original, native) = native_fill_kernel(fx)?;
    let kernel = kernel_from(fx, native, program.get(), false)?;
    let mut again = 0;
    expect_success!(fx.api.urKernelGetNativeHandle(kernel.get(), &mut again));
    check_eq!(again, native);
    check_eq!(
        crate::ur::info_string(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", kernel.get(), UR_KERNEL_INFO_FUNCTION_NAME)?,
        "fill_index"
    );
    check_eq!(
        crate::ur::info_value::<u32, _, _>(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", kernel.get(), UR_KERNEL_INFO_NUM_ARGS)?,
        2
    );
    launch_fill_index(fx, kernel.get(), 21)?;
    expect_success!(kernel.release());
    launch_fill_index(fx, original.get(), 22)
}

unsafe fn kernel_without_program(fx: &DeviceFx) -> CaseResult {
    let (_program, _original, native) = native_fill_kernel(fx)?;
    let mut kernel = null_mut();
    match fx.api.urKernelCreateWithNativeHandle(native, fx.context, null_mut(), null(), &mut kernel)? {
        UR_RESULT_SUCCESS => {}
        // The spec lets an adapter that needs the program say so.
        UR_RESULT_ERROR_INVALID_NULL_HANDLE => skip!("the adapter needs the kernel's program (INVALID_NULL_HANDLE)"),
        code => return Err(format!("urKernelCreateWithNativeHandle without a program returned {}", result_name(code)).into()),
    }
    let kernel: OwnedKernel = Owned::new(kernel, fx.api.fns.urKernelRelease);
    let program = crate::ur::info_value::<ur_program_handle_t, _, _>(
        fx.api.fns.urKernelGetInfo,
        "urKernelGetInfo",
        kernel.get(),
        UR_KERNEL_INFO_PROGRAM,
    )?;
    check!(!program.is_null(), "the kernel names no program");
    check_eq!(
        crate::ur::info_value::<ur_context_handle_t, _, _>(fx.api.fns.urKernelGetInfo, "urKernelGetInfo", kernel.get(), UR_KERNEL_INFO_CONTEXT)?,
        fx.context
    );
    launch_fill_index(fx, kernel.get(), 31)
}

unsafe fn kernel_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let (program, _kernel, native) = native_fill_kernel(fx)?;
    let wrong = native_props!(ur_kernel_native_properties_t, WRONG_STYPE, false);
    refuses("urKernelCreateWithNativeHandle", spoil, native, fx.context, wrong, |n, c, p, out| {
        fx.api.urKernelCreateWithNativeHandle(n, c, program.get(), p, out)
    })
}

spoil_cases!(DeviceFx, kernel_refuses:
    kernel_null_handle = NullHandle, kernel_null_pointer = NullPointer,
    kernel_null_context = NullOwner, kernel_bad_stype = BadStype);

unsafe fn kernel_opencl_ownership(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let program_native = cl_program_from_source(fx, cl, true)?;
    let mut status = 0;
    let raw = (cl.create_kernel)(program_native.raw, c"fill_index".as_ptr(), &mut status);
    check!(status == CL_SUCCESS && !raw.is_null(), "clCreateKernel(fill_index): OpenCL status {status}");
    let native = ClObject { raw, release: cl.release_kernel };
    {
        // From the kernel alone: its program comes with it.
        let kernel = kernel_from(fx, native.native(), null_mut(), false)?;
        launch_fill_index(fx, kernel.get(), 41)?;
    }
    let program = program_from(fx, fx.context, program_native.native(), false)?;
    check_ownership(
        "kernel",
        || kernel_refs(cl, native.raw),
        || (cl.retain_kernel)(native.raw),
        |owned| {
            let kernel = kernel_from(fx, native.native(), program.get(), owned)?;
            Ok(Box::new(move || kernel.release()))
        },
    )
}
