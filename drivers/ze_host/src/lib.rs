//! `libze_host_driver.so`: a Level Zero driver that runs everything on the
//! host, so that Level Zero code can be tested through the real loader
//! (`ZE_ENABLE_ALT_DRIVERS`) on machines without Intel hardware.
//!
//! One driver and one device. The device's type is GPU, because every Level
//! Zero client this project cross-checks with lives in the GPU role: Intel's
//! UR Level Zero adapters initialise with `ZE_INIT_FLAG_GPU_ONLY`, and SYCL
//! reaches Level Zero as `level_zero:gpu`. Everything else it reports is the
//! host's truth: its name says "host driver" and the CPU model, it is flagged
//! integrated (it shares the host's memory), it claims no PCI vendor, and its
//! memory size and core count are the machine's. Memory of all three USM
//! kinds is host memory, tracked per context.
//! Command queues and immediate command lists each own a worker thread that
//! runs their commands (fill, copy, barriers, event signals, waits and
//! resets, timestamps) in order, after the call that gave them returned;
//! events, fences and host waits synchronise with those threads.
//! Modules and kernels are unsupported. Every table entry the loader asks for
//! is filled: entry points not implemented here answer
//! `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`.
//!
//! Layout: `api/` holds the `extern "C"` entry points, which check their
//! arguments and call the objects of `driver.rs`, `context.rs` (memory),
//! `queue.rs`, `command_list.rs`, `event.rs` and `fence.rs`; `worker.rs`
//! holds the commands and the threads that run them, `object.rs` the
//! registries of live handles (and the lock order); `tables.rs` fills the
//! DDI tables and exports their getters.

#![allow(non_snake_case, clippy::missing_safety_doc)]

// driver::now_ns reads CLOCK_MONOTONIC through a 64-bit timespec.
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
compile_error!("ze_host_driver is written for 64-bit Linux");

mod api;
mod command_list;
mod context;
mod driver;
mod event;
mod fence;
mod object;
mod queue;
mod tables;
mod worker;
