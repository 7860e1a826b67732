//! Builds `src/util/longdouble.c`: INCRBYFLOAT's `long double` arithmetic
//! through the C library, as Redis does it (see `src/util/longdouble.rs`).

fn main() {
    println!("cargo:rerun-if-changed=src/util/longdouble.c");
    cc::Build::new()
        .file("src/util/longdouble.c")
        .warnings(true)
        .compile("ember_longdouble");
}
