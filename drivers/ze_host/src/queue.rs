//! Command queues: a worker thread that runs executed command lists in
//! submission order. Out-of-order queues are run in order too, which Level
//! Zero allows (order is a freedom the driver may decline).

use crate::fence::Fence;
use crate::object::Registry;
use crate::worker::{Command, Job, Worker};
use std::sync::Arc;

pub static QUEUES: Registry<Queue> = Registry::new();

pub struct Queue {
    pub context: usize,
    /// ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: execute returns once the lists ran.
    pub synchronous: bool,
    pub worker: Worker,
}

impl Queue {
    pub fn execute(&self, lists: Vec<Arc<[Command]>>, fence: Option<Arc<Fence>>) {
        let ticket = self.worker.submit(Job { lists, fence });
        if self.synchronous {
            self.worker.wait(ticket, u64::MAX);
        }
    }
}
