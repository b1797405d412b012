fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libur_adapter_cuda.so.0");
}
