//! The host, native CPU's driver: what the machine is, read once from
//! `/proc`, `/sys` and the C library, so that device queries answer with the
//! real CPU and memory; and the host's clock.

use crate::conv::{vendor_name, vendor_pci_id};
use std::fs;

/// Facts about the host CPU and memory, probed once per adapter.
#[derive(Clone, Debug)]
pub struct HostFacts {
    /// `model name` of the first CPU, e.g. "Intel(R) Xeon(R) Processor".
    pub cpu_name: String,
    /// Vendor as a company name where the CPUID vendor string is known.
    pub vendor_name: String,
    /// PCI vendor id of the CPU maker (0x8086 Intel, 0x1022 AMD), else 0.
    pub vendor_id: u32,
    /// CPUs this process may run on.
    pub compute_units: u32,
    /// Highest core clock in MHz, 0 when the host does not say.
    pub max_clock_mhz: u32,
    /// Physical memory in bytes.
    pub total_memory: u64,
    /// Line size of the last-level cache in bytes.
    pub cache_line: u32,
    /// Size of the last-level cache in bytes, 0 when unknown.
    pub cache_size: u64,
    /// Widest SIMD register in bytes (16 SSE, 32 AVX, 64 AVX-512).
    pub simd_bytes: u32,
    pub has_fma: bool,
    pub has_fp16: bool,
    pub has_bf16: bool,
    /// A stable 16-byte identity of this machine, where the host has one.
    pub uuid: Option<[u8; 16]>,
}

impl HostFacts {
    pub fn probe() -> HostFacts {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = parse_cpuinfo(&cpuinfo);
        let (cache_line, cache_size) = probe_caches();
        let max_clock_mhz = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(|khz| (khz / 1000) as u32)
            .unwrap_or(cpu.mhz);
        let uuid = ["/etc/machine-id", "/var/lib/dbus/machine-id"]
            .iter()
            .find_map(|p| fs::read_to_string(p).ok().and_then(|s| parse_machine_id(&s)));
        HostFacts {
            vendor_name: vendor_name(&cpu.vendor),
            vendor_id: vendor_pci_id(&cpu.vendor),
            cpu_name: if cpu.model_name.is_empty() { "Unknown CPU".to_string() } else { cpu.model_name },
            compute_units: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            max_clock_mhz,
            total_memory: total_memory(),
            cache_line: cache_line.unwrap_or(64),
            cache_size,
            simd_bytes: simd_bytes(&cpu.flags),
            has_fma: cpu.flags.iter().any(|f| f == "fma"),
            has_fp16: cpu.flags.iter().any(|f| f == "f16c" || f == "avx512_fp16"),
            has_bf16: cpu.flags.iter().any(|f| f == "avx512_bf16" || f == "amx_bf16"),
            uuid,
        }
    }
}

/// Bytes of memory the host could hand out now (`MemAvailable`), if known.
pub fn available_memory() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    parse_meminfo_available(&meminfo)
}

/// The clock of profiling timestamps and `urDeviceGetGlobalTimestamps`, in
/// nanoseconds: `CLOCK_MONOTONIC`, shared by host and device.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_gettime` writes the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Resolution of [`monotonic_ns`] in nanoseconds.
pub fn clock_resolution_ns() -> usize {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `clock_getres` writes the timespec we own.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as usize * 1_000_000_000 + ts.tv_nsec as usize).max(1)
}

#[derive(Default, Debug)]
struct CpuInfo {
    vendor: String,
    model_name: String,
    mhz: u32,
    flags: Vec<String>,
}

/// Reads the first processor block of `/proc/cpuinfo`.
fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !info.vendor.is_empty() || !info.model_name.is_empty() {
                break;
            }
            continue;
        }
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "vendor_id" => info.vendor = value.to_string(),
            "model name" => info.model_name = value.to_string(),
            "cpu MHz" => info.mhz = value.parse::<f64>().map_or(0, |m| m.round() as u32),
            "flags" => info.flags = value.split_whitespace().map(str::to_string).collect(),
            _ => {}
        }
    }
    info
}

fn simd_bytes(flags: &[String]) -> u32 {
    let has = |f: &str| flags.iter().any(|x| x == f);
    if has("avx512f") {
        64
    } else if has("avx") || has("avx2") {
        32
    } else {
        16
    }
}

fn total_memory() -> u64 {
    // SAFETY: `sysinfo` fills the zeroed struct we pass and reads nothing else.
    unsafe {
        let mut si: libc::sysinfo = std::mem::zeroed();
        if libc::sysinfo(&mut si) == 0 {
            return (si.totalram as u64).saturating_mul(si.mem_unit.max(1) as u64);
        }
    }
    0
}

/// `(line size, size)` of the last-level cache, from
/// `/sys/devices/system/cpu/cpu0/cache`.
fn probe_caches() -> (Option<u32>, u64) {
    let mut best_level = 0;
    let mut line = None;
    let mut size = 0;
    for index in 0.. {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
        let Ok(level) = fs::read_to_string(format!("{dir}/level")) else { break };
        let level: u32 = level.trim().parse().unwrap_or(0);
        let kind = fs::read_to_string(format!("{dir}/type")).unwrap_or_default();
        if kind.trim() == "Instruction" {
            continue;
        }
        let bytes = fs::read_to_string(format!("{dir}/size")).ok().and_then(|s| parse_cache_size(&s)).unwrap_or(0);
        if level > best_level {
            best_level = level;
            size = bytes;
            line = fs::read_to_string(format!("{dir}/coherency_line_size")).ok().and_then(|s| s.trim().parse().ok());
        }
    }
    (line, size)
}

/// "48K", "2048K", "32M" -> bytes.
fn parse_cache_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (digits, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (&s[..i], s[i..].trim()),
        None => (s, ""),
    };
    let n: u64 = digits.parse().ok()?;
    let scale = match unit {
        "" | "B" => 1,
        "K" | "KB" | "KiB" => 1 << 10,
        "M" | "MB" | "MiB" => 1 << 20,
        "G" | "GB" | "GiB" => 1 << 30,
        _ => return None,
    };
    Some(n * scale)
}

fn parse_meminfo_available(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The 32 hex digits of a systemd machine id as 16 bytes.
fn parse_machine_id(s: &str) -> Option<[u8; 16]> {
    let s = s.trim();
    if s.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPUINFO: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n\
cpu MHz\t\t: 1999.6\nflags\t\t: fpu sse2 avx fma f16c avx2 avx512f\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n";

    #[test]
    fn cpuinfo_first_block_only() {
        let c = parse_cpuinfo(CPUINFO);
        assert_eq!(c.vendor, "GenuineIntel");
        assert_eq!(c.model_name, "Intel(R) Xeon(R) Processor");
        assert_eq!(c.mhz, 2000);
        assert_eq!(simd_bytes(&c.flags), 64);
        assert_eq!(vendor_pci_id(&c.vendor), 0x8086);
    }

    #[test]
    fn sizes_and_ids() {
        assert_eq!(parse_cache_size("48K\n"), Some(48 * 1024));
        assert_eq!(parse_cache_size("32M"), Some(32 << 20));
        assert_eq!(parse_cache_size("12"), Some(12));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(parse_meminfo_available("MemTotal: 10 kB\nMemAvailable:  2048 kB\n"), Some(2 << 20));
        let id = parse_machine_id("3d1219c7c4c5404aaa1f6d2a48adfda4\n").unwrap();
        assert_eq!(id[0], 0x3d);
        assert_eq!(id[15], 0xa4);
        assert_eq!(parse_machine_id("short"), None);
    }

    #[test]
    fn probing_this_host_gives_plausible_facts() {
        let h = HostFacts::probe();
        assert!(h.compute_units >= 1);
        assert!(h.total_memory > 1 << 20);
        assert!(h.cache_line.is_power_of_two());
        assert!(!h.cpu_name.is_empty());
    }
}
