//! Event pools and events. An event is a flag with a condition variable;
//! in a pool made with `ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP` it also keeps
//! the start and end, in device ticks, of the command that signalled it.

use crate::object::{lock, wait_for, Registry};
use level_zero_sys::*;
use std::sync::{Arc, Condvar, Mutex};

/// Bits of `ze_event_pool_flags_t` this driver knows: the 1.4 header's three
/// and KERNEL_MAPPED_TIMESTAMP (bit 3) of later headers, which asks for
/// timestamps in the host's time base; ours already are, so it is accepted.
pub const POOL_FLAGS: u32 = ZE_EVENT_POOL_FLAG_HOST_VISIBLE
    | ZE_EVENT_POOL_FLAG_IPC
    | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP
    | POOL_FLAG_KERNEL_MAPPED_TIMESTAMP;
pub const POOL_FLAG_KERNEL_MAPPED_TIMESTAMP: u32 = 1 << 3;

pub static POOLS: Registry<EventPool> = Registry::new();
pub static EVENTS: Registry<Event> = Registry::new();

pub struct EventPool {
    /// The context's handle, to refuse events of other contexts.
    pub context: usize,
    pub timestamps: bool,
    /// Which indices have a live event: one event per slot, as on hardware
    /// where the slot is the event's memory.
    slots: Mutex<Vec<bool>>,
}

impl EventPool {
    pub fn new(context: usize, flags: u32, count: u32) -> Self {
        let timestamps = flags & (ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | POOL_FLAG_KERNEL_MAPPED_TIMESTAMP) != 0;
        EventPool { context, timestamps, slots: Mutex::new(vec![false; count as usize]) }
    }
}

#[derive(Default)]
pub struct EventState {
    pub signaled: bool,
    /// Ticks at the start and end of the signalling command.
    pub start: u64,
    pub end: u64,
}

pub struct Event {
    pub pool: Arc<EventPool>,
    index: usize,
    pub state: Mutex<EventState>,
    cv: Condvar,
}

impl Event {
    /// Takes slot `index` of `pool`: a slot already taken or past the end
    /// is `ZE_RESULT_ERROR_INVALID_ARGUMENT`.
    pub fn create(pool: Arc<EventPool>, index: u32) -> Result<Arc<Event>, ze_result_t> {
        let index = index as usize;
        {
            let mut slots = lock(&pool.slots);
            match slots.get_mut(index) {
                Some(used @ false) => *used = true,
                _ => return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            }
        }
        Ok(Arc::new(Event { pool, index, state: Mutex::default(), cv: Condvar::new() }))
    }

    /// Gives the slot back; the event itself lives on while a command holds it.
    pub fn release_slot(&self) {
        if let Some(used) = lock(&self.pool.slots).get_mut(self.index) {
            *used = false;
        }
    }

    pub fn signal(&self, start: u64, end: u64) {
        let mut s = lock(&self.state);
        s.signaled = true;
        s.start = start;
        s.end = end;
        drop(s);
        self.cv.notify_all();
    }

    pub fn reset(&self) {
        *lock(&self.state) = EventState::default();
    }

    pub fn is_signaled(&self) -> bool {
        lock(&self.state).signaled
    }

    /// Waits for the signal; false when `timeout_ns` ran out first.
    pub fn wait(&self, timeout_ns: u64) -> bool {
        wait_for(&self.state, &self.cv, timeout_ns, |s| s.signaled)
    }

    /// (start, end) when signalled.
    pub fn timestamps(&self) -> Option<(u64, u64)> {
        let s = lock(&self.state);
        s.signaled.then_some((s.start, s.end))
    }
}
