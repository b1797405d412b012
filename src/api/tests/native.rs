//! The native-handle checks every object with a native handle shares:
//! `urXGetNativeHandle` of a null handle or with no output, and
//! `urXCreateWithNativeHandle` with a null parent (the adapter or the
//! context), a zero native handle, no output, or properties of another
//! type; all refused before the backend. What the backend makes of a good
//! native handle, and the other objects some take beside the parent (a
//! context's devices, a queue's device, a kernel's program), are each
//! object's own file's.

use super::*;

/// `name: object |w| h, parent |w| p, native N, wrong STYPE, get |h, out|
/// call, create |w, native, parent, props, out| call;` makes a module of
/// tests for one object: `h` one of its handles, `p` a good parent, `N` a
/// good native handle, `STYPE` the type of another object's native
/// properties; `get` and `create` cast the handles they are given to
/// their entry point's types.
macro_rules! native_handle_rules {
    ($($name:ident: object |$wo:ident| $object:expr, parent |$wp:ident| $parent:expr, native $native:expr, wrong $wrong:expr,
        get |$h:ident, $gout:ident| $get:expr,
        create |$wc:ident, $n:ident, $p:ident, $props:ident, $cout:ident| $create:expr;)*) => {$(
        mod $name {
            use super::*;

            fn object($wo: &World) -> *mut c_void {
                $object.cast()
            }

            fn parent($wp: &World) -> *mut c_void {
                $parent.cast()
            }

            fn get($h: *mut c_void, $gout: *mut ur_native_handle_t) -> ur_result_t {
                $get
            }

            fn create($wc: &World, $n: ur_native_handle_t, $p: *mut c_void, $props: *const c_void, $cout: *mut *mut c_void) -> ur_result_t {
                $create
            }

            refusals! {
                native_handle_null: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|n| get(null_mut(), n));
                native_handle_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| get(object(&w), null_mut());
                from_native_null_parent: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|o| create(&w, $native, null_mut(), null(), o));
                from_native_zero: UR_RESULT_ERROR_INVALID_NULL_HANDLE, |w| with_out(|o| create(&w, 0, parent(&w), null(), o));
                from_native_no_output: UR_RESULT_ERROR_INVALID_NULL_POINTER, |w| create(&w, $native, parent(&w), null(), null_mut());
                from_native_properties_of_another_type: UR_RESULT_ERROR_INVALID_VALUE, |w| {
                    // Every object's native properties have this layout.
                    let other = ur_event_native_properties_t { stype: $wrong, pNext: null_mut(), isNativeHandleOwned: false };
                    let props = (&other as *const ur_event_native_properties_t).cast();
                    with_out(|o| create(&w, $native, parent(&w), props, o))
                };
            }
        }
    )*};
}

native_handle_rules! {
    platform: object |w| w.platform, parent |w| w.adapter, native NATIVE_PLATFORM, wrong UR_STRUCTURE_TYPE_DEVICE_NATIVE_PROPERTIES,
        get |h, out| ur!(Platform.pfnGetNativeHandle(h.cast(), out)),
        create |_w, n, p, props, out| ur!(Platform.pfnCreateWithNativeHandle(n, p.cast(), props.cast(), out.cast()));
    device: object |w| w.dev[0], parent |w| w.adapter, native NATIVE_DEVICE, wrong UR_STRUCTURE_TYPE_PLATFORM_NATIVE_PROPERTIES,
        get |h, out| ur!(Device.pfnGetNativeHandle(h.cast(), out)),
        create |_w, n, p, props, out| ur!(Device.pfnCreateWithNativeHandle(n, p.cast(), props.cast(), out.cast()));
    context: object |w| w.ctx, parent |w| w.adapter, native NATIVE_OBJECT, wrong UR_STRUCTURE_TYPE_QUEUE_NATIVE_PROPERTIES,
        get |h, out| ur!(Context.pfnGetNativeHandle(h.cast(), out)),
        create |w, n, p, props, out| ur!(Context.pfnCreateWithNativeHandle(n, p.cast(), 1, w.dev.as_ptr(), props.cast(), out.cast()));
    queue: object |w| w.queue, parent |w| w.ctx, native NATIVE_OBJECT, wrong UR_STRUCTURE_TYPE_EVENT_NATIVE_PROPERTIES,
        get |h, out| ur!(Queue.pfnGetNativeHandle(h.cast(), null_mut(), out)),
        create |_w, n, p, props, out| ur!(Queue.pfnCreateWithNativeHandle(n, p.cast(), null_mut(), props.cast(), out.cast()));
    event: object |w| w.event(), parent |w| w.ctx, native NATIVE_OBJECT, wrong UR_STRUCTURE_TYPE_KERNEL_NATIVE_PROPERTIES,
        get |h, out| ur!(Event.pfnGetNativeHandle(h.cast(), out)),
        create |_w, n, p, props, out| ur!(Event.pfnCreateWithNativeHandle(n, p.cast(), props.cast(), out.cast()));
    program: object |w| w.program(), parent |w| w.ctx, native NATIVE_OBJECT, wrong UR_STRUCTURE_TYPE_KERNEL_NATIVE_PROPERTIES,
        get |h, out| ur!(Program.pfnGetNativeHandle(h.cast(), out)),
        create |_w, n, p, props, out| ur!(Program.pfnCreateWithNativeHandle(n, p.cast(), props.cast(), out.cast()));
    kernel: object |w| w.kernel(), parent |w| w.ctx, native NATIVE_OBJECT, wrong UR_STRUCTURE_TYPE_PROGRAM_NATIVE_PROPERTIES,
        get |h, out| ur!(Kernel.pfnGetNativeHandle(h.cast(), out)),
        create |w, n, p, props, out| ur!(Kernel.pfnCreateWithNativeHandle(n, p.cast(), w.program(), props.cast(), out.cast()));
}
