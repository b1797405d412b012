//! Call arguments drawn from the input and the model: live or released
//! handles, sizes, descriptor chains, wait lists and blocks.

use super::{Obj, Seq, MAX_TOUCH};
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use ur_core::abi::*;

const STYPES: [ur_structure_type_t; 7] = [
    UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
    UR_STRUCTURE_TYPE_USM_POOL_DESC,
    UR_STRUCTURE_TYPE_USM_DESC,
    UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES,
    UR_STRUCTURE_TYPE_QUEUE_PROPERTIES,
    UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES,
    ur_structure_type_t(0x7777),
];

/// An enqueue's wait list and event out-pointer, as drawn.
pub(super) struct EnqueueTail {
    n: u32,
    list: Vec<ur_event_handle_t>,
    /// A null list, whatever `n` says.
    null_list: bool,
    pub(super) want_event: bool,
    /// Where the call writes its event, when one is asked for.
    pub(super) event: ur_event_handle_t,
}

impl EnqueueTail {
    /// The three arguments an enqueue ends with: the count, the list (null
    /// when drawn so, whatever the count) and the event out-pointer (null
    /// when no event is asked for).
    pub(super) fn args(&mut self) -> (u32, *const ur_event_handle_t, *mut ur_event_handle_t) {
        let list = if self.null_list { null() } else { self.list.as_ptr() };
        let event = if self.want_event { &mut self.event as *mut _ } else { null_mut() };
        (self.n, list, event)
    }
}

/// What `pick_idx` draws from: each object's `(handle value, live)`.
fn table<'o, T: 'o>(objs: impl Iterator<Item = &'o Obj<*mut T>>) -> Vec<(usize, bool)> {
    objs.map(|o| (o.h as usize, o.refs > 0)).collect()
}

impl<'a> Seq<'a> {
    /// An index into a table of `(handle value, live)`. A released handle
    /// whose address a live object now has names that object: the runtime
    /// cannot tell them apart, so the model must not either.
    fn pick_idx(&mut self, table: &[(usize, bool)]) -> Option<usize> {
        let b = self.r.u8() as usize;
        let len = table.len();
        if len == 0 || b == 0xff {
            return None;
        }
        let i = b % len;
        if table[i].1 {
            return Some(i);
        }
        if self.stale {
            let i = table.iter().position(|&(h, live)| live && h == table[i].0).unwrap_or(i);
            if !table[i].1 && std::env::var_os("UR_FUZZ_TRACE").is_some() {
                eprintln!("  (a released handle, {:#x}, goes into the next call)", table[i].0);
            }
            return Some(i);
        }
        (0..len).map(|k| (i + k) % len).find(|&k| table[k].1)
    }

    // Each of these draws one byte (`pick_idx`): the handle, and the model's
    // index of its object; null and no index when none is drawn.

    pub(super) fn ctx(&mut self) -> (ur_context_handle_t, Option<usize>) {
        let i = self.pick_idx(&table(self.contexts.iter()));
        (i.map_or(null_mut(), |i| self.contexts[i].h), i)
    }

    pub(super) fn queue(&mut self) -> (ur_queue_handle_t, Option<usize>) {
        let i = self.pick_idx(&table(self.queues.iter()));
        (i.map_or(null_mut(), |i| self.queues[i].h), i)
    }

    pub(super) fn pool(&mut self) -> (ur_usm_pool_handle_t, Option<usize>) {
        let i = self.pick_idx(&table(self.pools.iter().map(|(o, _)| o)));
        (i.map_or(null_mut(), |i| self.pools[i].0.h), i)
    }

    pub(super) fn event(&mut self) -> (ur_event_handle_t, Option<usize>) {
        let i = self.pick_idx(&table(self.events.iter()));
        (i.map_or(null_mut(), |i| self.events[i].h), i)
    }

    pub(super) fn device(&mut self) -> ur_device_handle_t {
        let b = self.r.u8() as usize;
        if b == 0xff {
            null_mut()
        } else {
            self.devices[b % self.devices.len()]
        }
    }

    /// A size from a few classes: zero, small, page-ish, granule edges, huge.
    pub(super) fn size(&mut self) -> usize {
        let b = self.r.u8();
        let x = self.r.u32() as usize;
        match b % 9 {
            0 => 0,
            1 => 1 + x % 64,
            2 => 1 + x % 4096,
            3 => 1 + x % (1 << 20),
            4 => 4096 * (1 + x % 64),
            5 => ((2 << 20) * (1 + x % 4)).wrapping_add((x >> 8) % 3).wrapping_sub(1),
            6 => (1usize << 40) + x,
            7 => usize::MAX - x % 4096,
            _ => x % 256,
        }
    }

    /// A chain of up to four generic descriptors, possibly cyclic; null when empty.
    pub(super) fn chain(&mut self) -> *mut c_void {
        let n = (self.r.u8() % 5) as usize;
        let first = self.arena.len();
        for _ in 0..n {
            let mut node = Box::new([0u64; 16]);
            let st = self.r.u8();
            node[0] = if st < 0xf0 { STYPES[st as usize % STYPES.len()].0 as u64 } else { self.r.u32() as u64 };
            for slot in node.iter_mut().skip(2).take(3) {
                let v = self.r.u8();
                *slot = if v & 0x80 != 0 { self.r.u64() } else { v as u64 };
            }
            self.arena.push(node);
        }
        let ptrs: Vec<*mut u64> = self.arena[first..].iter_mut().map(|b| b.as_mut_ptr()).collect();
        for k in 0..n {
            let link = self.r.u8();
            // Mostly the next node; sometimes back to an earlier one or itself: a cycle.
            let next = if link & 0xc0 == 0xc0 { ptrs[(link as usize) % (k + 1)] } else { ptrs.get(k + 1).copied().unwrap_or(null_mut()) };
            // SAFETY: each node is 16 words; word 1 is the pNext of a base descriptor.
            unsafe { *ptrs[k].add(1) = next as u64 };
        }
        ptrs.first().map(|p| *p as *mut c_void).unwrap_or(null_mut())
    }

    /// A wait list of up to four events, possibly with a count that disagrees
    /// with a null list.
    pub(super) fn wait_list(&mut self) -> (u32, Vec<ur_event_handle_t>, bool) {
        let b = self.r.u8();
        let n = (b % 5) as usize;
        let mut list = Vec::new();
        for _ in 0..n {
            list.push(self.event().0);
        }
        (n as u32, list, b & 0x80 != 0)
    }

    /// The tail of every enqueue but urEventWait's: a wait list, then
    /// whether the call is asked for an event.
    pub(super) fn enqueue_tail(&mut self) -> EnqueueTail {
        let (n, list, null_list) = self.wait_list();
        let want_event = self.r.u8() % 4 != 0;
        EnqueueTail { n, list, null_list, want_event, event: null_mut() }
    }

    /// A live block (or an offset into one) and how many bytes remain from there.
    pub(super) fn block(&mut self) -> Option<(usize, usize)> {
        let live: Vec<usize> = (0..self.allocs.len()).filter(|&i| self.allocs[i].live).collect();
        let b = self.r.u8() as usize;
        if live.is_empty() || b == 0xff {
            return None;
        }
        let a = &self.allocs[live[b % live.len()]];
        let (ptr, size) = (a.ptr, a.size.min(MAX_TOUCH));
        let off = if size == 0 { 0 } else { self.r.u32() as usize % size };
        Some((ptr + off, size - off))
    }
}
