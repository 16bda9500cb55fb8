//! A mirrored type's JSON Schema read into the few shapes the bindings' types take: what both
//! renderers (`python.rs`, `typescript.rs`) start from, so that they agree on what a field is.

use serde_json::Value;

/// A field's type, as far as a binding's type system says it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    Str,
    Int,
    Num,
    Bool,
    Null,
    /// Any JSON value (`serde_json::Value`).
    Any,
    List(Box<Ty>),
    /// An object of string keys to one type of values.
    Map(Box<Ty>),
    /// A type the binding declares under this name (a mirrored record or a literal type).
    Named(String),
    /// One of these string constants (an enum core names no type for a binding).
    Literals(Vec<String>),
    Union(Vec<Ty>),
}

impl Ty {
    /// Whether core's schema leaves all or part of it open ("any JSON"): a server's schema,
    /// its capabilities, a message to post. A binding's type for it may say more.
    pub fn is_open(&self) -> bool {
        match self {
            Ty::Any => true,
            Ty::List(t) | Ty::Map(t) => t.is_open(),
            Ty::Union(members) => members.iter().any(Ty::is_open),
            _ => false,
        }
    }

    /// The type with `null` taken out of a union: what an absent-or-null field holds.
    pub fn without_null(&self) -> (Ty, bool) {
        match self {
            Ty::Union(members) if members.contains(&Ty::Null) => {
                let rest: Vec<Ty> = members
                    .iter()
                    .filter(|t| **t != Ty::Null)
                    .cloned()
                    .collect();
                let ty = if rest.len() == 1 {
                    rest[0].clone()
                } else {
                    Ty::Union(rest)
                };
                (ty, true)
            }
            Ty::Null => (Ty::Any, true),
            other => (other.clone(), false),
        }
    }
}

/// One property of a mirrored type.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its JSON key (camelCase, as core writes it).
    pub key: String,
    pub ty: Ty,
    /// Whether the key is always there: a caller must pass it (`In`) or core always writes it
    /// (`Out`).
    pub required: bool,
    /// What core takes when the key is absent (`#[serde(default)]`), from the `In` schema.
    pub default: Option<Value>,
    /// The Rust doc comment of the field, for a field no binding has documented yet.
    pub description: Option<String>,
}

/// A string enum of core's that a binding declares as a named literal type.
#[derive(Debug, Clone)]
pub struct LiteralType {
    pub name: String,
    pub values: Vec<String>,
    pub description: Option<String>,
}

/// Reads schemas: `declared` says which `$defs` names the binding has a type of that name for.
pub struct Reader<'a> {
    pub root: &'a Value,
    pub declared: &'a dyn Fn(&str) -> bool,
}

impl Reader<'_> {
    /// The properties of the root object, each with its type.
    pub fn fields(&self, defaults: &Value) -> Vec<Field> {
        let required: Vec<&str> = self.root["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties = self.root["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        properties
            .iter()
            .map(|(key, schema)| Field {
                key: key.clone(),
                ty: self.ty(schema),
                required: required.contains(&key.as_str()),
                default: defaults["properties"][key]
                    .get("default")
                    .cloned()
                    .or_else(|| defaults["default"].get(key).cloned()),
                description: plain_doc(schema),
            })
            .collect()
    }

    /// The string enums among `$defs` that the binding declares by name.
    pub fn literal_types(&self) -> Vec<LiteralType> {
        let defs = self.root["$defs"].as_object().cloned().unwrap_or_default();
        defs.iter()
            .filter_map(|(name, def)| {
                let values = string_enum(def)?;
                Some(LiteralType {
                    name: name.clone(),
                    values,
                    description: plain_doc(def),
                })
            })
            .collect()
    }

    /// `schema`'s type; a `$ref` is the binding's named type when it has one, else what the
    /// definition holds.
    pub fn ty(&self, schema: &Value) -> Ty {
        if let Some(reference) = schema["$ref"].as_str() {
            let name = reference.trim_start_matches("#/$defs/");
            if (self.declared)(name) {
                return Ty::Named(name.to_string());
            }
            return self.ty(&self.root["$defs"][name]);
        }
        if let Some(values) = string_enum(schema) {
            return Ty::Literals(values);
        }
        if let Some(ty) = nullable_string_enum(schema) {
            return ty;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(members) = schema[key].as_array() {
                return union(members.iter().map(|m| self.ty(m)).collect());
            }
        }
        if let Some(all) = schema["allOf"].as_array()
            && all.len() == 1
        {
            return self.ty(&all[0]);
        }
        match &schema["type"] {
            Value::String(t) => self.ty_of(t, schema),
            Value::Array(types) => union(
                types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|t| self.ty_of(t, schema))
                    .collect(),
            ),
            _ => Ty::Any,
        }
    }

    fn ty_of(&self, t: &str, schema: &Value) -> Ty {
        match t {
            "string" => Ty::Str,
            "integer" => Ty::Int,
            "number" => Ty::Num,
            "boolean" => Ty::Bool,
            "null" => Ty::Null,
            "array" => Ty::List(Box::new(self.ty(&schema["items"]))),
            "object" => match &schema["additionalProperties"] {
                Value::Bool(false) | Value::Null if schema.get("properties").is_some() => {
                    Ty::Map(Box::new(Ty::Any))
                }
                Value::Object(_) => Ty::Map(Box::new(self.ty(&schema["additionalProperties"]))),
                _ => Ty::Map(Box::new(Ty::Any)),
            },
            _ => Ty::Any,
        }
    }
}

/// The values of an enum of strings only (`enum`, or a `oneOf` of `const`s with their docs
/// and `enum`s of the undocumented ones).
fn string_enum(schema: &Value) -> Option<Vec<String>> {
    if let Some(values) = schema["enum"].as_array() {
        return values
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect();
    }
    let mut values = Vec::new();
    for member in schema["oneOf"].as_array()? {
        match (&member["const"], member["enum"].as_array()) {
            (Value::String(value), _) => values.push(value.clone()),
            (Value::Null, Some(listed)) => {
                for value in listed {
                    values.push(value.as_str()?.to_owned());
                }
            }
            _ => return None,
        }
    }
    (!values.is_empty()).then_some(values)
}

/// An `enum` of strings and `null` (an optional field that takes a few values).
fn nullable_string_enum(schema: &Value) -> Option<Ty> {
    let values = schema["enum"].as_array()?;
    let strings: Option<Vec<String>> = values
        .iter()
        .filter(|v| !v.is_null())
        .map(|v| v.as_str().map(str::to_owned))
        .collect();
    let strings = strings.filter(|s| !s.is_empty())?;
    let literals = Ty::Literals(strings);
    Some(if values.iter().any(Value::is_null) {
        Ty::Union(vec![literals, Ty::Null])
    } else {
        literals
    })
}

/// A schema's description (a Rust doc comment) without rustdoc's link brackets:
/// "[`ApprovalRequest`]" reads "`ApprovalRequest`" in a binding.
fn plain_doc(schema: &Value) -> Option<String> {
    let doc = schema["description"].as_str()?;
    Some(doc.replace("[`", "`").replace("`]", "`"))
}

/// A union, flattened, with each member once; one member is itself.
fn union(members: Vec<Ty>) -> Ty {
    let mut flat: Vec<Ty> = Vec::new();
    for member in members {
        let inner = match member {
            Ty::Union(inner) => inner,
            other => vec![other],
        };
        for ty in inner {
            if !flat.contains(&ty) {
                flat.push(ty);
            }
        }
    }
    if flat.len() == 1 {
        flat.remove(0)
    } else {
        Ty::Union(flat)
    }
}
