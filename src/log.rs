//! Logging after UR's conventions: quiet by default; `UR_LOG_<NAME>` (for
//! example `UR_LOG_LOADER=level:debug;output:stderr`) turns a library's log
//! on. Each shared library links its own copy of this module and names itself
//! once with [`init`].

use std::io::Write;
use std::sync::{Mutex, OnceLock};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warning = 2,
    Error = 3,
    Quiet = 4,
}

struct Logger {
    name: &'static str,
    level: Level,
    to_stdout: bool,
}

static LOGGER: OnceLock<Logger> = OnceLock::new();

/// A user's logger callback (`urAdapterSetLoggerCallback`): it gets every
/// message at or above its level, whatever `UR_LOG_<NAME>` says.
#[derive(Clone, Copy)]
pub struct Callback {
    pub f: unsafe extern "C" fn(crate::abi::ur_logger_level_t, *const core::ffi::c_char, *mut core::ffi::c_void),
    pub user_data: usize,
}

static CALLBACK: Mutex<(Option<Callback>, Level)> = Mutex::new((None, Level::Quiet));

pub fn set_callback(cb: Option<Callback>, level: Level) {
    *CALLBACK.lock().unwrap_or_else(|e| e.into_inner()) = (cb, level);
}

pub fn set_callback_level(level: Level) {
    CALLBACK.lock().unwrap_or_else(|e| e.into_inner()).1 = level;
}

fn to_callback(level: Level, msg: &str) {
    let (cb, min) = *CALLBACK.lock().unwrap_or_else(|e| e.into_inner());
    let Some(cb) = cb else { return };
    if min == Level::Quiet || level < min {
        return;
    }
    let ur_level = crate::abi::ur_logger_level_t(level as u32);
    let text = std::ffi::CString::new(msg.replace('\0', " ")).unwrap_or_default();
    // SAFETY: the user registered this callback for exactly this call shape.
    unsafe { (cb.f)(ur_level, text.as_ptr(), cb.user_data as *mut core::ffi::c_void) };
}

/// Reads `UR_LOG_<name>` once. Later calls keep the first configuration.
pub fn init(name: &'static str) {
    LOGGER.get_or_init(|| {
        let spec = std::env::var(format!("UR_LOG_{name}")).unwrap_or_default();
        parse(name, &spec)
    });
}

fn parse(name: &'static str, spec: &str) -> Logger {
    let mut logger = Logger { name, level: Level::Quiet, to_stdout: false };
    if spec.is_empty() {
        return logger;
    }
    // A variable that is set but names no level means the default level.
    logger.level = Level::Info;
    for part in spec.split(';') {
        match part.trim().split_once(':') {
            Some(("level", v)) => {
                logger.level = match v {
                    "debug" => Level::Debug,
                    "info" => Level::Info,
                    "warning" => Level::Warning,
                    "error" => Level::Error,
                    _ => logger.level,
                }
            }
            Some(("output", v)) => logger.to_stdout = v == "stdout",
            _ => {}
        }
    }
    logger
}

pub fn enabled(level: Level) -> bool {
    LOGGER.get().is_some_and(|l| level >= l.level && l.level != Level::Quiet)
}

pub fn log(level: Level, msg: &str) {
    to_callback(level, msg);
    if let Some(l) = LOGGER.get() {
        emit(l, level, msg);
    }
}

/// A log of its own beside the library's, for a loader layer
/// (`UR_LOG_TRACING`): enabling the layer asks for its output, so an unset
/// variable means info to stderr; the variable overrides that as usual.
pub struct Sink(Logger);

impl Sink {
    pub fn from_env(name: &'static str) -> Sink {
        let spec = std::env::var(format!("UR_LOG_{name}")).unwrap_or_default();
        if spec.is_empty() {
            return Sink(Logger { name, level: Level::Info, to_stdout: false });
        }
        Sink(parse(name, &spec))
    }

    pub fn log(&self, level: Level, msg: &str) {
        emit(&self.0, level, msg)
    }
}

fn emit(l: &Logger, level: Level, msg: &str) {
    if l.level == Level::Quiet || level < l.level {
        return;
    }
    let line = format!("<{}>[{:?}]: {}\n", l.name, level, msg);
    if l.to_stdout {
        let _ = std::io::stdout().write_all(line.as_bytes());
    } else {
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// The words of a build note: see [`build_note`].
const BUILD_NOTE: (&str, &str, &str) = ("program build: ", " compile(s) for ", " device(s)");

/// Logs, at info level, how many compilations a program build asked of the
/// driver for how many devices. Devices of one target share a compilation,
/// so a test can count them through `urAdapterSetLoggerCallback` with
/// [`parse_build_note`].
pub fn build_note(compiles: usize, devices: usize) {
    let (a, b, c) = BUILD_NOTE;
    info(&format!("{a}{compiles}{b}{devices}{c}"))
}

/// `(compiles, devices)` of a [`build_note`] message.
pub fn parse_build_note(msg: &str) -> Option<(usize, usize)> {
    let (a, b, c) = BUILD_NOTE;
    let (compiles, devices) = msg.strip_prefix(a)?.strip_suffix(c)?.split_once(b)?;
    Some((compiles.parse().ok()?, devices.parse().ok()?))
}

pub fn debug(msg: &str) {
    log(Level::Debug, msg)
}
pub fn info(msg: &str) {
    log(Level::Info, msg)
}
pub fn warning(msg: &str) {
    log(Level::Warning, msg)
}
pub fn error(msg: &str) {
    log(Level::Error, msg)
}

#[cfg(test)]
mod tests {
    #[test]
    fn build_notes_read_back() {
        let (a, b, c) = super::BUILD_NOTE;
        assert_eq!(super::parse_build_note(&format!("{a}1{b}2{c}")), Some((1, 2)));
        assert_eq!(super::parse_build_note("program build: x"), None);
    }

    use super::*;

    #[test]
    fn spec_parsing() {
        let l = parse("X", "level:debug;output:stdout");
        assert_eq!(l.level, Level::Debug);
        assert!(l.to_stdout);
        assert_eq!(parse("X", "").level, Level::Quiet);
        assert_eq!(parse("X", "output:stderr").level, Level::Info);
    }
}
