//! Ranges of the backend's virtual memory: committing the granules under
//! a block that goes into use (moving idle granules rather than raising
//! the reserved high-water mark), decommitting idle ones, reserving a new
//! range, and giving back the address space of empty ones.

use super::{Inner, Release, FIRST_RANGE, MAX_RANGE};
use crate::engine::allocator::align_up;
use crate::engine::backend::{MemorySource, OutOfMemory, VirtualMemory};
use crate::engine::vm::Commits;
use std::ptr::NonNull;

impl Inner {
    /// Puts committed memory under block `i` (of a range) that has just
    /// gone into use: its granules stop being idle, and those not committed
    /// are committed. When that would lift the reserved bytes above their
    /// high-water mark, idle granules elsewhere are decommitted first (the
    /// pool moves its memory rather than take more, so the mark rises only
    /// when no committed granule is idle); the maximum size is never
    /// passed. On error the block is unclaimed again (idle granules may
    /// have been given back meanwhile).
    pub(super) fn claim(&mut self, source: &dyn MemorySource, i: u32) -> Result<(), OutOfMemory> {
        let (addr, size, s) = {
            let b = self.heap.block(i);
            (b.addr, b.size, b.slab as usize)
        };
        let Some(c) = self.heap.slabs[s].vm.as_deref_mut() else {
            return Ok(());
        };
        c.claim(addr, size);
        let granule = c.granule();
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        c.uncommitted_runs(addr, size, |first, n| runs.push((first, n)));
        let need = runs.iter().map(|&(_, n)| n * granule).sum::<usize>();
        let done = if need == 0 {
            Ok(())
        } else {
            self.commit_runs(source, s, &runs, need)
        };
        self.runs = runs;
        if done.is_err() {
            if let Some(c) = self.heap.slabs[s].vm.as_deref_mut() {
                c.unclaim(addr, size);
            }
        }
        done
    }

    /// Commits the granule runs of range `s`, `need` bytes in all.
    fn commit_runs(
        &mut self,
        source: &dyn MemorySource,
        s: usize,
        runs: &[(usize, usize)],
        need: usize,
    ) -> Result<(), OutOfMemory> {
        let vm = source
            .virtual_memory()
            .expect("ranges come from the source's virtual memory");
        let cap = self.stats.reserved_high.min(self.max_size);
        if self.stats.reserved_current.saturating_add(need) > cap {
            self.move_idle(vm, self.stats.reserved_current + need - cap);
        }
        if self.stats.reserved_current.saturating_add(need) > self.max_size {
            self.release_idle(source, self.max_size.saturating_sub(need));
            if self.stats.reserved_current.saturating_add(need) > self.max_size {
                return Err(OutOfMemory);
            }
        }
        for (k, &(first, n)) in runs.iter().enumerate() {
            let c = self.heap.slabs[s].vm.as_deref().expect("a range");
            let (addr, len) = (c.addr_of(first), n * c.granule());
            // SAFETY: range addresses are never 0.
            let ptr = unsafe { NonNull::new_unchecked(addr as *mut u8) };
            // SAFETY (both): the run lies in range `s` and none of it is committed.
            let mut done = unsafe { vm.commit(ptr, len) };
            if done.is_err() {
                // Give back everything free and try once more. The claimed
                // block keeps its granules (and range `s`) from going.
                self.release_idle(source, 0);
                self.release_now(source);
                done = unsafe { vm.commit(ptr, len) };
            }
            if done.is_err() {
                for &(first, n) in &runs[..k] {
                    let c = self.heap.slabs[s].vm.as_deref_mut().expect("a range");
                    let (addr, len) = (c.addr_of(first), n * c.granule());
                    c.set_decommitted(first, n);
                    // SAFETY: committed just above, and not handed out yet.
                    unsafe { vm.decommit(NonNull::new_unchecked(addr as *mut u8), len) };
                    self.stats.unreserve(len);
                }
                return Err(OutOfMemory);
            }
            self.heap.slabs[s]
                .vm
                .as_deref_mut()
                .expect("a range")
                .set_committed(first, n);
            self.stats.reserve(len);
        }
        Ok(())
    }

    /// Makes room for `bytes` more committed bytes at the high-water mark:
    /// decommits the committed insides of the biggest free blocks first
    /// (best fit takes them last, and each goes in one call), then any idle
    /// granule. May give back more than `bytes`: the rest makes room for
    /// the commits that follow.
    fn move_idle(&mut self, vm: &dyn VirtualMemory, bytes: usize) {
        let mut given = 0;
        let mut biggest = std::mem::take(&mut self.scratch);
        biggest.clear();
        self.heap.ready.biggest(&self.heap.blocks, 8, &mut biggest);
        let mut runs = Vec::new();
        for &i in &biggest {
            if given >= bytes {
                break;
            }
            let b = *self.heap.block(i);
            let Some(c) = self.heap.slabs[b.slab as usize].vm.as_deref_mut() else {
                continue;
            };
            runs.clear();
            c.committed_runs_inside(b.addr, b.size, |first, n| runs.push((first, n)));
            for &(first, n) in &runs {
                let (addr, len) = (c.addr_of(first), n * c.granule());
                c.set_decommitted(first, n);
                // SAFETY: granules wholly inside a ready block are idle: committed, and no block in use touches them.
                unsafe { vm.decommit(NonNull::new_unchecked(addr as *mut u8), len) };
                self.stats.unreserve(len);
                given += len;
            }
        }
        biggest.clear();
        self.scratch = biggest;
        if given < bytes {
            self.decommit_idle(vm, bytes - given);
        }
    }

    /// Decommits idle granules, highest first in the newest ranges, until
    /// `bytes` are given back or none is idle.
    pub(super) fn decommit_idle(&mut self, vm: &dyn VirtualMemory, mut bytes: usize) {
        for k in (0..self.ranges.len()).rev() {
            let s = self.ranges[k] as usize;
            while bytes > 0 {
                let Some(c) = self.heap.slabs[s].vm.as_deref_mut() else {
                    break;
                };
                let granule = c.granule();
                let Some((first, n)) = c.highest_idle_run(bytes.div_ceil(granule)) else {
                    break;
                };
                let (addr, len) = (c.addr_of(first), n * granule);
                c.set_decommitted(first, n);
                // SAFETY: idle granules are committed and no block in use touches them.
                unsafe { vm.decommit(NonNull::new_unchecked(addr as *mut u8), len) };
                self.stats.unreserve(len);
                bytes = bytes.saturating_sub(len);
            }
        }
    }

    /// Reserves a new range that holds `need` bytes at `align`; `None` when
    /// the backend refuses (the pool then takes slabs).
    pub(super) fn reserve_range(&mut self, vm: &dyn VirtualMemory, need: usize, align: usize) -> Option<u32> {
        let granule = vm.granule();
        // Blocks are split at multiples of the pool's granule: the range base must be one.
        if !granule.is_power_of_two() || granule > 1 << 31 || granule < self.heap.granule {
            return None;
        }
        let want = need.checked_add(align.saturating_sub(granule))?;
        let size = align_up(want.max(self.next_range), granule)?;
        let addr = vm.reserve(size).ok()?.as_ptr() as usize;
        let first = self.heap.add_slab(addr, size, granule, false);
        let s = self.heap.block(first).slab as usize;
        self.heap.slabs[s].vm = Some(Box::new(Commits::new(addr, size, granule)));
        if self.idle_listed.len() <= s {
            self.idle_listed.resize(s + 1, false);
        }
        self.ranges.push(s as u32);
        self.next_range = self.next_range.saturating_mul(2).min(MAX_RANGE);
        Some(first)
    }

    /// Gives back the address space of ranges wholly free with nothing
    /// committed (at a trim: growing again reserves anew).
    pub(in crate::engine) fn release_empty_ranges(&mut self, source: &dyn MemorySource) {
        if source.virtual_memory().is_none() {
            return;
        }
        let mut k = 0;
        while k < self.ranges.len() {
            let s = self.ranges[k];
            let empty = self.heap.slabs[s as usize]
                .vm
                .as_deref()
                .is_some_and(|c| c.n_committed == 0);
            if !(empty && self.slab_idle(s)) {
                k += 1;
                continue;
            }
            self.ranges.remove(k);
            let first = self.heap.slab_first(s);
            self.heap.unfile_ready(first);
            let (addr, size, _) = self.heap.remove_slab(first);
            self.to_release.push(Release::Range { addr, size });
        }
        if self.ranges.is_empty() {
            self.next_range = FIRST_RANGE;
        }
    }
}
