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
use super::common::RefFn;
use super::program::{built_program, KERNEL_SOURCE};
use crate::harness::*;
use crate::{
    check, check_eq, expect_result, expect_success, names::result_name, cases_calling,
    native_handle, native_props, skip, system_entry_points, ur::Api,
};
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

/// The native handle `get(out)` writes, or a skip where the adapter has none
/// for this object (`ur*GetNativeHandle` answers UNSUPPORTED_FEATURE).
fn native_or_skip(
    what: &str,
    get: impl FnOnce(*mut ur_native_handle_t) -> Result<ur_result_t, String>,
) -> Result<ur_native_handle_t, Outcome> {
    let mut native = 0;
    match get(&mut native)? {
        UR_RESULT_SUCCESS => Ok(native),
        UR_RESULT_ERROR_UNSUPPORTED_FEATURE => {
            skip!("the adapter has no native {what} (its GetNativeHandle answers UNSUPPORTED_FEATURE)")
        }
        code => Err(format!("ur{what}GetNativeHandle returned {}", result_name(code)).into()),
    }
}

pub unsafe fn native_platform(api: &Api, platform: ur_platform_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Platform", |out| api.urPlatformGetNativeHandle(platform, out))
}

pub unsafe fn native_device(api: &Api, device: ur_device_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Device", |out| api.urDeviceGetNativeHandle(device, out))
}

pub unsafe fn native_context(fx: &DeviceFx, context: ur_context_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Context", |out| fx.api.urContextGetNativeHandle(context, out))
}

pub unsafe fn native_queue(fx: &DeviceFx, queue: ur_queue_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Queue", |out| fx.api.urQueueGetNativeHandle(queue, null_mut(), out))
}

unsafe fn native_event(fx: &DeviceFx, event: ur_event_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Event", |out| fx.api.urEventGetNativeHandle(event, out))
}

unsafe fn native_program(fx: &DeviceFx, program: ur_program_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Program", |out| fx.api.urProgramGetNativeHandle(program, out))
}

unsafe fn native_kernel(fx: &DeviceFx, kernel: ur_kernel_handle_t) -> Result<ur_native_handle_t, Outcome> {
    native_or_skip("Kernel", |out| fx.api.urKernelGetNativeHandle(kernel, out))
}

/// A structure type no native-properties structure has.
const WRONG_STYPE: ur_structure_type_t = UR_STRUCTURE_TYPE_USM_DESC;

/// The argument a `ur*CreateWithNativeHandle` error case spoils: the native
/// handle (0, or an id no object of the adapter has), the output, the owner
/// (adapter or context), or the stype of the properties.
#[derive(Clone, Copy)]
enum Spoil {
    NullHandle,
    /// [`NOT_A_NATIVE_ID`]: spec/platform.md and spec/device.md say no
    /// platform or device of the adapter wraps it.
    UnknownHandle,
    NullPointer,
    NullOwner,
    BadStype,
}

/// The native properties of each kind, made with a structure type no
/// native-properties structure has, for the wrong-stype error cases.
trait WrongStype {
    fn wrong_stype() -> Self;
}

macro_rules! wrong_stype {
    ($($properties:ident),*) => {
        $(impl WrongStype for $properties {
            fn wrong_stype() -> Self {
                native_props!($properties, WRONG_STYPE, false)
            }
        })*
    };
}

wrong_stype!(
    ur_platform_native_properties_t, ur_device_native_properties_t, ur_context_native_properties_t,
    ur_queue_native_properties_t, ur_event_native_properties_t, ur_program_native_properties_t,
    ur_kernel_native_properties_t
);

/// One call of `create(native, owner, properties, out)` with the argument
/// `spoil` names wrong and the rest valid, which must answer that argument's
/// error code. Every kind checks these the same way; only the call's
/// shape differs.
unsafe fn refuses<O, P: WrongStype, H>(
    entry: &str,
    spoil: Spoil,
    native: ur_native_handle_t,
    owner: *mut O,
    create: impl FnOnce(ur_native_handle_t, *mut O, *const P, *mut *mut H) -> Result<ur_result_t, String>,
) -> CaseResult {
    let mut made = null_mut();
    let (expected, got, how) = match spoil {
        Spoil::NullHandle => (UR_RESULT_ERROR_INVALID_NULL_HANDLE, create(0, owner, null(), &mut made)?, "native handle 0"),
        Spoil::UnknownHandle => {
            (UR_RESULT_ERROR_INVALID_VALUE, create(NOT_A_NATIVE_ID, owner, null(), &mut made)?, "an unknown native handle")
        }
        Spoil::NullPointer => (UR_RESULT_ERROR_INVALID_NULL_POINTER, create(native, owner, null(), null_mut())?, "a null output"),
        Spoil::NullOwner => (UR_RESULT_ERROR_INVALID_NULL_HANDLE, create(native, null_mut(), null(), &mut made)?, "a null owner"),
        Spoil::BadStype => {
            (UR_RESULT_ERROR_INVALID_VALUE, create(native, owner, &P::wrong_stype(), &mut made)?, "a wrong stype")
        }
    };
    expect_code(expected, got, &format!("{entry} with {how}"))
}

// The argument-error cases of every kind, each spoiling one argument of
// its kind's create call.
cases_calling! {
    PlatformFx: platform_unknown = platform_refuses(Spoil::UnknownHandle);
    PlatformFx: platform_null_handle = platform_refuses(Spoil::NullHandle);
    PlatformFx: platform_null_pointer = platform_refuses(Spoil::NullPointer);
    PlatformFx: platform_null_adapter = platform_refuses(Spoil::NullOwner);
    PlatformFx: platform_bad_stype = platform_refuses(Spoil::BadStype);
    DeviceFx: device_unknown = device_refuses(Spoil::UnknownHandle);
    DeviceFx: device_null_pointer = device_refuses(Spoil::NullPointer);
    DeviceFx: device_null_adapter = device_refuses(Spoil::NullOwner);
    DeviceFx: context_null_handle = context_refuses(Spoil::NullHandle);
    DeviceFx: context_null_adapter = context_refuses(Spoil::NullOwner);
    DeviceFx: context_bad_stype = context_refuses(Spoil::BadStype);
    DeviceFx: queue_null_handle = queue_refuses(Spoil::NullHandle);
    DeviceFx: queue_null_pointer = queue_refuses(Spoil::NullPointer);
    DeviceFx: queue_null_context = queue_refuses(Spoil::NullOwner);
    DeviceFx: queue_bad_stype = queue_refuses(Spoil::BadStype);
    DeviceFx: event_null_handle = event_refuses(Spoil::NullHandle);
    DeviceFx: event_null_pointer = event_refuses(Spoil::NullPointer);
    DeviceFx: event_null_context = event_refuses(Spoil::NullOwner);
    DeviceFx: event_bad_stype = event_refuses(Spoil::BadStype);
    DeviceFx: program_null_handle = program_refuses(Spoil::NullHandle);
    DeviceFx: program_null_pointer = program_refuses(Spoil::NullPointer);
    DeviceFx: program_null_context = program_refuses(Spoil::NullOwner);
    DeviceFx: program_bad_stype = program_refuses(Spoil::BadStype);
    DeviceFx: kernel_null_handle = kernel_refuses(Spoil::NullHandle);
    DeviceFx: kernel_null_pointer = kernel_refuses(Spoil::NullPointer);
    DeviceFx: kernel_null_context = kernel_refuses(Spoil::NullOwner);
    DeviceFx: kernel_bad_stype = kernel_refuses(Spoil::BadStype);
}

// ---------------------------------------------------------------------------
// OpenCL through the ICD loader

type ClInt = i32;
type ClUint = u32;
type Ptr = *mut c_void;
/// `clGet*Info`: the object, the parameter, the value's size, the value and
/// where the size goes.
type ClInfoFn = unsafe extern "C" fn(Ptr, ClUint, usize, Ptr, *mut usize) -> ClInt;
/// `clRetain*` and `clRelease*`.
type ClRefFn = unsafe extern "C" fn(Ptr) -> ClInt;

system_entry_points! {
    /// The OpenCL entry points the OpenCL cases call (from the same
    /// `libOpenCL.so.1` the adapter uses).
    #[allow(clippy::type_complexity)]
    struct OpenCl from "libOpenCL.so.1" {
        get_platform_ids = "clGetPlatformIDs": unsafe extern "C" fn(ClUint, *mut Ptr, *mut ClUint) -> ClInt,
        get_context_info = "clGetContextInfo": ClInfoFn,
        create_context = "clCreateContext":
            unsafe extern "C" fn(*const isize, ClUint, *const Ptr, Ptr, Ptr, *mut ClInt) -> Ptr,
        retain_context = "clRetainContext": ClRefFn,
        release_context = "clReleaseContext": ClRefFn,
        get_device_info = "clGetDeviceInfo": ClInfoFn,
        create_queue = "clCreateCommandQueueWithProperties": unsafe extern "C" fn(Ptr, Ptr, *const u64, *mut ClInt) -> Ptr,
        get_queue_info = "clGetCommandQueueInfo": ClInfoFn,
        retain_queue = "clRetainCommandQueue": ClRefFn,
        release_queue = "clReleaseCommandQueue": ClRefFn,
        create_user_event = "clCreateUserEvent": unsafe extern "C" fn(Ptr, *mut ClInt) -> Ptr,
        set_user_event_status = "clSetUserEventStatus": unsafe extern "C" fn(Ptr, ClInt) -> ClInt,
        get_event_info = "clGetEventInfo": ClInfoFn,
        retain_event = "clRetainEvent": ClRefFn,
        release_event = "clReleaseEvent": ClRefFn,
        create_program = "clCreateProgramWithSource":
            unsafe extern "C" fn(Ptr, ClUint, *const *const c_char, *const usize, *mut ClInt) -> Ptr,
        build_program = "clBuildProgram": unsafe extern "C" fn(Ptr, ClUint, *const Ptr, *const c_char, Ptr, Ptr) -> ClInt,
        get_program_info = "clGetProgramInfo": ClInfoFn,
        retain_program = "clRetainProgram": ClRefFn,
        release_program = "clReleaseProgram": ClRefFn,
        create_kernel = "clCreateKernel": unsafe extern "C" fn(Ptr, *const c_char, *mut ClInt) -> Ptr,
        get_kernel_info = "clGetKernelInfo": ClInfoFn,
        retain_kernel = "clRetainKernel": ClRefFn,
        release_kernel = "clReleaseKernel": ClRefFn,
    }
}

const CL_SUCCESS: ClInt = 0;
const CL_COMPLETE: ClInt = 0;
const CL_CONTEXT_PLATFORM: isize = 0x1084;
const CL_DEVICE_PLATFORM: ClUint = 0x1031;
const CL_DEVICE_QUEUE_ON_HOST_PROPERTIES: ClUint = 0x102A;
const CL_QUEUE_PROPERTIES: u64 = 0x1093;
const CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE: u64 = 1;

impl OpenCl {
    /// One plain value from a `clGet*Info`.
    unsafe fn info<T: Copy + Default>(
        &self,
        f: ClInfoFn,
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

/// The kinds of OpenCL object the cases make and wrap; each kind's value is
/// the `CL_<KIND>_REFERENCE_COUNT` parameter of its `clGet*Info`.
#[derive(Clone, Copy)]
enum ClKind {
    Context = 0x1080,
    Queue = 0x1092,
    Event = 0x11D2,
    Program = 0x1160,
    Kernel = 0x1192,
}

impl OpenCl {
    /// For objects of `kind`: what messages call them, their `clGet*Info`,
    /// `clRetain*` and `clRelease*`.
    fn ref_calls(&self, kind: ClKind) -> (&'static str, ClInfoFn, ClRefFn, ClRefFn) {
        match kind {
            ClKind::Context => ("context", self.get_context_info, self.retain_context, self.release_context),
            ClKind::Queue => ("queue", self.get_queue_info, self.retain_queue, self.release_queue),
            ClKind::Event => ("event", self.get_event_info, self.retain_event, self.release_event),
            ClKind::Program => ("program", self.get_program_info, self.retain_program, self.release_program),
            ClKind::Kernel => ("kernel", self.get_kernel_info, self.retain_kernel, self.release_kernel),
        }
    }
}

/// An OpenCL object of the case's own, released when the guard drops.
struct ClObject {
    cl: &'static OpenCl,
    kind: ClKind,
    raw: Ptr,
}

impl ClObject {
    /// The object of `kind` that `create(&mut status)` makes through the
    /// `clCreate*` that `call` names, which must succeed.
    unsafe fn create(
        cl: &'static OpenCl,
        kind: ClKind,
        call: &str,
        create: impl FnOnce(*mut ClInt) -> Ptr,
    ) -> Result<ClObject, Outcome> {
        let mut status = 0;
        let raw = create(&mut status);
        check!(status == CL_SUCCESS && !raw.is_null(), "{call}: OpenCL status {status}");
        Ok(ClObject { cl, kind, raw })
    }

    fn native(&self) -> ur_native_handle_t {
        self.raw as ur_native_handle_t
    }

    /// The object's OpenCL reference count.
    unsafe fn refs(&self) -> Result<ClUint, Outcome> {
        let (what, get_info, _, _) = self.cl.ref_calls(self.kind);
        let reference_count = self.kind as ClUint;
        self.cl.info(get_info, self.raw, reference_count, &format!("the {what}'s clGet*Info(REFERENCE_COUNT)"))
    }
}

impl Drop for ClObject {
    fn drop(&mut self) {
        let (_, _, _, release) = self.cl.ref_calls(self.kind);
        // SAFETY: the guard holds one reference of the object.
        unsafe { release(self.raw) };
    }
}

/// Checks the OpenCL reference count of `native` around the life of a UR
/// object made from it: `wrap(owned)` wraps it. Not owned: once the UR
/// object is released, the count is what it was, and the object still
/// answers. Owned: the case gives the UR object a reference of its own
/// (retained first), and the count is one less again once it is released.
unsafe fn check_ownership<T>(native: &ClObject, wrap: impl Fn(bool) -> Result<Owned<T>, Outcome>) -> CaseResult {
    let (what, _, retain, _) = native.cl.ref_calls(native.kind);
    let before = native.refs()?;
    expect_code(UR_RESULT_SUCCESS, wrap(false)?.release()?, &format!("releasing the UR {what} (not owned)"))?;
    let after = native.refs()?;
    check!(after == before, "not owned: the {what}'s OpenCL reference count is {after} after the UR object went, {before} before");

    check!(retain(native.raw) == CL_SUCCESS, "retaining the {what} to hand the UR object a reference");
    let given = native.refs()?;
    expect_code(UR_RESULT_SUCCESS, wrap(true)?.release()?, &format!("releasing the UR {what} (owned)"))?;
    let after = native.refs()?;
    check!(
        after + 1 == given,
        "owned: the {what}'s OpenCL reference count is {after} after the UR object went, {given} when it was handed over"
    );
    Ok(())
}

/// What a `ur*CreateWithNativeHandle` made through `create(out)`: the call
/// must succeed with a handle, which the case then owns.
fn created<T>(
    entry: &str,
    release: Option<RefFn<T>>,
    create: impl FnOnce(*mut *mut T) -> Result<ur_result_t, String>,
) -> Result<Owned<T>, Outcome> {
    let mut handle = null_mut();
    expect_code(UR_RESULT_SUCCESS, create(&mut handle)?, entry)?;
    check!(!handle.is_null(), "{entry} returned a null handle");
    Ok(Owned::new(handle, release))
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
    native_handle!(fx.api, urPlatformGetNativeHandle).answers(platform, native)?;
    Ok(())
}

unsafe fn platform_refuses(fx: &PlatformFx, spoil: Spoil) -> CaseResult {
    let native = native_platform(fx.api, fx.platform)?;
    refuses("urPlatformCreateWithNativeHandle", spoil, native, fx.adapter, |n, a, p, out| {
        fx.api.urPlatformCreateWithNativeHandle(n, a, p, out)
    })
}

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
    native_handle!(fx.api, urDeviceGetNativeHandle).answers(device, native)?;
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
    refuses("urDeviceCreateWithNativeHandle", spoil, native, fx.adapter, |n, a, p, out| {
        fx.api.urDeviceCreateWithNativeHandle(n, a, p, out)
    })
}

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
    let (count, list) = (devices.len() as u32, if devices.is_empty() { null() } else { devices.as_ptr() });
    created("urContextCreateWithNativeHandle", fx.api.fns.urContextRelease, |out| {
        fx.api.urContextCreateWithNativeHandle(native, fx.adapter, count, list, &properties, out)
    })
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
    native_handle!(fx.api, urContextGetNativeHandle).answers(context.get(), native)?;
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

/// Fills `N` words at `p` with `pattern` on `queue` and reads them back;
/// `what` names the memory in a failure.
unsafe fn fill_and_read_back(
    fx: &DeviceFx,
    queue: ur_queue_handle_t,
    p: *mut c_void,
    pattern: u32,
    what: &str,
) -> CaseResult {
    let pattern_ptr = (&pattern as *const u32).cast();
    expect_success!(fx.api.urEnqueueUSMFill(queue, p, 4, pattern_ptr, N * 4, 0, null(), null_mut()));
    let got = words(&fx.read(queue, p, N * 4)?);
    check_words(what, &got, |_| pattern)
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
        let what = format!("{kind:?} USM filled in a context from a native handle");
        fill_and_read_back(fx, queue.get(), p, 0x5eed_1234, &what)?;
        expect_success!(fx.api.urUSMFree(context.get(), p));
    }
    // Async allocation: an allocation, a fill into it, a free, and a second
    // allocation of the same size filled too, all on the queue.
    if fx.api.device_info::<ur_bool_t>(fx.device, UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP)? != 0 {
        for (pattern, what) in [
            (0x0a5f_c0de, "async USM filled in a context from a native handle"),
            (0x0b5e_55ed, "a second async allocation in a context from a native handle"),
        ] {
            let mut p = null_mut();
            let (queue, pool) = (queue.get(), null_mut());
            expect_success!(fx.api.urEnqueueUSMDeviceAllocExp(queue, pool, N * 4, null(), 0, null(), &mut p, null_mut()));
            check!(!p.is_null(), "urEnqueueUSMDeviceAllocExp returned a null pointer");
            fill_and_read_back(fx, queue, p, pattern, what)?;
            expect_success!(fx.api.urEnqueueUSMFreeExp(queue, pool, p, 0, null(), null_mut()));
        }
    } else if kind.is_none() {
        skip!("the device reports no USM at all");
    }
    expect_success!(fx.api.urQueueFinish(queue.get()));
    Ok(())
}

unsafe fn context_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let native = native_context(fx, fx.context)?;
    refuses("urContextCreateWithNativeHandle", spoil, native, fx.adapter, |n, a, p, out| {
        fx.api.urContextCreateWithNativeHandle(n, a, 1, &fx.device, p, out)
    })
}

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
unsafe fn own_cl_context(fx: &DeviceFx, cl: &'static OpenCl) -> Result<ClObject, Outcome> {
    let device = native_device(fx.api, fx.device)? as Ptr;
    let platform: Ptr = cl.info(cl.get_device_info, device, CL_DEVICE_PLATFORM, "clGetDeviceInfo(PLATFORM)")?;
    let properties = [CL_CONTEXT_PLATFORM, platform as isize, 0];
    ClObject::create(cl, ClKind::Context, "clCreateContext", |status| {
        (cl.create_context)(properties.as_ptr(), 1, &device, null_mut(), null_mut(), status)
    })
}

unsafe fn context_opencl_ownership(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let native = own_cl_context(fx, cl)?;
    check_ownership(&native, |owned| context_from(fx, native.native(), &[fx.device], owned))
}

// ---------------------------------------------------------------------------
// Queues

/// A UR queue over `native` for `device` (no device: the native queue's).
unsafe fn queue_from(
    fx: &DeviceFx,
    native: ur_native_handle_t,
    device: Option<ur_device_handle_t>,
    owned: bool,
) -> Result<OwnedQueue, Outcome> {
    let properties = native_props!(ur_queue_native_properties_t, UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES, owned);
    let device = device.unwrap_or(null_mut());
    created("urQueueCreateWithNativeHandle", fx.api.fns.urQueueRelease, |out| {
        fx.api.urQueueCreateWithNativeHandle(native, fx.context, device, &properties, out)
    })
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
    let queue = queue_from(fx, native, Some(fx.device), false)?;
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
    let queue = queue_from(fx, native, None, false)?;
    check_eq!(fx.api.queue_info::<ur_device_handle_t>(queue.get(), UR_QUEUE_INFO_DEVICE)?, fx.device);
    Ok(())
}

unsafe fn queue_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let native = native_queue(fx, fx.queue)?;
    refuses("urQueueCreateWithNativeHandle", spoil, native, fx.context, |n, c, p, out| {
        fx.api.urQueueCreateWithNativeHandle(n, c, fx.device, p, out)
    })
}

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
        let native = ClObject::create(cl, ClKind::Queue, "clCreateCommandQueueWithProperties", |status| {
            (cl.create_queue)(context, device, properties.as_ptr(), status)
        })?;
        // The order comes from the OpenCL queue.
        let queue = queue_from(fx, native.native(), Some(fx.device), false)?;
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
        check_ownership(&native, |owned| queue_from(fx, native.native(), Some(fx.device), owned))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Events

unsafe fn event_from(fx: &DeviceFx, native: ur_native_handle_t, owned: bool) -> Result<OwnedEvent, Outcome> {
    let properties = native_props!(ur_event_native_properties_t, UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES, owned);
    created("urEventCreateWithNativeHandle", fx.api.fns.urEventRelease, |out| {
        fx.api.urEventCreateWithNativeHandle(native, fx.context, &properties, out)
    })
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
    native_handle!(fx.api, urEventGetNativeHandle).answers(event.get(), native)?;
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
    refuses("urEventCreateWithNativeHandle", spoil, native, fx.context, |n, c, p, out| {
        fx.api.urEventCreateWithNativeHandle(n, c, p, out)
    })
}

unsafe fn event_opencl_user_event(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let context = native_context(fx, fx.context)? as Ptr;
    let native =
        ClObject::create(cl, ClKind::Event, "clCreateUserEvent", |status| (cl.create_user_event)(context, status))?;
    {
        let event = event_from(fx, native.native(), false)?;
        check!(fx.status(event.get())? != UR_EVENT_STATUS_COMPLETE, "an unset user event reads as complete");
        // A command waiting for it cannot complete before it does.
        let mut after = null_mut();
        expect_success!(fx.api.urEnqueueEventsWait(fx.queue, 1, &event.get(), &mut after));
        let after = fx.own_event(after);
        expect_success!(fx.api.urQueueFlush(fx.queue));
        check!(fx.status(after.get())? != UR_EVENT_STATUS_COMPLETE, "a command waiting for an unset user event completed");
        check!((cl.set_user_event_status)(native.raw, CL_COMPLETE) == CL_SUCCESS, "clSetUserEventStatus(CL_COMPLETE)");
        fx.wait(event.get())?;
        check_eq!(fx.status(event.get())?, UR_EVENT_STATUS_COMPLETE);
        fx.wait(after.get())?;
    }
    check_ownership(&native, |owned| event_from(fx, native.native(), owned))
}

// ---------------------------------------------------------------------------
// Programs and kernels

unsafe fn program_from(fx: &DeviceFx, native: ur_native_handle_t, owned: bool) -> Result<OwnedProgram, Outcome> {
    let properties = native_props!(ur_program_native_properties_t, UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES, owned);
    created("urProgramCreateWithNativeHandle", fx.api.fns.urProgramRelease, |out| {
        fx.api.urProgramCreateWithNativeHandle(native, fx.context, &properties, out)
    })
}

/// A built program of the suite's kernels and its native handle.
unsafe fn native_built_program(fx: &DeviceFx) -> Result<(OwnedProgram, ur_native_handle_t), Outcome> {
    let program = built_program(fx)?;
    let native = native_program(fx, program.get())?;
    Ok((program, native))
}

unsafe fn program_round_trip(fx: &DeviceFx) -> CaseResult {
    let (original, native) = native_built_program(fx)?;
    let program = program_from(fx, native, false)?;
    native_handle!(fx.api, urProgramGetNativeHandle).answers(program.get(), native)?;
    run_fill_index(fx, program.get(), 7)?;
    expect_success!(program.release());
    run_fill_index(fx, original.get(), 11)
}

unsafe fn program_refuses(fx: &DeviceFx, spoil: Spoil) -> CaseResult {
    let (_program, native) = native_built_program(fx)?;
    refuses("urProgramCreateWithNativeHandle", spoil, native, fx.context, |n, c, p, out| {
        fx.api.urProgramCreateWithNativeHandle(n, c, p, out)
    })
}

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
unsafe fn cl_program_from_source(fx: &DeviceFx, cl: &'static OpenCl, build: bool) -> Result<ClObject, Outcome> {
    let context = native_context(fx, fx.context)? as Ptr;
    let source = CString::new(KERNEL_SOURCE).map_err(|e| e.to_string())?;
    let text = source.as_ptr();
    let program = ClObject::create(cl, ClKind::Program, "clCreateProgramWithSource", |status| {
        (cl.create_program)(context, 1, &text, null(), status)
    })?;
    if build {
        let device = native_device(fx.api, fx.device)? as Ptr;
        let status = (cl.build_program)(program.raw, 1, &device, c"".as_ptr(), null_mut(), null_mut());
        check!(status == CL_SUCCESS, "clBuildProgram of the suite's OpenCL C: OpenCL status {status}");
    }
    Ok(program)
}

unsafe fn program_opencl_from_source(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let native = cl_program_from_source(fx, cl, true)?;
    {
        let program = program_from(fx, native.native(), false)?;
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
    check_ownership(&native, |owned| program_from(fx, native.native(), owned))
}

unsafe fn program_opencl_unbuilt(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let native = cl_program_from_source(fx, cl, false)?;
    let program = program_from(fx, native.native(), false)?;
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
    created("urKernelCreateWithNativeHandle", fx.api.fns.urKernelRelease, |out| {
        fx.api.urKernelCreateWithNativeHandle(native, fx.context, program, &properties, out)
    })
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
    native_handle!(fx.api, urKernelGetNativeHandle).answers(kernel.get(), native)?;
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
    refuses("urKernelCreateWithNativeHandle", spoil, native, fx.context, |n, c, p, out| {
        fx.api.urKernelCreateWithNativeHandle(n, c, program.get(), p, out)
    })
}

unsafe fn kernel_opencl_ownership(fx: &DeviceFx) -> CaseResult {
    let cl = opencl(fx)?;
    let program_native = cl_program_from_source(fx, cl, true)?;
    let native = ClObject::create(cl, ClKind::Kernel, "clCreateKernel(fill_index)", |status| {
        (cl.create_kernel)(program_native.raw, c"fill_index".as_ptr(), status)
    })?;
    {
        // From the kernel alone: its program comes with it.
        let kernel = kernel_from(fx, native.native(), null_mut(), false)?;
        launch_fill_index(fx, kernel.get(), 41)?;
    }
    let program = program_from(fx, program_native.native(), false)?;
    check_ownership(&native, |owned| kernel_from(fx, native.native(), program.get(), owned))
}
