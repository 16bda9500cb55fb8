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
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("ffi/cbindgen.toml is readable");
    config.after_includes = Some(version_macros());
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

/// The version of the header, from the crate's (the workspace's one version): a program can
/// check at compile time what it builds against, and compare with `mcpmux_version()` at run
/// time to find a header and a library of different releases.
fn version_macros() -> String {
    let part = |name: &str| std::env::var(name).expect("cargo sets the package version");
    let (major, minor, patch) = (
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
        part("CARGO_PKG_VERSION_PATCH"),
    );
    format!(
        "\n/** The version of this header: compare with mcpmux_version() to find a library of \
         another release. */\n\
         #define MCPMUX_VERSION_MAJOR {major}\n\
         #define MCPMUX_VERSION_MINOR {minor}\n\
         #define MCPMUX_VERSION_PATCH {patch}\n\
         #define MCPMUX_VERSION \"{}\"\n\
         /** MCPMUX_VERSION_MAJOR, _MINOR, _PATCH as one number, e.g. 0.1.0 -> 100, to compare \
         with `#if`. */\n\
         #define MCPMUX_VERSION_NUMBER ({major} * 10000 + {minor} * 100 + {patch})",
        part("CARGO_PKG_VERSION")
    )
}
