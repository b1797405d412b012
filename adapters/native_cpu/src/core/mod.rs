//! Safe objects behind the handles, one file per UR object.

pub mod context;
pub mod device;
pub mod enqueue;
pub mod event;
pub mod host;
pub mod platform;
pub mod queue;
pub mod usm;
pub mod usm_exp;
pub mod usm_pool;
