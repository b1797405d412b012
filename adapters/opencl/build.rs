fn main() {
    // The name UR loaders dlopen.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libur_adapter_opencl.so.0");
}
