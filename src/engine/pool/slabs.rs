//! Fresh memory and giving it back: slab space never handed out, a new
//! slab (or range), and the release of idle slabs and granules above the
//! release threshold or a trim's target.

use super::{Inner, Release};
use crate::engine::backend::{MemorySource, OutOfMemory};
use crate::engine::config::PoolConfig;

impl Inner {
    /// Slab space never handed out, else a new slab.
    pub(super) fn fresh_memory(
        &mut self,
        source: &dyn MemorySource,
        config: &PoolConfig,
        need: usize,
        align: usize,
        dedicated: bool,
    ) -> Result<u32, OutOfMemory> {
        if !dedicated {
            if let Some(i) =
                self.heap
                    .fresh
                    .find(&self.heap.blocks, need, align, self.heap.granule, |_| true)
            {
                self.heap.unfile_ready(i);
                return self.carve_ready(source, i, need, align);
            }
        }
        self.grow(source, config, need, align, dedicated)
    }

    /// Takes a new slab (or, for a dedicated allocation, exactly its memory).
    /// Free slabs are given back first when the maximum size or the backend
    /// would refuse.
    fn grow(
        &mut self,
        source: &dyn MemorySource,
        config: &PoolConfig,
        need: usize,
        align: usize,
        dedicated: bool,
    ) -> Result<u32, OutOfMemory> {
        if !dedicated {
            if let Some(first) = source
                .virtual_memory()
                .and_then(|vm| self.reserve_range(vm, need, align))
            {
                return self.carve_ready(source, first, need, align);
            }
        }
        let granule = self.heap.granule;
        if self.stats.reserved_current.saturating_add(need) > self.max_size {
            let keep = self.max_size.saturating_sub(need);
            self.release_idle(source, keep);
            if self.stats.reserved_current.saturating_add(need) > self.max_size {
                return Err(OutOfMemory);
            }
        }
        let headroom = self.max_size - self.stats.reserved_current;
        let mut size = if dedicated {
            need
        } else {
            need.max(config.min_slab_size)
        };
        if size > headroom {
            size = need.max(headroom & !(granule - 1));
        }
        let slab_align = align.max(granule);
        let addr = match source.allocate(size, slab_align) {
            Ok(p) => p,
            Err(OutOfMemory) => {
                // Give back everything free and try again, then with the bare need.
                self.release_idle(source, 0);
                self.release_now(source);
                match source.allocate(size, slab_align) {
                    Ok(p) => p,
                    Err(_) if size > need => {
                        size = need;
                        source.allocate(size, slab_align)?
                    }
                    Err(e) => return Err(e),
                }
            }
        };
        let addr = addr.as_ptr() as usize;
        debug_assert_eq!(addr % slab_align, 0);
        let slab_block = self.heap.add_slab(addr, size, slab_align, dedicated);
        let s = self.heap.block(slab_block).slab as usize;
        if self.idle_listed.len() <= s {
            self.idle_listed.resize(s + 1, false);
        }
        self.stats.reserve(size);
        if dedicated {
            return Ok(slab_block);
        }
        self.carve_ready(source, slab_block, need, align)
    }

    /// Gives back what `to_release` holds now, under the pool lock: only
    /// where the backend refused memory and is about to be asked again.
    pub(super) fn release_now(&mut self, source: &dyn MemorySource) {
        for r in std::mem::take(&mut self.to_release) {
            // SAFETY: listed once by the pool, which forgot the memory (`Release`).
            unsafe { r.give(source) };
        }
    }

    pub(in crate::engine) fn apply_threshold(&mut self, source: &dyn MemorySource) {
        if self.stats.reserved_current > self.release_threshold {
            self.release_idle(source, self.release_threshold);
        }
    }

    /// Gives back wholly free slabs, then idle granules of ranges, while more
    /// than `keep` bytes are reserved.
    pub(in crate::engine) fn release_idle(&mut self, source: &dyn MemorySource, keep: usize) {
        while self.stats.reserved_current > keep {
            let Some(s) = self.idle.pop() else { break };
            self.idle_listed[s as usize] = false;
            if !self.slab_idle(s) {
                continue; // no longer wholly free; listed again when it is
            }
            let first = self.heap.slab_first(s);
            self.heap.unfile_ready(first);
            let (addr, size, align) = self.heap.remove_slab(first);
            self.stats.unreserve(size);
            self.to_release.push(Release::Slab { addr, size, align });
        }
        if self.ranges.is_empty() {
            return;
        }
        let Some(vm) = source.virtual_memory() else {
            return;
        };
        if self.stats.reserved_current > keep {
            self.decommit_idle(vm, self.stats.reserved_current - keep);
        }
    }
}
