//! USM calls: blocking and enqueued allocations and frees, fills, copies,
//! pool and allocation queries, and trims.

use super::{code, Alloc, Seq};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

const POOL_INFOS: [ur_usm_pool_info_t; 9] = [
    UR_USM_POOL_INFO_REFERENCE_COUNT,
    UR_USM_POOL_INFO_CONTEXT,
    UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP,
    UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP,
    UR_USM_POOL_INFO_RESERVED_CURRENT_EXP,
    UR_USM_POOL_INFO_RESERVED_HIGH_EXP,
    UR_USM_POOL_INFO_USED_CURRENT_EXP,
    UR_USM_POOL_INFO_USED_HIGH_EXP,
    ur_usm_pool_info_t(0x7fff_fffe),
];

impl<'a> Seq<'a> {
    fn record_alloc(&mut self, rc: ur_result_t, p: *mut c_void, size: usize, ci: Option<usize>, pi: Option<usize>) {
        if rc != UR_RESULT_SUCCESS {
            return;
        }
        if p.is_null() && size != 0 {
            finding!("an allocation of {size} bytes succeeded with a null pointer");
        }
        let (Some(ci), false) = (ci, p.is_null()) else { return };
        let ptr = p as usize;
        if std::env::var_os("UR_FUZZ_TRACE").is_some() {
            eprintln!("  (block {ptr:#x}, {size} bytes)");
        }
        // A base the model still holds as live means the runtime handed out a live block twice.
        if self.allocs.iter().any(|a| a.live && a.ptr == ptr) {
            finding!("block {ptr:#x} handed out while still live");
        }
        // An orphan at the same base was in fact gone already.
        for a in self.allocs.iter_mut().filter(|a| a.orphaned && a.ptr == ptr) {
            a.orphaned = false;
        }
        self.allocs.push(Alloc { ptr, size, ctx: ci, pool: pi, live: true, orphaned: false });
    }

    pub(super) fn op_sync_alloc(&mut self) {
        let (ctx, ci) = self.ctx();
        let kind = self.r.u8() % 3;
        let dev = self.device();
        let (pool, pi) = if self.r.bool() { self.pool() } else { (null_mut(), None) };
        let size = self.size();
        let align = match self.r.u8() % 8 {
            0 => 0,
            1 => 1,
            2 => 3,
            3 => 64,
            4 => 4096,
            5 => 1 << 20,
            6 => 1 << 31,
            _ => self.r.u32(),
        };
        let desc = ur_usm_desc_t { stype: UR_STRUCTURE_TYPE_USM_DESC, pNext: self.chain(), hints: self.r.u8() as u32 & 7, align };
        let pdesc = if self.r.u8() == 0xff { null() } else { &desc as *const _ };
        let mut p = null_mut();
        let rc = match kind {
            0 => code("urUSMDeviceAlloc", unsafe { self.api.urUSMDeviceAlloc(ctx, dev, pdesc, pool, size, &mut p) }),
            1 => code("urUSMHostAlloc", unsafe { self.api.urUSMHostAlloc(ctx, pdesc, pool, size, &mut p) }),
            _ => code("urUSMSharedAlloc", unsafe { self.api.urUSMSharedAlloc(ctx, dev, pdesc, pool, size, &mut p) }),
        };
        let pi = if pool.is_null() { None } else { pi };
        self.record_alloc(rc, p, size, ci, pi);
    }

    pub(super) fn op_async_alloc(&mut self) {
        let (q, _) = self.queue();
        let kind = self.r.u8() % 3;
        let (pool, pi) = if self.r.bool() { self.pool() } else { (null_mut(), None) };
        let size = self.size();
        let props = ur_exp_async_usm_alloc_properties_t {
            stype: UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES,
            pNext: self.chain(),
            flags: if self.r.u8() & 0x80 != 0 { self.r.u32() } else { 0 },
        };
        let pprops = if self.r.bool() { &props as *const _ } else { null() };
        let mut tail = self.enqueue_tail();
        let (n, waits, event) = tail.args();
        let mut p = null_mut();
        let rc = unsafe {
            match kind {
                0 => code("urEnqueueUSMDeviceAllocExp", self.api.urEnqueueUSMDeviceAllocExp(q, pool, size, pprops, n, waits, &mut p, event)),
                1 => code("urEnqueueUSMSharedAllocExp", self.api.urEnqueueUSMSharedAllocExp(q, pool, size, pprops, n, waits, &mut p, event)),
                _ => code("urEnqueueUSMHostAllocExp", self.api.urEnqueueUSMHostAllocExp(q, pool, size, pprops, n, waits, &mut p, event)),
            }
        };
        self.push_event(rc, &tail);
        // The model does not track which context a queue serves: the block
        // is tied to every context (orphaned when any goes, see op_context_refs).
        let pi = if pool.is_null() { None } else { pi };
        self.record_alloc(rc, p, size, Some(usize::MAX), pi);
    }

    pub(super) fn op_free(&mut self, enqueued: bool) {
        // A live block, a stale one, or a foreign pointer.
        let b = self.r.u8();
        let ptr = match b % 4 {
            0 if !self.allocs.is_empty() => self.allocs[(b as usize / 4) % self.allocs.len()].ptr,
            1 => self.block().map(|(p, _)| p).unwrap_or(0),
            2 => self.pattern.as_ptr() as usize,
            _ => {
                let live: Vec<usize> = self.allocs.iter().filter(|a| a.live).map(|a| a.ptr).collect();
                if live.is_empty() { 0 } else { live[b as usize % live.len()] }
            }
        };
        if self.allocs.iter().any(|a| a.live && a.ptr <= ptr && ptr < a.ptr + a.size.max(1)) {
            // Nothing pending may still use the block (or the one it is inside).
            self.quiesce();
        }
        if std::env::var_os("UR_FUZZ_TRACE").is_some() {
            eprintln!("  (free of {ptr:#x})");
        }
        let rc = if enqueued {
            let (q, _) = self.queue();
            let (pool, _) = if self.r.bool() { self.pool() } else { (null_mut(), None) };
            let mut tail = self.enqueue_tail();
            let (n, waits, event) = tail.args();
            let rc = code("urEnqueueUSMFreeExp", unsafe {
                self.api.urEnqueueUSMFreeExp(q, pool, ptr as *mut c_void, n, waits, event)
            });
            self.push_event(rc, &tail);
            rc
        } else {
            let (ctx, _) = self.ctx();
            code("urUSMFree", unsafe { self.api.urUSMFree(ctx, ptr as *mut c_void) })
        };
        if rc == UR_RESULT_SUCCESS {
            let mut found = false;
            for a in self.allocs.iter_mut().filter(|a| (a.live || a.orphaned) && a.ptr == ptr) {
                a.live = false;
                a.orphaned = false;
                found = true;
            }
            if !found {
                finding!("a free of {ptr:#x}, no live block's base, succeeded");
            }
        }
    }

    pub(super) fn op_fill(&mut self) {
        let (q, _) = self.queue();
        let (ptr, room) = self.block().unwrap_or((0, 0));
        let pattern_size = [0usize, 1, 2, 3, 4, 8, 16, 128, 256][self.r.u8() as usize % 9];
        let size = match self.r.u8() % 4 {
            0 => room,
            1 if pattern_size > 0 => (room / pattern_size) * pattern_size,
            2 => self.r.u32() as usize % (room + 1),
            _ => self.size(),
        };
        // A size past the block is the caller's bug, not the runtime's: keep inside.
        let size = if size > room { room } else { size };
        let mut tail = self.enqueue_tail();
        let (n, waits, event) = tail.args();
        let pp = if self.r.u8() == 0xff { null() } else { self.pattern.as_ptr() as *const c_void };
        let rc = code("urEnqueueUSMFill", unsafe {
            self.api.urEnqueueUSMFill(q, ptr as *mut c_void, pattern_size, pp, size, n, waits, event)
        });
        self.push_event(rc, &tail);
    }

    pub(super) fn op_copy(&mut self) {
        let (q, _) = self.queue();
        let blocking = self.r.bool();
        let (dst, droom) = self.block().unwrap_or((0, 0));
        let (src, sroom) = self.block().unwrap_or((0, 0));
        let size = (self.r.u32() as usize) % (droom.min(sroom) + 1);
        let mut tail = self.enqueue_tail();
        let (n, waits, event) = tail.args();
        let rc = code("urEnqueueUSMMemcpy", unsafe {
            self.api.urEnqueueUSMMemcpy(q, blocking, dst as *mut c_void, src as *const c_void, size, n, waits, event)
        });
        self.push_event(rc, &tail);
    }

    pub(super) fn op_pool_info(&mut self) {
        let (pool, _) = self.pool();
        let prop = POOL_INFOS[self.r.u8() as usize % POOL_INFOS.len()];
        let mut value = [0u64; 4];
        let mut ret = 0usize;
        let pv = if self.r.u8() == 0xff { null_mut() } else { value.as_mut_ptr() as *mut c_void };
        if self.r.bool() {
            code("urUSMPoolGetInfoExp", unsafe { self.api.urUSMPoolGetInfoExp(pool, prop, pv, &mut ret) });
        } else {
            let size = [0usize, 1, 4, 8, 32][self.r.u8() as usize % 5];
            code("urUSMPoolGetInfo", unsafe { self.api.urUSMPoolGetInfo(pool, prop, size, pv, &mut ret) });
        }
    }

    pub(super) fn op_alloc_info(&mut self) {
        let (ctx, _) = self.ctx();
        let (ptr, _) = self.block().unwrap_or((self.pattern.as_ptr() as usize, 0));
        let prop = ur_usm_alloc_info_t((self.r.u8() % 6) as u32);
        let size = [0usize, 1, 4, 8, 32][self.r.u8() as usize % 5];
        let mut value = [0u64; 4];
        let mut ret = 0usize;
        code("urUSMGetMemAllocInfo", unsafe {
            self.api.urUSMGetMemAllocInfo(ctx, ptr as *const c_void, prop, size, value.as_mut_ptr() as *mut c_void, &mut ret)
        });
    }

    pub(super) fn op_trim(&mut self) {
        let (ctx, _) = self.ctx();
        let dev = self.device();
        let (pool, _) = self.pool();
        let keep = self.size();
        code("urUSMPoolTrimToExp", unsafe { self.api.urUSMPoolTrimToExp(ctx, dev, pool, keep) });
    }
}
