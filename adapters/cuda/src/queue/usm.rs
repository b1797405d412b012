//! USM commands on a queue: fills, copies, prefetch and advice.

use super::{submit, Queue, Submitted};
use crate::event::Event;
use crate::memory::UsmKind;
use crate::conv::{self, CuExt};
use crate::driver::{self, Stream};
use std::ffi::c_void;
use std::sync::Arc;
use ur_core::hal::{Events, UsmCopy2D, UsmFill2D};
use crate::Cuda;
use ur_core::*;

/// Enqueues a fill of `size` bytes at `dst` with a `pattern` that repeats
/// (its length divides `size`). Patterns of 1, 2 and 4 bytes at aligned
/// addresses are one memset; wider ones write one 32-bit column (or, when
/// misaligned, one byte column) per step with a pitched memset.
fn fill(stream: &Stream, dst: usize, pattern: &[u8], size: usize) -> UrResult {
    let n = pattern.len();
    let count = size / n;
    let s = stream.raw();
    let word = |i: usize| u32::from_ne_bytes(pattern[i..i + 4].try_into().expect("four bytes"));
    // SAFETY: the caller checked that the range is USM of this context.
    unsafe {
        match n {
            1 => driver::memset_async(dst as u64, pattern[0] as u32, 1, count, s),
            2 if dst.is_multiple_of(2) => driver::memset_async(
                dst as u64,
                u16::from_ne_bytes([pattern[0], pattern[1]]) as u32,
                2,
                count,
                s,
            ),
            4 if dst.is_multiple_of(4) => driver::memset_async(dst as u64, word(0), 4, count, s),
            _ if n.is_multiple_of(4) && dst.is_multiple_of(4) => (0..n / 4).try_for_each(|j| {
                driver::memset_2d_async((dst + 4 * j) as u64, n, word(4 * j), 4, 1, count, s)
            }),
            _ => (0..n).try_for_each(|j| {
                driver::memset_2d_async((dst + j) as u64, n, pattern[j] as u32, 1, 1, count, s)
            }),
        }
        .cu()
    }
}

/// `urEnqueueUSMFill`.
pub fn usm_fill(
    queue: &Queue,
    command: ur_command_t,
    dst: *mut c_void,
    pattern: &[u8],
    size: usize,
    events: Events<'_, Cuda>,
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let work = |s: &Stream| fill(s, dst as usize, pattern, size);
    Ok(submit(queue, command, events, want_event, work)?.event)
}

/// `urEnqueueUSMFill2D`: the fill of each row, on one stream.
pub fn usm_fill_2d(queue: &Queue, f: UsmFill2D<'_>, events: Events<'_, Cuda>, want_event: bool) -> UrResult<Option<Arc<Event>>> {
    let work = |s: &Stream| (0..f.height).try_for_each(|r| fill(s, f.dst as usize + r * f.pitch, f.pattern, f.width));
    Ok(submit(queue, UR_COMMAND_USM_FILL_2D, events, want_event, work)?.event)
}

/// A pitched copy (`urEnqueueUSMMemcpy2D`, and a buffer rect) as one
/// `cuMemcpy2DAsync`; a blocking copy returns once it has completed.
pub fn usm_memcpy_2d(queue: &Queue, m: UsmCopy2D, blocking: bool, events: Events<'_, Cuda>, want_event: bool) -> UrResult<Option<Arc<Event>>> {
    let Submitted { event, .. } = submit(queue, m.command, events, want_event || blocking, |s| {
        let (dst, src) = ((m.dst as u64, m.dst_pitch), (m.src as u64, m.src_pitch));
        // SAFETY: the core checked both sides' rows (inside their USM
        // allocations where they are USM); unified addressing places them.
        unsafe { driver::memcpy_2d_async(dst, src, m.width, m.height, s.raw()) }.cu()
    })?;
    if blocking {
        event.as_deref().map_or(Ok(()), crate::event::wait)?;
    }
    Ok(if want_event { event } else { None })
}

/// `urEnqueueUSMMemcpy`; a blocking copy returns once it has completed.
pub fn usm_memcpy(
    queue: &Queue,
    command: ur_command_t,
    blocking: bool,
    dst: *mut c_void,
    src: *const c_void,
    size: usize,
    events: Events<'_, Cuda>,
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let Submitted { event, .. } =
        submit(queue, command, events, want_event || blocking, |s| {
            // SAFETY: unified addressing tells the driver where each side is;
            // the caller vouches for both ranges.
            unsafe { driver::memcpy_async(dst as u64, src as u64, size, s.raw()) }.cu()
        })?;
    if blocking {
        event.as_deref().map_or(Ok(()), crate::event::wait)?;
    }
    Ok(if want_event { event } else { None })
}

/// `urEnqueueUSMPrefetch`: migrates shared memory; for other memory it
/// only orders (there is nothing to move).
pub fn usm_prefetch(
    queue: &Queue,
    ptr: *const c_void,
    size: usize,
    flags: ur_usm_migration_flags_t,
    events: Events<'_, Cuda>,
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let shared = crate::memory::usm_lookup(&queue.context, ptr as usize).map(|(_, _, kind)| kind) == Some(UsmKind::Shared);
    let to_host = flags & UR_USM_MIGRATION_FLAG_DEVICE_TO_HOST.0 != 0;
    let dev = (!to_host).then_some(queue.device.raw.cu);
    let managed = queue.device.raw.props.concurrent_managed;
    let prefetch = |s: &Stream| {
        if shared && managed {
            // SAFETY: the range is managed memory of this context.
            unsafe { driver::mem_prefetch_async(ptr as u64, size, dev, s.raw()) }.cu()?;
        }
        Ok(())
    };
    Ok(submit(queue, UR_COMMAND_USM_PREFETCH, events, want_event, prefetch)?.event)
}

/// `urEnqueueUSMAdvise`: advice for shared memory; other memory has
/// nothing to advise and the command only orders.
pub fn usm_advise(
    queue: &Queue,
    ptr: *const c_void,
    size: usize,
    advice: ur_usm_advice_flags_t,
    want_event: bool,
) -> UrResult<Option<Arc<Event>>> {
    let shared = crate::memory::usm_lookup(&queue.context, ptr as usize).map(|(_, _, kind)| kind) == Some(UsmKind::Shared);
    let dev = queue.device.raw.cu;
    let advise = |_: &Stream| {
        if shared {
            for (a, to_device) in conv::usm_advice(advice) {
                // SAFETY: the range is managed memory of this context.
                unsafe { driver::mem_advise(ptr as u64, size, a, to_device.then_some(dev)) }.cu()?;
            }
        }
        Ok(())
    };
    Ok(submit(queue, UR_COMMAND_USM_ADVISE, Events::none(), want_event, advise)?.event)
}
