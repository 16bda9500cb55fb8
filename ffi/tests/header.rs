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
    for entry in std::fs::read_dir(src).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
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
