//! One fuzz input decoded into a sequence of UR calls through the loader's C
//! ABI. The model below tracks which handles and blocks are live, so that
//! the harness itself never does what the C contract makes undefined
//! (writing through a freed pointer, freeing memory a pending command still
//! uses); everything else — released handles, null handles, bad sizes,
//! flags, enums, cyclic chains, wait lists — is fair game, and every call
//! must answer with a code the header names.
//!
//! Layout: this file holds the model, the decoding loop (`step`) and the
//! teardown; `draw.rs` draws call arguments from the input and the model
//! (handles, sizes, descriptor chains, wait lists, blocks), and the calls
//! themselves are grouped by what they exercise: `objects.rs` (contexts,
//! queues and pools: creation and references), `memory.rs` (USM
//! allocations, frees, fills, copies and pool queries) and `events.rs`
//! (events, waits and queue synchronisation).

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

impl<H> Obj<H> {
    /// After a retain of this object: one more reference, if it is live.
    fn retained(&mut self, rc: ur_result_t) {
        if rc == UR_RESULT_SUCCESS && self.refs > 0 {
            self.refs = self.refs.saturating_add(1);
        }
    }

    /// After `entry` released this object: a live one must have released
    /// (`what` names its kind in the finding), and has one reference less.
    fn released(&mut self, rc: ur_result_t, entry: &str, what: &str) {
        if self.refs > 0 {
            if rc != UR_RESULT_SUCCESS {
                finding!("{entry} of a live {what}: {:#x}", rc.0);
            }
            self.refs -= 1;
        }
    }
}

/// Teardown: gives back every reference the model holds of `objs` through
/// `release` (the entry point `entry`); each must succeed.
fn release_all<'o, H: Copy + 'o>(
    entry: &str,
    objs: impl Iterator<Item = &'o mut Obj<H>>,
    release: impl Fn(H) -> Result<ur_result_t, String>,
) {
    for o in objs {
        while o.refs > 0 {
            let rc = code(entry, release(o.h));
            if rc != UR_RESULT_SUCCESS {
                finding!("teardown: {entry}: {:#x}", rc.0);
            }
            o.refs -= 1;
        }
    }
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

// Declared after `finding!`, which they use.
mod draw;
mod events;
mod memory;
mod objects;

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

    /// After an enqueue with `tail`: a successful one asked for an event
    /// must have written it, and the model holds it.
    fn push_event(&mut self, rc: ur_result_t, tail: &draw::EnqueueTail) {
        if rc == UR_RESULT_SUCCESS && tail.want_event {
            if tail.event.is_null() {
                finding!("an enqueue succeeded without writing its event");
            }
            self.events.push(Obj { h: tail.event, refs: 1 });
        }
    }

    /// How every `op_*_refs` starts: draws a retain or a release, then the
    /// handle (`pick`). A retain is made here, through `retain` (the entry
    /// point `entry`), and counted on the model's object (`obj`) when the
    /// handle names one. A release is left to the caller, which knows what a
    /// last reference takes with it: the handle and its index come back.
    fn retain_or_release<H: Copy>(
        &mut self,
        pick: fn(&mut Self) -> (H, Option<usize>),
        entry: &str,
        retain: unsafe fn(&Api, H) -> Result<ur_result_t, String>,
        obj: fn(&mut Self, usize) -> &mut Obj<H>,
    ) -> Option<(H, Option<usize>)> {
        let retain_it = self.r.bool();
        let (h, i) = pick(self);
        if !retain_it {
            return Some((h, i));
        }
        let rc = code(entry, unsafe { retain(self.api, h) });
        if let Some(i) = i {
            obj(self, i).retained(rc);
        }
        None
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
        let api = self.api;
        release_all("urEventRelease", self.events.iter_mut(), |h| unsafe { api.urEventRelease(h) });
        release_all("urQueueRelease", self.queues.iter_mut(), |h| unsafe { api.urQueueRelease(h) });
        // Default pools (counted from u32::MAX / 4) are the context's to release.
        let user_pools = self.pools.iter_mut().map(|(p, _)| p).filter(|p| p.refs < u32::MAX / 4);
        release_all("urUSMPoolRelease", user_pools, |h| unsafe { api.urUSMPoolRelease(h) });
        release_all("urContextRelease", self.contexts.iter_mut(), |h| unsafe { api.urContextRelease(h) });
    }
}
