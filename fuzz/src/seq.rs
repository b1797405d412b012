//! One fuzz input decoded into a sequence of UR calls through the loader's C
//! ABI. The model below tracks which handles and blocks are live, so that
//! the harness itself never does what the C contract makes undefined
//! (writing through a freed pointer, freeing memory a pending command still
//! uses); everything else — released handles, null handles, bad sizes,
//! flags, enums, cyclic chains, wait lists — is fair game, and every call
//! must answer with a code the header names.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::ptr::{null, null_mut};
use ur_conformance::ur::Api;
use ur_core::abi::*;

/// Calls made and calls that succeeded, for the replay summary.
pub static CALLS: AtomicU64 = AtomicU64::new(0);
pub static SUCCESSES: AtomicU64 = AtomicU64::new(0);

/// Most calls one input may make: bounds the time of one input.
const MAX_OPS: usize = 96;
/// Largest fill or copy, so that huge (virtual) allocations are never touched whole.
const MAX_TOUCH: usize = 1 << 16;

/// Bytes of the input, read front to back; zeros once it runs out.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    fn u64(&mut self) -> u64 {
        (self.u32() as u64) | ((self.u32() as u64) << 32)
    }
    fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
}

/// A handle and the user references the model believes it holds; 0: released.
struct Obj<H> {
    h: H,
    refs: u32,
}

struct Alloc {
    ptr: usize,
    size: usize,
    ctx: usize,
    pool: Option<usize>,
    live: bool,
    /// Taken out of use when its context or pool went; it may still be
    /// allocated (a queue or pool can keep them alive), so a free of it may succeed.
    orphaned: bool,
}

/// A failed expectation of the harness: the process aborts so that AFL
/// records the input as a crash.
macro_rules! finding {
    ($($arg:tt)*) => {{
        eprintln!("ur_fuzz finding: {}", format!($($arg)*));
        std::process::abort();
    }};
}

/// Every call must return a code: the loader's method returns Err only when
/// the symbol is missing. UNKNOWN is a caught panic at the boundary, and a
/// value the header does not define is garbage: both are findings.
fn code(call: &str, r: Result<ur_result_t, String>) -> ur_result_t {
    CALLS.fetch_add(1, Relaxed);
    if matches!(r, Ok(UR_RESULT_SUCCESS)) {
        SUCCESSES.fetch_add(1, Relaxed);
    }
    if std::env::var_os("UR_FUZZ_TRACE").is_some() {
        eprintln!("{call} -> {:?}", r.as_ref().map(|c| c.0));
    }
    let r = match r {
        Ok(r) => r,
        Err(e) => finding!("{call}: {e}"),
    };
    let known = r.0 <= 0x4d || (0x1000..=0x1003).contains(&r.0) || r.0 == 0x7fffffff;
    if !known {
        finding!("{call} returned {:#x}", r.0);
    }
    r
}

pub struct Seq<'a> {
    api: &'a Api,
    devices: &'a [ur_device_handle_t],
    r: Reader<'a>,
    /// Released handles may be passed back (stale-handle detection).
    stale: bool,
    contexts: Vec<Obj<ur_context_handle_t>>,
    queues: Vec<Obj<ur_queue_handle_t>>,
    pools: Vec<(Obj<ur_usm_pool_handle_t>, usize)>,
    events: Vec<Obj<ur_event_handle_t>>,
    allocs: Vec<Alloc>,
    /// Chain nodes of the current call, kept alive until it returns.
    arena: Vec<Box<[u64; 16]>>,
    pattern: [u8; 256],
}

const STYPES: [ur_structure_type_t; 7] = [
    UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
    UR_STRUCTURE_TYPE_USM_POOL_DESC,
    UR_STRUCTURE_TYPE_USM_DESC,
    UR_STRUCTURE_TYPE_QUEUE_INDEX_PROPERTIES,
    UR_STRUCTURE_TYPE_QUEUE_PROPERTIES,
    UR_STRUCTURE_TYPE_EXP_ASYNC_USM_ALLOC_PROPERTIES,
    ur_structure_type_t(0x7777),
];

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
    pub fn new(api: &'a Api, devices: &'a [ur_device_handle_t], data: &'a [u8]) -> Self {
        let mut r = Reader::new(data);
        // Released handles go back in unless UR_FUZZ_STALE=0: every call on
        // one must be refused (handles are type-stable cells, src/handle).
        static STALE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let allowed = *STALE.get_or_init(|| std::env::var_os("UR_FUZZ_STALE").is_none_or(|v| v != "0"));
        let stale = r.u8() & 0x80 != 0 && allowed;
        Seq {
            api,
            devices,
            r,
            stale,
            contexts: Vec::new(),
            queues: Vec::new(),
            pools: Vec::new(),
            events: Vec::new(),
            allocs: Vec::new(),
            arena: Vec::new(),
            pattern: [0xa5; 256],
        }
    }

    /// Runs the whole input, then releases everything it still holds.
    pub fn run(mut self) {
        // Every input starts from one context, so that most calls get past
        // the handle checks.
        self.op_context_create(true);
        let mut ops = 0;
        while !self.r.done() && ops < MAX_OPS {
            let op = self.r.u8();
            self.step(op);
            self.arena.clear();
            ops += 1;
        }
        self.teardown();
    }

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

    fn ctx(&mut self) -> (ur_context_handle_t, Option<usize>) {
        let t: Vec<(usize, bool)> = self.contexts.iter().map(|o| (o.h as usize, o.refs > 0)).collect();
        match self.pick_idx(&t) {
            Some(i) => (self.contexts[i].h, Some(i)),
            None => (null_mut(), None),
        }
    }

    fn queue(&mut self) -> (ur_queue_handle_t, Option<usize>) {
        let t: Vec<(usize, bool)> = self.queues.iter().map(|o| (o.h as usize, o.refs > 0)).collect();
        match self.pick_idx(&t) {
            Some(i) => (self.queues[i].h, Some(i)),
            None => (null_mut(), None),
        }
    }

    fn pool(&mut self) -> (ur_usm_pool_handle_t, Option<usize>) {
        let t: Vec<(usize, bool)> = self.pools.iter().map(|(o, _)| (o.h as usize, o.refs > 0)).collect();
        match self.pick_idx(&t) {
            Some(i) => (self.pools[i].0.h, Some(i)),
            None => (null_mut(), None),
        }
    }

    fn event(&mut self) -> (ur_event_handle_t, Option<usize>) {
        let t: Vec<(usize, bool)> = self.events.iter().map(|o| (o.h as usize, o.refs > 0)).collect();
        match self.pick_idx(&t) {
            Some(i) => (self.events[i].h, Some(i)),
            None => (null_mut(), None),
        }
    }

    fn device(&mut self) -> ur_device_handle_t {
        let b = self.r.u8() as usize;
        if b == 0xff {
            null_mut()
        } else {
            self.devices[b % self.devices.len()]
        }
    }

    /// A size from a few classes: zero, small, page-ish, granule edges, huge.
    fn size(&mut self) -> usize {
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
    fn chain(&mut self) -> *mut c_void {
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
    fn wait_list(&mut self) -> (u32, Vec<ur_event_handle_t>, bool) {
        let b = self.r.u8();
        let n = (b % 5) as usize;
        let mut list = Vec::new();
        for _ in 0..n {
            list.push(self.event().0);
        }
        (n as u32, list, b & 0x80 != 0)
    }

    fn out_event(&mut self) -> bool {
        self.r.u8() % 4 != 0
    }

    fn push_event(&mut self, ok: bool, want: bool, ev: ur_event_handle_t) {
        if ok && want {
            if ev.is_null() {
                finding!("an enqueue succeeded without writing its event");
            }
            self.events.push(Obj { h: ev, refs: 1 });
        }
    }

    /// Every live queue finished: no pending command still uses any block.
    fn quiesce(&mut self) {
        for i in 0..self.queues.len() {
            if self.queues[i].refs > 0 {
                let q = self.queues[i].h;
                let rc = code("urQueueFinish", unsafe { self.api.urQueueFinish(q) });
                if rc != UR_RESULT_SUCCESS {
                    finding!("urQueueFinish on a live queue: {:#x}", rc.0);
                }
            }
        }
    }

    /// A live block (or an offset into one) and how many bytes remain from there.
    fn block(&mut self) -> Option<(usize, usize)> {
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

    fn step(&mut self, op: u8) {
        match op % 24 {
            0 => self.op_context_create(false),
            1 => self.op_context_refs(),
            2 | 3 => self.op_queue_create(),
            4 => self.op_queue_refs(),
            5 => self.op_pool_create(),
            6 => self.op_pool_refs(),
            7 | 8 => self.op_sync_alloc(),
            9 => self.op_free(false),
            10 | 11 => self.op_async_alloc(),
            12 => self.op_free(true),
            13 | 14 => self.op_fill(),
            15 => self.op_copy(),
            16 => self.op_event_wait(),
            17 => self.op_event_refs(),
            18 => self.op_queue_sync(),
            19 => self.op_pool_info(),
            20 => self.op_alloc_info(),
            21 => self.op_trim(),
            22 => self.op_enqueue_wait(),
            _ => self.op_event_info(),
        }
    }

    fn op_context_create(&mut self, first: bool) {
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

    fn op_context_refs(&mut self) {
        let retain = self.r.bool();
        let (h, i) = self.ctx();
        if retain {
            let rc = code("urContextRetain", unsafe { self.api.urContextRetain(h) });
            if rc == UR_RESULT_SUCCESS {
                if let Some(i) = i.filter(|&i| self.contexts[i].refs > 0) {
                    self.contexts[i].refs += 1;
                }
            }
            return;
        }
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
            let live = self.contexts[i].refs > 0;
            if live && rc != UR_RESULT_SUCCESS {
                finding!("urContextRelease of a live context: {:#x}", rc.0);
            }
            if live {
                self.contexts[i].refs -= 1;
            }
        }
    }

    fn op_queue_create(&mut self) {
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

    fn op_queue_refs(&mut self) {
        let retain = self.r.bool();
        let (h, i) = self.queue();
        if retain {
            let rc = code("urQueueRetain", unsafe { self.api.urQueueRetain(h) });
            if rc == UR_RESULT_SUCCESS {
                if let Some(i) = i.filter(|&i| self.queues[i].refs > 0) {
                    self.queues[i].refs += 1;
                }
            }
            return;
        }
        if i.is_some_and(|i| self.queues[i].refs == 1) {
            // Finished while the model can still name it: nothing it ran stays pending.
            self.quiesce();
            self.orphan_unowned();
        }
        let rc = code("urQueueRelease", unsafe { self.api.urQueueRelease(h) });
        if let Some(i) = i.filter(|&i| self.queues[i].refs > 0) {
            if rc != UR_RESULT_SUCCESS {
                finding!("urQueueRelease of a live queue: {:#x}", rc.0);
            }
            self.queues[i].refs -= 1;
        }
    }

    fn op_pool_create(&mut self) {
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

    fn op_pool_refs(&mut self) {
        let retain = self.r.bool();
        let (h, i) = self.pool();
        if retain {
            let rc = code("urUSMPoolRetain", unsafe { self.api.urUSMPoolRetain(h) });
            if rc == UR_RESULT_SUCCESS {
                if let Some(i) = i.filter(|&i| self.pools[i].0.refs > 0) {
                    self.pools[i].0.refs = self.pools[i].0.refs.saturating_add(1);
                }
            }
            return;
        }
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

    fn op_sync_alloc(&mut self) {
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

    fn op_async_alloc(&mut self) {
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
        let (n, list, null_list) = self.wait_list();
        let plist = if null_list { null() } else { list.as_ptr() };
        let want = self.out_event();
        let mut ev = null_mut();
        let pev = if want { &mut ev as *mut _ } else { null_mut() };
        let mut p = null_mut();
        let rc = unsafe {
            match kind {
                0 => code("urEnqueueUSMDeviceAllocExp", self.api.urEnqueueUSMDeviceAllocExp(q, pool, size, pprops, n, plist, &mut p, pev)),
                1 => code("urEnqueueUSMSharedAllocExp", self.api.urEnqueueUSMSharedAllocExp(q, pool, size, pprops, n, plist, &mut p, pev)),
                _ => code("urEnqueueUSMHostAllocExp", self.api.urEnqueueUSMHostAllocExp(q, pool, size, pprops, n, plist, &mut p, pev)),
            }
        };
        self.push_event(rc == UR_RESULT_SUCCESS, want, ev);
        // The model does not track which context a queue serves: the block
        // is tied to every context (orphaned when any goes, see op_context_refs).
        let pi = if pool.is_null() { None } else { pi };
        self.record_alloc(rc, p, size, Some(usize::MAX), pi);
    }

    fn op_free(&mut self, enqueued: bool) {
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
            let (n, list, null_list) = self.wait_list();
            let plist = if null_list { null() } else { list.as_ptr() };
            let want = self.out_event();
            let mut ev = null_mut();
            let pev = if want { &mut ev as *mut _ } else { null_mut() };
            let rc = code("urEnqueueUSMFreeExp", unsafe {
                self.api.urEnqueueUSMFreeExp(q, pool, ptr as *mut c_void, n, plist, pev)
            });
            self.push_event(rc == UR_RESULT_SUCCESS, want, ev);
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

    fn op_fill(&mut self) {
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
        let (n, list, null_list) = self.wait_list();
        let plist = if null_list { null() } else { list.as_ptr() };
        let want = self.out_event();
        let mut ev = null_mut();
        let pev = if want { &mut ev as *mut _ } else { null_mut() };
        let pp = if self.r.u8() == 0xff { null() } else { self.pattern.as_ptr() as *const c_void };
        let rc = code("urEnqueueUSMFill", unsafe {
            self.api.urEnqueueUSMFill(q, ptr as *mut c_void, pattern_size, pp, size, n, plist, pev)
        });
        self.push_event(rc == UR_RESULT_SUCCESS, want, ev);
    }

    fn op_copy(&mut self) {
        let (q, _) = self.queue();
        let blocking = self.r.bool();
        let (dst, droom) = self.block().unwrap_or((0, 0));
        let (src, sroom) = self.block().unwrap_or((0, 0));
        let size = (self.r.u32() as usize) % (droom.min(sroom) + 1);
        let (n, list, null_list) = self.wait_list();
        let plist = if null_list { null() } else { list.as_ptr() };
        let want = self.out_event();
        let mut ev = null_mut();
        let pev = if want { &mut ev as *mut _ } else { null_mut() };
        let rc = code("urEnqueueUSMMemcpy", unsafe {
            self.api.urEnqueueUSMMemcpy(q, blocking, dst as *mut c_void, src as *const c_void, size, n, plist, pev)
        });
        self.push_event(rc == UR_RESULT_SUCCESS, want, ev);
    }

    fn op_event_wait(&mut self) {
        let (n, list, null_list) = self.wait_list();
        let plist = if null_list { null() } else { list.as_ptr() };
        code("urEventWait", unsafe { self.api.urEventWait(n, plist) });
    }

    fn op_event_refs(&mut self) {
        let retain = self.r.bool();
        let (h, i) = self.event();
        if retain {
            let rc = code("urEventRetain", unsafe { self.api.urEventRetain(h) });
            if rc == UR_RESULT_SUCCESS {
                if let Some(i) = i.filter(|&i| self.events[i].refs > 0) {
                    self.events[i].refs += 1;
                }
            }
            return;
        }
        let rc = code("urEventRelease", unsafe { self.api.urEventRelease(h) });
        if let Some(i) = i.filter(|&i| self.events[i].refs > 0) {
            if rc != UR_RESULT_SUCCESS {
                finding!("urEventRelease of a live event: {:#x}", rc.0);
            }
            self.events[i].refs -= 1;
        }
    }

    fn op_queue_sync(&mut self) {
        let finish = self.r.bool();
        let (q, _) = self.queue();
        if finish {
            code("urQueueFinish", unsafe { self.api.urQueueFinish(q) });
        } else {
            code("urQueueFlush", unsafe { self.api.urQueueFlush(q) });
        }
    }

    fn op_pool_info(&mut self) {
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

    fn op_alloc_info(&mut self) {
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

    fn op_trim(&mut self) {
        let (ctx, _) = self.ctx();
        let dev = self.device();
        let (pool, _) = self.pool();
        let keep = self.size();
        code("urUSMPoolTrimToExp", unsafe { self.api.urUSMPoolTrimToExp(ctx, dev, pool, keep) });
    }

    fn op_enqueue_wait(&mut self) {
        let barrier = self.r.bool();
        let (q, _) = self.queue();
        let (n, list, null_list) = self.wait_list();
        let plist = if null_list { null() } else { list.as_ptr() };
        let want = self.out_event();
        let mut ev = null_mut();
        let pev = if want { &mut ev as *mut _ } else { null_mut() };
        let rc = if barrier {
            code("urEnqueueEventsWaitWithBarrier", unsafe { self.api.urEnqueueEventsWaitWithBarrier(q, n, plist, pev) })
        } else {
            code("urEnqueueEventsWait", unsafe { self.api.urEnqueueEventsWait(q, n, plist, pev) })
        };
        self.push_event(rc == UR_RESULT_SUCCESS, want, ev);
    }

    fn op_event_info(&mut self) {
        let (ev, _) = self.event();
        let prop = ur_event_info_t((self.r.u8() % 8) as u32);
        let size = [0usize, 1, 4, 8, 32][self.r.u8() as usize % 5];
        let mut value = [0u64; 4];
        let mut ret = 0usize;
        code("urEventGetInfo", unsafe {
            self.api.urEventGetInfo(ev, prop, size, value.as_mut_ptr() as *mut c_void, &mut ret)
        });
        if prop == UR_EVENT_INFO_COMMAND_EXECUTION_STATUS && size >= 4 {
            let _ = self.r.u8();
        }
    }

    /// Finishes every queue, frees every live block, and gives back every
    /// reference the model holds; each of these must succeed.
    fn teardown(&mut self) {
        self.quiesce();
        let live_ctx = self.contexts.iter().position(|c| c.refs > 0);
        for i in 0..self.allocs.len() {
            if !self.allocs[i].live {
                continue;
            }
            let ci = self.allocs[i].ctx;
            let ctx = if ci < self.contexts.len() && self.contexts[ci].refs > 0 {
                self.contexts[ci].h
            } else if let Some(c) = live_ctx {
                self.contexts[c].h
            } else {
                null_mut()
            };
            let p = self.allocs[i].ptr as *mut c_void;
            // A block of another context may answer INVALID_MEM_POINTER here: free it through any queue
            // then; a leak would show as growth, not as a crash.
            let rc = code("urUSMFree", unsafe { self.api.urUSMFree(ctx, p) });
            if rc != UR_RESULT_SUCCESS {
                if let Some(q) = self.queues.iter().find(|q| q.refs > 0).map(|q| q.h) {
                    code("urEnqueueUSMFreeExp", unsafe { self.api.urEnqueueUSMFreeExp(q, null_mut(), p, 0, null(), null_mut()) });
                }
            }
            self.allocs[i].live = false;
        }
        self.quiesce();
        for e in &mut self.events {
            while e.refs > 0 {
                let rc = code("urEventRelease", unsafe { self.api.urEventRelease(e.h) });
                if rc != UR_RESULT_SUCCESS {
                    finding!("teardown: urEventRelease: {:#x}", rc.0);
                }
                e.refs -= 1;
            }
        }
        for q in &mut self.queues {
            while q.refs > 0 {
                let rc = code("urQueueRelease", unsafe { self.api.urQueueRelease(q.h) });
                if rc != UR_RESULT_SUCCESS {
                    finding!("teardown: urQueueRelease: {:#x}", rc.0);
                }
                q.refs -= 1;
            }
        }
        for (p, _) in &mut self.pools {
            while p.refs > 0 && p.refs < u32::MAX / 4 {
                let rc = code("urUSMPoolRelease", unsafe { self.api.urUSMPoolRelease(p.h) });
                if rc != UR_RESULT_SUCCESS {
                    finding!("teardown: urUSMPoolRelease: {:#x}", rc.0);
                }
                p.refs -= 1;
            }
        }
        for c in &mut self.contexts {
            while c.refs > 0 {
                let rc = code("urContextRelease", unsafe { self.api.urContextRelease(c.h) });
                if rc != UR_RESULT_SUCCESS {
                    finding!("teardown: urContextRelease: {:#x}", rc.0);
                }
                c.refs -= 1;
            }
        }
    }
}
