//! Peer access state for backends whose driver keeps none (every device
//! of the native CPU backend reads the same host memory): which command
//! devices have enabled access to which peers, so that enabling twice or
//! disabling what was never enabled fails as it does on CUDA.

use crate::adapter::Adapter;
use crate::UrResult;
use std::collections::HashSet;
use std::sync::Mutex;

/// CUDA's codes for the two misuses (`CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED`,
/// `CUDA_ERROR_PEER_ACCESS_NOT_ENABLED`), reported as the native error of
/// `urAdapterGetLastError` so that every backend answers alike.
const ALREADY_ENABLED: i32 = 704;
const NOT_ENABLED: i32 = 705;

/// Enabled `(command device, peer device)` pairs, by address.
#[derive(Default)]
pub struct PeerLinks(Mutex<HashSet<(usize, usize)>>);

impl PeerLinks {
    /// Enables or disables the link from `command` to `peer`; a second
    /// enable, or a disable of no link, is `ADAPTER_SPECIFIC` with the
    /// reason recorded on `adapter`.
    pub fn set<T>(&self, adapter: &Adapter, command: &T, peer: &T, enable: bool) -> UrResult {
        let key = (command as *const T as usize, peer as *const T as usize);
        let mut links = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let changed = if enable { links.insert(key) } else { links.remove(&key) };
        match (changed, enable) {
            (true, _) => Ok(()),
            (false, true) => Err(adapter.set_last_error("peer access is already enabled", ALREADY_ENABLED)),
            (false, false) => Err(adapter.set_last_error("peer access was not enabled", NOT_ENABLED)),
        }
    }

    /// Whether the link from `command` to `peer` is enabled.
    pub fn enabled<T>(&self, command: &T, peer: &T) -> bool {
        let key = (command as *const T as usize, peer as *const T as usize);
        self.0.lock().unwrap_or_else(|e| e.into_inner()).contains(&key)
    }
}
