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
    set_soname();
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

/// Names the shared library the way cargo-c does, so programs record a name that only a
/// compatible release answers to: `libmcpmux.so.0.MINOR` while the version is 0.x (each 0.x
/// minor release may break the ABI), `libmcpmux.so.MAJOR` from 1.0 on.
/// `scripts/install-c.sh` installs the file under that name with its two links.
fn set_soname() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let part = |name: &str| std::env::var(name).expect("cargo sets the package version");
    let (major, minor) = (
        part("CARGO_PKG_VERSION_MAJOR"),
        part("CARGO_PKG_VERSION_MINOR"),
    );
    let soname = if major == "0" {
        format!("libmcpmux.so.0.{minor}")
    } else {
        format!("libmcpmux.so.{major}")
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
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
