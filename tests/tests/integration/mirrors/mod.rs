//! The bindings' types written from core's: the fields of each record type in
//! `bindings/python/python/mcpmux/types.py` and `bindings/node/index.d.ts`, and the literal
//! types they name, are generated from the JSON Schemas `mcpmux::mirror` gives, between
//! `@generated` and `@end` comments. The test fails when a committed file differs from what
//! core's schemas give; refresh both with
//! `MCPMUX_UPDATE_MIRRORS=1 cargo test -p mcpmux-tests --test integration mirrors`.
//!
//! What is generated is each field's name, whether it may be absent and its type, and the
//! two tables Python's `from_dict` reads a result with (`_RENAMES`: the attributes whose JSON
//! key is not their camelCase; `_NESTED`: those that hold another dataclass). The
//! comments above a field and a Python field's default are the binding's own words, kept as
//! written (a new field takes core's doc comment and core's default), as the C header keeps
//! its documentation in `ffi/` while cbindgen writes the declarations.

mod python;
mod schema;
mod typescript;

use std::path::{Path, PathBuf};

use mcpmux::mirror::{Mirrored, Way};

/// A `@generated NAME` ... `@end` run of lines in a binding's file.
struct Block {
    name: String,
    /// The line after the `@generated` line.
    body: usize,
    /// The `@end` line.
    end: usize,
    indent: String,
}

/// The generated blocks of `lines`, whose comments start with `comment` (`#`, `//`).
fn blocks(lines: &[String], comment: &str) -> Vec<Block> {
    let begin = format!("{comment} @generated ");
    let end = format!("{comment} @end");
    let mut out = Vec::new();
    let mut open: Option<(String, usize, String)> = None;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = line[..line.len() - trimmed.len()].to_string();
        if let Some(name) = trimmed.strip_prefix(&begin) {
            assert!(
                open.is_none(),
                "line {}: @generated inside another block",
                i + 1
            );
            open = Some((name.trim().to_string(), i + 1, indent));
        } else if trimmed == end {
            let (name, body, indent) = open.take().unwrap_or_else(|| {
                panic!("line {}: @end without @generated", i + 1);
            });
            out.push(Block {
                name,
                body,
                end: i,
                indent,
            });
        }
    }
    assert!(open.is_none(), "a @generated block has no @end");
    out
}

/// The mirrored types by name, each with its schemas: the way it goes, and the reading side
/// (where core's defaults are).
struct Schemas {
    types: Vec<Mirrored>,
}

impl Schemas {
    fn new() -> Self {
        Self {
            types: mcpmux::mirror::types(),
        }
    }

    fn get(&self, name: &str) -> Option<&Mirrored> {
        self.types.iter().find(|t| t.name == name)
    }

    /// Every string enum that a mirrored type names, by its `$defs` name.
    fn literal_types(&self) -> Vec<schema::LiteralType> {
        let mut out: Vec<schema::LiteralType> = Vec::new();
        for t in &self.types {
            let root = t.schema();
            let reader = schema::Reader {
                root: &root,
                declared: &|_| true,
            };
            for literal in reader.literal_types() {
                if let Some(known) = out.iter().find(|l| l.name == literal.name) {
                    assert_eq!(
                        known.values, literal.values,
                        "two enums of core are named {}",
                        literal.name
                    );
                } else {
                    out.push(literal);
                }
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The fields of `t`, typed for a binding that declares the names `declared` accepts.
    fn fields(&self, t: &Mirrored, declared: &dyn Fn(&str) -> bool) -> Vec<schema::Field> {
        let root = t.schema();
        let reading = t.schema_for(Way::In);
        schema::Reader {
            root: &root,
            declared,
        }
        .fields(&reading)
    }
}

/// Entries of a block in the order the file has them, then the schema's new ones (sorted):
/// a binding's order is its authors' (a reader's order), core's schemas are alphabetical.
fn in_file_order<'a>(fields: &'a [schema::Field], order: &[String]) -> Vec<&'a schema::Field> {
    let mut out: Vec<&schema::Field> = order
        .iter()
        .filter_map(|key| fields.iter().find(|f| &f.key == key))
        .collect();
    for field in fields {
        if !order.contains(&field.key) {
            out.push(field);
        }
    }
    out
}

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// Compares `path` with what `generate` writes from it; with `MCPMUX_UPDATE_MIRRORS=1`,
/// writes that first.
fn check(path: &str, generate: fn(&str, &Schemas) -> String) {
    let file = repo_file(path);
    let committed = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{path}: {e}"));
    let generated = generate(&committed, &Schemas::new());
    if std::env::var_os("MCPMUX_UPDATE_MIRRORS").is_some_and(|v| v == "1") {
        std::fs::write(&file, &generated).unwrap_or_else(|e| panic!("{path}: {e}"));
        return;
    }
    if committed != generated {
        let (n, (was, is)) = committed
            .lines()
            .zip(generated.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b)
            .unwrap_or((
                committed.lines().count().min(generated.lines().count()),
                ("", ""),
            ));
        panic!(
            "{path} differs from core's schemas at line {}:\n  committed: {was}\n  generated: {is}\n\
             Refresh it: MCPMUX_UPDATE_MIRRORS=1 cargo test -p mcpmux-tests --test integration mirrors",
            n + 1
        );
    }
}

#[test]
fn types_py_is_what_core_s_schemas_generate() {
    check("bindings/python/python/mcpmux/types.py", python::generate);
}

#[test]
fn index_d_ts_is_what_core_s_schemas_generate() {
    check("bindings/node/index.d.ts", typescript::generate);
}

/// A field a binding lost comes back (after the others: the file's order is kept where it
/// has one), and a type written by hand is core's again: what the drift check compares with.
#[test]
fn a_lost_field_a_hand_written_type_and_a_lost_table_entry_are_generated_back() {
    let schemas = Schemas::new();
    let py = std::fs::read_to_string(repo_file("bindings/python/python/mcpmux/types.py")).unwrap();
    // A field, a field's type, and an entry of each of `from_dict`'s tables.
    let nested = "    \"ImportResult\": {\"record\": ServerRecord},\n";
    let renamed = "    \"ToolInfo\": {\"meta\": \"_meta\"},\n";
    let drifted = py
        .replace("    is_active: bool = True\n", "")
        .replace(
            "    scope: Scope = \"user\"\n",
            "    scope: str = \"user\"\n",
        )
        .replace(nested, "")
        .replace(renamed, "");
    let generated = python::generate(&drifted, &schemas);
    for line in [
        "    is_active: bool = True\n",
        "    scope: Scope = \"user\"\n",
        nested,
        renamed,
    ] {
        assert!(
            !drifted.contains(line) && generated.contains(line),
            "types.py: {line}"
        );
    }

    let ts = std::fs::read_to_string(repo_file("bindings/node/index.d.ts")).unwrap();
    let drifted = ts
        .replace("  isActive: boolean;\n", "")
        .replace("  scope: Scope;\n", "  scope: string;\n");
    let generated = typescript::generate(&drifted, &schemas);
    for line in ["  isActive: boolean;\n", "  scope: Scope;\n"] {
        assert!(
            !drifted.contains(line) && generated.contains(line),
            "index.d.ts: {line}"
        );
    }
}
