//! Streams and events: the owning `Stream` and `CuEvent` wrappers,
//! destroyed on drop unless borrowed.

use super::{check, code, CUcontext, CUevent, CUresult, CUstream, CuResult};
use cudarc::driver::{result, sys};
use std::ffi::c_void;
use std::ptr::null_mut;

/// A stream of the current context, destroyed on drop unless borrowed.
pub struct Stream {
    raw: CUstream,
    owned: bool,
}

// SAFETY: CUDA streams may be used from any thread.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

impl Stream {
    /// A stream that does not synchronise with the legacy default stream.
    pub fn new() -> CuResult<Stream> {
        let raw = result::stream::create(result::stream::StreamKind::NonBlocking).map_err(code)?;
        Ok(Stream { raw, owned: true })
    }

    /// A stream the caller made (a native handle): destroyed on drop only
    /// when `owned` (CUDA streams have no reference count, so a borrowed
    /// one is left to its owner).
    pub fn from_raw(raw: CUstream, owned: bool) -> Stream {
        Stream { raw, owned }
    }

    pub fn raw(&self) -> CUstream {
        self.raw
    }

    /// The context the stream belongs to.
    pub fn context(&self) -> CuResult<CUcontext> {
        let mut ctx = null_mut();
        // SAFETY: a live stream, one out handle.
        check(unsafe { sys::cuStreamGetCtx(self.raw, &mut ctx) })?;
        Ok(ctx)
    }

    pub fn synchronize(&self) -> CuResult {
        // SAFETY: a live stream.
        unsafe { result::stream::synchronize(self.raw) }.map_err(code)
    }

    /// Makes later work on this stream wait for `event`'s last record.
    pub fn wait(&self, event: CUevent) -> CuResult {
        let flags = sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT;
        // SAFETY: a live stream and a live event.
        unsafe { result::stream::wait_event(self.raw, event, flags) }.map_err(code)
    }

    /// Has a driver thread call `f(data)` once the work before it on this
    /// stream has completed.
    ///
    /// # Safety
    /// `f` must make no CUDA call (the driver forbids it there), must not
    /// unwind, and must be able to take `data` whenever it runs, from
    /// any thread.
    pub unsafe fn launch_host_fn(
        &self,
        f: unsafe extern "C" fn(*mut c_void),
        data: *mut c_void,
    ) -> CuResult {
        result::stream::launch_host_function(self.raw, f, data).map_err(code)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own the stream; pending work still completes.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}

/// A CUDA event, destroyed on drop unless borrowed.
pub struct CuEvent {
    raw: CUevent,
    owned: bool,
}

// SAFETY: CUDA events may be used from any thread.
unsafe impl Send for CuEvent {}
unsafe impl Sync for CuEvent {}

impl CuEvent {
    /// `timing`: whether the event records a timestamp (slower to record).
    pub fn new(timing: bool) -> CuResult<CuEvent> {
        let flags = if timing {
            sys::CUevent_flags::CU_EVENT_DEFAULT
        } else {
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        let raw = result::event::create(flags).map_err(code)?;
        Ok(CuEvent { raw, owned: true })
    }

    /// An event the caller made (a native handle): destroyed on drop only
    /// when `owned` (CUDA events have no reference count).
    pub fn from_raw(raw: CUevent, owned: bool) -> CuEvent {
        CuEvent { raw, owned }
    }

    pub fn raw(&self) -> CUevent {
        self.raw
    }

    pub fn record(&self, stream: CUstream) -> CuResult {
        // SAFETY: a live event and stream of the same context.
        unsafe { result::event::record(self.raw, stream) }.map_err(code)
    }

    /// Whether the work before the last record has completed.
    pub fn is_complete(&self) -> CuResult<bool> {
        // SAFETY: a live event.
        match unsafe { result::event::query(self.raw) } {
            Ok(()) => Ok(true),
            Err(result::DriverError(CUresult::CUDA_ERROR_NOT_READY)) => Ok(false),
            Err(e) => Err(code(e)),
        }
    }

    pub fn synchronize(&self) -> CuResult {
        // SAFETY: a live event.
        unsafe { result::event::synchronize(self.raw) }.map_err(code)
    }

    /// Milliseconds from `self` to `end` (both recorded with timing).
    pub fn elapsed_ms(&self, end: &CuEvent) -> CuResult<f32> {
        // SAFETY: two live timing events.
        unsafe { result::event::elapsed(self.raw, end.raw) }.map_err(code)
    }
}

impl Drop for CuEvent {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: we own the event.
            let _ = unsafe { result::event::destroy(self.raw) };
        }
    }
}
