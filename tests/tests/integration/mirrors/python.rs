//! `types.py`'s generated parts: the fields of each mirrored dataclass (`snake_case`, with a
//! default: `from_dict` leaves out what core did not send) or settings `TypedDict` (each key in
//! both spellings), a `Literal` alias for each string enum they name, and `from_dict`'s tables
//! of the dataclasses' renamed and nested attributes.

use serde_json::Value;

use super::schema::{Field, LiteralType, Ty};
use super::{Block, Schemas, blocks, in_file_order};

const LINE_LIMIT: usize = 100; // ruff.toml's line-length

/// One field line of a block with the comment lines above it.
struct Entry {
    comments: Vec<String>,
    name: String,
    annotation: String,
    default: Option<String>,
}

/// A dataclass's generated fields, for the tables `from_dict` reads them with.
struct Model {
    class: String,
    fields: Vec<Field>,
}

pub fn generate(text: &str, schemas: &Schemas) -> String {
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let literals = schemas.literal_types();
    let models = models(&lines, schemas, &literals);
    let mut out: Vec<String> = Vec::new();
    let mut next = 0;
    for block in blocks(&lines, "#") {
        out.extend_from_slice(&lines[next..block.body]);
        let body = &lines[block.body..block.end];
        let written = if block.name == "literal types" {
            literal_block(&literals)
        } else if block.name == "renames" {
            table_block(&block.indent, &models, |f| {
                let key = &f.key;
                (camel(&attribute(key)) != *key).then(|| python_string(key))
            })
        } else if block.name == "nested" {
            table_block(&block.indent, &models, |f| model_of(&f.ty, &lines))
        } else {
            let t = schemas.get(&block.name).unwrap_or_else(|| {
                panic!(
                    "types.py: @generated {}: core mirrors no such type",
                    block.name
                )
            });
            let is_typed_dict = class_line(&lines, &block).contains("TypedDict");
            let declared = |name: &str| {
                literals.iter().any(|l| l.name == name)
                    || (schemas.get(name).is_some() && declares_class(&lines, name))
            };
            let fields = schemas.fields(t, &declared);
            let written = entries(body);
            let kind = if is_typed_dict {
                Kind::TypedDict
            } else {
                Kind::Dataclass(&literals)
            };
            field_block(&block.indent, &written, &fields, kind)
        };
        out.extend(written);
        next = block.end;
    }
    out.extend_from_slice(&lines[next..]);
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// The dataclasses' generated fields, in file order.
fn models(lines: &[String], schemas: &Schemas, literals: &[LiteralType]) -> Vec<Model> {
    let declared = |name: &str| {
        literals.iter().any(|l| l.name == name)
            || (schemas.get(name).is_some() && declares_class(lines, name))
    };
    let mut out = Vec::new();
    for block in blocks(lines, "#") {
        let class = class_line(lines, &block);
        let Some(t) = schemas.get(&block.name) else {
            continue;
        };
        if !class.ends_with("(Model):") {
            continue;
        }
        out.push(Model {
            class: class["class ".len()..class.len() - "(Model):".len()].to_string(),
            fields: schemas.fields(t, &declared),
        });
    }
    out
}

/// A dataclass a field holds (alone, in a list, or maybe absent), by its class name.
fn model_of(ty: &Ty, lines: &[String]) -> Option<String> {
    match ty.without_null().0 {
        Ty::Named(name) if lines.contains(&format!("class {name}(Model):")) => Some(name),
        Ty::List(t) => model_of(&t, lines),
        _ => None,
    }
}

/// `"Class": {"attribute": value, ...},` for each dataclass with fields `value` gives one for.
fn table_block(
    indent: &str,
    models: &[Model],
    value: impl Fn(&Field) -> Option<String>,
) -> Vec<String> {
    let mut out = Vec::new();
    for model in models {
        let entries: Vec<String> = model
            .fields
            .iter()
            .filter_map(|f| value(f).map(|v| format!("\"{}\": {v}", attribute(&f.key))))
            .collect();
        if entries.is_empty() {
            continue;
        }
        let line = format!("{indent}\"{}\": {{{}}},", model.class, entries.join(", "));
        if line.len() <= LINE_LIMIT {
            out.push(line);
            continue;
        }
        // As ruff writes a dict too long for one line: one entry a line.
        out.push(format!("{indent}\"{}\": {{", model.class));
        out.extend(entries.iter().map(|e| format!("{indent}    {e},")));
        out.push(format!("{indent}}},"));
    }
    out
}

/// `types.camel`: `request_timeout_ms` is `requestTimeoutMs`.
fn camel(attribute: &str) -> String {
    let mut parts = attribute.split('_');
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// The `class` line a block is in.
fn class_line<'a>(lines: &'a [String], block: &Block) -> &'a str {
    lines[..block.body]
        .iter()
        .rev()
        .find(|l| l.starts_with("class "))
        .map(String::as_str)
        .unwrap_or("")
}

fn declares_class(lines: &[String], name: &str) -> bool {
    let class = format!("class {name}(");
    lines.iter().any(|l| l.starts_with(&class))
}

/// The field lines of a block as written, with their comments.
fn entries(body: &[String]) -> Vec<Entry> {
    let mut out = Vec::new();
    let mut comments = Vec::new();
    for line in body {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || trimmed.is_empty() {
            comments.push(line.clone());
            continue;
        }
        let (name, rest) = trimmed.split_once(':').unwrap_or((trimmed, ""));
        let (annotation, default) = match rest.split_once(" = ") {
            Some((a, d)) => (a, Some(d.trim().to_string())),
            None => (rest, None),
        };
        out.push(Entry {
            comments: std::mem::take(&mut comments),
            name: name.trim().to_string(),
            annotation: annotation.trim().to_string(),
            default,
        });
    }
    out
}

/// What a block's class is: its fields are written differently.
enum Kind<'a> {
    /// A settings dict a caller writes: each key in both spellings, every one optional.
    TypedDict,
    /// A result: `snake_case` attributes with defaults, valid for the literal types named.
    Dataclass(&'a [LiteralType]),
}

fn field_block(indent: &str, written: &[Entry], fields: &[Field], kind: Kind) -> Vec<String> {
    let written_key = |e: &Entry| {
        fields
            .iter()
            .find(|f| attribute(&f.key) == e.name || f.key == e.name)
            .map(|f| f.key.clone())
    };
    let mut order: Vec<String> = Vec::new();
    for key in written.iter().filter_map(written_key) {
        if !order.contains(&key) {
            order.push(key);
        }
    }
    let mut out = Vec::new();
    for field in in_file_order(fields, &order) {
        let name = attribute(&field.key);
        let entry = written.iter().find(|e| e.name == name);
        match entry {
            Some(e) => out.extend(e.comments.iter().cloned()),
            None => out.extend(doc_comment(indent, field)),
        }
        let written_type = entry
            .filter(|_| field.ty.is_open())
            .map(|e| e.annotation.clone());
        match kind {
            Kind::TypedDict => {
                let ty = written_type.unwrap_or_else(|| python_type(&field.ty.without_null().0));
                out.push(format!("{indent}{name}: {ty}"));
                if name != field.key {
                    out.push(format!("{indent}{}: {ty}", field.key));
                }
            }
            Kind::Dataclass(literals) => {
                let default = entry.and_then(|e| e.default.clone());
                let line = match written_type {
                    Some(ty) => format!(
                        "{indent}{name}: {ty} = {}",
                        default.unwrap_or("None".into())
                    ),
                    None => dataclass_field(indent, &name, field, default, literals),
                };
                out.push(line);
            }
        }
    }
    for line in &out {
        assert!(
            line.len() <= LINE_LIMIT,
            "types.py: a generated line is longer than {LINE_LIMIT}: {line}\n\
             (name the type in core, so that it becomes a Literal alias)"
        );
    }
    out
}

/// The Python attribute of a JSON key: `_meta` is `meta`, `inputSchema` is `input_schema`.
fn attribute(key: &str) -> String {
    let key = key.trim_start_matches('_');
    let mut out = String::new();
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `name: type = default`: the default as written (where it is one of the type's values),
/// else core's, else the type's empty value.
fn dataclass_field(
    indent: &str,
    name: &str,
    field: &Field,
    written: Option<String>,
    literals: &[LiteralType],
) -> String {
    let (ty, nullable) = field.ty.without_null();
    let allowed = |default: &String| match &ty {
        Ty::Named(n) => literals.iter().find(|l| &l.name == n).is_none_or(|l| {
            l.values.iter().any(|v| &python_string(v) == default) || default == "None"
        }),
        _ => true,
    };
    let default = written
        .filter(allowed)
        .or_else(|| field.default.as_ref().map(|d| default_value(d, &ty)))
        .unwrap_or_else(|| {
            if nullable || !field.required {
                "None".to_string()
            } else {
                empty_value(&ty, literals)
            }
        });
    let none = nullable || default == "None" || default.contains("default=None");
    let mut annotation = python_type(&ty);
    if none && ty != Ty::Any {
        annotation.push_str(" | None");
    }
    format!("{indent}{name}: {annotation} = {default}")
}

/// A default of core's as Python source.
fn default_value(value: &Value, ty: &Ty) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => python_string(s),
        Value::Array(a) if a.is_empty() => "field(default_factory=list)".into(),
        Value::Object(o) if o.is_empty() => match ty {
            Ty::Named(name) => format!("field(default_factory={name})"),
            _ => "field(default_factory=dict)".into(),
        },
        other => format!("field(default_factory=lambda: {other})"),
    }
}

/// What a field core always sends holds before it is read: its type's empty value.
fn empty_value(ty: &Ty, literals: &[LiteralType]) -> String {
    if let Ty::Named(name) = ty
        && let Some(literal) = literals.iter().find(|l| &l.name == name)
    {
        return python_string(&literal.values[0]);
    }
    match ty {
        Ty::Str => "\"\"".into(),
        Ty::Int => "0".into(),
        Ty::Num => "0.0".into(),
        Ty::Bool => "False".into(),
        Ty::List(_) => "field(default_factory=list)".into(),
        Ty::Map(_) => "field(default_factory=dict)".into(),
        Ty::Named(name) => format!("field(default_factory={name})"),
        Ty::Literals(values) => python_string(&values[0]),
        _ => "None".into(),
    }
}

fn python_type(ty: &Ty) -> String {
    match ty {
        Ty::Str => "str".into(),
        Ty::Int => "int".into(),
        Ty::Num => "float".into(),
        Ty::Bool => "bool".into(),
        Ty::Null => "None".into(),
        Ty::Any => "Any".into(),
        Ty::List(t) => format!("list[{}]", python_type(t)),
        Ty::Map(t) => format!("dict[str, {}]", python_type(t)),
        Ty::Named(name) => name.clone(),
        Ty::Literals(values) => literal(values),
        Ty::Union(members) => members
            .iter()
            .map(python_type)
            .collect::<Vec<_>>()
            .join(" | "),
    }
}

fn literal(values: &[String]) -> String {
    let values: Vec<String> = values.iter().map(|v| python_string(v)).collect();
    format!("Literal[{}]", values.join(", "))
}

fn python_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A new field's comment: core's doc comment of it.
fn doc_comment(indent: &str, field: &Field) -> Vec<String> {
    let Some(doc) = &field.description else {
        return Vec::new();
    };
    wrap(doc, LINE_LIMIT - indent.len() - 3)
        .into_iter()
        .map(|line| format!("{indent}# {line}"))
        .collect()
}

/// The alias of each string enum: a union of one-value `Literal`s, in ruff's form (one line
/// where it fits, else in parentheses: on one line there if it fits, else a member a line). Not `Literal["a", "b"]`: mypy
/// reads that alias as a union, and stubtest then fails it for not being one at run time.
fn literal_block(literals: &[LiteralType]) -> Vec<String> {
    let mut out = Vec::new();
    for l in literals {
        let members: Vec<String> = l
            .values
            .iter()
            .map(|v| format!("Literal[{}]", python_string(v)))
            .collect();
        let line = format!("{} = {}", l.name, members.join(" | "));
        if line.len() <= LINE_LIMIT {
            out.push(line);
            continue;
        }
        out.push(format!("{} = (", l.name));
        let inside = format!("    {}", members.join(" | "));
        if inside.len() <= LINE_LIMIT {
            out.push(inside);
        } else {
            for (i, member) in members.iter().enumerate() {
                out.push(format!("    {}{member}", if i == 0 { "" } else { "| " }));
            }
        }
        out.push(")".into());
    }
    out
}

/// Words of `text` in lines of at most `width` characters.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}
