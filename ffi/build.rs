//! Names the shared library (its SONAME). The header is not generated here but by the test
//! `tests/header.rs`: cbindgen as a build dependency would turn on `syn`'s `fold` for every
//! proc macro of the library's build, which the Python and Node bindings' builds do not, so
//! the core and everything built with a proc macro would compile twice in scripts/dist.sh.

fn main() {
    set_soname();
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
