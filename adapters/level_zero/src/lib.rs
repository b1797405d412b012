//! `libur_adapter_level_zero.so.0`: the Level Zero adapter.
//!
//! It loads Intel's Level Zero loader (`libze_loader.so.1`) at run time, so it
//! builds and loads anywhere. No Intel GPU exists on the machines this
//! project is tested on, so the adapter implements the adapter object and
//! platform discovery only: with no driver it reports zero platforms, and
//! with a driver it says (in its log) that it has no device support yet and
//! still reports zero platforms rather than half-working ones. Every other
//! entry point answers `UR_RESULT_ERROR_UNSUPPORTED_FEATURE`.

#![allow(non_snake_case, clippy::missing_safety_doc)]

mod api;
mod sys;

use ur_core::abi::ur_dditable_t;

pub static DDI: ur_dditable_t = {
    let mut d = ur_core::ddi::UNSUPPORTED_DDI;
    d.Adapter = ur_core::adapter::adapter_table::<api::adapter::LevelZero>();
    d.Platform.pfnGet = Some(api::platform::urPlatformGet);
    d
};

ur_core::export_ddi_getters!(DDI);
