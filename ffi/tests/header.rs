//! The committed `include/mcpmux.h` must be exactly what cbindgen generates from the
//! sources (build.rs writes it to OUT_DIR on every build). Refresh the committed copy with
//! `MCPMUX_UPDATE_HEADER=1 cargo build -p mcpmux-ffi`.

#[test]
fn committed_header_matches_the_sources() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/mcpmux.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../include/mcpmux.h");
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
             MCPMUX_UPDATE_HEADER=1 cargo build -p mcpmux-ffi"
        );
    }
}

#[test]
fn header_declares_every_export() {
    // Exports are found in the sources, so a function left out of the header (a missing
    // `#[unsafe(no_mangle)]`, a typo) fails here rather than at a C program's link time.
    let header = include_str!(concat!(env!("OUT_DIR"), "/mcpmux.h"));
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
    let header = include_str!(concat!(env!("OUT_DIR"), "/mcpmux.h"));
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
    let header = include_str!(concat!(env!("OUT_DIR"), "/mcpmux.h"));
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
