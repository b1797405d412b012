fn main() {
    // The name UR programs link against and loaders dlopen.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libur_loader.so.0");
}
