//! Logging after UR's conventions: quiet by default; `UR_LOG_<NAME>` (for
//! example `UR_LOG_LOADER=level:debug;output:stderr`) turns a library's log
//! on. Each shared library links its own copy of this module and names itself
//! once with [`init`].

use std::io::Write;
use std::sync::OnceLock;

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
    let Some(l) = LOGGER.get() else { return };
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
