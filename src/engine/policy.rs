//! Which freed blocks an allocation may take, modelled on the three reuse
//! switches of CUDA's stream-ordered pools.

/// Per-pool reuse policy. Whatever it says, a block freed on the same
/// in-order queue is always reusable by a later allocation there, and a block
/// is never handed out while a command that may use it is unordered and
/// incomplete (unless the allocation is made to wait for it).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ReusePolicy {
    /// Reuse a block whose free is ordered before the new allocation through
    /// wait lists and barriers, across queues.
    pub follow_event_dependencies: bool,
    /// Check, at allocation time, which frees have completed and reuse those
    /// blocks even though nothing orders them. When off, completed frees are
    /// only collected at explicit synchronisation points
    /// ([`Pool::collect`](super::Pool::collect)), so reuse does not depend on
    /// timing.
    pub allow_opportunistic: bool,
    /// Hand out a block whose free is still pending and make the allocation
    /// wait for that free (the engine returns it as an extra dependency).
    pub allow_internal_dependencies: bool,
}

impl Default for ReusePolicy {
    fn default() -> Self {
        ReusePolicy {
            follow_event_dependencies: true,
            allow_opportunistic: true,
            allow_internal_dependencies: true,
        }
    }
}

impl ReusePolicy {
    /// Only same-queue reuse and collected frees.
    pub const STRICT: ReusePolicy = ReusePolicy {
        follow_event_dependencies: false,
        allow_opportunistic: false,
        allow_internal_dependencies: false,
    };
}
