//! `libur_loader.so.0`: the Unified Runtime 0.12 loader.
//!
//! It finds adapter libraries (`discovery`), loads them and fills one DDI
//! table per adapter through their `urGet*ProcAddrTable` exports
//! (`registry`), and exports every `ur*` entry point. A call on a handle is
//! sent to the adapter whose DDI table the handle names at offset 0, after
//! checking that the handle is non-null and belongs to a loaded adapter
//! (`dispatch`). The few entry points with no handle to dispatch on, and the
//! loader's own objects, are in `api/`.

// Entry points keep the reference's parameter names, so that the code reads
// like the specification it implements.
#![allow(non_snake_case, clippy::missing_safety_doc)]

mod api;
mod discovery;
mod dispatch;
mod layers;
mod registry;
