//! Events and synchronisation: host waits, event references and queries,
//! enqueued waits and barriers, queue finish and flush.

use super::{code, Seq};
use std::ffi::c_void;
use std::ptr::null;
use ur_conformance::ur::Api;
use ur_core::abi::*;

impl<'a> Seq<'a> {
    pub(super) fn op_event_wait(&mut self) {
        let (n, list, null_list) = self.wait_list();
        let plist = if null_list { null() } else { list.as_ptr() };
        code("urEventWait", unsafe { self.api.urEventWait(n, plist) });
    }

    pub(super) fn op_event_refs(&mut self) {
        let to_release = self.retain_or_release(Self::event, "urEventRetain", Api::urEventRetain, |s, i| &mut s.events[i]);
        let Some((h, i)) = to_release else { return };
        let rc = code("urEventRelease", unsafe { self.api.urEventRelease(h) });
        if let Some(i) = i {
            self.events[i].released(rc, "urEventRelease", "event");
        }
    }

    pub(super) fn op_queue_sync(&mut self) {
        let finish = self.r.bool();
        let (q, _) = self.queue();
        if finish {
            code("urQueueFinish", unsafe { self.api.urQueueFinish(q) });
        } else {
            code("urQueueFlush", unsafe { self.api.urQueueFlush(q) });
        }
    }

    pub(super) fn op_enqueue_wait(&mut self) {
        let barrier = self.r.bool();
        let (q, _) = self.queue();
        let mut tail = self.enqueue_tail();
        let (n, waits, event) = tail.args();
        let rc = if barrier {
            code("urEnqueueEventsWaitWithBarrier", unsafe { self.api.urEnqueueEventsWaitWithBarrier(q, n, waits, event) })
        } else {
            code("urEnqueueEventsWait", unsafe { self.api.urEnqueueEventsWait(q, n, waits, event) })
        };
        self.push_event(rc, &tail);
    }

    pub(super) fn op_event_info(&mut self) {
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
}
