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
//! Modules and kernels are unsupported. Every table entry the loader asks for
//! is filled: entry points not implemented here answer
//! `ZE_RESULT_ERROR_UNSUPPORTED_FEATURE`.
//!
//! Layout: `api.rs` holds the `extern "C"` entry points, which check their
//! arguments and call the objects of `driver.rs` and `context.rs`;
//! `tables.rs` fills the DDI tables and exports their getters.

#![allow(non_snake_case, clippy::missing_safety_doc)]

mod api;
mod context;
mod driver;
mod tables;
