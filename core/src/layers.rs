//! The order of core's modules, bottom to top, and the test that keeps it: a module uses only
//! the modules below it. `serve` and `agent` are also cargo features, so the compiler keeps
//! everything beneath them from reaching up into either; this table keeps the rest.

/// Each top-level module of `src/` with its rank: a module may name (`crate::x`) modules of
/// a lower rank, and itself.
const LAYERS: &[(&str, u8)] = &[
    // Leaves: no mcpmux module of their own.
    ("alloc", 0),
    ("boxed_future", 0),
    ("fast_map", 0),
    ("front_matter", 0),
    ("http_layer", 0),
    ("log_level", 0),
    ("memory", 0),
    ("message", 0),
    ("redact", 0),
    ("shared_json", 0),
    ("stable_hash", 0),
    ("trace_context", 0),
    ("wire", 0),
    ("error", 1),
    // A server's record and the config file.
    ("config", 2),
    // What happened in the pool, in the terms of the records.
    ("events", 3),
    ("auth", 3),
    ("tools", 4),
    ("host", 5),
    ("widgets", 5),
    ("transport", 6),
    ("pool", 7),
    // What a binding's event loop may touch of the transports.
    ("event_loop", 7),
    // The pool's users, each a cargo feature.
    ("agent", 8),
    ("serve", 8),
    // Describes the public types of all of them.
    ("mirror", 9),
];

/// Test support any module's tests may use.
const TEST_SUPPORT: &[&str] = &["arbitrary", "test_site"];

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{LAYERS, TEST_SUPPORT};

    fn rank(module: &str) -> Option<u8> {
        LAYERS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
    }

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// The top-level module a file of `src/` belongs to (`pool` for `src/pool/call/calls.rs`).
    fn module_of(src: &Path, file: &Path) -> String {
        let relative = file.strip_prefix(src).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let first = first.to_str().unwrap();
        first.strip_suffix(".rs").unwrap_or(first).to_owned()
    }

    /// Every `crate::name` in the file's code (not its comments).
    fn named_modules(text: &str) -> Vec<(usize, String)> {
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                let after = &rest[at + "crate::".len()..];
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.push((n + 1, name));
                rest = after;
            }
        }
        out
    }

    #[test]
    fn every_module_is_in_the_table() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in files {
            let module = module_of(&src, &file);
            if module == "lib" || module == "layers" || TEST_SUPPORT.contains(&module.as_str()) {
                continue;
            }
            assert!(
                rank(&module).is_some(),
                "src/{module} is not in core/src/layers.rs's LAYERS: give it a rank"
            );
        }
    }

    #[test]
    fn modules_use_only_the_modules_below_them() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut upward = Vec::new();
        for file in files {
            let module = module_of(&src, &file);
            let Some(own) = rank(&module) else { continue };
            let text = std::fs::read_to_string(&file).unwrap();
            for (line, named) in named_modules(&text) {
                if named == module || TEST_SUPPORT.contains(&named.as_str()) {
                    continue;
                }
                match rank(&named) {
                    Some(r) if r < own => {}
                    _ => upward.push(format!(
                        "{}:{line}: {module} names crate::{named}",
                        file.strip_prefix(&src).unwrap().display()
                    )),
                }
            }
        }
        assert!(
            upward.is_empty(),
            "imports that run up or across the layers of core/src/layers.rs (move the item \
             down to where both can reach it):\n{}",
            upward.join("\n")
        );
    }

    #[test]
    fn the_checker_sees_an_upward_import() {
        let named =
            named_modules("use crate::pool::Pool; // crate::serve\nlet x = crate::agent::X;");
        let names: Vec<_> = named.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["pool", "agent"]);
    }
}
