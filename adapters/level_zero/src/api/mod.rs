pub mod adapter;
pub mod platform;
