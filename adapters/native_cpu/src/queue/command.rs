//! Commands: the work a queue's worker does when a command's turn comes, and
//! the checks that decide, at enqueue time, which memory a command may touch.

use crate::context::Context;
use crate::memory::Allocation;
use std::sync::Arc;
use ur_core::*;

/// A pointer a command reads or writes. When it points into a USM
/// allocation of the queue's context, the command holds that allocation, so
/// that a `urUSMFree` before the command ran cannot release the memory.
pub struct UsmPtr {
    addr: *mut u8,
    _owner: Option<Arc<Allocation>>,
}

// SAFETY: the memory is the user's; UR makes the user order host accesses
// against the command, and `owner` keeps our allocations alive.
unsafe impl Send for UsmPtr {}

impl UsmPtr {
    /// # Safety
    /// The `len` bytes the command will access at `addr` must stay valid
    /// until the command ran: either they lie in `owner` (checked by
    /// [`resolve`]), or the caller vouches for host memory of its own.
    pub unsafe fn new(addr: *mut u8, owner: Option<Arc<Allocation>>) -> UsmPtr {
        UsmPtr { addr, _owner: owner }
    }

    pub fn addr(&self) -> *mut u8 {
        self.addr
    }
}

/// Finds the allocation of `ctx` that `[addr, addr + len)` starts in. A
/// range that runs past the end of its allocation is `INVALID_SIZE`;
/// memory that is no registered allocation of `ctx` (the host's own, which
/// a CPU device reaches as system-shared USM) gives `None`. So does a block
/// of pool memory, which no command needs to hold: the engine never hands
/// it to a new owner, nor gives it back, while a command ordered before its
/// free may still run, and a blocking free waits for the queues. Its
/// bounds the core checked before the command came here
/// (`UsmRegistry::live_span`), so its slab is not looked up again.
pub fn resolve(ctx: &Context, addr: *const u8, len: usize) -> UrResult<Option<Arc<Allocation>>> {
    match ctx.usm.find(addr as usize) {
        Some(alloc) if alloc.contains(addr as usize, len) => Ok(Some(alloc)),
        Some(_) => Err(UR_RESULT_ERROR_INVALID_SIZE),
        None => Ok(None),
    }
}

/// A fill pattern, kept inline when small (the common case) so that a fill
/// command needs no allocation of its own.
pub enum Pattern {
    Inline { len: u8, bytes: [u8; Pattern::INLINE] },
    Heap(Box<[u8]>),
}

impl Pattern {
    const INLINE: usize = 128;

    pub fn new(bytes: &[u8]) -> Pattern {
        if bytes.len() <= Self::INLINE {
            let mut inline = [0u8; Self::INLINE];
            inline[..bytes.len()].copy_from_slice(bytes);
            Pattern::Inline { len: bytes.len() as u8, bytes: inline }
        } else {
            Pattern::Heap(bytes.into())
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        match self {
            Pattern::Inline { len, bytes } => &bytes[..*len as usize],
            Pattern::Heap(b) => b,
        }
    }
}

/// What a command does when it runs.
pub enum Command {
    /// Repeat `pattern` over `size` bytes (a multiple of the pattern).
    Fill {
        dst: UsmPtr,
        pattern: Pattern,
        size: usize,
    },
    /// Fill `height` rows of `width` bytes, `pitch` apart.
    Fill2D {
        dst: UsmPtr,
        pitch: usize,
        pattern: Pattern,
        width: usize,
        height: usize,
    },
    Copy {
        dst: UsmPtr,
        src: UsmPtr,
        size: usize,
    },
    Copy2D {
        dst: UsmPtr,
        dst_pitch: usize,
        src: UsmPtr,
        src_pitch: usize,
        width: usize,
        height: usize,
    },
    /// Only ordering: event waits, barriers, and the prefetch and advice
    /// hints, which have nothing to move on host memory.
    Marker,
    /// Host code run in queue order, for commands other parts of the adapter
    /// add (the async pool engine's allocations and frees).
    Host(Box<dyn FnOnce() -> UrResult + Send>),
}

impl Command {
    /// Bytes it writes; `None` for host code, whose cost is unknown.
    pub fn bytes(&self) -> Option<usize> {
        match self {
            Command::Fill { size, .. } | Command::Copy { size, .. } => Some(*size),
            Command::Fill2D { width, height, .. } | Command::Copy2D { width, height, .. } => Some(width * height),
            Command::Marker => Some(0),
            Command::Host(_) => None,
        }
    }

    pub fn run(self) -> UrResult {
        // SAFETY (for every arm): `UsmPtr::new`'s contract keeps each range
        // valid until now; sizes were checked against it at enqueue.
        match self {
            Command::Fill { dst, pattern, size } => unsafe { fill(dst.addr(), pattern.as_slice(), size) },
            Command::Fill2D { dst, pitch, pattern, width, height } => unsafe {
                for row in 0..height {
                    fill(dst.addr().add(row * pitch), pattern.as_slice(), width);
                }
            },
            // `copy` (memmove): a caller may have vouched for host ranges we
            // could not check for overlap.
            Command::Copy { dst, src, size } => unsafe { std::ptr::copy(src.addr(), dst.addr(), size) },
            Command::Copy2D { dst, dst_pitch, src, src_pitch, width, height } => unsafe {
                for row in 0..height {
                    std::ptr::copy(src.addr().add(row * src_pitch), dst.addr().add(row * dst_pitch), width);
                }
            },
            Command::Marker => {}
            Command::Host(f) => return f(),
        }
        Ok(())
    }
}

/// Writes `pattern` repeatedly over `size` bytes at `dst`, doubling the
/// filled prefix so that long fills are a few large copies.
///
/// # Safety
/// `dst` must be valid for `size` bytes of writes; `size` is a multiple of
/// `pattern.len()`.
unsafe fn fill(dst: *mut u8, pattern: &[u8], size: usize) {
    let p = pattern.len();
    if p == 1 {
        std::ptr::write_bytes(dst, pattern[0], size);
        return;
    }
    if size < p {
        return;
    }
    std::ptr::copy_nonoverlapping(pattern.as_ptr(), dst, p);
    let mut done = p;
    while done < size {
        let n = done.min(size - done);
        std::ptr::copy_nonoverlapping(dst, dst.add(done), n);
        done += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(buf: &mut [u8]) -> UsmPtr {
        // SAFETY: the test buffer outlives the command run below.
        unsafe { UsmPtr::new(buf.as_mut_ptr(), None) }
    }

    #[test]
    fn fill_repeats_patterns_of_every_size() {
        for p in [1usize, 2, 4, 8, 16, 64, 128, 256] {
            let pattern: Vec<u8> = (0..p).map(|i| i as u8 ^ 0x5a).collect();
            let mut buf = vec![0u8; p * 37];
            let size = buf.len();
            Command::Fill { dst: local(&mut buf), pattern: Pattern::new(&pattern), size }.run().unwrap();
            assert!(buf.chunks(p).all(|c| c == pattern.as_slice()), "pattern size {p}");
        }
    }

    #[test]
    fn two_dimensional_commands_leave_the_padding_alone() {
        let mut buf = vec![0u8; 4 * 8];
        Command::Fill2D { dst: local(&mut buf), pitch: 8, pattern: Pattern::new(&[1, 2]), width: 4, height: 4 }
            .run()
            .unwrap();
        for row in buf.chunks(8) {
            assert_eq!(row, &[1, 2, 1, 2, 0, 0, 0, 0]);
        }
        let mut dst = vec![9u8; 3 * 6];
        let mut src: Vec<u8> = (0..3 * 5).collect();
        Command::Copy2D { dst: local(&mut dst), dst_pitch: 6, src: local(&mut src), src_pitch: 5, width: 4, height: 3 }
            .run()
            .unwrap();
        assert_eq!(&dst[..6], &[0, 1, 2, 3, 9, 9]);
        assert_eq!(&dst[12..], &[10, 11, 12, 13, 9, 9]);
    }
}
