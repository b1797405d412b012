//! A context: the core's [`Context`] over a [`ContextCu`]. The core's part
//! holds the devices (each GPU used through its primary CUDA context), the
//! USM allocations made in it, the engine, its slabs and the pools its
//! devices use by default; [`ContextCu`] keeps what only this adapter
//! needs: the engine pools of destroyed UR pools, whether commands are
//! recorded, the queue behind each lane, the host lane, and a primary
//! context the user handed over.

use crate::device::Device;
use crate::driver::{self, CuEvent};
use crate::memory::{self};
use crate::queue::Queue;
use crate::Cuda;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use ur_core::lock_order::{Mutex, Rank};
use ur_core::boundary::NativeOwnership;
use ur_core::context::RawContext;
use ur_core::engine::{self, Lane, Stamp};
use ur_core::handle::arc_of;
use ur_core::log;
use ur_core::*;

/// A context of this adapter: the core's, with [`ContextCu`] as its raw
/// part.
pub type Context = ur_core::context::Context<Cuda>;

/// What a context keeps beside the core's part.
pub struct ContextCu {
    /// Engine pools of destroyed UR pools that still have live blocks.
    kept_pools: Mutex<Vec<Arc<engine::Pool>>>,
    /// Set when an engine pool is first used: from then on every command is
    /// recorded in the engine's graph.
    tracking: AtomicBool,
    /// The lane blocking allocations from engine pools are made on: it
    /// stands for the host and runs no commands.
    host_lane: OnceLock<Arc<Lane>>,
    /// The GPU whose primary context the user handed over, owned, with
    /// `urContextCreateWithNativeHandle`: its reference goes back when
    /// this context does (in `Drop`, after the core's part has released
    /// the context's memory and run its deleter).
    owned_primary: Option<driver::CUdevice>,
}

/// A context over `devices`, each of whose primary contexts is made ready
/// first; `owned_primary`: the GPU whose primary context the user handed
/// over, owned, to release when the context goes.
pub fn new_context(
    devices: Vec<Arc<Device>>,
    owned_primary: Option<driver::CUdevice>,
) -> UrResult<Arc<Context>> {
    for d in &devices {
        d.raw.activate()?;
    }
    let raw = ContextCu {
        kept_pools: Mutex::new(Rank::EnginePools, Vec::new()),
        tracking: AtomicBool::new(false),
        host_lane: OnceLock::new(),
        owned_primary,
    };
    Ok(Context::new(devices, raw))
}

/// The index of `device` in `context`, or `INVALID_DEVICE`.
pub fn device_index(context: &Context, device: &Device) -> UrResult<usize> {
    context
        .devices
        .iter()
        .position(|d| std::ptr::eq(&**d, device))
        .ok_or(UR_RESULT_ERROR_INVALID_DEVICE)
}

/// The lane of `context`'s blocking allocations from engine pools, made
/// in its graph on first use.
pub fn host_lane(context: &Context) -> &Arc<Lane> {
    context
        .raw
        .host_lane
        .get_or_init(|| context.engine.dag().create_lane(engine::QueueOrder::InOrder))
}

/// A CUDA event whose completion implies command `s`'s, or `None` when it
/// has completed (or its queue is gone, which waited for it), for a
/// command `from` is submitting under its submit lock.
pub fn event_covering(context: &Context, s: Stamp, from: &Queue) -> Option<Arc<CuEvent>> {
    let queue = context.queue_of_lane(s.lane)?;
    if std::ptr::eq(&*queue, from) {
        return queue.raw.covering_own(s.seq);
    }
    queue.raw.event_covering(s.seq)
}

impl ContextCu {
    /// Whether commands are being recorded for the engine.
    #[inline]
    pub fn tracking(&self) -> bool {
        self.tracking.load(Ordering::Acquire)
    }

    /// Starts recording commands (before the first engine allocation).
    #[inline]
    pub fn start_tracking(&self) {
        // Read first: a store on every allocation would bounce the line
        // between the threads of a context.
        if !self.tracking() {
            self.tracking.store(true, Ordering::Release);
        }
    }

    /// Keeps the engine pool of a destroyed UR pool while blocks of it live.
    pub fn keep_pool(&self, pool: Arc<engine::Pool>) {
        let mut kept = self.kept_pools.lock();
        kept.retain(|p| p.live_blocks() > 0);
        kept.push(pool);
    }
}

impl RawContext<Cuda> for ContextCu {
    fn create(devices: &[&Device], _flags: ur_context_flags_t) -> UrResult<Arc<Context>> {
        new_context(devices.iter().map(|d| arc_of(*d)).collect(), None)
    }

    /// Pitched fills row by row, pitched copies with `cuMemcpy2DAsync`.
    fn usm_2d_supported(_: &Context) -> bool {
        true
    }

    /// The primary CUDA context of the first device.
    fn native_handle(context: &Context) -> UrResult<ur_native_handle_t> {
        Ok(context.devices[0].raw.activate()? as ur_native_handle_t)
    }

    /// `urContextCreateWithNativeHandle`: the adapter runs every GPU
    /// through its primary context, so a native context must be the
    /// primary context of one of `devices` (or, when none are named, of a
    /// GPU of the platform, which is then the context's one device); any
    /// other CUDA context is `UNSUPPORTED_FEATURE`. Owned, the user's
    /// reference of that primary context is released with this context;
    /// borrowed, nothing is.
    fn from_native(
        native: ur_native_handle_t,
        devices: &[&Device],
        ownership: NativeOwnership,
    ) -> UrResult<Arc<Context>> {
        let native = native as driver::CUcontext;
        let devices: Vec<Arc<Device>> = devices.iter().map(|d| arc_of(*d)).collect();
        let candidates: Vec<Arc<Device>> = if devices.is_empty() {
            crate::device::PlatformCu::get()
                .map(|p| p.raw.devices.clone())
                .unwrap_or_default()
        } else {
            devices.clone()
        };
        let mut owner = None;
        for d in &candidates {
            if d.raw.primary_context()? == native {
                owner = Some(d.clone());
                break;
            }
        }
        let owner = owner.ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)?;
        let devices = if devices.is_empty() {
            vec![owner.clone()]
        } else {
            devices
        };
        let owned = (ownership == NativeOwnership::Owned).then_some(owner.raw.cu);
        new_context(devices, owned)
    }

    /// The context's engine collects every pool, default ones included.
    fn collect_pools(context: &Context) {
        context.engine.collect_all();
    }

    /// What the user left allocated goes back once the devices are idle,
    /// and the engine lets go of its default pools; the core then clears
    /// the pool table and runs the deleter.
    fn release(context: &mut Context) {
        let leftover = context.usm.len();
        if leftover > 0 {
            log::warning(&format!(
                "context released with {leftover} USM allocation(s) still live; freeing them"
            ));
            for d in &context.devices {
                if d.raw.activate().is_ok() {
                    let _ = driver::ctx_synchronize();
                }
            }
            memory::free_all(&context.usm, &context.devices);
        }
        context.engine.release_default_pools();
    }
}

/// Runs as the core's context drops its raw part, its last field: after
/// the deleter, as the handed-over primary context went last before.
impl Drop for ContextCu {
    fn drop(&mut self) {
        if let Some(dev) = self.owned_primary {
            // The adapter keeps its own reference of every primary context,
            // so this one going leaves the context alive for the adapter.
            if let Err(e) = driver::primary_ctx_release(dev) {
                log::warning(&format!(
                    "releasing the primary context handed over with a native context failed: {}",
                    driver::error_name(e)
                ));
            }
        }
    }
}
