//! `UR_LAYER_LEAK_CHECKING`: the handles the loader handed out and has not
//! seen released, reported at the last `urLoaderTearDown`, or at exit when
//! tear-down never came. Which entry point creates, retains or releases
//! which handle comes from the generated `abi_names::handle_effect`.

use super::abi_names::handle_effect;
use super::trace::safe_read;
use super::Arg;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Mutex, Once, OnceLock};
use ur_core::log::{Level, Sink};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Effect {
    Create,
    /// An array of new handles: as many as the argument at `count`, or
    /// fewer when the output at `returned` says so.
    CreateArray { count: usize, returned: Option<usize> },
    Retain,
    Release,
}

struct Live {
    kind: &'static str,
    creator: &'static str,
    refs: u64,
}

static LIVE: Mutex<Option<HashMap<usize, Live>>> = Mutex::new(None);
static SINK: OnceLock<Sink> = OnceLock::new();
static AT_EXIT: Once = Once::new();
static REPORTED: AtomicBool = AtomicBool::new(false);

pub fn init() {
    // Intel's loader reports leaks through its validation logger.
    SINK.get_or_init(|| Sink::from_env("VALIDATION"));
    REPORTED.store(false, Relaxed);
    AT_EXIT.call_once(|| {
        extern "C" fn at_exit() {
            if !REPORTED.load(Relaxed) {
                report(true);
            }
        }
        // SAFETY: registers a plain function; it only reads our own state.
        unsafe { libc::atexit(at_exit) };
    });
}

/// After a successful call: count what it did to a handle.
pub fn record(name: &'static str, args: &[Arg]) {
    let Some((effect, index, kind)) = handle_effect(name) else { return };
    let Some(p) = args.get(index).and_then(|a| a.val.addr()) else { return };
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let live = live.get_or_insert_with(HashMap::new);
    match effect {
        Effect::Create => {
            // The out-pointer of a successful create holds the new handle.
            let Some(h) = safe_read(p as *const usize).filter(|&h| h != 0) else { return };
            live.entry(h).or_insert(Live { kind, creator: name, refs: 0 }).refs += 1;
        }
        Effect::CreateArray { count, returned } => {
            let Some(mut n) = args.get(count).and_then(|a| a.val.integer()) else { return };
            if let Some(ret) = returned.and_then(|r| args.get(r)).and_then(|a| a.val.addr()).filter(|&r| r != 0) {
                n = n.min(safe_read(ret as *const u32).unwrap_or(0) as u64);
            }
            for i in 0..n as usize {
                let Some(h) = safe_read((p as *const usize).wrapping_add(i)).filter(|&h| h != 0) else { continue };
                live.entry(h).or_insert(Live { kind, creator: name, refs: 0 }).refs += 1;
            }
        }
        // A retain of a handle we never saw given out (a root device) is
        // counted from there: its release balances it.
        Effect::Retain => live.entry(p).or_insert(Live { kind, creator: name, refs: 0 }).refs += 1,
        Effect::Release => {
            if let Some(l) = live.get_mut(&p) {
                l.refs -= 1;
                if l.refs == 0 {
                    live.remove(&p);
                }
            }
        }
    }
}

/// Prints the handles still alive, per kind, and forgets them.
pub fn report(at_exit: bool) {
    REPORTED.store(true, Relaxed);
    let Some(sink) = SINK.get() else { return };
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
    if live.is_empty() {
        return;
    }
    let mut by_kind: BTreeMap<&str, Vec<(usize, &Live)>> = BTreeMap::new();
    for (h, l) in &live {
        by_kind.entry(l.kind).or_default().push((*h, l));
    }
    let when = if at_exit { "at exit (urLoaderTearDown was not called)" } else { "at urLoaderTearDown" };
    sink.log(Level::Error, &format!("leak check {when}: {} handle(s) not released", live.len()));
    for (kind, mut handles) in by_kind {
        handles.sort_by_key(|(h, _)| *h);
        sink.log(Level::Error, &format!("  {} {kind} handle(s):", handles.len()));
        for (h, l) in handles {
            sink.log(Level::Error, &format!("    {h:#x} from {}, {} reference(s) left", l.creator, l.refs));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live_of(kind: &str) -> Vec<(usize, &'static str, u64)> {
        let live = LIVE.lock().unwrap();
        let mut v: Vec<_> = live.iter().flatten().filter(|(_, l)| l.kind == kind).map(|(&h, l)| (h, l.creator, l.refs)).collect();
        v.sort();
        v
    }

    /// Sub-devices come back in an array: as many are counted as the
    /// adapter says it wrote, and each release balances one.
    #[test]
    fn sub_devices_from_an_array_are_counted_and_released() {
        let device = 0x1000usize as *mut u8;
        let props = std::ptr::null::<u8>();
        let num_devices = 3u32;
        let mut subs = [0x2000usize, 0x3000, 0x4000];
        let mut written = 2u32;
        let (subs_ptr, written_ptr) = (subs.as_mut_ptr(), &mut written as *mut u32);
        let arg = |name, ty, val| Arg { name, ty, val };
        record(
            "urDevicePartition",
            &[
                arg("hDevice", "ur_device_handle_t", &device),
                arg("pProperties", "*const ur_device_partition_properties_t", &props),
                arg("NumDevices", "u32", &num_devices),
                arg("phSubDevices", "*mut ur_device_handle_t", &subs_ptr),
                arg("pNumDevicesRet", "*mut u32", &written_ptr),
            ],
        );
        assert_eq!(live_of("device"), [(0x2000, "urDevicePartition", 1), (0x3000, "urDevicePartition", 1)]);
        let first = 0x2000usize as *mut u8;
        record("urDeviceRelease", &[arg("hDevice", "ur_device_handle_t", &first)]);
        assert_eq!(live_of("device"), [(0x3000, "urDevicePartition", 1)]);
    }
}
