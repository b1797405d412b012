//! The loader's debugging layers (`UR_LAYER_TRACING`, `UR_LAYER_LEAK_CHECKING`)
//! on the native CPU adapter. Each scenario runs in a child process (this
//! test binary again, with `UR_LAYERS_TEST_CHILD` naming it), since the layers
//! are switched on once per process and the leak report comes at exit.

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::process::Command;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

/// The release folder holding the loader and the native CPU adapter,
/// under `CARGO_TARGET_DIR` when set.
fn lib_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    for profile in ["release", "debug"] {
        let dir = target.join(profile);
        if dir.join("libur_loader.so").is_file() && dir.join("libur_adapter_native_cpu.so").is_file() {
            return dir;
        }
    }
    panic!("build the loader and the native CPU adapter first (scripts/build.sh)");
}

struct Loader(*mut c_void);

impl Loader {
    fn open() -> Loader {
        let path = std::ffi::CString::new(lib_dir().join("libur_loader.so").to_str().unwrap()).unwrap();
        // SAFETY: loads our loader library; its constructors run nothing.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) };
        assert!(!h.is_null(), "dlopen libur_loader.so");
        Loader(h)
    }
    /// The entry point `name`, as the function type `F`.
    unsafe fn get<F: Copy>(&self, name: &str) -> F {
        let c = std::ffi::CString::new(name).unwrap();
        let p = libc::dlsym(self.0, c.as_ptr());
        assert!(!p.is_null(), "{name} not exported");
        std::mem::transmute_copy(&p)
    }
}

type R = ur_result_t;

/// Init, one device, a context and a queue on it.
unsafe fn setup(l: &Loader, config: ur_loader_config_handle_t) -> (ur_context_handle_t, ur_device_handle_t, ur_queue_handle_t) {
    let init: unsafe extern "C" fn(ur_device_init_flags_t, ur_loader_config_handle_t) -> R = l.get("urLoaderInit");
    assert_eq!(init(0, config), UR_RESULT_SUCCESS);
    let adapter_get: unsafe extern "C" fn(u32, *mut ur_adapter_handle_t, *mut u32) -> R = l.get("urAdapterGet");
    let mut adapter = null_mut();
    assert_eq!(adapter_get(1, &mut adapter, null_mut()), UR_RESULT_SUCCESS);
    let platform_get: unsafe extern "C" fn(ur_adapter_handle_t, u32, *mut ur_platform_handle_t, *mut u32) -> R = l.get("urPlatformGet");
    let mut platform = null_mut();
    assert_eq!(platform_get(adapter, 1, &mut platform, null_mut()), UR_RESULT_SUCCESS);
    let device_get: unsafe extern "C" fn(ur_platform_handle_t, ur_device_type_t, u32, *mut ur_device_handle_t, *mut u32) -> R =
        l.get("urDeviceGet");
    let mut device = null_mut();
    assert_eq!(device_get(platform, UR_DEVICE_TYPE_ALL, 1, &mut device, null_mut()), UR_RESULT_SUCCESS);
    let context_create: unsafe extern "C" fn(u32, *const ur_device_handle_t, *const ur_context_properties_t, *mut ur_context_handle_t) -> R =
        l.get("urContextCreate");
    let mut context = null_mut();
    assert_eq!(context_create(1, &device, null(), &mut context), UR_RESULT_SUCCESS);
    let queue_create: unsafe extern "C" fn(ur_context_handle_t, ur_device_handle_t, *const ur_queue_properties_t, *mut ur_queue_handle_t) -> R =
        l.get("urQueueCreate");
    let props = ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: null_mut(), flags: 0x2 };
    let mut queue = null_mut();
    assert_eq!(queue_create(context, device, &props, &mut queue), UR_RESULT_SUCCESS);
    let adapter_release: unsafe extern "C" fn(ur_adapter_handle_t) -> R = l.get("urAdapterRelease");
    assert_eq!(adapter_release(adapter), UR_RESULT_SUCCESS);
    (context, device, queue)
}

unsafe fn release_all(l: &Loader, context: ur_context_handle_t, queue: ur_queue_handle_t) {
    let queue_release: unsafe extern "C" fn(ur_queue_handle_t) -> R = l.get("urQueueRelease");
    assert_eq!(queue_release(queue), UR_RESULT_SUCCESS);
    let context_release: unsafe extern "C" fn(ur_context_handle_t) -> R = l.get("urContextRelease");
    assert_eq!(context_release(context), UR_RESULT_SUCCESS);
}

/// An event from `urEnqueueEventsWait`, finished.
unsafe fn event(l: &Loader, queue: ur_queue_handle_t) -> ur_event_handle_t {
    let wait: unsafe extern "C" fn(ur_queue_handle_t, u32, *const ur_event_handle_t, *mut ur_event_handle_t) -> R =
        l.get("urEnqueueEventsWait");
    let mut e = null_mut();
    assert_eq!(wait(queue, 0, null(), &mut e), UR_RESULT_SUCCESS);
    let finish: unsafe extern "C" fn(ur_queue_handle_t) -> R = l.get("urQueueFinish");
    assert_eq!(finish(queue), UR_RESULT_SUCCESS);
    e
}

unsafe fn child(scenario: &str) {
    let l = Loader::open();
    let teardown: unsafe extern "C" fn() -> R = l.get("urLoaderTearDown");
    let event_release: unsafe extern "C" fn(ur_event_handle_t) -> R = l.get("urEventRelease");
    let event_retain: unsafe extern "C" fn(ur_event_handle_t) -> R = l.get("urEventRetain");
    match scenario {
        // One event never released; everything else is.
        "leak" | "leak_no_teardown" => {
            let (context, _, queue) = setup(&l, null_mut());
            let kept = event(&l, queue);
            let e = event(&l, queue);
            assert_eq!(event_retain(e), UR_RESULT_SUCCESS);
            assert_eq!(event_release(e), UR_RESULT_SUCCESS);
            assert_eq!(event_release(e), UR_RESULT_SUCCESS);
            release_all(&l, context, queue);
            println!("leaked {kept:p}");
            if scenario == "leak" {
                assert_eq!(teardown(), UR_RESULT_SUCCESS);
            }
        }
        "clean" => {
            let (context, _, queue) = setup(&l, null_mut());
            let e = event(&l, queue);
            assert_eq!(event_release(e), UR_RESULT_SUCCESS);
            release_all(&l, context, queue);
            assert_eq!(teardown(), UR_RESULT_SUCCESS);
        }
        // Tracing switched on through the config, calls with bad arguments.
        "trace" => {
            let create: unsafe extern "C" fn(*mut ur_loader_config_handle_t) -> R = l.get("urLoaderConfigCreate");
            let enable: unsafe extern "C" fn(ur_loader_config_handle_t, *const c_char) -> R = l.get("urLoaderConfigEnableLayer");
            let info: unsafe extern "C" fn(ur_loader_config_handle_t, ur_loader_config_info_t, usize, *mut c_void, *mut usize) -> R =
                l.get("urLoaderConfigGetInfo");
            let mut cfg = null_mut();
            assert_eq!(create(&mut cfg), UR_RESULT_SUCCESS);
            let mut text = [0u8; 256];
            assert_eq!(info(cfg, UR_LOADER_CONFIG_INFO_AVAILABLE_LAYERS, 256, text.as_mut_ptr().cast(), null_mut()), UR_RESULT_SUCCESS);
            let layers = CStr::from_bytes_until_nul(&text).unwrap().to_str().unwrap().to_string();
            assert!(layers.split(';').any(|n| n == "UR_LAYER_TRACING"), "{layers}");
            assert!(layers.split(';').any(|n| n == "UR_LAYER_LEAK_CHECKING"), "{layers}");
            assert!(layers.split(';').any(|n| n == "UR_LAYER_PARAMETER_VALIDATION"), "{layers}");
            assert_eq!(enable(cfg, c"UR_LAYER_NOPE".as_ptr()), UR_RESULT_ERROR_LAYER_NOT_PRESENT);
            assert_eq!(enable(cfg, c"UR_LAYER_TRACING".as_ptr()), UR_RESULT_SUCCESS);
            let (context, device, queue) = setup(&l, cfg);
            let wait: unsafe extern "C" fn(u32, *const ur_event_handle_t) -> R = l.get("urEventWait");
            // A wild list pointer with a zero count: rejected before any read.
            assert_ne!(wait(0, 0x10 as *const ur_event_handle_t), UR_RESULT_SUCCESS);
            let get_info: unsafe extern "C" fn(ur_device_handle_t, ur_device_info_t, usize, *mut c_void, *mut usize) -> R =
                l.get("urDeviceGetInfo");
            // An enumerator no header names, and a wild out pointer on a failing call.
            assert_ne!(get_info(device, ur_device_info_t(0x7777), 4, 0x18 as *mut c_void, 0x20 as *mut usize), UR_RESULT_SUCCESS);
            let e = event(&l, queue);
            assert_eq!(event_release(e), UR_RESULT_SUCCESS);
            release_all(&l, context, queue);
            assert_eq!(teardown(), UR_RESULT_SUCCESS);
        }
        other => panic!("no scenario {other}"),
    }
}

/// Runs `scenario` in a child with `env`, and returns its stderr.
fn run(scenario: &str, env: &[(&str, &str)]) -> String {
    let dir = lib_dir();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_entry", "--nocapture", "--test-threads=1"])
        .env("UR_LAYERS_TEST_CHILD", scenario)
        .env("UR_ADAPTERS_FORCE_LOAD", dir.join("libur_adapter_native_cpu.so"))
        .env_remove("UR_ENABLE_LAYERS")
        .env_remove("UR_LOG_TRACING")
        .env_remove("UR_LOG_VALIDATION")
        .envs(env.iter().copied())
        .output()
        .expect("start child");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "child {scenario} failed: {stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    stderr
}

#[test]
fn child_entry() {
    if let Ok(s) = std::env::var("UR_LAYERS_TEST_CHILD") {
        unsafe { child(&s) };
    }
}

#[test]
fn leak_checking_reports_the_one_leaked_event_at_teardown() {
    let err = run("leak", &[("UR_ENABLE_LAYERS", "UR_LAYER_LEAK_CHECKING")]);
    assert!(err.contains("at urLoaderTearDown: 1 handle(s) not released"), "{err}");
    assert!(err.contains("1 event handle(s):"), "{err}");
    assert!(err.contains("from urEnqueueEventsWait, 1 reference(s) left"), "{err}");
    assert!(!err.contains("queue handle") && !err.contains("context handle"), "{err}");
}

#[test]
fn leak_checking_reports_at_exit_without_teardown() {
    let err = run("leak_no_teardown", &[("UR_ENABLE_LAYERS", " UR_LAYER_BOGUS ; UR_LAYER_LEAK_CHECKING")]);
    assert!(err.contains("at exit (urLoaderTearDown was not called): 1 handle(s) not released"), "{err}");
    assert!(err.contains("from urEnqueueEventsWait"), "{err}");
}

#[test]
fn leak_checking_is_quiet_on_a_clean_run_and_off_by_default() {
    let err = run("clean", &[("UR_ENABLE_LAYERS", "UR_LAYER_LEAK_CHECKING")]);
    assert!(!err.contains("not released"), "{err}");
    let err = run("leak", &[]);
    assert!(!err.contains("not released") && !err.contains("<TRACING>"), "{err}");
}

#[test]
fn tracing_prints_each_call_and_survives_bad_pointers() {
    let err = run("trace", &[]);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("<TRACING>[Info]: ")).collect();
    let find = |prefix: &str| *lines.iter().find(|l| l.contains(prefix)).unwrap_or_else(|| panic!("no {prefix} in {err}"));
    let q = find("urQueueCreate(");
    assert!(q.contains(".pProperties = 0x") && q.contains("stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES"), "{q}");
    assert!(q.contains("flags: UR_QUEUE_FLAG_PROFILING_ENABLE"), "{q}");
    assert!(q.contains(".phQueue = 0x") && q.contains("-> UR_RESULT_SUCCESS (") && q.ends_with(" ns)"), "{q}");
    let d = find("urDeviceGet(");
    assert!(d.contains(".DeviceType = UR_DEVICE_TYPE_ALL"), "{d}");
    let w = find("urEventWait(");
    assert!(w.contains(".phEventWaitList = 0x10)") && w.contains("-> UR_RESULT_ERROR_INVALID_VALUE"), "{w}");
    let i = find("urDeviceGetInfo(");
    assert!(i.contains(".propName = unknown enumerator 30583") && i.contains(".pPropSizeRet = 0x20)"), "{i}");
    assert!(find("urEnqueueEventsWait(").contains(".phEvent = 0x"));
    assert!(find("urEventRelease(").contains("-> UR_RESULT_SUCCESS"));
    // The loader's own calls: the init that switched the layer on, and the
    // tear-down.
    let init = find("urLoaderInit(");
    assert!(init.contains(".device_flags = 0, .hLoaderConfig = 0x") && init.contains("-> UR_RESULT_SUCCESS"), "{init}");
    assert!(find("urLoaderTearDown()").contains("-> UR_RESULT_SUCCESS"), "{err}");
}
