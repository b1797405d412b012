// With feature `afl`: link AFL++'s compiler runtime into the fuzz binary only,
// and export its symbols so that the instrumented loader and adapter (dlopen'ed,
// built with the same sancov flags) report their edges into the same map.
fn main() {
    println!("cargo:rerun-if-env-changed=AFL_RT");
    if std::env::var_os("CARGO_FEATURE_AFL").is_some() {
        let rt = std::env::var("AFL_RT").unwrap_or_else(|_| "/usr/lib/afl/afl-compiler-rt.o".into());
        println!("cargo:rustc-link-arg-bins={rt}");
        println!("cargo:rustc-link-arg-bins=-Wl,--export-dynamic");
    }
}
