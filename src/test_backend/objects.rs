//! The test backend's platform, devices, contexts, queues, events and
//! pools. Each trait method records its call, then answers from memory.

use super::{record, TestBackend as B};
use crate::abi::*;
use crate::adapter::Adapter;
use crate::boundary::NativeOwnership;
use crate::engine::{self, PoolConfig, QueueOrder, Stamp, UsmKind};
use crate::hal::{Completion, Events, UsmCommand, UsmCopy, UsmCopy2D, UsmFill, UsmFill2D, UsmHint};
use crate::device::{Device, Platform, RawDevice, RawPlatform};
use crate::queue::object::{Enqueued, NativeQueue, Queue, RawQueue};
use crate::queue::{EngineCommand, Node, Waits};
use super::context::TContext;
use super::memory::{HostSlabs, TSlabOwner};
use crate::handle::{arc_of, handle_of};
use crate::info::InfoOut;
use crate::partition::PartitionRequest;
use crate::usm_pool::PoolBase;
use crate::UrResult;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The native handle of the one platform.
pub const NATIVE_PLATFORM: ur_native_handle_t = 0x9_1a7f;
/// Native handles of devices: this plus the device's index.
pub const NATIVE_DEVICE: ur_native_handle_t = 0xde_0000;
/// What every other object answers for its native handle.
pub const NATIVE_OBJECT: ur_native_handle_t = 0x0b_0000;
/// `UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE` of `dev0` and its halves; `dev1`
/// and its halves take twice as much, so that a context of both has a host
/// limit of its own (the least of its devices').
pub const MAX_ALLOC: u64 = 1 << 20;
/// A device's compute units: `EQUALLY(2)` splits it in two.
pub const COMPUTE_UNITS: u32 = 4;

pub type TPlatform = Platform<B>;
pub type TDevice = Device<B>;

/// The test platform's two root devices.
pub struct TPlatformRaw {
    pub devices: Vec<Arc<TDevice>>,
}

/// The platform, for the life of the process.
pub(super) fn platform() -> &'static TPlatform {
    static PLATFORM: OnceLock<Arc<TPlatform>> = OnceLock::new();
    PLATFORM.get_or_init(|| {
        let devices = (0..2).map(|i| new_device(format!("dev{i}"), true, MAX_ALLOC << i)).collect();
        Platform::new(TPlatformRaw { devices })
    })
}

impl RawPlatform<B> for TPlatformRaw {
    fn all(_: &Arc<Adapter>) -> UrResult<Vec<ur_platform_handle_t>> {
        record("platform.all", String::new());
        Ok(vec![handle_of(platform())])
    }
    fn info(_: &TPlatform, prop: ur_platform_info_t, out: InfoOut) -> UrResult {
        record("platform.info", format!("{prop:?}"));
        match prop {
            UR_PLATFORM_INFO_NAME => out.string("Test platform"),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }
    fn backend_option(_: &TPlatform, frontend: &str) -> Option<&'static CStr> {
        record("platform.backend_option", frontend.into());
        (frontend == "-O2").then_some(c"-opt2")
    }
    fn native_handle(_: &TPlatform) -> UrResult<ur_native_handle_t> {
        record("platform.native_handle", String::new());
        Ok(NATIVE_PLATFORM)
    }
}

/// A test device: its name and limit, and its halves once partitioned.
pub struct TDeviceRaw {
    /// `dev0`, `dev1`; a sub-device adds `.0`, `.1` to its parent's.
    pub name: String,
    root: bool,
    /// `UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE`.
    pub max_alloc: u64,
    /// The two halves of `EQUALLY(2)`, made on first request.
    halves: OnceLock<Vec<Arc<TDevice>>>,
}

fn new_device(name: String, root: bool, max_alloc: u64) -> Arc<TDevice> {
    Device::new(TDeviceRaw { name, root, max_alloc, halves: OnceLock::new() })
}

impl std::fmt::Debug for TDeviceRaw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl RawDevice<B> for TDeviceRaw {
    fn all(platform: &TPlatform, device_type: ur_device_type_t) -> UrResult<Vec<ur_device_handle_t>> {
        record("device.all", format!("{device_type:?}"));
        let cpu = [UR_DEVICE_TYPE_ALL, UR_DEVICE_TYPE_DEFAULT, UR_DEVICE_TYPE_CPU].contains(&device_type);
        Ok(platform.raw.devices.iter().filter(|_| cpu).map(|d| d.handle()).collect())
    }
    fn info(device: &TDevice, prop: ur_device_info_t, out: InfoOut) -> UrResult {
        record("device.info", format!("{device:?} {prop:?}"));
        match prop {
            UR_DEVICE_INFO_TYPE => out.value(UR_DEVICE_TYPE_CPU),
            UR_DEVICE_INFO_NAME => out.string(&device.raw.name),
            UR_DEVICE_INFO_MAX_MEM_ALLOC_SIZE => out.value(device.raw.max_alloc),
            _ => Err(UR_RESULT_ERROR_UNSUPPORTED_ENUMERATION),
        }
    }
    fn is_root(device: &TDevice) -> bool {
        device.raw.root
    }
    fn max_alloc_size(device: &TDevice) -> u64 {
        device.raw.max_alloc
    }
    fn binary_targets(_: &TDevice) -> &'static [&'static [u8]] {
        &[b"test_native", b"test_ir"]
    }
    fn global_timestamps(device: &TDevice) -> UrResult<(u64, u64)> {
        record("device.global_timestamps", format!("{device:?}"));
        Ok((111, 222))
    }
    fn partition<'a>(device: &'a TDevice, request: &PartitionRequest) -> UrResult<Vec<&'a TDevice>> {
        record("device.partition", format!("{device:?} {request:?}"));
        request.check_against(&[UR_DEVICE_PARTITION_EQUALLY], COMPUTE_UNITS, 2, 0)?;
        if *request != PartitionRequest::Equally(COMPUTE_UNITS / 2) {
            return Err(UR_RESULT_ERROR_DEVICE_PARTITION_FAILED);
        }
        let raw = &device.raw;
        let halves = raw.halves.get_or_init(|| (0..2).map(|i| new_device(format!("{}.{i}", raw.name), false, raw.max_alloc)).collect());
        Ok(halves.iter().map(|d| &**d).collect())
    }
    const PEER_ACCESS: bool = true;
    fn peer_info(device: &TDevice, peer: &TDevice, prop: ur_exp_peer_info_t) -> UrResult<i32> {
        record("device.peer_info", format!("{device:?} {peer:?} {prop:?}"));
        Ok(7)
    }
    fn set_peer_access(device: &TDevice, peer: &TDevice, enable: bool) -> UrResult {
        record("device.set_peer_access", format!("{device:?} {peer:?} {enable}"));
        Ok(())
    }
    fn native_handle(device: &TDevice) -> UrResult<ur_native_handle_t> {
        record("device.native_handle", format!("{device:?}"));
        let index = platform().raw.devices.iter().position(|d| std::ptr::eq(&**d, device));
        index.map(|i| NATIVE_DEVICE + i).ok_or(UR_RESULT_ERROR_UNSUPPORTED_FEATURE)
    }
    fn from_native(native: ur_native_handle_t, _: &Adapter) -> UrResult<ur_device_handle_t> {
        record("device.from_native", format!("{native:#x}"));
        let device = native.checked_sub(NATIVE_DEVICE).and_then(|i| platform().raw.devices.get(i));
        device.map(|d| d.handle()).ok_or(UR_RESULT_ERROR_INVALID_VALUE)
    }
}

/// What a context's backend offers; tests switch features off.
pub struct Settings {
    pub usm_2d: AtomicBool,
    pub pools: AtomicBool,
    pub async_alloc: AtomicBool,
    /// Every command's event ends in error (an `OUT_OF_RESOURCES` wait).
    pub fail_commands: AtomicBool,
    /// The next enqueue of an engine command fails (`OUT_OF_RESOURCES`).
    pub fail_next_recorded: AtomicBool,
    /// The next append of a command fails (`OUT_OF_RESOURCES`).
    pub fail_next_append: AtomicBool,
    /// Commands stay incomplete in the engine's graph (else they complete
    /// as they are appended), so that a test can see how they are ordered.
    pub hold_commands: AtomicBool,
}

/// A wait list as the backend received it.
fn waits(events: &Events<'_, B>) -> String {
    format!("waits={:?}", events.handles())
}

/// The test backend's queues: the core's queue object.
pub type TQueue = Queue<B>;

/// What a test backend queue keeps beside the core's part.
pub struct TQueueRaw {
    order: Mutex<()>,
}

fn new_queue(context: &TContext, device: &TDevice, flags: ur_queue_flags_t) -> Arc<TQueue> {
    let order = if flags & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 != 0 {
        QueueOrder::OutOfOrder
    } else {
        QueueOrder::InOrder
    };
    let lane = context.engine.dag().create_lane(order);
    Queue::new(arc_of(context), arc_of(device), flags, lane, TQueueRaw { order: Mutex::new(()) })
}

/// A complete event of a command of `queue`, when one is wanted: a node of
/// the engine's graph, complete at once (commands do not run).
pub(super) fn queue_event(queue: &TQueue, command: ur_command_t, want: bool) -> Option<Arc<TEvent>> {
    let stamp = want.then(|| Some(queue.context.engine.dag().record_completed(&queue.lane, &[])));
    event_of(queue, command, stamp)
}

/// Records a USM command as `method` heard it, and passes it through the
/// core's submission path: its append ("queue.append") names its node and
/// the waits it got. It completes at once, unless a test holds commands.
fn heard(queue: &TQueue, method: &'static str, command: UsmCommand<'_>, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
    record(method, format!("{command:?} {} {c:?}", waits(&events)));
    let barrier = matches!(command, UsmCommand::Wait { barrier: true });
    let settings = &queue.context.raw.settings;
    crate::queue::submit::submit(queue, barrier, events, |_order, waits, node| {
        let Node::Given { stamp, .. } = node else { unreachable!("every command is recorded") };
        let handles: Vec<_> = waits.raw.iter().map(|e| handle_of(*e)).collect();
        record("queue.append", format!("seq={} waits={handles:?}", stamp.seq));
        if settings.fail_next_append.swap(false, Relaxed) {
            return Err(UR_RESULT_ERROR_OUT_OF_RESOURCES);
        }
        if !settings.hold_commands.load(Relaxed) {
            queue.context.engine.dag().complete(stamp);
        }
        Ok(event_of(queue, command.command_type(), c.want_event.then_some(Some(stamp))))
    })
}

fn event_of(queue: &TQueue, command: ur_command_t, stamp: Option<Option<Stamp>>) -> Option<Arc<TEvent>> {
    let failed = queue.context.raw.settings.fail_commands.load(Relaxed);
    stamp.map(|stamp| new_event(Some(arc_of(queue)), queue.context.clone(), command, stamp, failed))
}

impl RawQueue<B> for TQueueRaw {
    fn create(context: &TContext, device: &TDevice, flags: ur_queue_flags_t) -> UrResult<Arc<TQueue>> {
        record("queue.create", format!("{device:?} flags={flags:#x}"));
        Ok(new_queue(context, device, flags))
    }
    fn is_empty(_: &TQueue) -> UrResult<bool> {
        record("queue.is_empty", String::new());
        Ok(true)
    }
    fn finish(_: &TQueue) -> UrResult {
        record("queue.finish", String::new());
        Ok(())
    }
    fn flush(_: &TQueue) -> UrResult {
        record("queue.flush", String::new());
        Ok(())
    }
    fn native_handle(_: &TQueue) -> UrResult<ur_native_handle_t> {
        record("queue.native_handle", String::new());
        Ok(NATIVE_OBJECT)
    }
    fn from_native(native: NativeQueue<'_, B>) -> UrResult<Arc<TQueue>> {
        let NativeQueue { handle: native, context, device, flags, ownership } = native;
        record("queue.from_native", format!("{native:#x} {device:?} flags={flags:#x} {ownership:?}"));
        Ok(new_queue(context, device.unwrap_or(&context.devices[0]), flags))
    }

    fn marker(queue: &TQueue, command: ur_command_t, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.marker", UsmCommand::Wait { barrier: command == UR_COMMAND_EVENTS_WAIT_WITH_BARRIER }, events, c)
    }
    fn fill(queue: &TQueue, fill: UsmFill<'_>, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.fill", UsmCommand::Fill(fill), events, c)
    }
    fn copy(queue: &TQueue, copy: UsmCopy, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.copy", UsmCommand::Copy(copy), events, c)
    }
    fn fill_2d(queue: &TQueue, fill: UsmFill2D<'_>, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.fill_2d", UsmCommand::Fill2D(fill), events, c)
    }
    fn copy_2d(queue: &TQueue, copy: UsmCopy2D, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.copy_2d", UsmCommand::Copy2D(copy), events, c)
    }
    fn prefetch(queue: &TQueue, hint: UsmHint, events: Events<'_, B>, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.prefetch", UsmCommand::Prefetch(hint), events, c)
    }
    fn advise(queue: &TQueue, hint: UsmHint, c: Completion) -> Enqueued<B> {
        heard(queue, "queue.advise", UsmCommand::Advise(hint), Events::none(), c)
    }
    fn async_alloc_supported(queue: &TQueue) -> bool {
        queue.context.raw.settings.async_alloc.load(Relaxed)
    }
    /// The wait list's events themselves; their nodes where they have one.
    type RawWait<'a> = &'a TEvent;
    fn wait_raw<'a>(_: &TQueue, event: &'a TEvent) -> UrResult<Option<&'a TEvent>> {
        Ok(Some(event))
    }
    type Order<'a> = MutexGuard<'a, ()>;
    fn order(queue: &TQueue) -> UrResult<MutexGuard<'_, ()>> {
        Ok(lock(&queue.raw.order))
    }
    /// Records the command; it completes at once, unless a test asked it
    /// to fail.
    fn enqueue_recorded(
        queue: &TQueue,
        _order: MutexGuard<'_, ()>,
        c: EngineCommand<'_>,
        waits: Waits<&TEvent>,
    ) -> UrResult<Option<Arc<TEvent>>> {
        let zero = c.zero.map_or(String::new(), |n| format!(" zero={n}"));
        let handles: Vec<_> = waits.raw.iter().map(|e| handle_of(*e)).collect();
        let args = format!("{:?} seq={}{zero} deps={} waits={handles:?} event={}", c.command, c.stamp.seq, c.deps.len(), c.want_event);
        record("queue.enqueue_recorded", args);
        if queue.context.raw.settings.fail_next_recorded.swap(false, Relaxed) {
            return Err(UR_RESULT_ERROR_OUT_OF_RESOURCES);
        }
        queue.context.engine.dag().complete(c.stamp);
        Ok(event_of(queue, c.command, c.want_event.then_some(Some(c.stamp))))
    }
    fn release(queue: &mut TQueue) {
        queue.context.engine.dag().retire_lane(&queue.lane);
    }
}

/// The test backend's events: the core's event object.
pub type TEvent = crate::event::Event<B>;

/// What a test may set on an event.
pub struct TSignal {
    /// Set by a test: the command ended in error.
    pub failed: AtomicBool,
}

/// A new event of `command`.
pub(super) fn new_event(
    queue: Option<Arc<TQueue>>,
    context: Arc<TContext>,
    command: ur_command_t,
    stamp: Option<Stamp>,
    failed: bool,
) -> Arc<TEvent> {
    TEvent::new(queue, context, command, stamp, TSignal { failed: AtomicBool::new(failed) })
}

impl crate::event::RawEvent<B> for TSignal {
    fn status(event: &TEvent) -> UrResult<ur_event_status_t> {
        record("event.status", String::new());
        Ok(if Self::failed(event) { UR_EVENT_STATUS_ERROR } else { UR_EVENT_STATUS_COMPLETE })
    }
    fn failed(event: &TEvent) -> bool {
        event.raw.failed.load(Relaxed)
    }
    /// Timestamps are `10 * prop` on a profiling queue.
    fn profiling(event: &TEvent, prop: ur_profiling_info_t) -> UrResult<u64> {
        record("event.profiling", format!("{prop:?}"));
        match &event.queue {
            Some(q) if q.flags & UR_QUEUE_FLAG_PROFILING_ENABLE.0 != 0 => Ok(10 * u64::from(prop.0)),
            _ => Err(UR_RESULT_ERROR_PROFILING_INFO_NOT_AVAILABLE),
        }
    }
    fn wait(event: &TEvent) -> UrResult {
        record("event.wait", format!("{:?}", handle_of(event)));
        if Self::failed(event) {
            Err(UR_RESULT_ERROR_OUT_OF_RESOURCES)
        } else {
            Ok(())
        }
    }
    /// Records the callback; it is never called (commands do not run).
    fn set_callback(_event: &TEvent, c: crate::event::EventCallback) -> UrResult {
        record("event.set_callback", format!("{:?} {:#x} {:?}", c.on, c.func as usize, c.user_data));
        Ok(())
    }
    fn native_handle(_event: &TEvent) -> UrResult<ur_native_handle_t> {
        record("event.native_handle", String::new());
        Ok(NATIVE_OBJECT)
    }
    fn from_native(native: ur_native_handle_t, context: &TContext, ownership: NativeOwnership) -> UrResult<Arc<TEvent>> {
        record("event.from_native", format!("{native:#x} {ownership:?}"));
        Ok(new_event(None, arc_of(context), UR_COMMAND_EVENTS_WAIT, None, false))
    }
}

/// The test backend's pools: the core's pool object.
pub type TPool = crate::pool::UsmPool<B>;

/// Nothing beside the pool's base.
pub struct TPoolRaw;

pub(super) fn new_pool(base: PoolBase<TContext, Arc<TDevice>>) -> Arc<TPool> {
    TPool::new(base, TPoolRaw)
}

/// The engine answers; the calls are recorded.
impl crate::pool::RawPool<B> for TPoolRaw {
    fn info(pool: &TPool, prop: ur_usm_pool_info_t) -> UrResult<usize> {
        record("pool.info", format!("{prop:?}"));
        pool.base.engine.info(prop)
    }
    fn set_info(pool: &TPool, prop: ur_usm_pool_info_t, value: usize) -> UrResult {
        record("pool.set_info", format!("{prop:?} {value}"));
        pool.base.engine.set_info(prop, value)
    }
    fn trim_to(pool: &TPool, keep: usize) {
        record("pool.trim_to", format!("{keep}"));
        pool.base.engine.trim_to(keep)
    }
    fn make_engine_pool(
        pool: &TPool,
        kind: UsmKind,
        context: Arc<TContext>,
        config: PoolConfig,
        device: Option<&Arc<TDevice>>,
    ) -> UrResult<Arc<engine::Pool>> {
        record("pool.make_engine_pool", format!("{kind:?} {device:?}"));
        let slabs = context.slabs.clone();
        Ok(TSlabOwner::new_engine_pool(context.engine.dag().clone(), config, &pool.me, kind, device, |owner| {
            Arc::new(HostSlabs { slabs, owner })
        }))
    }
}
