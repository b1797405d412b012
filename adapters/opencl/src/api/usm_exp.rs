//! `urEnqueueUSM*AllocExp`, `urEnqueueUSMFreeExp` and the pool `*Exp` entry
//! points: the async pool engine of `ur_core::engine` serves them.
//!
//! Until it is wired in, these slots keep the table's
//! `UR_RESULT_ERROR_UNSUPPORTED_FEATURE` stubs and devices report
//! `UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP` as false. The wiring
//! point for every command is `Queue::submit` (wait list in, `cl_event`
//! out), and `Event::on_status` reports completion back: an allocation that
//! needs no device command enqueues none; when the caller asks for an
//! event, a marker behind the wait list serves.

/// Whether `urEnqueueUSM*AllocExp` is served (`UR_DEVICE_INFO_ASYNC_USM_ALLOCATIONS_SUPPORT_EXP`).
pub const ASYNC_ALLOCATIONS: bool = false;
