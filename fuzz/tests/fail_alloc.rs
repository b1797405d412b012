//! Fault injection through the C API: the native CPU adapter's pool memory
//! source fails from its Nth request on (UR_NATIVE_CPU_FAIL_ALLOC_AT, read
//! once, so this file is a process of its own with one test). An async
//! allocation stream must then end in OUT_OF_*_MEMORY, and every block
//! allocated before stays valid (its bytes intact) and freeable.

mod common;

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

/// Bigger than a pool granule, so each block needs a new commit from the source.
const BLOCK: usize = 256 << 10;

#[test]
fn out_of_memory_mid_stream_keeps_earlier_blocks() {
    std::env::set_var("UR_NATIVE_CPU_FAIL_ALLOC_AT", "6");
    let adapter = common::library_dir().join("libur_adapter_native_cpu.so.0");
    let (api, topology) = common::open(adapter.to_str().unwrap());
    let device = topology.devices[0].handle;
    unsafe {
        let mut ctx = null_mut();
        assert_eq!(api.urContextCreate(1, &device, null(), &mut ctx).unwrap(), UR_RESULT_SUCCESS);
        let mut q = null_mut();
        assert_eq!(api.urQueueCreate(ctx, device, null(), &mut q).unwrap(), UR_RESULT_SUCCESS);

        let mut blocks: Vec<*mut c_void> = Vec::new();
        let failure = loop {
            assert!(blocks.len() < 256, "no allocation failed: the hook did not fire");
            let mut p = null_mut();
            let rc = api.urEnqueueUSMDeviceAllocExp(q, null_mut(), BLOCK, null(), 0, null(), &mut p, null_mut()).unwrap();
            if rc != UR_RESULT_SUCCESS {
                break rc;
            }
            // A distinct byte per block, to see later that none was clobbered or reused.
            let tag = blocks.len() as u8 + 1;
            let rc = api.urEnqueueUSMFill(q, p, 1, &tag as *const u8 as *const c_void, BLOCK, 0, null(), null_mut()).unwrap();
            assert_eq!(rc, UR_RESULT_SUCCESS);
            blocks.push(p);
        };
        assert!(
            failure == UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY || failure == UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
            "the failed allocation returned {:#x}",
            failure.0
        );
        assert!(blocks.len() >= 2, "the failure came before the stream started ({} blocks)", blocks.len());
        assert_eq!(api.urQueueFinish(q).unwrap(), UR_RESULT_SUCCESS);

        // Every earlier block: its bytes intact (read through the API), then freed.
        let mut host = vec![0u8; BLOCK];
        for (i, &p) in blocks.iter().enumerate() {
            let rc = api.urEnqueueUSMMemcpy(q, true, host.as_mut_ptr() as *mut c_void, p, BLOCK, 0, null(), null_mut()).unwrap();
            assert_eq!(rc, UR_RESULT_SUCCESS);
            let tag = i as u8 + 1;
            assert!(host.iter().all(|&b| b == tag), "block {i} lost its contents after the failure");
        }
        for &p in &blocks {
            let rc = api.urEnqueueUSMFreeExp(q, null_mut(), p, 0, null(), null_mut()).unwrap();
            assert_eq!(rc, UR_RESULT_SUCCESS);
        }
        assert_eq!(api.urQueueFinish(q).unwrap(), UR_RESULT_SUCCESS);
        // A second free of any of them is refused: they were freed once, for real.
        let rc = api.urEnqueueUSMFreeExp(q, null_mut(), blocks[0], 0, null(), null_mut()).unwrap();
        assert_ne!(rc, UR_RESULT_SUCCESS);
        assert_eq!(api.urQueueRelease(q).unwrap(), UR_RESULT_SUCCESS);
        assert_eq!(api.urContextRelease(ctx).unwrap(), UR_RESULT_SUCCESS);
    }
}
