//! Byte counters of a pool, as `urUSMPoolGetInfoExp` reports them.

/// A snapshot of a pool's counters.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct PoolStats {
    /// Bytes taken from the backend and not given back.
    pub reserved_current: usize,
    pub reserved_high: usize,
    /// Bytes of blocks handed out and not yet freed.
    pub used_current: usize,
    pub used_high: usize,
}

impl PoolStats {
    pub(crate) fn reserve(&mut self, bytes: usize) {
        add(&mut self.reserved_current, &mut self.reserved_high, bytes);
    }

    pub(crate) fn unreserve(&mut self, bytes: usize) {
        sub(&mut self.reserved_current, bytes);
    }

    pub(crate) fn use_bytes(&mut self, bytes: usize) {
        add(&mut self.used_current, &mut self.used_high, bytes);
    }

    pub(crate) fn unuse_bytes(&mut self, bytes: usize) {
        sub(&mut self.used_current, bytes);
    }

    /// Restarts the reserved high-water mark from the current value.
    pub(crate) fn reset_reserved_high(&mut self) {
        self.reserved_high = self.reserved_current;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn high_marks_follow_and_reset_to_current() {
        let mut s = PoolStats::default();
        s.reserve(100);
        s.use_bytes(60);
        s.use_bytes(30);
        s.unuse_bytes(80);
        s.reserve(50);
        s.unreserve(120);
        assert_eq!(
            (
                s.reserved_current,
                s.reserved_high,
                s.used_current,
                s.used_high
            ),
            (30, 150, 10, 90)
        );
        s.reset_reserved_high();
        assert_eq!((s.reserved_high, s.used_high), (30, 90));
    }
}

/// One counter and its high-water mark, as both pairs of the stats keep them.
fn add(current: &mut usize, high: &mut usize, bytes: usize) {
    *current += bytes;
    *high = (*high).max(*current);
}

fn sub(current: &mut usize, bytes: usize) {
    debug_assert!(*current >= bytes);
    *current -= bytes;
}
