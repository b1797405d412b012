//! Memory whose owner is gone but which pending commands may still touch: a
//! pool destroyed while its queues still run hands its slabs here, and they
//! go back to the backend once every lane has passed the recorded point.

use super::clock::Seq;
use super::lane::Lane;
use std::sync::atomic::{AtomicUsize, Ordering::*};
use crate::lock_order::{Mutex, Rank};
use std::sync::Weak;

struct Grave {
    /// Released once each lane has completed up to its seq. A lane that no
    /// longer exists has drained (adapters drop a lane only after that).
    watermarks: Vec<(Weak<Lane>, Seq)>,
    release: Box<dyn FnOnce() + Send>,
}

impl Grave {
    fn ready(&self) -> bool {
        self.watermarks
            .iter()
            .all(|(lane, seq)| lane.upgrade().is_none_or(|l| l.done_upto() >= *seq))
    }
}

pub(crate) struct Graveyard {
    count: AtomicUsize,
    graves: Mutex<Vec<Grave>>,
}

impl Default for Graveyard {
    fn default() -> Self {
        Graveyard { count: AtomicUsize::new(0), graves: Mutex::new(Rank::Leaf, Vec::new()) }
    }
}

impl Graveyard {
    /// Runs `release` now if the lanes are already past their seqs, else later.
    pub(crate) fn bury(
        &self,
        watermarks: Vec<(Weak<Lane>, Seq)>,
        release: Box<dyn FnOnce() + Send>,
    ) {
        let grave = Grave {
            watermarks,
            release,
        };
        if grave.ready() {
            (grave.release)();
            return;
        }
        let mut graves = self.graves.lock();
        graves.push(grave);
        self.count.store(graves.len(), Release);
        drop(graves);
        // A lane may have advanced before the grave was visible.
        self.sweep();
    }

    /// Releases every grave whose lanes have got far enough.
    pub(crate) fn sweep(&self) {
        if self.count.load(Acquire) == 0 {
            return;
        }
        let ready: Vec<Grave> = {
            let mut graves = self.graves.lock();
            let (ready, waiting) = std::mem::take(&mut *graves)
                .into_iter()
                .partition(Grave::ready);
            *graves = waiting;
            self.count.store(graves.len(), Release);
            ready
        };
        for grave in ready {
            (grave.release)();
        }
    }
}
