fn main() {
    // The file name UR loaders dlopen (UR_ADAPTERS_FORCE_LOAD, discovery).
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libur_adapter_native_cpu.so.0");
}
