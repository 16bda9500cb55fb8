//! `index.d.ts`'s generated parts: the members of each mirrored interface (`name?: type`, the
//! `?` where the key may be absent) and a union type for each string enum they name.

use super::schema::{Field, LiteralType, Ty};
use super::{Schemas, blocks, in_file_order};
use crate::mirrors::python::wrap;

/// One member (or type alias) of a block with the doc comment above it.
struct Entry {
    comments: Vec<String>,
    name: String,
    /// A member's type as written (after `: `, without the `;`).
    ty: String,
}

pub fn generate(text: &str, schemas: &Schemas) -> String {
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let literals = schemas.literal_types();
    let declared = |name: &str| literals.iter().any(|l| l.name == name) || declares(&lines, name);
    let mut out: Vec<String> = Vec::new();
    let mut next = 0;
    for block in blocks(&lines, "//") {
        out.extend_from_slice(&lines[next..block.body]);
        let written = entries(&lines[block.body..block.end]);
        if block.name == "literal types" {
            out.extend(literal_block(&written, &literals));
        } else {
            let t = schemas.get(&block.name).unwrap_or_else(|| {
                panic!(
                    "index.d.ts: @generated {}: core mirrors no such type",
                    block.name
                )
            });
            let fields = schemas.fields(t, &declared);
            out.extend(member_block(&block.indent, &written, &fields));
        }
        next = block.end;
    }
    out.extend_from_slice(&lines[next..]);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Whether the file declares `name` as an interface or a type.
fn declares(lines: &[String], name: &str) -> bool {
    let interface = format!("export interface {name} ");
    let alias = format!("export type {name} =");
    lines
        .iter()
        .any(|l| l.starts_with(&interface) || l.starts_with(&alias))
}

/// The members (or aliases) of a block as written, each with the lines above it. An alias
/// may take several lines (`| 'a'` each): those belong to it, not to the next.
fn entries(body: &[String]) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut comments = Vec::new();
    let mut in_comment = false;
    for line in body {
        let trimmed = line.trim();
        if in_comment || trimmed.starts_with("/**") || trimmed.starts_with("//") {
            comments.push(line.clone());
            in_comment = (in_comment || trimmed.starts_with("/**")) && !trimmed.ends_with("*/");
            continue;
        }
        if trimmed.starts_with('|') || trimmed.is_empty() {
            continue;
        }
        let head = trimmed.trim_start_matches("export type ");
        let name = head
            .split([':', '?', ' ', '='])
            .next()
            .unwrap_or("")
            .trim_matches(['\'', '"']);
        let ty = trimmed
            .split_once(": ")
            .map(|(_, t)| t.trim_end_matches(';').to_string())
            .unwrap_or_default();
        out.push(Entry {
            comments: std::mem::take(&mut comments),
            name: name.to_string(),
            ty,
        });
    }
    out
}

fn member_block(indent: &str, written: &[Entry], fields: &[Field]) -> Vec<String> {
    let order: Vec<String> = written.iter().map(|e| e.name.clone()).collect();
    let mut out = Vec::new();
    for field in in_file_order(fields, &order) {
        let entry = written.iter().find(|e| e.name == field.key);
        match entry {
            Some(e) => out.extend(e.comments.iter().cloned()),
            None => out.extend(doc_comment(indent, field.description.as_deref())),
        }
        let (ty, optional) = if field.required {
            (field.ty.clone(), "")
        } else {
            (field.ty.without_null().0, "?")
        };
        let ty = match entry {
            Some(e) if ty.is_open() && !e.ty.is_empty() => e.ty.clone(),
            _ => ts_type(&ty),
        };
        out.push(format!(
            "{indent}{}{optional}: {ty};",
            member_name(&field.key)
        ));
    }
    out
}

fn member_name(key: &str) -> String {
    if key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
    {
        key.to_string()
    } else {
        format!("'{key}'")
    }
}

fn ts_type(ty: &Ty) -> String {
    match ty {
        Ty::Str => "string".into(),
        Ty::Int | Ty::Num => "number".into(),
        Ty::Bool => "boolean".into(),
        Ty::Null => "null".into(),
        Ty::Any => "unknown".into(),
        Ty::List(t) => match **t {
            Ty::Union(_) | Ty::Literals(_) => format!("({})[]", ts_type(t)),
            _ => format!("{}[]", ts_type(t)),
        },
        Ty::Map(t) => format!("Record<string, {}>", ts_type(t)),
        Ty::Named(name) => name.clone(),
        Ty::Literals(values) => union_of(values),
        Ty::Union(members) => members.iter().map(ts_type).collect::<Vec<_>>().join(" | "),
    }
}

fn union_of(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `export type Name = 'a' | 'b';` for each string enum, with its doc comment as written
/// (else core's); a long one a value a line, as the hand-written ones were.
fn literal_block(written: &[Entry], literals: &[LiteralType]) -> Vec<String> {
    let mut out = Vec::new();
    for l in literals {
        match written.iter().find(|e| e.name == l.name) {
            Some(e) => out.extend(e.comments.iter().cloned()),
            None => out.extend(doc_comment("", l.description.as_deref())),
        }
        let line = format!("export type {} = {};", l.name, union_of(&l.values));
        if line.len() <= 100 {
            out.push(line);
            continue;
        }
        out.push(format!("export type {} =", l.name));
        let last = l.values.len() - 1;
        for (i, v) in l.values.iter().enumerate() {
            out.push(format!("  | '{v}'{}", if i == last { ";" } else { "" }));
        }
    }
    out
}

/// A JSDoc comment of core's doc comment, for what the file had not documented.
fn doc_comment(indent: &str, doc: Option<&str>) -> Vec<String> {
    let Some(doc) = doc else {
        return Vec::new();
    };
    let width = 100 - indent.len() - 4;
    let lines = wrap(doc, width);
    if lines.len() == 1 && lines[0].len() + 7 <= width {
        return vec![format!("{indent}/** {} */", lines[0])];
    }
    let last = lines.len() - 1;
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let open = if i == 0 { "/** " } else { " * " };
            let close = if i == last { " */" } else { "" };
            format!("{indent}{open}{l}{close}")
        })
        .collect()
}
