//! Generates the C header from the exported functions with cbindgen (the pinned crate, so
//! no separately installed tool is needed). The header is written to OUT_DIR; the test
//! `tests/header.rs` fails when the committed `include/mcpmux.h` differs from it, and
//! `MCPMUX_UPDATE_HEADER=1` makes this script refresh the committed copy.

use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("mcpmux.h");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=MCPMUX_UPDATE_HEADER");
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml is readable");
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header");
    bindings.write_to_file(&out);
    if std::env::var_os("MCPMUX_UPDATE_HEADER").is_some_and(|v| v == "1") {
        bindings.write_to_file(crate_dir.join("../include/mcpmux.h"));
    }
}
