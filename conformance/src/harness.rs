//! The case registry, the fixtures cases run in, and the `check!` family.
//!
//! A case is an `unsafe fn` from a fixture to [`CaseResult`]: its body is a
//! sequence of C calls with raw pointers, each unsafe for the same reason (the
//! arguments must meet the entry point's contract, or be one of the errors the
//! case asserts), so the whole body is one unsafe context. Cases own what they
//! create through [`Owned`] and [`Usm`] guards, which release on every path.

use crate::ur::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use ur_core::abi::*;

/// Why a case did not pass.
#[derive(Debug)]
pub enum Outcome {
    Fail(String),
    /// The device truthfully lacks the feature (it says so through an info
    /// query, or through a return code the reference allows), or the case is
    /// a listed known disagreement (`bad_inputs::KNOWN_DISAGREEMENTS`).
    Skip(String),
}

impl From<String> for Outcome {
    fn from(reason: String) -> Self {
        Outcome::Fail(reason)
    }
}

impl From<&str> for Outcome {
    fn from(reason: &str) -> Self {
        Outcome::Fail(reason.to_string())
    }
}

impl From<CallError> for Outcome {
    fn from(e: CallError) -> Self {
        Outcome::Fail(e.to_string())
    }
}

pub type CaseResult = Result<(), Outcome>;

/// What a case needs, which decides where and how often it runs.
pub enum Body {
    /// Runs alone in a new process whose loader is not initialised yet.
    FreshProcess(unsafe fn(&Api) -> CaseResult),
    /// Runs once, after `urLoaderInit`.
    Loader(unsafe fn(&LoaderFx) -> CaseResult),
    /// Runs for every selected adapter.
    Adapter(unsafe fn(&AdapterFx) -> CaseResult),
    /// Runs for every selected platform.
    Platform(unsafe fn(&PlatformFx) -> CaseResult),
    /// Runs for every selected device, with a fresh context and queue.
    Device(unsafe fn(&DeviceFx) -> CaseResult),
}

/// One named test case. Names are `urEntryPoint.what_it_checks`.
pub struct Case {
    pub name: &'static str,
    pub body: Body,
}

impl Case {
    pub const fn fresh_process(name: &'static str, f: unsafe fn(&Api) -> CaseResult) -> Case {
        Case { name, body: Body::FreshProcess(f) }
    }
    pub const fn loader(name: &'static str, f: unsafe fn(&LoaderFx) -> CaseResult) -> Case {
        Case { name, body: Body::Loader(f) }
    }
    pub const fn adapter(name: &'static str, f: unsafe fn(&AdapterFx) -> CaseResult) -> Case {
        Case { name, body: Body::Adapter(f) }
    }
    pub const fn platform(name: &'static str, f: unsafe fn(&PlatformFx) -> CaseResult) -> Case {
        Case { name, body: Body::Platform(f) }
    }
    pub const fn device(name: &'static str, f: unsafe fn(&DeviceFx) -> CaseResult) -> Case {
        Case { name, body: Body::Device(f) }
    }

    /// The entry point a case is about: its name up to the first dot.
    pub fn entry_point(&self) -> &'static str {
        self.name.split('.').next().unwrap_or(self.name)
    }

    pub fn scope(&self) -> &'static str {
        match self.body {
            Body::FreshProcess(_) => "process",
            Body::Loader(_) => "loader",
            Body::Adapter(_) => "adapter",
            Body::Platform(_) => "platform",
            Body::Device(_) => "device",
        }
    }
}

/// Fails the case with a formatted reason unless `cond` holds.
#[macro_export]
macro_rules! check {
    ($cond:expr, $($reason:tt)+) => {
        if !$cond {
            return Err($crate::harness::Outcome::Fail(format!("{} (line {})", format!($($reason)+), line!())));
        }
    };
}

/// Fails the case unless the two values are equal.
#[macro_export]
macro_rules! check_eq {
    ($left:expr, $right:expr) => {{
        let (left, right) = (&$left, &$right);
        if left != right {
            return Err($crate::harness::Outcome::Fail(format!(
                "{} is {:?}, expected {:?} (line {})",
                stringify!($left),
                left,
                right,
                line!()
            )));
        }
    }};
}

/// Calls an entry point (an `Api` method) and fails the case unless it
/// returns `expected`. A missing entry point fails the case too.
#[macro_export]
macro_rules! expect_result {
    ($expected:expr, $call:expr) => {{
        let expected: ur_core::abi::ur_result_t = $expected;
        let got = $call?;
        if got != expected {
            return Err($crate::harness::Outcome::Fail(format!(
                "{} returned {}, expected {} (line {})",
                $crate::harness::call_text(stringify!($call)),
                $crate::names::result_name(got),
                $crate::names::result_name(expected),
                line!()
            )));
        }
    }};
}

/// Calls an entry point and fails the case unless it succeeds.
#[macro_export]
macro_rules! expect_success {
    ($call:expr) => {
        $crate::expect_result!(ur_core::abi::UR_RESULT_SUCCESS, $call)
    };
}

/// Ends the case as skipped, with a reason.
#[macro_export]
macro_rules! skip {
    ($($reason:tt)+) => {
        return Err($crate::harness::Outcome::Skip(format!($($reason)+)))
    };
}

/// A call as written in a case, without the fixture prefix.
pub fn call_text(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    text.trim_start_matches("fx.api.").trim_start_matches("api.").replace("fx.api.", "").to_string()
}

// ---------------------------------------------------------------------------
// Guards

/// A handle that is released when the guard drops.
pub struct Owned<T> {
    handle: *mut T,
    release: Option<unsafe extern "C" fn(*mut T) -> ur_result_t>,
}

impl<T> Owned<T> {
    /// Takes over one reference of `handle`, released with `release`.
    pub fn new(handle: *mut T, release: Option<unsafe extern "C" fn(*mut T) -> ur_result_t>) -> Self {
        Owned { handle, release }
    }

    pub fn get(&self) -> *mut T {
        self.handle
    }

    /// Releases now and returns what the release returned.
    pub fn release(mut self) -> Result<ur_result_t, String> {
        let handle = std::mem::replace(&mut self.handle, null_mut());
        match self.release {
            // SAFETY: the guard owns one reference of `handle`.
            Some(release) => Ok(unsafe { release(handle) }),
            None => Err("the loader exports no release entry point for this handle".into()),
        }
    }
}

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        if let (false, Some(release)) = (self.handle.is_null(), self.release) {
            // SAFETY: the guard owns one reference of `handle`.
            unsafe { release(self.handle) };
        }
    }
}

pub type OwnedContext = Owned<ur_context_handle_t_>;
pub type OwnedQueue = Owned<ur_queue_handle_t_>;
pub type OwnedEvent = Owned<ur_event_handle_t_>;
pub type OwnedPool = Owned<ur_usm_pool_handle_t_>;
pub type OwnedConfig = Owned<ur_loader_config_handle_t_>;
pub type OwnedProgram = Owned<ur_program_handle_t_>;
pub type OwnedKernel = Owned<ur_kernel_handle_t_>;

/// A USM allocation, freed with `urUSMFree` when the guard drops.
pub struct Usm<'a> {
    api: &'a Api,
    context: ur_context_handle_t,
    pub ptr: *mut c_void,
    pub size: usize,
}

impl Usm<'_> {
    pub fn bytes(&self) -> *mut u8 {
        self.ptr.cast()
    }

    /// The allocation's address `offset` bytes in.
    pub fn at(&self, offset: usize) -> *mut c_void {
        self.bytes().wrapping_add(offset).cast()
    }

    /// Frees now and returns what `urUSMFree` returned.
    pub fn free(mut self) -> Result<ur_result_t, String> {
        let ptr = std::mem::replace(&mut self.ptr, null_mut());
        // SAFETY: the guard owns the allocation.
        unsafe { self.api.urUSMFree(self.context, ptr) }
    }
}

impl Drop for Usm<'_> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: the guard owns the allocation.
            let _ = unsafe { self.api.urUSMFree(self.context, self.ptr) };
        }
    }
}

/// The kinds of USM allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UsmKind {
    Host,
    Device,
    Shared,
}

// ---------------------------------------------------------------------------
// Fixtures

/// For cases about the loader itself.
pub struct LoaderFx<'a> {
    pub api: &'a Api,
    pub topology: &'a Topology<'a>,
}

/// One adapter the loader reported.
pub struct AdapterFx<'a> {
    pub api: &'a Api,
    pub adapter: ur_adapter_handle_t,
    pub backend: ur_backend_t,
}

/// One platform and its adapter.
pub struct PlatformFx<'a> {
    pub api: &'a Api,
    pub adapter: ur_adapter_handle_t,
    pub platform: ur_platform_handle_t,
    pub backend: ur_backend_t,
}

/// One device, with a context of that device and an in-order queue made for
/// this case alone.
pub struct DeviceFx<'a> {
    pub api: &'a Api,
    pub adapter: ur_adapter_handle_t,
    pub platform: ur_platform_handle_t,
    pub device: ur_device_handle_t,
    pub backend: ur_backend_t,
    pub context: ur_context_handle_t,
    pub queue: ur_queue_handle_t,
}

impl<'a> DeviceFx<'a> {
    /// Creates the context and the in-order queue.
    ///
    /// # Safety
    /// `device` must be a live device of `platform`.
    pub unsafe fn new(
        api: &'a Api,
        adapter: ur_adapter_handle_t,
        platform: ur_platform_handle_t,
        backend: ur_backend_t,
        device: ur_device_handle_t,
    ) -> Result<Self, Outcome> {
        let mut context = null_mut();
        success("fixture: urContextCreate", api.urContextCreate(1, &device, null(), &mut context))?;
        let mut queue = null_mut();
        if let Err(e) = success("fixture: urQueueCreate", api.urQueueCreate(context, device, null(), &mut queue)) {
            api.urContextRelease(context).ok();
            return Err(e.into());
        }
        Ok(DeviceFx { api, adapter, platform, device, backend, context, queue })
    }

    /// Reference counts of the fixture's context and queue.
    unsafe fn reference_counts(&self) -> Result<(u32, u32), CallError> {
        let context = self.api.context_info::<u32>(self.context, UR_CONTEXT_INFO_REFERENCE_COUNT)?;
        let queue = self.api.queue_info::<u32>(self.queue, UR_QUEUE_INFO_REFERENCE_COUNT)?;
        Ok((context, queue))
    }

    /// Runs a case, then checks that it leaked nothing:
    /// - the fixture's context and queue have the reference counts they had
    ///   before the case (a forgotten `urContextRetain` shows here);
    /// - once the fixture releases its queue and context, the context is
    ///   destroyed, which its extended deleter reports; a queue, event or pool
    ///   the case forgot to release keeps it alive. Adapters without
    ///   extended deleters skip this half (urContextSetExtendedDeleter has
    ///   its own case).
    ///
    /// # Safety
    /// `case` must be a conformance case body.
    pub unsafe fn run(mut self, case: unsafe fn(&DeviceFx) -> CaseResult) -> CaseResult {
        // Leaked, so that a deleter that runs late never writes freed memory.
        let destroyed: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let user_data = destroyed as *const AtomicBool as *mut c_void;
        let watched = matches!(
            self.api.urContextSetExtendedDeleter(self.context, Some(note_destroyed), user_data),
            Ok(UR_RESULT_SUCCESS)
        );
        let before = self.reference_counts()?;
        case(&self)?;
        success("fixture: urQueueFinish", self.api.urQueueFinish(self.queue))?;
        // Adapter threads may drop their references just after the work
        // they did completes; give them a moment before calling it a leak.
        let counts_settled = eventually(Duration::from_secs(2), || self.reference_counts().ok() == Some(before));
        if !counts_settled {
            let after = self.reference_counts()?;
            return Err(Outcome::Fail(format!(
                "the case leaked references: (context, queue) reference counts were {before:?} before it, {after:?} after"
            )));
        }
        let (queue, context) = (std::mem::replace(&mut self.queue, null_mut()), std::mem::replace(&mut self.context, null_mut()));
        success("fixture: urQueueRelease", self.api.urQueueRelease(queue))?;
        success("fixture: urContextRelease", self.api.urContextRelease(context))?;
        if watched && !eventually(Duration::from_secs(5), || destroyed.load(Ordering::SeqCst)) {
            return Err(Outcome::Fail(
                "the context was not destroyed when the fixture released it after the case: something the case \
                 created still holds it (a queue, event or pool never released)"
                    .into(),
            ));
        }
        Ok(())
    }

    // -- helpers cases share ------------------------------------------------

    /// Allocates `size` bytes of USM of `kind` (no descriptor, default
    /// pool), or skips the case when the device says it has no USM of that
    /// kind.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn alloc(&self, kind: UsmKind, size: usize) -> Result<Usm<'a>, Outcome> {
        self.require_kind(kind)?;
        let mut ptr = null_mut();
        let (call, code) = match kind {
            UsmKind::Host => {
                ("urUSMHostAlloc", self.api.urUSMHostAlloc(self.context, null(), null_mut(), size, &mut ptr))
            }
            UsmKind::Device => (
                "urUSMDeviceAlloc",
                self.api.urUSMDeviceAlloc(self.context, self.device, null(), null_mut(), size, &mut ptr),
            ),
            UsmKind::Shared => (
                "urUSMSharedAlloc",
                self.api.urUSMSharedAlloc(self.context, self.device, null(), null_mut(), size, &mut ptr),
            ),
        };
        success(format!("{call}({size} bytes)"), code)?;
        if ptr.is_null() {
            return Err(format!("{call} succeeded but returned a null pointer").into());
        }
        Ok(Usm { api: self.api, context: self.context, ptr, size })
    }

    /// Whether the device can make USM allocations of `kind`, from its
    /// `UR_DEVICE_INFO_USM_*_SUPPORT` answers.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn supports(&self, kind: UsmKind) -> Result<bool, Outcome> {
        let caps = |prop| self.api.device_info::<ur_device_usm_access_capability_flags_t>(self.device, prop);
        Ok(match kind {
            UsmKind::Host => caps(UR_DEVICE_INFO_USM_HOST_SUPPORT)? != 0,
            UsmKind::Device => caps(UR_DEVICE_INFO_USM_DEVICE_SUPPORT)? != 0,
            UsmKind::Shared => {
                caps(UR_DEVICE_INFO_USM_SINGLE_SHARED_SUPPORT)? != 0
                    || caps(UR_DEVICE_INFO_USM_CROSS_SHARED_SUPPORT)? != 0
            }
        })
    }

    /// Skips the case unless the device offers USM of `kind`.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn require_kind(&self, kind: UsmKind) -> CaseResult {
        if !self.supports(kind)? {
            return Err(Outcome::Skip(format!("the device reports no {kind:?} USM support")));
        }
        Ok(())
    }

    /// Skips the case unless the device answers true to the `ur_bool_t`
    /// capability `prop`; `lacks` names it in the reason.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn require(&self, prop: ur_device_info_t, lacks: &str) -> CaseResult {
        if self.api.device_info::<ur_bool_t>(self.device, prop)? == 0 {
            return Err(Outcome::Skip(format!("the device reports no {lacks}")));
        }
        Ok(())
    }

    /// The USM kinds the device can allocate, host, device, shared order.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn supported_kinds(&self) -> Result<Vec<UsmKind>, Outcome> {
        let mut kinds = Vec::new();
        for kind in [UsmKind::Host, UsmKind::Device, UsmKind::Shared] {
            if self.supports(kind)? {
                kinds.push(kind);
            }
        }
        Ok(kinds)
    }

    /// Creates a queue with `flags`.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn create_queue(&self, flags: ur_queue_flags_t) -> Result<OwnedQueue, Outcome> {
        let properties = ur_queue_properties_t { stype: UR_STRUCTURE_TYPE_QUEUE_PROPERTIES, pNext: null_mut(), flags };
        let mut queue = null_mut();
        success(
            format!("urQueueCreate(flags 0x{flags:x})"),
            self.api.urQueueCreate(self.context, self.device, &properties, &mut queue),
        )?;
        Ok(self.own_queue(queue))
    }

    /// An out-of-order queue, or a skip when the device offers none.
    ///
    /// # Safety
    /// The fixture must be live.
    pub unsafe fn out_of_order_queue(&self) -> Result<OwnedQueue, Outcome> {
        let supported = self.api.device_info::<ur_queue_flags_t>(self.device, UR_DEVICE_INFO_QUEUE_PROPERTIES)?;
        if supported & UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0 == 0 {
            return Err(Outcome::Skip("the device reports no out-of-order queues".into()));
        }
        self.create_queue(UR_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE.0)
    }

    pub fn own_queue(&self, queue: ur_queue_handle_t) -> OwnedQueue {
        Owned::new(queue, self.api.fns.urQueueRelease)
    }

    pub fn own_event(&self, event: ur_event_handle_t) -> OwnedEvent {
        Owned::new(event, self.api.fns.urEventRelease)
    }

    pub fn own_context(&self, context: ur_context_handle_t) -> OwnedContext {
        Owned::new(context, self.api.fns.urContextRelease)
    }

    pub fn own_pool(&self, pool: ur_usm_pool_handle_t) -> OwnedPool {
        Owned::new(pool, self.api.fns.urUSMPoolRelease)
    }

    /// Copies `len` bytes at `src` (any USM) into a host vector with a
    /// blocking copy on `queue`.
    ///
    /// # Safety
    /// `src` must hold `len` readable bytes for the device.
    pub unsafe fn read(&self, queue: ur_queue_handle_t, src: *const c_void, len: usize) -> Result<Vec<u8>, Outcome> {
        self.read_after(queue, src, len, &[])
    }

    /// [`read`](Self::read) once the events in `wait` are complete.
    ///
    /// # Safety
    /// `src` must hold `len` readable bytes for the device; `wait` must hold
    /// live events.
    pub unsafe fn read_after(
        &self,
        queue: ur_queue_handle_t,
        src: *const c_void,
        len: usize,
        wait: &[ur_event_handle_t],
    ) -> Result<Vec<u8>, Outcome> {
        let mut out = vec![0u8; len];
        let (n, events) = wait_list(wait);
        success(
            "urEnqueueUSMMemcpy(blocking, to host)",
            self.api.urEnqueueUSMMemcpy(queue, true, out.as_mut_ptr().cast(), src, len, n, events, null_mut()),
        )?;
        Ok(out)
    }

    /// Fills `size` bytes at `ptr` with `pattern` after `wait`, without
    /// blocking; the fill must succeed and return an event.
    ///
    /// # Safety
    /// `ptr` must hold `size` writable bytes for the device; `wait` must hold
    /// live events.
    pub unsafe fn fill(
        &self,
        queue: ur_queue_handle_t,
        ptr: *mut c_void,
        pattern: &[u8],
        size: usize,
        wait: &[ur_event_handle_t],
    ) -> Result<OwnedEvent, Outcome> {
        let (n, events) = wait_list(wait);
        let mut event = null_mut();
        let call = format!("urEnqueueUSMFill(pattern of {} bytes, size {size})", pattern.len());
        success(
            call.as_str(),
            self.api.urEnqueueUSMFill(queue, ptr, pattern.len(), pattern.as_ptr().cast(), size, n, events, &mut event),
        )?;
        if event.is_null() {
            return Err(format!("{call} returned a null event").into());
        }
        Ok(self.own_event(event))
    }

    /// Copies `size` bytes from `src` to `dst` after `wait`, without
    /// blocking; the copy must succeed and return an event.
    ///
    /// # Safety
    /// `src` and `dst` must hold `size` bytes the device can read and write;
    /// `wait` must hold live events.
    pub unsafe fn copy(
        &self,
        queue: ur_queue_handle_t,
        dst: *mut c_void,
        src: *const c_void,
        size: usize,
        wait: &[ur_event_handle_t],
    ) -> Result<OwnedEvent, Outcome> {
        let (n, events) = wait_list(wait);
        let mut event = null_mut();
        let call = format!("urEnqueueUSMMemcpy(size {size})");
        success(call.as_str(), self.api.urEnqueueUSMMemcpy(queue, false, dst, src, size, n, events, &mut event))?;
        if event.is_null() {
            return Err(format!("{call} returned a null event").into());
        }
        Ok(self.own_event(event))
    }

    /// Copies `data` into `dst` (any USM) with a blocking copy on `queue`.
    ///
    /// # Safety
    /// `dst` must hold `data.len()` writable bytes for the device.
    pub unsafe fn write(&self, queue: ur_queue_handle_t, dst: *mut c_void, data: &[u8]) -> CaseResult {
        success(
            "urEnqueueUSMMemcpy(blocking, from host)",
            self.api.urEnqueueUSMMemcpy(queue, true, dst, data.as_ptr().cast(), data.len(), 0, null(), null_mut()),
        )?;
        Ok(())
    }

    /// The execution status of an event.
    ///
    /// # Safety
    /// `event` must be live.
    pub unsafe fn status(&self, event: ur_event_handle_t) -> Result<ur_event_status_t, Outcome> {
        Ok(self.api.event_info::<ur_event_status_t>(event, UR_EVENT_INFO_COMMAND_EXECUTION_STATUS)?)
    }

    /// Waits for one event.
    ///
    /// # Safety
    /// `event` must be live.
    pub unsafe fn wait(&self, event: ur_event_handle_t) -> CaseResult {
        success("urEventWait", self.api.urEventWait(1, &event))?;
        Ok(())
    }
}

impl Drop for DeviceFx<'_> {
    fn drop(&mut self) {
        // SAFETY: the fixture owns one reference of each it still holds
        // (`run` releases them itself when the case passes).
        unsafe {
            if !self.queue.is_null() {
                let _ = self.api.urQueueFinish(self.queue);
                let _ = self.api.urQueueRelease(self.queue);
            }
            if !self.context.is_null() {
                let _ = self.api.urContextRelease(self.context);
            }
        }
    }
}

/// The fixture context's extended deleter: records that it ran.
unsafe extern "C" fn note_destroyed(user_data: *mut c_void) {
    // SAFETY: the fixture passes a leaked `AtomicBool`.
    (*(user_data as *const AtomicBool)).store(true, Ordering::SeqCst);
}

/// Runs `body` on the fixture's in-order queue, then on a new out-of-order
/// queue when the device offers one. Bodies order their commands with
/// events, so they are correct on both.
///
/// # Safety
/// The fixture must be live.
pub unsafe fn on_each_queue_kind(fx: &DeviceFx, body: impl Fn(ur_queue_handle_t, &str) -> CaseResult) -> CaseResult {
    body(fx.queue, "in-order queue")?;
    match fx.out_of_order_queue() {
        Ok(queue) => body(queue.get(), "out-of-order queue"),
        // An in-order-only device has passed on the only kind it offers.
        Err(Outcome::Skip(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// The `(numEventsInWaitList, phEventWaitList)` arguments of `wait`: a null
/// list when it is empty, as the entry points require.
pub fn wait_list(wait: &[ur_event_handle_t]) -> (u32, *const ur_event_handle_t) {
    if wait.is_empty() {
        (0, null())
    } else {
        (wait.len() as u32, wait.as_ptr())
    }
}

/// A handle that no adapter made: a pointer to zeroed, read-only memory.
/// Loaders and adapters that check handles reject it with the
/// invalid-object code of its type; ones that follow it blindly crash
/// (which `--isolate` contains).
pub fn foreign_handle<T>() -> *mut T {
    static NOT_AN_OBJECT: [u64; 64] = [0; 64];
    NOT_AN_OBJECT.as_ptr() as *mut T
}

/// A byte pattern that differs at every offset of a small buffer.
pub fn pattern_bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

/// Compares two buffers and names the first difference.
pub fn compare(what: &str, got: &[u8], expected: &[u8]) -> CaseResult {
    if got.len() != expected.len() {
        return Err(format!("{what}: {} bytes, expected {}", got.len(), expected.len()).into());
    }
    match got.iter().zip(expected).position(|(g, e)| g != e) {
        None => Ok(()),
        Some(i) => Err(format!("{what}: byte {i} is 0x{:02x}, expected 0x{:02x}", got[i], expected[i]).into()),
    }
}

pub use ur_core::poll::eventually;

/// How long [`eventually`] waits for a callback that must come.
pub const CALLBACK_LIMIT: Duration = Duration::from_secs(10);

/// Checks the `(propSize, pPropValue, pPropSizeRet)` rules that every
/// `ur*GetInfo` shares, on a query that succeeds when called properly:
/// size query, exact and larger buffers, `INVALID_SIZE` for a zero or short
/// size with a buffer, `INVALID_NULL_POINTER` for a size without a buffer and
/// for no output at all.
///
/// # Safety
/// `query(size, value, size_ret)` must call the info entry point with those
/// three arguments and valid other arguments.
pub unsafe fn info_size_protocol(
    what: &str,
    query: impl Fn(usize, *mut c_void, *mut usize) -> Result<ur_result_t, String>,
) -> CaseResult {
    let expect = |expected: ur_result_t, got: Result<ur_result_t, String>, how: &str| -> CaseResult {
        expect_code(expected, got?, &format!("{what} with {how}"))
    };
    let mut size = 0usize;
    expect(UR_RESULT_SUCCESS, query(0, null_mut(), &mut size), "only pPropSizeRet")?;
    if size == 0 {
        return Err(format!("{what} reported a size of 0").into());
    }
    let mut buffer = vec![0u8; size + 16];
    let mut size_ret = 0usize;
    expect(UR_RESULT_SUCCESS, query(size, buffer.as_mut_ptr().cast(), &mut size_ret), "the exact size")?;
    if size_ret != size {
        return Err(format!("{what}: pPropSizeRet {size_ret} with a buffer, {size} without").into());
    }
    size_ret = 0;
    expect(UR_RESULT_SUCCESS, query(size + 16, buffer.as_mut_ptr().cast(), &mut size_ret), "a larger buffer")?;
    if size_ret != size {
        return Err(format!("{what}: pPropSizeRet {size_ret} with a larger buffer, {size} otherwise").into());
    }
    expect(UR_RESULT_SUCCESS, query(size, buffer.as_mut_ptr().cast(), null_mut()), "no pPropSizeRet")?;
    expect(UR_RESULT_ERROR_INVALID_SIZE, query(0, buffer.as_mut_ptr().cast(), null_mut()), "propSize 0 and a buffer")?;
    expect(
        UR_RESULT_ERROR_INVALID_SIZE,
        query(size - 1, buffer.as_mut_ptr().cast(), null_mut()),
        "a buffer one byte short",
    )?;
    expect(UR_RESULT_ERROR_INVALID_NULL_POINTER, query(size, null_mut(), null_mut()), "propSize but no buffer")?;
    expect(UR_RESULT_ERROR_INVALID_NULL_POINTER, query(0, null_mut(), null_mut()), "no output pointer")?;
    Ok(())
}

/// Fails unless a code already obtained from `call` is `expected`.
pub fn expect_code(expected: ur_result_t, got: ur_result_t, call: &str) -> CaseResult {
    if got != expected {
        return Err(Outcome::Fail(format!(
            "{call} returned {}, expected {}",
            crate::names::result_name(got),
            crate::names::result_name(expected)
        )));
    }
    Ok(())
}

/// Size checks from a table: each row of `rows`, the arguments `call`
/// passes to `entry` and how they are wrong, is `INVALID_SIZE`.
pub fn invalid_sizes<A>(
    entry: &str,
    rows: impl IntoIterator<Item = (A, &'static str)>,
    call: impl Fn(A) -> Result<ur_result_t, String>,
) -> CaseResult {
    for (args, how) in rows {
        expect_code(UR_RESULT_ERROR_INVALID_SIZE, call(args)?, &format!("{entry} with {how}"))?;
    }
    Ok(())
}

/// The wait-list errors every enqueue shares, on an enqueue that succeeds
/// with a proper list: a count without a list, a list without a count, and a
/// list holding a null handle, a handle no adapter made, or a queue.
///
/// # Safety
/// `enqueue(n, list)` must call the entry point with that wait list and
/// otherwise valid arguments.
pub unsafe fn bad_wait_lists(
    fx: &DeviceFx,
    enqueue: impl Fn(u32, *const ur_event_handle_t) -> Result<ur_result_t, String>,
) -> CaseResult {
    let mut done = null_mut();
    success("urEnqueueEventsWait", fx.api.urEnqueueEventsWait(fx.queue, 0, null(), &mut done))?;
    let done = fx.own_event(done);
    fx.wait(done.get())?;
    let done = done.get();
    let expect = |list_len: u32, list: *const ur_event_handle_t, how: &str| -> CaseResult {
        expect_code(
            UR_RESULT_ERROR_INVALID_EVENT_WAIT_LIST,
            enqueue(list_len, list)?,
            &format!("an enqueue with {how}"),
        )
    };
    expect(1, null(), "1 event and a null list")?;
    expect(0, &done, "a list and 0 events")?;
    expect(2, [done, null_mut()].as_ptr(), "a null event in its list")?;
    expect(2, [done, foreign_handle()].as_ptr(), "a handle no adapter made in its list")?;
    expect(2, [done, fx.queue.cast()].as_ptr(), "a queue handle in its list")?;
    Ok(())
}
