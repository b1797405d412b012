//! Translation between UR values and CUDA values, in one place.

use crate::ADAPTER;
use crate::driver::{self, CUresult};
use ur_core::log;
use ur_core::*;

/// The UR code for a driver error. Codes UR has no name for become
/// `ADAPTER_SPECIFIC`, with the driver's error recorded for
/// `urAdapterGetLastError`.
pub fn cu_error(e: CUresult) -> ur_result_t {
    use CUresult::*;
    match e {
        CUDA_SUCCESS => UR_RESULT_SUCCESS,
        CUDA_ERROR_INVALID_VALUE => UR_RESULT_ERROR_INVALID_VALUE,
        CUDA_ERROR_OUT_OF_MEMORY => UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        CUDA_ERROR_NOT_INITIALIZED | CUDA_ERROR_DEINITIALIZED => UR_RESULT_ERROR_UNINITIALIZED,
        CUDA_ERROR_NO_DEVICE => UR_RESULT_ERROR_DEVICE_NOT_FOUND,
        CUDA_ERROR_INVALID_DEVICE => UR_RESULT_ERROR_INVALID_DEVICE,
        CUDA_ERROR_INVALID_CONTEXT | CUDA_ERROR_CONTEXT_IS_DESTROYED => {
            UR_RESULT_ERROR_INVALID_CONTEXT
        }
        CUDA_ERROR_INVALID_IMAGE
        | CUDA_ERROR_NO_BINARY_FOR_GPU
        | CUDA_ERROR_INVALID_PTX
        | CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | CUDA_ERROR_INVALID_SOURCE => UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE,
        CUDA_ERROR_JIT_COMPILER_NOT_FOUND | CUDA_ERROR_JIT_COMPILATION_DISABLED => {
            UR_RESULT_ERROR_COMPILER_NOT_AVAILABLE
        }
        CUDA_ERROR_NOT_FOUND => UR_RESULT_ERROR_INVALID_KERNEL_NAME,
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES | CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE => {
            UR_RESULT_ERROR_OUT_OF_RESOURCES
        }
        CUDA_ERROR_ILLEGAL_ADDRESS
        | CUDA_ERROR_LAUNCH_FAILED
        | CUDA_ERROR_ECC_UNCORRECTABLE
        | CUDA_ERROR_HARDWARE_STACK_ERROR
        | CUDA_ERROR_ILLEGAL_INSTRUCTION
        | CUDA_ERROR_MISALIGNED_ADDRESS
        | CUDA_ERROR_INVALID_ADDRESS_SPACE
        | CUDA_ERROR_INVALID_PC
        | CUDA_ERROR_LAUNCH_TIMEOUT
        | CUDA_ERROR_ASSERT => UR_RESULT_ERROR_DEVICE_LOST,
        CUDA_ERROR_NOT_SUPPORTED => UR_RESULT_ERROR_UNSUPPORTED_FEATURE,
        other => {
            let name = driver::error_name(other);
            log::error(&format!("CUDA driver error {name}"));
            ADAPTER.get_or_create().set_last_error(&name, other as i32)
        }
    }
}

/// Adds `.cu()?` to driver results inside functions that return `UrResult`.
pub trait CuExt<T> {
    fn cu(self) -> UrResult<T>;
}

impl<T> CuExt<T> for Result<T, CUresult> {
    #[inline]
    fn cu(self) -> UrResult<T> {
        self.map_err(cu_error)
    }
}

/// A UR "migrate to device" advice list as CUDA advice, with where it points:
/// `(advice, to_device)`. Advice CUDA has no equivalent for is left out.
pub fn usm_advice(flags: ur_usm_advice_flags_t) -> Vec<(cudarc::driver::sys::CUmem_advise, bool)> {
    use cudarc::driver::sys::CUmem_advise::*;
    let table = [
        (
            UR_USM_ADVICE_FLAG_SET_READ_MOSTLY,
            CU_MEM_ADVISE_SET_READ_MOSTLY,
            true,
        ),
        (
            UR_USM_ADVICE_FLAG_CLEAR_READ_MOSTLY,
            CU_MEM_ADVISE_UNSET_READ_MOSTLY,
            true,
        ),
        (
            UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION,
            CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
            true,
        ),
        (
            UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION,
            CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
            true,
        ),
        (
            UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_DEVICE,
            CU_MEM_ADVISE_SET_ACCESSED_BY,
            true,
        ),
        (
            UR_USM_ADVICE_FLAG_CLEAR_ACCESSED_BY_DEVICE,
            CU_MEM_ADVISE_UNSET_ACCESSED_BY,
            true,
        ),
        (
            UR_USM_ADVICE_FLAG_SET_PREFERRED_LOCATION_HOST,
            CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
            false,
        ),
        (
            UR_USM_ADVICE_FLAG_CLEAR_PREFERRED_LOCATION_HOST,
            CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION,
            false,
        ),
        (
            UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_HOST,
            CU_MEM_ADVISE_SET_ACCESSED_BY,
            false,
        ),
        (
            UR_USM_ADVICE_FLAG_CLEAR_ACCESSED_BY_HOST,
            CU_MEM_ADVISE_UNSET_ACCESSED_BY,
            false,
        ),
    ];
    table
        .iter()
        .filter(|(ur, _, _)| flags & ur.0 != 0)
        .map(|&(_, cu, dev)| (cu, dev))
        .collect()
}

/// Nanoseconds from milliseconds as CUDA's event timer reports them.
pub fn ms_to_ns(ms: f32) -> u64 {
    (f64::from(ms) * 1e6).max(0.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_errors_map_to_their_ur_names() {
        assert_eq!(
            cu_error(CUresult::CUDA_ERROR_OUT_OF_MEMORY),
            UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
        );
        assert_eq!(
            cu_error(CUresult::CUDA_ERROR_INVALID_PTX),
            UR_RESULT_ERROR_PROGRAM_BUILD_FAILURE
        );
        assert_eq!(
            cu_error(CUresult::CUDA_ERROR_NOT_FOUND),
            UR_RESULT_ERROR_INVALID_KERNEL_NAME
        );
    }

    #[test]
    fn advice_translation_keeps_direction() {
        let a = usm_advice(
            UR_USM_ADVICE_FLAG_SET_READ_MOSTLY.0 | UR_USM_ADVICE_FLAG_SET_ACCESSED_BY_HOST.0,
        );
        assert_eq!(a.len(), 2);
        assert!(a.iter().any(|&(_, dev)| !dev));
    }

    #[test]
    fn milliseconds_to_nanoseconds() {
        assert_eq!(ms_to_ns(1.5), 1_500_000);
        assert_eq!(ms_to_ns(-1.0), 0);
    }
}

/// The P2P attribute behind a peer query.
pub fn p2p_attribute(prop: ur_exp_peer_info_t) -> UrResult<driver::P2PAttr> {
    use driver::P2PAttr::*;
    match prop {
        UR_EXP_PEER_INFO_UR_PEER_ACCESS_SUPPORT => Ok(CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED),
        UR_EXP_PEER_INFO_UR_PEER_ATOMICS_SUPPORT => Ok(CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED),
        _ => Err(UR_RESULT_ERROR_INVALID_ENUMERATION),
    }
}
