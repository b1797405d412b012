//! Translation between the host's values and UR's: CPU vendors to UR
//! vendor names and ids, and what the host's processors and memory offer to
//! UR capability flags.

use crate::device::Device;
use ur_core::*;

pub(crate) fn vendor_name(cpuid_vendor: &str) -> String {
    match cpuid_vendor {
        "GenuineIntel" => "Intel(R) Corporation".to_string(),
        "AuthenticAMD" => "Advanced Micro Devices, Inc.".to_string(),
        "" => "Unknown".to_string(),
        other => other.to_string(),
    }
}

pub(crate) fn vendor_pci_id(cpuid_vendor: &str) -> u32 {
    match cpuid_vendor {
        "GenuineIntel" => 0x8086,
        "AuthenticAMD" => 0x1022,
        _ => 0,
    }
}

/// Every flag of a capability word.
pub(crate) const ALL_MEMORY_ORDERS: u32 = !UR_MEMORY_ORDER_CAPABILITY_FLAGS_MASK;
pub(crate) const ALL_MEMORY_SCOPES: u32 = !UR_MEMORY_SCOPE_CAPABILITY_FLAGS_MASK;
/// Host memory is plain coherent RAM: every kind of USM is reachable, also
/// atomically and concurrently with the host.
pub(crate) const FULL_USM_ACCESS: u32 = !UR_DEVICE_USM_ACCESS_CAPABILITY_FLAGS_MASK;

pub(crate) fn fp_config(device: &Device, correctly_rounded: bool) -> u32 {
    let mut flags = UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_NEAREST.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_ZERO.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_ROUND_TO_INF.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_INF_NAN.0
        | UR_DEVICE_FP_CAPABILITY_FLAG_DENORM.0;
    if device.raw.host.has_fma {
        flags |= UR_DEVICE_FP_CAPABILITY_FLAG_FMA.0;
    }
    if correctly_rounded {
        flags |= UR_DEVICE_FP_CAPABILITY_FLAG_CORRECTLY_ROUNDED_DIVIDE_SQRT.0;
    }
    flags
}
