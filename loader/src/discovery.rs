//! Which adapter libraries to load, in the order UR's loader documents:
//! `UR_ADAPTERS_FORCE_LOAD` alone when set; otherwise each known adapter name
//! looked up in `UR_ADAPTERS_SEARCH_PATH`, then next to this library, then
//! on the system library path.

use std::ffi::CStr;
use std::path::{Path, PathBuf};

/// The adapters a UR 0.12 loader looks for by default.
pub const DEFAULT_ADAPTERS: &[&str] = &[
    "libur_adapter_native_cpu.so.0",
    "libur_adapter_opencl.so.0",
    "libur_adapter_cuda.so.0",
    "libur_adapter_level_zero.so.0",
];

/// One library to try. `path` is what `dlopen` gets: a path, or a bare name
/// that the dynamic linker resolves on the library path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub path: PathBuf,
}

/// Candidates for this process, from its environment.
pub fn candidates() -> Vec<Candidate> {
    let force = std::env::var("UR_ADAPTERS_FORCE_LOAD").ok();
    let search = std::env::var("UR_ADAPTERS_SEARCH_PATH").ok();
    candidates_from(force.as_deref(), search.as_deref(), own_dir().as_deref())
}

/// Lists are separated by commas, as UR's loader reads them; colons are
/// accepted too since users write search paths like `LD_LIBRARY_PATH`.
fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split([',', ':']).map(str::trim).filter(|p| !p.is_empty())
}

pub fn candidates_from(force: Option<&str>, search: Option<&str>, own_dir: Option<&Path>) -> Vec<Candidate> {
    if let Some(force) = force.filter(|f| !f.trim().is_empty()) {
        return split_list(force).map(|p| Candidate { path: PathBuf::from(p) }).collect();
    }
    let mut out = Vec::new();
    for name in DEFAULT_ADAPTERS {
        let mut found = None;
        let dirs = search.map(|s| split_list(s).map(PathBuf::from).collect::<Vec<_>>()).unwrap_or_default();
        for dir in dirs.iter().map(PathBuf::as_path).chain(own_dir) {
            let p = dir.join(name);
            if p.exists() {
                found = Some(p);
                break;
            }
        }
        out.push(Candidate { path: found.unwrap_or_else(|| PathBuf::from(name)) });
    }
    out
}

/// The folder this loader library was loaded from.
fn own_dir() -> Option<PathBuf> {
    // SAFETY: dladdr only reads the address of a function of this library and
    // fills `info`; `dli_fname` is a NUL-terminated string owned by the
    // dynamic linker, copied out at once.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(own_dir as *const libc::c_void, &mut info) == 0 || info.dli_fname.is_null() {
            return None;
        }
        let file = CStr::from_ptr(info.dli_fname).to_str().ok()?;
        let file = std::fs::canonicalize(file).ok()?;
        file.parent().map(Path::to_path_buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn force_load_overrides_everything() {
        let c = candidates_from(Some("/a/x.so, /b/y.so"), Some("/nowhere"), None);
        assert_eq!(c, vec![Candidate { path: "/a/x.so".into() }, Candidate { path: "/b/y.so".into() }]);
    }

    #[test]
    fn default_names_fall_back_to_the_library_path() {
        let c = candidates_from(None, None, None);
        assert_eq!(c.len(), DEFAULT_ADAPTERS.len());
        assert_eq!(c[0].path, PathBuf::from("libur_adapter_native_cpu.so.0"));
    }

    #[test]
    fn search_path_wins_over_own_dir() {
        let dir = std::env::temp_dir().join(format!("ur_discovery_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("libur_adapter_opencl.so.0"), b"").unwrap();
        let c = candidates_from(None, Some(dir.to_str().unwrap()), Some(Path::new("/own")));
        assert_eq!(c[1].path, dir.join("libur_adapter_opencl.so.0"));
        assert_eq!(c[0].path, PathBuf::from("libur_adapter_native_cpu.so.0"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
