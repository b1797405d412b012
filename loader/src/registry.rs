//! The loaded adapters and their DDI tables.
//!
//! `urLoaderInit` builds a [`Registry`] and publishes it through an atomic
//! pointer, so that every dispatched call reads it with one load and no lock.
//! The `urLoaderTearDown` that balances the last init unpublishes and frees
//! it; UR asks that no other call be in flight then. Libraries, and the DDI
//! table read from each, are kept (reachable from the loader's state) for
//! the life of the process: a call that found its table before the tear-down
//! may still be jumping through it, unloading a library whose code other
//! threads may be running is unsound, and a later init reuses both.

use crate::discovery::{self, Candidate};
use libloading::Library;
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::Mutex;
use ur_core::abi::*;
use ur_core::{log, UrResult};

pub struct LoadedAdapter {
    pub path: PathBuf,
    /// The adapter's entry points, every null slot replaced by an
    /// unsupported stub; one per library, kept across inits.
    pub table: &'static ur_dditable_t,
    /// The table pointer this adapter's handles carry at offset 0.
    pub handle_ddi: *const ur_dditable_t,
    /// The adapter handles it returned at initialisation (one reference each).
    pub handles: Vec<ur_adapter_handle_t>,
}

pub struct Registry {
    pub adapters: Vec<LoadedAdapter>,
}

// SAFETY: the raw pointers are adapter handles and a `'static` table, shared
// by design with every thread that calls the C API.
unsafe impl Send for Registry {}
unsafe impl Sync for Registry {}

impl Registry {
    /// The adapter that owns a handle whose first word is `ddi`.
    #[inline]
    pub fn by_handle_ddi(&self, ddi: *const ur_dditable_t) -> Option<&LoadedAdapter> {
        self.adapters.iter().find(|a| a.handle_ddi == ddi)
    }

    pub fn adapter_handles(&self) -> impl Iterator<Item = (&LoadedAdapter, ur_adapter_handle_t)> {
        self.adapters.iter().flat_map(|a| a.handles.iter().map(move |h| (a, *h)))
    }
}

static CURRENT: AtomicPtr<Registry> = AtomicPtr::new(std::ptr::null_mut());

struct LoaderState {
    init_count: u32,
    /// Every library opened, with its DDI table once one was read from it.
    libraries: Vec<(PathBuf, &'static Library, Option<&'static ur_dditable_t>)>,
}

static STATE: Mutex<LoaderState> = Mutex::new(LoaderState { init_count: 0, libraries: Vec::new() });

/// The registry, or `UNINITIALIZED` before `urLoaderInit`.
#[inline]
pub fn current() -> UrResult<&'static Registry> {
    let p = CURRENT.load(Ordering::Acquire);
    if p.is_null() {
        return Err(UR_RESULT_ERROR_UNINITIALIZED);
    }
    // SAFETY: a published registry is freed only by the last tear-down,
    // which UR asks to run when no other call is in flight; what a call
    // keeps beyond it (its DDI table) is `'static`.
    Ok(unsafe { &*p })
}

/// `urLoaderInit`: the first call loads the adapters; later calls count.
pub fn init() -> UrResult {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    state.init_count += 1;
    if state.init_count > 1 {
        return Ok(());
    }
    log::init("LOADER");
    let mut adapters = Vec::new();
    for candidate in discovery::candidates() {
        match load(&mut state, &candidate) {
            Ok(a) => {
                log::info(&format!("loaded adapter {}", a.path.display()));
                adapters.push(a)
            }
            Err(why) => log::warning(&format!("skipped adapter {}: {why}", candidate.path.display())),
        }
    }
    let registry = Box::into_raw(Box::new(Registry { adapters }));
    CURRENT.store(registry, Ordering::Release);
    Ok(())
}

/// `urLoaderTearDown`: the call that balances the first `urLoaderInit`
/// releases the adapters and frees the registry; the libraries and their
/// tables stay for a later init.
pub fn tear_down() -> UrResult {
    let mut state = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if state.init_count == 0 {
        return Err(UR_RESULT_ERROR_UNINITIALIZED);
    }
    state.init_count -= 1;
    if state.init_count > 0 {
        return Ok(());
    }
    let p = CURRENT.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if p.is_null() {
        return Err(UR_RESULT_ERROR_UNINITIALIZED);
    }
    // SAFETY: `p` came from `Box::into_raw` in `init`, and was published
    // once; unpublished under the state lock, nothing else frees it.
    let registry = unsafe { Box::from_raw(p) };
    for (adapter, h) in registry.adapter_handles() {
        if let Some(release) = adapter.table.Adapter.pfnRelease {
            // SAFETY: `h` came from this adapter's urAdapterGet with one reference.
            unsafe { release(h) };
        }
    }
    drop(registry);
    Ok(())
}

/// The library at `path` (opened once) and its index in the state.
fn open(state: &mut LoaderState, path: &PathBuf) -> Result<(usize, &'static Library), String> {
    if let Some(i) = state.libraries.iter().position(|(p, _, _)| p == path) {
        return Ok((i, state.libraries[i].1));
    }
    // SAFETY: loading a library runs its initialisers; adapters are trusted
    // code that the user asked for by name or path.
    let lib = unsafe { Library::new(path) }.map_err(|e| e.to_string())?;
    let lib: &'static Library = Box::leak(Box::new(lib));
    state.libraries.push((path.clone(), lib, None));
    Ok((state.libraries.len() - 1, lib))
}

fn load(state: &mut LoaderState, candidate: &Candidate) -> Result<LoadedAdapter, String> {
    let (index, lib) = open(state, &candidate.path)?;
    let table: &'static ur_dditable_t = match state.libraries[index].2 {
        Some(t) => t,
        None => {
            let mut table = ur_core::ddi::UNSUPPORTED_DDI;
            fill_tables(lib, &mut table)?;
            patch_null_slots(&mut table);
            let t: &'static ur_dditable_t = Box::leak(Box::new(table));
            state.libraries[index].2 = Some(t);
            t
        }
    };

    let get = table.Adapter.pfnGet.ok_or("no urAdapterGet")?;
    let mut count = 0u32;
    // SAFETY: calling the adapter's urAdapterGet as UR specifies it.
    let r = unsafe { get(0, std::ptr::null_mut(), &mut count) };
    if r != UR_RESULT_SUCCESS {
        return Err(format!("urAdapterGet failed with {}", r.0));
    }
    if count == 0 {
        return Err("it reports no adapter".into());
    }
    let mut handles = vec![std::ptr::null_mut(); count as usize];
    // SAFETY: `handles` has room for `count` handles.
    let r = unsafe { get(count, handles.as_mut_ptr(), std::ptr::null_mut()) };
    if r != UR_RESULT_SUCCESS || handles.iter().any(|h| h.is_null()) {
        return Err(format!("urAdapterGet failed with {}", r.0));
    }
    // SAFETY: a UR 0.12 adapter handle starts with its DDI table pointer.
    let handle_ddi = unsafe { *(handles[0] as *const *const ur_dditable_t) };
    Ok(LoadedAdapter { path: candidate.path.clone(), table, handle_ddi, handles })
}

/// Calls every `urGet*ProcAddrTable` the library exports. The adapter table
/// is required; a missing or failing other table leaves its stubs in place.
fn fill_tables(lib: &Library, table: &mut ur_dditable_t) -> Result<(), String> {
    macro_rules! fill {
        ($($getter:ident ($table_ty:ident) => $member:ident;)*) => {
            $(
                let name = concat!(stringify!($getter), "\0");
                // SAFETY: the symbol has the getter signature of ur_ddi.h.
                let getter = unsafe {
                    lib.get::<unsafe extern "C" fn(ur_api_version_t, *mut $table_ty) -> ur_result_t>(name.as_bytes())
                };
                match getter {
                    // SAFETY: the table is a valid, writable `$table_ty`.
                    Ok(g) => {
                        let r = unsafe { g(UR_API_VERSION_0_12, &mut table.$member) };
                        if r != UR_RESULT_SUCCESS && stringify!($member) == "Adapter" {
                            return Err(format!("{} failed with {}", stringify!($getter), r.0));
                        }
                    }
                    Err(_) if stringify!($member) == "Adapter" => {
                        return Err(format!("no {}", stringify!($getter)));
                    }
                    Err(_) => {}
                }
            )*
        };
    }
    ur_core::for_each_ddi_table!(fill);
    Ok(())
}

/// An adapter may leave slots null; the loader never jumps through one.
fn patch_null_slots(table: &mut ur_dditable_t) {
    const WORDS: usize = std::mem::size_of::<ur_dditable_t>() / std::mem::size_of::<usize>();
    const _: () = assert!(WORDS * std::mem::size_of::<usize>() == std::mem::size_of::<ur_dditable_t>());
    let stubs = ur_core::ddi::UNSUPPORTED_DDI;
    // SAFETY: `ur_dditable_t` is `#[repr(C)]` and made only of
    // `Option<extern fn>` fields, each one pointer-sized word where `None`
    // is zero; rewriting zero words with stub words of the same slot keeps
    // every field a valid function pointer of its own type.
    unsafe {
        let words = std::slice::from_raw_parts_mut(table as *mut ur_dditable_t as *mut usize, WORDS);
        let stub_words = std::slice::from_raw_parts(&stubs as *const ur_dditable_t as *const usize, WORDS);
        for (w, s) in words.iter_mut().zip(stub_words) {
            if *w == 0 {
                *w = *s;
            }
        }
    }
}
