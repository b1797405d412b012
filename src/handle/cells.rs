//! Handle cells: the memory a C handle points at, apart from its object.
//!
//! A cell is never given back to the allocator, so reading one through a
//! stale handle reads memory that is still ours. When its object is
//! dropped the cell is marked dead and waits in a FIFO quarantine; it is
//! handed out again only once [`QUARANTINE`] newer cells died after it.
//! Until then a stale handle reads as dead and is refused every time; after
//! it, a stale handle may name a newer object, of the same kind or another
//! (whose kind check then refuses it), but never freed memory.

use crate::abi::ur_dditable_t;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::sync::Mutex;

/// The kind word of a cell whose object released or dropped.
pub(crate) const DEAD: u32 = 0xdead_0000;

/// Dead cells that wait before a new object may take one (24-byte cells:
/// 96 KiB, small enough to stay in cache on the event hot path).
pub(crate) const QUARANTINE: usize = 1 << 12;

/// Cells allocated at a time.
const CHUNK: usize = 1024;

/// What a handle points at. The first word is the adapter's DDI table:
/// UR 0.12 loaders (ours and Intel's) read it to dispatch a call.
#[repr(C)]
pub struct HandleCell {
    pub(crate) ddi: AtomicPtr<ur_dditable_t>,
    /// The object's kind while the user holds a reference, else [`DEAD`].
    pub(crate) kind: AtomicU32,
    /// The object (its header is at offset 0); null once it is dropped.
    pub(crate) object: AtomicPtr<()>,
}

const _: () = assert!(core::mem::offset_of!(HandleCell, ddi) == 0);

impl HandleCell {
    fn mark_dead(&self) {
        self.kind.store(DEAD, Ordering::Release);
        self.object.store(std::ptr::null_mut(), Ordering::Release);
    }
}

/// Cells a thread moves to or from the arena at a time: each thread keeps
/// a magazine of fresh cells and a batch of dead ones, so the arena's lock
/// is taken once per `BATCH` handles. Handles are made on one thread and
/// their objects often dropped on another (a queue's worker), which would
/// otherwise contend for it on every event.
const BATCH: usize = 64;

struct Arena {
    /// Every chunk ever made: cells live as long as the process.
    chunks: Vec<Box<[HandleCell]>>,
    /// Cells of the newest chunk not handed out yet.
    unused_in_last: usize,
    quarantine: VecDeque<&'static HandleCell>,
}

static ARENA: Mutex<Arena> = Mutex::new(Arena { chunks: Vec::new(), unused_in_last: 0, quarantine: VecDeque::new() });

fn arena() -> std::sync::MutexGuard<'static, Arena> {
    ARENA.lock().unwrap_or_else(|e| e.into_inner())
}

impl Arena {
    /// A cell no live object has: the oldest dead one once enough died
    /// after it, else a new one.
    fn next(&mut self) -> &'static HandleCell {
        if self.quarantine.len() > QUARANTINE {
            return self.quarantine.pop_front().unwrap();
        }
        if self.unused_in_last == 0 {
            let chunk: Box<[HandleCell]> = (0..CHUNK)
                .map(|_| HandleCell {
                    ddi: AtomicPtr::new(std::ptr::null_mut()),
                    kind: AtomicU32::new(DEAD),
                    object: AtomicPtr::new(std::ptr::null_mut()),
                })
                .collect();
            self.chunks.push(chunk);
            self.unused_in_last = CHUNK;
        }
        self.unused_in_last -= 1;
        let cell: *const HandleCell = &self.chunks.last().unwrap()[CHUNK - 1 - self.unused_in_last];
        // SAFETY: chunks are boxed slices never dropped or moved out of (the
        // Vec moves the boxes, not the cells), so the cell lives for the
        // rest of the process.
        unsafe { &*cell }
    }
}

/// This thread's cells: `fresh` to hand out, `dead` to queue. Both go back
/// to the arena when the thread ends.
struct Local {
    fresh: Vec<&'static HandleCell>,
    dead: Vec<&'static HandleCell>,
}

impl Drop for Local {
    fn drop(&mut self) {
        let mut a = arena();
        a.quarantine.extend(self.dead.drain(..));
        // Never named: as good as the oldest dead ones.
        for cell in self.fresh.drain(..) {
            a.quarantine.push_front(cell);
        }
    }
}

thread_local! {
    static LOCAL: std::cell::RefCell<Local> = const { std::cell::RefCell::new(Local { fresh: Vec::new(), dead: Vec::new() }) };
}

/// A cell for a new handle to `object`, live with `kind`.
pub(crate) fn take(ddi: *const ur_dditable_t, kind: u32, object: *const ()) -> &'static HandleCell {
    let cell = LOCAL
        .try_with(|l| {
            let mut l = l.borrow_mut();
            if l.fresh.is_empty() {
                let mut a = arena();
                l.fresh.extend((0..BATCH).map(|_| a.next()));
            }
            l.fresh.pop().unwrap()
        })
        // The thread is ending: no magazine.
        .unwrap_or_else(|_| arena().next());
    cell.ddi.store(ddi as *mut _, Ordering::Relaxed);
    cell.object.store(object as *mut (), Ordering::Release);
    cell.kind.store(kind, Ordering::Release);
    cell
}

/// Marks `cell` dead for good (its object is gone) and queues it.
pub(crate) fn retire(cell: &'static HandleCell) {
    cell.mark_dead();
    let queued = LOCAL.try_with(|l| {
        let mut l = l.borrow_mut();
        l.dead.push(cell);
        if l.dead.len() >= BATCH {
            let batch = std::mem::take(&mut l.dead);
            arena().quarantine.extend(batch);
        }
    });
    if queued.is_err() {
        arena().quarantine.push_back(cell);
    }
}

/// Gives back a cell no handle was ever made from (a lost race).
pub(crate) fn unused(cell: &'static HandleCell) {
    cell.mark_dead();
    arena().quarantine.push_front(cell);
}
