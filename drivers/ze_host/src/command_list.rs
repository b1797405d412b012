//! Command lists. A regular list records commands until it is closed, then
//! may be executed any number of times; an immediate list hands each command
//! to its own worker thread as it is appended.

use crate::object::{lock, Registry};
use crate::worker::{Command, Job, Worker};
use level_zero_sys::*;
use std::sync::{Arc, Mutex};

pub static LISTS: Registry<CommandList> = Registry::new();

#[derive(Default)]
pub struct Recording {
    open: Vec<Command>,
    /// Set by Close: what an execution runs. Shared with in-flight
    /// executions, so a Reset cannot pull commands from under a worker.
    closed: Option<Arc<[Command]>>,
}

pub enum Kind {
    Regular(Mutex<Recording>),
    Immediate { worker: Worker, synchronous: bool },
}

pub struct CommandList {
    pub context: usize,
    pub kind: Kind,
}

impl CommandList {
    pub fn append(&self, c: Command) -> Result<(), ze_result_t> {
        match &self.kind {
            Kind::Regular(r) => {
                let mut r = lock(r);
                if r.closed.is_some() {
                    // Closed lists take no more commands until a Reset.
                    return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
                }
                r.open.push(c);
            }
            Kind::Immediate { worker, synchronous } => {
                let ticket = worker.submit(Job { lists: vec![Arc::from([c])], fence: None });
                if *synchronous {
                    worker.wait(ticket, u64::MAX);
                }
            }
        }
        Ok(())
    }

    pub fn close(&self) {
        if let Kind::Regular(r) = &self.kind {
            let mut r = lock(r);
            if r.closed.is_none() {
                let open = std::mem::take(&mut r.open);
                r.closed = Some(Arc::from(open));
            }
        }
    }

    pub fn reset(&self) {
        match &self.kind {
            Kind::Regular(r) => *lock(r) = Recording::default(),
            // An immediate list has nothing recorded; resetting it means
            // being done with what it was given.
            Kind::Immediate { worker, .. } => {
                worker.wait_idle(u64::MAX);
            }
        }
    }

    /// What a queue runs for this list: an error if it is immediate or open.
    pub fn executable(&self) -> Result<Arc<[Command]>, ze_result_t> {
        match &self.kind {
            Kind::Regular(r) => lock(r).closed.clone().ok_or(ZE_RESULT_ERROR_INVALID_ARGUMENT),
            Kind::Immediate { .. } => Err(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE),
        }
    }
}
