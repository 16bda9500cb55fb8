//! The header, generated here with cbindgen from the sources (not by a build script: see
//! build.rs), must be exactly the committed `include/mcpmux.h`. Refresh the committed copy with
//! `MCPMUX_UPDATE_HEADER=1 cargo test -p mcpmux-ffi --test header`.

use std::path::Path;
use std::sync::OnceLock;

/// The header cbindgen writes from `src/` with `cbindgen.toml`, generated once per test run.
fn header() -> &'static str {
    static HEADER: OnceLock<String> = OnceLock::new();
    HEADER.get_or_init(|| {
        let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
            .expect("ffi/cbindgen.toml is readable");
        config.after_includes = Some(version_macros());
        let mut text = Vec::new();
        cbindgen::Builder::new()
            .with_crate(crate_dir)
            .with_config(config)
            .generate()
            .expect("cbindgen generates the header")
            .write(&mut text);
        String::from_utf8(text).expect("the header is UTF-8")
    })
}

/// The version of the header, from the crate's (the workspace's one version): a program can
/// check at compile time what it builds against, and compare with `mcpmux_version()` at run
/// time to find a header and a library of different releases.
fn version_macros() -> String {
    let (major, minor, patch) = (
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
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
        env!("CARGO_PKG_VERSION")
    )
}

#[test]
fn committed_header_matches_the_sources() {
    let generated = header();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/mcpmux.h");
    if std::env::var_os("MCPMUX_UPDATE_HEADER").is_some_and(|v| v == "1") {
        std::fs::write(path, generated).expect("include/mcpmux.h is writable");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .map_or_else(
                || "one is a prefix of the other".to_string(),
                |i| format!("first difference at line {}", i + 1),
            );
        panic!(
            "include/mcpmux.h is out of date ({line}); refresh it with \
             MCPMUX_UPDATE_HEADER=1 cargo test -p mcpmux-ffi --test header"
        );
    }
}

#[test]
fn header_declares_every_export() {
    // Exports are found in the sources, so a function left out of the header (a missing
    // `#[unsafe(no_mangle)]`, a typo) fails here rather than at a C program's link time.
    let header = header();
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
    let mut exported = 0;
    for path in rust_files(std::path::Path::new(src)) {
        let text = std::fs::read_to_string(path).unwrap();
        for line in text.lines() {
            let line = line.trim_start();
            let Some(rest) = line
                .strip_prefix("pub unsafe extern \"C\" fn ")
                .or_else(|| line.strip_prefix("pub extern \"C\" fn "))
            else {
                continue;
            };
            let name = rest.split('(').next().unwrap();
            exported += 1;
            assert!(
                header.contains(&format!(" {name}(")) || header.contains(&format!("*{name}(")),
                "{name} is missing from the header"
            );
        }
    }
    assert!(exported > 40, "only {exported} exports found");
}

/// Every `.rs` file under `dir`, in subfolders too (the exports live in `src/api/`).
fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_header_reads_topic_by_topic() {
    // cbindgen writes functions in the order of `mod` lines in src/api/mod.rs: a new topic
    // file declared out of place would scatter the header.
    let header = header();
    let firsts = [
        "mcpmux_version(",
        "mcpmux_pool_open(",
        "mcpmux_servers_list(",
        "mcpmux_tools_list(",
        "mcpmux_resources_list(",
        "mcpmux_prompts_list(",
        "mcpmux_roots_set(",
        "mcpmux_events_subscribe(",
        "mcpmux_pool_set_sampling_handler(",
        "mcpmux_pool_set_oauth_handler(",
        "mcpmux_tools_register(",
        "mcpmux_recipes_register(",
        "mcpmux_provider_create(",
        "mcpmux_agent_new(",
        "mcpmux_conversation_new(",
    ];
    // The declaration, not a mention in another function's comment.
    let at = |name: &str| {
        header
            .lines()
            .position(|l| !l.starts_with(" *") && !l.starts_with("/*") && l.contains(name))
            .unwrap_or_else(|| panic!("{name} is not declared"))
    };
    for pair in firsts.windows(2) {
        assert!(
            at(pair[0]) < at(pair[1]),
            "{} should come before {} in the header",
            pair[0],
            pair[1]
        );
    }
}

/// Fails unless the comment of `function` names every field of core's mirrored `type_name`
/// (the comments list a JSON argument's fields by hand).
fn names_every_field(function: &str, type_name: &str) {
    let header = header();
    let doc = header
        .split(&format!("mcpmux_status {function}("))
        .next()
        .and_then(|before| before.rsplit("\n\n").next())
        .unwrap_or_else(|| panic!("{function} is declared with its comment"));
    let mirrored = mcpmux_core::mirror::mirrored();
    let fields = mirrored["types"][type_name].as_array().unwrap();
    assert!(fields.len() >= 5);
    for field in fields {
        let field = field.as_str().unwrap();
        assert!(
            doc.contains(field),
            "the comment of {function} does not name {type_name}'s field {field}:\n{doc}"
        );
    }
}

#[test]
fn the_header_names_every_pool_option() {
    names_every_field("mcpmux_pool_open", "PoolOptions");
}

#[test]
fn the_header_names_every_serve_setting() {
    names_every_field("mcpmux_pool_serve_http", "HttpServeSettings");
}
