//! Conformance tests for Unified Runtime 0.12 loaders, run through the C ABI
//! of a loader opened by path, and the `urinfo` tool.
//!
//! - `ur`: opening a loader, its entry points, and what it reports;
//! - `harness`: case registry, fixtures, `check!`-style helpers;
//! - `cases`: one file per object, cases named `urEntryPoint.what`;
//! - `runner`: selection, isolation, reporting;
//! - `child`: child processes with a time limit.

pub mod cases;
pub mod child;
pub mod harness;
pub mod names;
pub mod runner;
pub mod ur;
