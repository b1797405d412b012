//! Commands on buffers (`cl_mem`s), each one OpenCL command through
//! `queue::submit`, which records it in the engine's graph like any other.
//! Host memory given to a non-blocking read or write must stay as it is
//! until the command completes (UR's rule and OpenCL's).

use super::{marker, submit, Queue};
use crate::conv::{self, check};
use crate::driver::{self, call, wait_list_ptr};
use crate::OpenCl;
use cl3::ext as sys;
use std::ffi::c_void;
use sys::{cl_event, cl_int};
use ur_core::hal::{Completion, Events};
use ur_core::mem::{BufferCommand, RectSide};
use ur_core::queue::object::Enqueued;
use ur_core::*;

/// OpenCL runtimes fill with patterns of at most this many bytes; a longer
/// one is written out in full on the host and copied in.
const CL_MAX_PATTERN: usize = 128;

/// A rect side's origin as OpenCL takes it: the whole byte offset in `x`,
/// which OpenCL adds to `y * row + z * slice` as the core did.
fn origin(side: RectSide) -> [usize; 3] {
    [side.offset, 0, 0]
}

pub(super) fn enqueue(
    queue: &Queue,
    command: ur_command_t,
    buffer: BufferCommand<'_, OpenCl>,
    waits: Events<'_, OpenCl>,
    c: Completion,
) -> Enqueued<OpenCl> {
    let cl = queue.raw.cl.get();
    if let BufferCommand::Fill { mem, offset, size, pattern } = buffer {
        if pattern.len() > CL_MAX_PATTERN {
            return expanded_fill(queue, (mem.get(), offset, size), pattern, waits, c);
        }
    }
    submit(queue, command, false, waits, c.want_event, |w, ev| {
        let (n, list) = (w.len() as sys::cl_uint, wait_list_ptr(w));
        let no = sys::CL_FALSE;
        match buffer {
            BufferCommand::Read { mem, offset, size, dst } => {
                check(call!(clEnqueueReadBuffer(cl, mem.get(), no, offset, size, dst, n, list, ev)))
            }
            BufferCommand::Write { mem, offset, size, src } => {
                check(call!(clEnqueueWriteBuffer(cl, mem.get(), no, offset, size, src, n, list, ev)))
            }
            BufferCommand::Copy { src, src_offset, dst, dst_offset, size } => {
                check(call!(clEnqueueCopyBuffer(cl, src.get(), dst.get(), src_offset, dst_offset, size, n, list, ev)))
            }
            BufferCommand::Fill { mem, offset, size, pattern } => {
                let p = pattern.as_ptr() as *const c_void;
                check(call!(clEnqueueFillBuffer(cl, mem.get(), p, pattern.len(), offset, size, n, list, ev)))
            }
            BufferCommand::HostRect { read, mem, buffer, host, host_side, region } => {
                let (b, h) = (origin(buffer), origin(host_side));
                let (b, h, r) = (b.as_ptr(), h.as_ptr(), region.as_ptr());
                let (brow, bslice, hrow, hslice) = (buffer.row_pitch, buffer.slice_pitch, host_side.row_pitch, host_side.slice_pitch);
                if read {
                    check(call!(clEnqueueReadBufferRect(cl, mem.get(), no, b, h, r, brow, bslice, hrow, hslice, host, n, list, ev)))
                } else {
                    check(call!(clEnqueueWriteBufferRect(cl, mem.get(), no, b, h, r, brow, bslice, hrow, hslice, host, n, list, ev)))
                }
            }
            BufferCommand::CopyRect { src, src_side, dst, dst_side, region } => {
                let (s, d) = (origin(src_side), origin(dst_side));
                let (s, d, r) = (s.as_ptr(), d.as_ptr(), region.as_ptr());
                let (srow, sslice, drow, dslice) = (src_side.row_pitch, src_side.slice_pitch, dst_side.row_pitch, dst_side.slice_pitch);
                check(call!(clEnqueueCopyBufferRect(cl, src.get(), dst.get(), s, d, r, srow, sslice, drow, dslice, n, list, ev)))
            }
            BufferCommand::Map { mem, offset, size, flags, out } => {
                *out = driver::map_buffer(cl, mem.get(), conv::map_flags(flags), offset, size, w, ev)?;
                Ok(())
            }
            BufferCommand::Unmap { mem, ptr } => check(call!(clEnqueueUnmapMemObject(cl, mem.get(), ptr, n, list, ev))),
        }
    })
}

/// A fill whose pattern OpenCL does not take: the pattern repeated over
/// `size` bytes on the host, then a blocking write, so that the staging
/// memory outlives the copy; a marker stands for it when an event is asked
/// for, ordered after the write.
fn expanded_fill(
    queue: &Queue,
    (mem, offset, size): (sys::cl_mem, usize, usize),
    pattern: &[u8],
    waits: Events<'_, OpenCl>,
    c: Completion,
) -> Enqueued<OpenCl> {
    let cl = queue.raw.cl.get();
    let data: Vec<u8> = pattern.iter().copied().cycle().take(size).collect();
    submit(queue, UR_COMMAND_MEM_BUFFER_FILL, false, waits, c.want_event, |w, ev| -> Result<(), cl_int> {
        let (n, list) = (w.len() as sys::cl_uint, wait_list_ptr(w));
        let src = data.as_ptr() as *const c_void;
        check(call!(clEnqueueWriteBuffer(cl, mem, sys::CL_TRUE, offset, size, src, n, list, std::ptr::null_mut())))?;
        let done: [cl_event; 0] = [];
        marker(cl, false, &done, ev)
    })
}
