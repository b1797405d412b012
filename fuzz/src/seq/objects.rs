//! Contexts, queues and pools: creation, retains and releases, and what
//! a release takes out of the model.

use super::{code, Obj, Seq};
use std::ptr::{null, null_mut};
use ur_conformance::ur::Api;
use ur_core::abi::*;

impl<'a> Seq<'a> {
    pub(super) fn op_context_create(&mut self, first: bool) {
        let n = if first { 1 } else { (self.r.u8() % 3) as u32 };
        let devs: Vec<ur_device_handle_t> = if first { vec![self.devices[0]] } else { (0..n).map(|_| self.device()).collect() };
        let mut out = null_mut();
        let list = if n > 0 && (first || self.r.u8() != 0xff) { devs.as_ptr() } else { null() };
        let rc = code("urContextCreate", unsafe { self.api.urContextCreate(n, list, null(), &mut out) });
        if rc == UR_RESULT_SUCCESS {
            self.contexts.push(Obj { h: out, refs: 1 });
        } else if first {
            finding!("urContextCreate of the first device failed: {:#x}", rc.0);
        }
    }

    pub(super) fn op_context_refs(&mut self) {
        let to_release = self.retain_or_release(Self::ctx, "urContextRetain", Api::urContextRetain, |s, i| &mut s.contexts[i]);
        let Some((h, i)) = to_release else { return };
        // The last user release may free the context's memory: nothing may
        // still run on it, and its blocks leave the model.
        if let Some(i) = i.filter(|&i| self.contexts[i].refs == 1) {
            self.quiesce();
            for a in self.allocs.iter_mut().filter(|a| a.live && (a.ctx == i || a.ctx == usize::MAX)) {
                a.live = false;
                a.orphaned = true;
            }
            // Its default pools may go with it (they do not keep it alive).
            for (p, c) in self.pools.iter_mut() {
                if *c == i && p.refs >= u32::MAX / 4 {
                    p.refs = 0;
                }
            }
        }
        let rc = code("urContextRelease", unsafe { self.api.urContextRelease(h) });
        if let Some(i) = i {
            self.contexts[i].released(rc, "urContextRelease", "context");
        }
    }

    pub(super) fn op_queue_create(&mut self) {
        let (ctx, _) = self.ctx();
        let dev = self.device();
        let flag_bits = self.r.u8();
        let mut flags = 0u32;
        for (bit, f) in [
            UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE,
            UR_QUEUE_FLAG_PROFILING_ENABLE,
            UR_QUEUE_FLAG_DISCARD_EVENTS,
            UR_QUEUE_FLAG_SUBMISSION_IMMEDIATE,
            UR_QUEUE_FLAG_ON_DEVICE,
            UR_QUEUE_FLAG_PRIORITY_LOW,
            UR_QUEUE_FLAG_PRIORITY_HIGH,
        ]
        .iter()
        .enumerate()
        {
            if flag_bits & (1 << bit) != 0 {
                flags |= f.0;
            }
        }
        if flag_bits & 0x80 != 0 {
            flags |= self.r.u32();
        }
        let with_props = self.r.bool();
        let props = ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: self.chain(), flags };
        let mut out = null_mut();
        let pprops = if with_props { &props as *const _ } else { null() };
        let rc = code("urQueueCreate", unsafe { self.api.urQueueCreate(ctx, dev, pprops, &mut out) });
        if rc == UR_RESULT_SUCCESS {
            self.queues.push(Obj { h: out, refs: 1 });
        }
    }

    pub(super) fn op_queue_refs(&mut self) {
        let to_release = self.retain_or_release(Self::queue, "urQueueRetain", Api::urQueueRetain, |s, i| &mut s.queues[i]);
        let Some((h, i)) = to_release else { return };
        if i.is_some_and(|i| self.queues[i].refs == 1) {
            // Finished while the model can still name it: nothing it ran stays pending.
            self.quiesce();
            self.orphan_unowned();
        }
        let rc = code("urQueueRelease", unsafe { self.api.urQueueRelease(h) });
        if let Some(i) = i {
            self.queues[i].released(rc, "urQueueRelease", "queue");
        }
    }

    pub(super) fn op_pool_create(&mut self) {
        let (ctx, ci) = self.ctx();
        let kind = self.r.u8() % 3;
        let flags = match self.r.u8() % 4 {
            0 => 0,
            1 => UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0,
            2 => UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0,
            _ => self.r.u32(),
        };
        let mut desc = ur_usm_pool_desc_t { stype: UR_STRUCTURE_TYPE_USM_POOL_DESC, pNext: self.chain(), flags };
        let mut out = null_mut();
        let rc = match kind {
            0 => code("urUSMPoolCreate", unsafe { self.api.urUSMPoolCreate(ctx, &mut desc, &mut out) }),
            1 => {
                let dev = self.device();
                code("urUSMPoolCreateExp", unsafe { self.api.urUSMPoolCreateExp(ctx, dev, &mut desc, &mut out) })
            }
            _ => {
                let dev = self.device();
                let rc = code("urUSMPoolGetDefaultDevicePoolExp", unsafe {
                    self.api.urUSMPoolGetDefaultDevicePoolExp(ctx, dev, &mut out)
                });
                // A default pool is not the user's to release: keep it out of the model's references.
                if rc == UR_RESULT_SUCCESS {
                    if let Some(ci) = ci {
                        self.pools.push((Obj { h: out, refs: u32::MAX / 2 }, ci));
                    }
                }
                return;
            }
        };
        if rc == UR_RESULT_SUCCESS {
            match ci {
                Some(ci) => self.pools.push((Obj { h: out, refs: 1 }, ci)),
                None => finding!("a pool was made for a null context"),
            }
        }
    }

    pub(super) fn op_pool_refs(&mut self) {
        let to_release = self.retain_or_release(Self::pool, "urUSMPoolRetain", Api::urUSMPoolRetain, |s, i| &mut s.pools[i].0);
        let Some((h, i)) = to_release else { return };
        if let Some(i) = i.filter(|&i| self.pools[i].0.refs == 1) {
            // The pool's blocks may go with it.
            self.quiesce();
            self.orphan_unowned();
            for a in self.allocs.iter_mut().filter(|a| a.live && a.pool == Some(i)) {
                a.live = false;
                a.orphaned = true;
            }
        }
        let rc = code("urUSMPoolRelease", unsafe { self.api.urUSMPoolRelease(h) });
        if let Some(i) = i.filter(|&i| self.pools[i].0.refs > 0) {
            // Default pools answer as the header allows; only user pools must release.
            if rc != UR_RESULT_SUCCESS && self.pools[i].0.refs < u32::MAX / 4 {
                finding!("urUSMPoolRelease of a live pool: {:#x}", rc.0);
            }
            if rc == UR_RESULT_SUCCESS {
                self.pools[i].0.refs -= 1;
            }
        }
    }

    /// A queue or pool may hold the last reference to a context the user
    /// released: when it goes, so may the context's blocks.
    fn orphan_unowned(&mut self) {
        let contexts = &self.contexts;
        for a in self.allocs.iter_mut().filter(|a| a.live) {
            if a.ctx == usize::MAX || contexts.get(a.ctx).is_none_or(|c| c.refs == 0) {
                a.live = false;
                a.orphaned = true;
            }
        }
    }
}
