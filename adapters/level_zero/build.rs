fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libur_adapter_level_zero.so.0");
}
