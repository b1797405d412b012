//! What every adapter's async-allocation entry points share, beside the
//! engine itself: reading pool descriptors (the `urUSMPoolCreateExp` and the
//! `urUSMPoolCreate` meaning of their limits), the argument rules of
//! `urUSMPoolGetInfoExp` / `urUSMPoolSetInfoExp`, and [`PoolSet`], the engine
//! pools behind one UR pool handle (one per USM kind, made on first use) with
//! the statistics, threshold and trimming that handle reports.
//!
//! See `spec/usm_async.md` for the behaviour this implements.

use crate::abi::*;
use crate::boundary::for_each_in_chain;
use crate::engine::{Pool, PoolConfig, UsmKind};
use crate::UrResult;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};

/// Which entry point made a pool: they read `ur_usm_pool_limits_desc_t`
/// differently.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PoolApi {
    /// `urUSMPoolCreate`: UR's documented meaning, `maxPoolableSize` is the
    /// largest allocation served from pooled slabs and `minDriverAllocSize`
    /// the least size of a backend allocation.
    Classic,
    /// `urUSMPoolCreateExp`, as Intel's libsycl fills it for SYCL's
    /// `memory_pool`: `maxPoolableSize` is the pool's maximum size (0: no
    /// limit) and `minDriverAllocSize` its initial release threshold.
    Exp,
}

/// A pool descriptor as read from C.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolDesc {
    pub flags: ur_usm_pool_flags_t,
    /// `(maxPoolableSize, minDriverAllocSize)` of a chained
    /// `ur_usm_pool_limits_desc_t`, when there is one.
    pub limits: Option<(usize, usize)>,
}

/// Reads `*desc` and its `pNext` chain: `INVALID_NULL_POINTER` for a null
/// descriptor, `INVALID_ENUMERATION` for an undefined flag. The descriptor's
/// own `stype` is not checked (libsycl passes 0 in some descriptors).
///
/// # Safety
/// `desc` is null or a valid `ur_usm_pool_desc_t` whose chain holds valid
/// UR descriptors.
pub unsafe fn read_pool_desc(desc: *const ur_usm_pool_desc_t) -> UrResult<PoolDesc> {
    let d = desc.as_ref().ok_or(UR_RESULT_ERROR_INVALID_NULL_POINTER)?;
    if d.flags & UR_USM_POOL_FLAGS_MASK != 0 {
        return Err(UR_RESULT_ERROR_INVALID_ENUMERATION);
    }
    let mut limits = None;
    for_each_in_chain(d.pNext, |stype, link| {
        if stype == UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC {
            // SAFETY: the stype says which descriptor this link is.
            let l = &*(link as *const ur_usm_pool_limits_desc_t);
            limits = Some((l.maxPoolableSize, l.minDriverAllocSize));
        }
        Ok(())
    })?;
    Ok(PoolDesc {
        flags: d.flags,
        limits,
    })
}

impl PoolDesc {
    pub fn zero_init(&self) -> bool {
        self.flags & UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0 != 0
    }

    /// The engine configuration of this pool's `kind` memory. User pools
    /// start with a release threshold of 0 unless an Exp descriptor names
    /// one. `USE_NATIVE_MEMORY_POOL_EXP` and `READ_ONLY_EXP` are recorded as
    /// hints; where the engine is the pool they change nothing.
    pub fn engine_config(&self, kind: UsmKind, api: PoolApi) -> PoolConfig {
        let mut c = PoolConfig::new(kind);
        c.zero_init = self.zero_init();
        c.native_pool = self.flags & UR_USM_POOL_FLAG_USE_NATIVE_MEMORY_POOL_EXP.0 != 0;
        c.read_only = self.flags & UR_USM_POOL_FLAG_READ_ONLY_EXP.0 != 0;
        c.release_threshold = 0;
        match (api, self.limits) {
            (_, None) => {}
            (PoolApi::Classic, Some((max_poolable, min_driver))) => {
                c.max_poolable_size = max_poolable;
                if min_driver != 0 {
                    c.min_slab_size = min_driver;
                }
            }
            (PoolApi::Exp, Some((max_size, threshold))) => {
                if max_size != 0 {
                    c.max_size = max_size;
                }
                c.release_threshold = threshold;
            }
        }
        c
    }
}

/// `INVALID_ENUMERATION` for a value no pool property has.
pub fn check_pool_prop(prop: ur_usm_pool_info_t) -> UrResult {
    let known = prop.0 <= UR_USM_POOL_INFO_CONTEXT.0
        || (UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP.0..=UR_USM_POOL_INFO_USED_HIGH_EXP.0)
            .contains(&prop.0);
    if known {
        Ok(())
    } else {
        Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
    }
}

/// The object queries belong to `urUSMPoolGetInfo`; the Exp get and set
/// answer `UNSUPPORTED_ENUMERATION` for them.
pub fn check_exp_prop(prop: ur_usm_pool_info_t) -> UrResult {
    check_pool_prop(prop)?;
    if prop == UR_USM_POOL_INFO_REFERENCE_COUNT || prop == UR_USM_POOL_INFO_CONTEXT {
        return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION);
    }
    Ok(())
}

/// Writes a `urUSMPoolGetInfoExp` answer: one `size_t`, into `value` (when
/// not null; the call has no size argument) and its size into `size_ret`.
///
/// # Safety
/// Each pointer is null or valid for a write of its type.
pub unsafe fn write_exp_info(
    value: *mut core::ffi::c_void,
    size_ret: *mut usize,
    answer: usize,
) -> UrResult {
    if value.is_null() && size_ret.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if !value.is_null() {
        (value as *mut usize).write_unaligned(answer);
    }
    if !size_ret.is_null() {
        size_ret.write(std::mem::size_of::<usize>());
    }
    Ok(())
}

/// Reads the `size_t` a `urUSMPoolSetInfoExp` call passes.
///
/// # Safety
/// `value` is null or valid for `size` bytes of reads.
pub unsafe fn read_set_info_value(value: *const core::ffi::c_void, size: usize) -> UrResult<usize> {
    if value.is_null() {
        return Err(UR_RESULT_ERROR_INVALID_NULL_POINTER);
    }
    if size != std::mem::size_of::<usize>() {
        return Err(UR_RESULT_ERROR_INVALID_SIZE);
    }
    Ok((value as *const usize).read_unaligned())
}

/// `INVALID_ENUMERATION` for flags of `ur_exp_async_usm_alloc_properties_t`
/// that do not exist (none is defined in UR 0.12).
///
/// # Safety
/// `props` is null or valid for reads.
#[inline]
pub unsafe fn check_async_alloc_properties(
    props: *const ur_exp_async_usm_alloc_properties_t,
) -> UrResult {
    match props.as_ref() {
        Some(p) if p.flags & UR_EXP_ASYNC_USM_ALLOC_FLAGS_MASK != 0 => {
            Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
        }
        _ => Ok(()),
    }
}

/// The command type of an async allocation of `kind`, as its event reports.
pub fn alloc_command(kind: UsmKind) -> ur_command_t {
    match kind {
        UsmKind::Device => UR_COMMAND_ENQUEUE_USM_DEVICE_ALLOC_EXP,
        UsmKind::Shared => UR_COMMAND_ENQUEUE_USM_SHARED_ALLOC_EXP,
        UsmKind::Host => UR_COMMAND_ENQUEUE_USM_HOST_ALLOC_EXP,
    }
}

fn kind_index(kind: UsmKind) -> usize {
    match kind {
        UsmKind::Host => 0,
        UsmKind::Device => 1,
        UsmKind::Shared => 2,
    }
}

/// The engine pools behind one UR pool handle: one per USM kind, made on
/// first use, reached without a lock once made; a handle serving several
/// devices keeps each device's device memory in an engine pool of its own
/// (a device slot). The handle's release threshold and maximum size apply
/// to each; statistics add up.
pub struct PoolSet {
    pools: [OnceLock<Arc<Pool>>; 3],
    /// Device memory by device, for a handle of several devices (empty
    /// otherwise; the device kind's entry of `pools` then stays unmade).
    device_slots: Box<[OnceLock<Arc<Pool>>]>,
    making: Mutex<()>,
    threshold: AtomicUsize,
    /// 0: no limit but the backend's.
    max_size: usize,
    /// Blocking allocations made with the handle outside the engine pools
    /// (the runtime's own, on OpenCL and Level Zero): bytes now and at the
    /// high-water mark. Their memory is reserved exactly while it is used.
    blocking: Mutex<(usize, usize)>,
}

impl PoolSet {
    /// A set whose pools start with `threshold` and never reserve more than
    /// `max_size` each (`usize::MAX`: unlimited).
    pub fn new(threshold: usize, max_size: usize) -> Self {
        PoolSet {
            pools: Default::default(),
            device_slots: Box::default(),
            making: Mutex::new(()),
            threshold: AtomicUsize::new(threshold),
            max_size,
            blocking: Mutex::new((0, 0)),
        }
    }

    /// A set following the configuration the descriptor gives.
    pub fn from_config(config: &PoolConfig) -> Self {
        Self::new(config.release_threshold, config.max_size)
    }

    /// The set with one device slot for each of `devices` devices (none
    /// for a handle of one device).
    pub fn with_device_slots(mut self, devices: usize) -> Self {
        self.device_slots = (0..devices).map(|_| OnceLock::new()).collect();
        self
    }

    /// Whether device memory is kept by device (see
    /// [`with_device_slots`](Self::with_device_slots)).
    pub fn has_device_slots(&self) -> bool {
        !self.device_slots.is_empty()
    }

    fn cell(&self, kind: UsmKind, slot: Option<usize>) -> Option<&OnceLock<Arc<Pool>>> {
        match slot {
            Some(i) if kind == UsmKind::Device && self.has_device_slots() => self.device_slots.get(i),
            _ => Some(&self.pools[kind_index(kind)]),
        }
    }

    /// The pool of `kind`, when made. A set with device slots has no single
    /// device pool: see [`get_in`](Self::get_in).
    #[inline]
    pub fn get(&self, kind: UsmKind) -> Option<&Arc<Pool>> {
        self.pools[kind_index(kind)].get()
    }

    /// The pool of `kind` of device slot `slot` (used only for device
    /// memory of a set with slots), when made.
    #[inline]
    pub fn get_in(&self, kind: UsmKind, slot: Option<usize>) -> Option<&Arc<Pool>> {
        self.cell(kind, slot)?.get()
    }

    /// The pool of `kind`, made by `make` on first use (it then takes the
    /// set's current threshold).
    pub fn get_or_make(
        &self,
        kind: UsmKind,
        make: impl FnOnce() -> UrResult<Arc<Pool>>,
    ) -> UrResult<&Arc<Pool>> {
        self.get_or_make_in(kind, None, make)
    }

    /// [`get_or_make`](Self::get_or_make) for device slot `slot`; a slot
    /// the set does not have is `INVALID_VALUE`.
    pub fn get_or_make_in(
        &self,
        kind: UsmKind,
        slot: Option<usize>,
        make: impl FnOnce() -> UrResult<Arc<Pool>>,
    ) -> UrResult<&Arc<Pool>> {
        let cell = self.cell(kind, slot).ok_or(UR_RESULT_ERROR_INVALID_VALUE)?;
        if let Some(p) = cell.get() {
            return Ok(p);
        }
        let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cell.get() {
            return Ok(p);
        }
        let pool = make()?;
        pool.set_release_threshold(self.threshold.load(Acquire));
        Ok(cell.get_or_init(|| pool))
    }

    /// The pools made so far.
    pub fn made(&self) -> impl Iterator<Item = &Arc<Pool>> {
        self.pools.iter().chain(self.device_slots.iter()).filter_map(OnceLock::get)
    }

    /// Whether `pool` is one of this set's.
    pub fn holds(&self, pool: &Pool) -> bool {
        self.made().any(|p| std::ptr::eq(&**p, pool))
    }

    pub fn release_threshold(&self) -> usize {
        self.threshold.load(Acquire)
    }

    /// `UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP`: 0 when only the backend limits it.
    pub fn maximum_size(&self) -> usize {
        if self.max_size == usize::MAX {
            0
        } else {
            self.max_size
        }
    }

    /// The answer to `urUSMPoolGetInfoExp` (and the Exp properties of
    /// `urUSMPoolGetInfo`) for `prop`.
    pub fn info(&self, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        check_exp_prop(prop)?;
        Ok(match prop {
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => self.release_threshold(),
            UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP => self.maximum_size(),
            _ => {
                let engine = self.made().try_fold(0usize, |sum, p| Ok::<_, ur_result_t>(sum.saturating_add(p.info(prop)?)))?;
                let (now, high) = *self.blocking.lock().unwrap_or_else(|e| e.into_inner());
                match prop {
                    UR_USM_POOL_INFO_RESERVED_CURRENT_EXP | UR_USM_POOL_INFO_USED_CURRENT_EXP => engine.saturating_add(now),
                    _ => engine.saturating_add(high),
                }
            }
        })
    }

    /// A blocking allocation (`bytes` > 0) or free (< 0) made with the
    /// handle outside the engine pools, counted in its statistics.
    pub fn account_blocking(&self, bytes: isize) {
        let mut b = self.blocking.lock().unwrap_or_else(|e| e.into_inner());
        b.0 = b.0.saturating_add_signed(bytes);
        b.1 = b.1.max(b.0);
    }

    /// `urUSMPoolSetInfoExp`: a new release threshold (applied at once to
    /// what is free and complete), or 0 written to a high-water mark, which
    /// restarts it from the current value. Everything else is read-only.
    pub fn set_info(&self, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        check_exp_prop(prop)?;
        match prop {
            UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP => {
                let _making = self.making.lock().unwrap_or_else(|e| e.into_inner());
                self.threshold.store(value, Release);
                self.made().for_each(|p| p.set_release_threshold(value));
            }
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP | UR_USM_POOL_INFO_USED_HIGH_EXP if value != 0 => {
                return Err(UR_RESULT_ERROR_INVALID_VALUE)
            }
            UR_USM_POOL_INFO_RESERVED_HIGH_EXP => self.made().for_each(|p| p.reset_reserved_high()),
            UR_USM_POOL_INFO_USED_HIGH_EXP => self.made().for_each(|p| p.reset_used_high()),
            _ => return Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
        if prop != UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP {
            let mut b = self.blocking.lock().unwrap_or_else(|e| e.into_inner());
            b.1 = b.0;
        }
        Ok(())
    }

    /// `urUSMPoolTrimToExp`: gives free memory back until at most `keep`
    /// bytes stay reserved over the whole set (memory in use stays).
    pub fn trim_to(&self, keep: usize) {
        let mut left = keep;
        for p in self.made() {
            p.collect();
            let reserved = p.stats().reserved_current;
            let mine = left.min(reserved);
            p.trim_to(mine);
            left -= p.stats().reserved_current.min(left);
        }
    }

    /// A host synchronisation point: completed frees become reusable and
    /// memory above the threshold goes back.
    pub fn collect(&self) {
        self.made().for_each(|p| p.collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Dag, HostMemory, QueueOrder};

    fn desc(flags: u32, limits: Option<&ur_usm_pool_limits_desc_t>) -> ur_usm_pool_desc_t {
        ur_usm_pool_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_DESC,
            pNext: limits.map_or(std::ptr::null(), |l| l as *const _ as *const _),
            flags,
        }
    }

    fn limits(max_poolable: usize, min_driver: usize) -> ur_usm_pool_limits_desc_t {
        ur_usm_pool_limits_desc_t {
            stype: UR_STRUCTURE_TYPE_USM_POOL_LIMITS_DESC,
            pNext: std::ptr::null(),
            maxPoolableSize: max_poolable,
            minDriverAllocSize: min_driver,
        }
    }

    #[test]
    fn exp_and_classic_pools_read_the_limits_differently() {
        let l = limits(4 << 20, 1 << 20);
        let d =
            unsafe { read_pool_desc(&desc(UR_USM_POOL_FLAG_ZERO_INITIALIZE_BLOCK.0, Some(&l))) }
                .unwrap();
        let exp = d.engine_config(UsmKind::Device, PoolApi::Exp);
        assert_eq!(
            (exp.max_size, exp.release_threshold, exp.max_poolable_size),
            (4 << 20, 1 << 20, usize::MAX)
        );
        assert!(exp.zero_init);
        let classic = d.engine_config(UsmKind::Device, PoolApi::Classic);
        assert_eq!(
            (classic.max_poolable_size, classic.min_slab_size),
            (4 << 20, 1 << 20)
        );
        assert_eq!(
            (classic.max_size, classic.release_threshold),
            (usize::MAX, 0)
        );
        // libsycl's "unset": zeros mean no limit and threshold 0.
        let unset = unsafe { read_pool_desc(&desc(0, Some(&limits(0, 0)))) }.unwrap();
        let c = unset.engine_config(UsmKind::Device, PoolApi::Exp);
        assert_eq!((c.max_size, c.release_threshold), (usize::MAX, 0));
    }

    #[test]
    fn descriptor_errors() {
        assert_eq!(
            unsafe { read_pool_desc(std::ptr::null()) },
            Err(UR_RESULT_ERROR_INVALID_NULL_POINTER)
        );
        assert_eq!(
            unsafe { read_pool_desc(&desc(1 << 3, None)) },
            Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
        );
        assert_eq!(
            check_pool_prop(ur_usm_pool_info_t(2)),
            Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
        );
        assert_eq!(
            check_pool_prop(ur_usm_pool_info_t(0x2056)),
            Err(UR_RESULT_ERROR_INVALID_ENUMERATION)
        );
        assert_eq!(
            check_exp_prop(UR_USM_POOL_INFO_CONTEXT),
            Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
        );
        assert_eq!(
            unsafe { read_set_info_value(&7usize as *const usize as *const _, 4) },
            Err(UR_RESULT_ERROR_INVALID_SIZE)
        );
    }

    #[test]
    fn a_set_adds_up_its_pools_and_shares_its_threshold() {
        let dag = Dag::new();
        let set = PoolSet::new(0, usize::MAX);
        let make = |kind| {
            let mut c = PoolConfig::new(kind);
            c.min_slab_size = 64 << 10;
            Ok(Arc::new(Pool::new(
                dag.clone(),
                Arc::new(HostMemory::new()),
                c,
            )))
        };
        let q = dag.create_lane(QueueOrder::InOrder);
        let a = set
            .get_or_make(UsmKind::Device, || make(UsmKind::Device))
            .unwrap()
            .alloc(&q, &[], 1000, 0, false);
        let b = set
            .get_or_make(UsmKind::Host, || make(UsmKind::Host))
            .unwrap()
            .alloc(&q, &[], 3000, 0, false);
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(
            set.info(UR_USM_POOL_INFO_USED_CURRENT_EXP),
            Ok(a.size + b.size)
        );
        assert_eq!(
            set.info(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP),
            Ok(128 << 10)
        );
        assert_eq!(set.info(UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP), Ok(0));
        set.set_info(UR_USM_POOL_INFO_RELEASE_THRESHOLD_EXP, 1 << 20)
            .unwrap();
        let shared = set
            .get_or_make(UsmKind::Shared, || make(UsmKind::Shared))
            .unwrap();
        assert_eq!(
            shared.release_threshold(),
            1 << 20,
            "a pool made later takes the set's threshold"
        );
        assert_eq!(
            set.set_info(UR_USM_POOL_INFO_MAXIMUM_SIZE_EXP, 1),
            Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
        );
        assert_eq!(
            set.set_info(UR_USM_POOL_INFO_USED_HIGH_EXP, 1),
            Err(UR_RESULT_ERROR_INVALID_VALUE)
        );
        set.get(UsmKind::Device)
            .unwrap()
            .free(&q, &[], a.ptr.as_ptr(), false)
            .unwrap();
        set.get(UsmKind::Host)
            .unwrap()
            .free(&q, &[], b.ptr.as_ptr(), false)
            .unwrap();
        set.trim_to(64 << 10);
        assert_eq!(
            set.info(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP),
            Ok(64 << 10)
        );
        set.trim_to(0);
        assert_eq!(set.info(UR_USM_POOL_INFO_RESERVED_CURRENT_EXP), Ok(0));
        assert_eq!(
            set.info(UR_USM_POOL_INFO_USED_HIGH_EXP),
            Ok(a.size + b.size)
        );
        set.set_info(UR_USM_POOL_INFO_USED_HIGH_EXP, 0).unwrap();
        assert_eq!(set.info(UR_USM_POOL_INFO_USED_HIGH_EXP), Ok(0));
    }
}
