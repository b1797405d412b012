//! What the engine needs from a backend: raw memory, in slabs, and where
//! the backend has virtual memory, address ranges committed granule by
//! granule.

use crate::abi::*;
use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use crate::lock_order::{Mutex, MutexGuard, Rank};

/// The backend has no memory left for this request.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OutOfMemory;

/// The USM kind a pool serves; it picks the out-of-memory code.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UsmKind {
    Host,
    Device,
    Shared,
}

impl UsmKind {
    pub fn to_ur(self) -> ur_usm_type_t {
        match self {
            UsmKind::Host => UR_USM_TYPE_HOST,
            UsmKind::Device => UR_USM_TYPE_DEVICE,
            UsmKind::Shared => UR_USM_TYPE_SHARED,
        }
    }

    /// The UR code for running out of this kind of memory.
    pub fn out_of_memory(self) -> ur_result_t {
        match self {
            UsmKind::Host => UR_RESULT_ERROR_OUT_OF_HOST_MEMORY,
            UsmKind::Device | UsmKind::Shared => UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
        }
    }
}

/// Raw memory of one (context, device, USM kind), implemented by an adapter.
/// The engine may call it with its pool lock held (`allocate`, and `release`
/// when the backend has just refused memory; other releases come after the
/// lock, see `LOCKING.md`), so it must not call back into the same pool.
pub trait MemorySource: Send + Sync {
    /// Takes `size` bytes aligned to `align` (a power of two) from the backend.
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory>;

    /// Gives back memory taken with [`allocate`](Self::allocate).
    ///
    /// # Safety
    /// `(ptr, size, align)` came from one `allocate` call and is released once.
    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize);

    /// The backend's virtual memory, when it has some: pools then reserve
    /// address ranges and commit them granule by granule as they grow,
    /// rather than taking slabs. `allocate` still serves allocations above
    /// the pool's poolable size, and pools fall back to it when a range
    /// cannot be reserved.
    fn virtual_memory(&self) -> Option<&dyn VirtualMemory> {
        None
    }
}

/// Address space reserved without memory, and memory committed into it.
/// `reserve`, `commit` and `decommit` are called with the pool lock held;
/// `unreserve` after it (`LOCKING.md`).
pub trait VirtualMemory: Send + Sync {
    /// The commit unit, a power of two: every address and length passed to
    /// `commit` and `decommit` is a multiple of it.
    fn granule(&self) -> usize;

    /// Reserves `size` bytes of address space (a multiple of the granule),
    /// aligned to the granule, with no memory behind it.
    fn reserve(&self, size: usize) -> Result<NonNull<u8>, OutOfMemory>;

    /// Puts memory behind `[addr, addr + len)`. On error nothing in the
    /// range is committed.
    ///
    /// # Safety
    /// The range lies in one reservation and none of it is committed.
    unsafe fn commit(&self, addr: NonNull<u8>, len: usize) -> Result<(), OutOfMemory>;

    /// Gives the memory behind `[addr, addr + len)` back; the addresses stay
    /// reserved, and what was stored there is lost.
    ///
    /// # Safety
    /// The range lies in one reservation, all of it is committed (by one or
    /// more `commit` calls, each wholly inside it) and nothing uses it.
    unsafe fn decommit(&self, addr: NonNull<u8>, len: usize);

    /// Gives back a reservation, none of which is committed.
    ///
    /// # Safety
    /// `(addr, size)` came from one `reserve` call and is given back once.
    unsafe fn unreserve(&self, addr: NonNull<u8>, size: usize);
}

/// Host memory from the global allocator, with an optional budget past which
/// it reports out of memory (to bound a context, and to test that path).
/// Made [`with_virtual_memory`](Self::with_virtual_memory), it also reserves
/// address ranges (`mmap` with no access), commits granules (their first
/// commit gives them read and write access with `mprotect`) and gives them
/// back with `madvise(MADV_DONTNEED)`.
pub struct HostMemory {
    budget: usize,
    taken: AtomicUsize,
    /// The commit granule when ranges are offered; 0 when they are not.
    granule: usize,
    /// Each reservation as `(base, size, accessible end)`: below that end
    /// the range has read and write access (committed or not).
    ranges: Mutex<Vec<(usize, usize, usize)>>,
}

impl HostMemory {
    pub fn new() -> Self {
        Self::with_budget(usize::MAX)
    }

    pub fn with_budget(budget: usize) -> Self {
        HostMemory {
            budget,
            taken: AtomicUsize::new(0),
            granule: 0,
            ranges: Mutex::new(Rank::Leaf, Vec::new()),
        }
    }

    /// Host memory that also offers virtual memory committed in `granule`
    /// bytes (rounded up to a power of two and to the page size), within
    /// `budget` bytes taken in all.
    pub fn with_virtual_memory(granule: usize, budget: usize) -> Self {
        HostMemory {
            budget,
            taken: AtomicUsize::new(0),
            granule: granule.max(page_size()).next_power_of_two(),
            ranges: Mutex::new(Rank::Leaf, Vec::new()),
        }
    }

    /// Bytes currently taken: from the global allocator, and committed.
    pub fn taken(&self) -> usize {
        self.taken.load(Acquire)
    }

    /// Counts `bytes` more as taken, within the budget.
    fn take(&self, bytes: usize) -> Result<(), OutOfMemory> {
        let mut taken = self.taken.load(Relaxed);
        loop {
            let next = taken
                .checked_add(bytes)
                .filter(|&n| n <= self.budget)
                .ok_or(OutOfMemory)?;
            match self
                .taken
                .compare_exchange_weak(taken, next, AcqRel, Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(now) => taken = now,
            }
        }
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if page > 0 {
        page as usize
    } else {
        4096
    }
}

impl Default for HostMemory {
    fn default() -> Self {
        Self::new()
    }
}

impl MemorySource for HostMemory {
    fn allocate(&self, size: usize, align: usize) -> Result<NonNull<u8>, OutOfMemory> {
        let layout = Layout::from_size_align(size.max(1), align).map_err(|_| OutOfMemory)?;
        self.take(layout.size())?;
        // SAFETY: the layout has a non-zero size.
        match NonNull::new(unsafe { std::alloc::alloc(layout) }) {
            Some(p) => Ok(p),
            None => {
                self.taken.fetch_sub(layout.size(), AcqRel);
                Err(OutOfMemory)
            }
        }
    }

    unsafe fn release(&self, ptr: NonNull<u8>, size: usize, align: usize) {
        let layout = Layout::from_size_align_unchecked(size.max(1), align);
        self.taken.fetch_sub(layout.size(), AcqRel);
        // SAFETY: the caller passes back exactly what `allocate` returned, with its layout.
        std::alloc::dealloc(ptr.as_ptr(), layout);
    }

    fn virtual_memory(&self) -> Option<&dyn VirtualMemory> {
        (self.granule != 0).then_some(self)
    }
}

impl VirtualMemory for HostMemory {
    fn granule(&self) -> usize {
        self.granule
    }

    fn reserve(&self, size: usize) -> Result<NonNull<u8>, OutOfMemory> {
        // mmap aligns to pages only: reserve a granule more and cut the ends off.
        let whole = size.checked_add(self.granule).ok_or(OutOfMemory)?;
        // SAFETY: a new private mapping with no access; nothing else is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                whole,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(OutOfMemory);
        }
        let start = p as usize;
        let base = (start + self.granule - 1) & !(self.granule - 1);
        let (head, tail) = (base - start, start + whole - (base + size));
        // SAFETY: both pieces lie in the mapping just made, outside [base, base + size).
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((base + size) as *mut libc::c_void, tail);
            }
        }
        let base = NonNull::new(base as *mut u8).ok_or(OutOfMemory)?;
        self.lock_ranges().push((base.as_ptr() as usize, size, base.as_ptr() as usize));
        Ok(base)
    }

    unsafe fn commit(&self, addr: NonNull<u8>, len: usize) -> Result<(), OutOfMemory> {
        self.take(len)?;
        let (start, end) = (addr.as_ptr() as usize, addr.as_ptr() as usize + len);
        let mut ranges = self.lock_ranges();
        let Some(range) = ranges.iter_mut().find(|r| start >= r.0 && end <= r.0 + r.1) else {
            drop(ranges);
            self.taken.fetch_sub(len, AcqRel);
            return Err(OutOfMemory);
        };
        // Access grows with the highest granule ever committed: decommitted
        // granules keep theirs (see `decommit`), so committing them again
        // is bookkeeping only. The kernel charges what gains write access
        // to its commit limit (the reservation had none, so it was not
        // charged): a refusal is out of memory.
        if end > range.2 {
            // SAFETY: [range.2, end) lies in this reservation of ours.
            if libc::mprotect(range.2 as *mut libc::c_void, end - range.2, libc::PROT_READ | libc::PROT_WRITE) != 0 {
                drop(ranges);
                self.taken.fetch_sub(len, AcqRel);
                return Err(OutOfMemory);
            }
            range.2 = end;
        }
        Ok(())
    }

    unsafe fn decommit(&self, addr: NonNull<u8>, len: usize) {
        // SAFETY: the range is committed memory of ours that nothing uses.
        // MADV_DONTNEED gives the pages back at once (they read as zeros
        // after). The range keeps its access: taking it away too (mprotect)
        // doubled the cost of moving granules (ur_bench scenario 5), and
        // would split the mapping at every boundary between committed and
        // decommitted granules, towards the kernel's limit on mappings per
        // process, past which mprotect fails.
        libc::madvise(addr.as_ptr().cast(), len, libc::MADV_DONTNEED);
        self.taken.fetch_sub(len, AcqRel);
    }

    unsafe fn unreserve(&self, addr: NonNull<u8>, size: usize) {
        self.lock_ranges().retain(|r| r.0 != addr.as_ptr() as usize);
        // SAFETY: one reservation of ours, given back once.
        libc::munmap(addr.as_ptr().cast(), size);
    }
}

impl HostMemory {
    fn lock_ranges(&self) -> MutexGuard<'_, Vec<(usize, usize, usize)>> {
        // Every update leaves the list consistent before it could panic.
        self.ranges.lock()
    }
}
