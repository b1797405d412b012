//! The driver and its one device: static objects whose addresses are their
//! handles.

use level_zero_sys::*;

pub struct Driver {
    _tag: u8,
}

pub struct Device {
    _tag: u8,
}

pub static DRIVER: Driver = Driver { _tag: 0 };
pub static DEVICE: Device = Device { _tag: 1 };

pub fn driver_handle() -> ze_driver_handle_t {
    &DRIVER as *const Driver as ze_driver_handle_t
}

pub fn device_handle() -> ze_device_handle_t {
    &DEVICE as *const Device as ze_device_handle_t
}

pub fn is_driver(h: ze_driver_handle_t) -> bool {
    h == driver_handle()
}

pub fn is_device(h: ze_device_handle_t) -> bool {
    h == device_handle()
}

/// The API version whose tables this driver fills (the headers' current).
pub const API_VERSION: ze_api_version_t = ZE_API_VERSION_1_4;
/// Driver version: major.minor.patch of this crate, packed as L0 drivers do.
pub const DRIVER_VERSION: u32 = 0x0001_0000;
/// No PCI vendor: the "device" is the host itself.
pub const VENDOR_ID: u32 = 0;
/// Host memory is handed out in pages of this size.
pub const PAGE_SIZE: u64 = 4096;

pub const DRIVER_UUID: [u8; 16] = *b"ze_host_driver\0\x01";
pub const DEVICE_UUID: [u8; 16] = *b"ze_host_device\0\x01";

/// Bytes of physical memory of the host, the memory every allocation uses.
/// Read once: the total does not change while the process runs, and every
/// allocation asks (reading /proc/meminfo cost about 12 µs a call).
pub fn host_memory_bytes() -> u64 {
    static TOTAL: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        // /proc/meminfo "MemTotal: N kB"; without it, a conservative 1 GiB.
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|s| {
                let line = s.lines().find(|l| l.starts_with("MemTotal:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .map(|kb| kb * 1024)
            .unwrap_or(1 << 30)
    })
}

/// The CPU model and clock (MHz) from /proc/cpuinfo, where it has them.
pub fn cpu_model() -> (String, u32) {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |key: &str| {
        info.lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string())
    };
    let name = field("model name").unwrap_or_else(|| "host CPU".to_string());
    let mhz = field("cpu MHz").and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0) as u32;
    (name, mhz)
}

pub fn cpu_count() -> u32 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
}

/// Copies `s` into a C name field, truncated and NUL-terminated.
pub fn write_name(dst: &mut [core::ffi::c_char], s: &str) {
    let n = s.len().min(dst.len() - 1);
    for (d, b) in dst.iter_mut().zip(s.as_bytes()[..n].iter()) {
        *d = *b as core::ffi::c_char;
    }
    dst[n..].fill(0);
}

/// Nanoseconds of CLOCK_MONOTONIC: the clock of every timestamp, device and
/// host alike (the device timer ticks once a nanosecond). It is the clock of
/// C++'s steady_clock on Linux, so hosts can compare the two directly.
pub fn now_ns() -> u64 {
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_MONOTONIC: i32 = 1;
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec (two 64-bit fields on the
    // 64-bit Linux targets this driver builds for) to a valid pointer.
    unsafe { clock_gettime(CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
