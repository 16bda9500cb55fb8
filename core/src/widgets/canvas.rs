//! The canvas store (WebMCP Auto-UI's `createCanvasVanilla`): the widgets an agent has shown, with
//! subscribe/notify for any UI framework, and a round trip through JSON and through a
//! compact URL-safe string (WebMCP Auto-UI's HyperSkills links).

use std::sync::{Arc, Mutex, RwLock};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

/// Largest `data:` URL kept in widget parameters; bigger ones are dropped.
pub const MAX_DATA_URL_BYTES: usize = 256 * 1024;

/// One widget on the canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    /// `w_` and six characters.
    pub id: String,
    /// The recipe it was made from.
    pub kind: String,
    pub params: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub style: Option<Value>,
}

/// What changed, as subscribers are told.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "change", rename_all = "camelCase")]
pub enum CanvasChange {
    Added { widget: Widget },
    Updated { widget: Widget },
    Removed { id: String },
    Cleared,
}

type Listener = Arc<dyn Fn(&CanvasChange) + Send + Sync>;

/// The store. Cheap to share behind an `Arc`; listeners run after each change, outside the
/// store's locks, so they may read or change the canvas again.
#[derive(Default)]
pub struct Canvas {
    widgets: RwLock<Vec<Widget>>,
    listeners: Mutex<Vec<(u64, Listener)>>,
    next_listener: Mutex<u64>,
}

fn new_widget_id() -> String {
    use rand::Rng;
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let tail: String = (0..6)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("w_{tail}")
}

/// Removes URLs that could run code or bloat the page: `javascript:`/`vbscript:` anywhere,
/// `data:` that is not an image or is over [`MAX_DATA_URL_BYTES`]. Returns what was dropped.
pub fn sanitize_urls(value: &mut Value) -> Vec<String> {
    let mut dropped = Vec::new();
    sanitize_at(value, "", &mut dropped);
    dropped
}

fn sanitize_at(value: &mut Value, path: &str, dropped: &mut Vec<String>) {
    match value {
        Value::String(s) => {
            let lower = s.trim_start().to_ascii_lowercase();
            let bad = lower.starts_with("javascript:")
                || lower.starts_with("vbscript:")
                || (lower.starts_with("data:")
                    && (!lower.starts_with("data:image/")
                        || lower.starts_with("data:image/svg")
                        || s.len() > MAX_DATA_URL_BYTES));
            if bad {
                dropped.push(path.to_string());
                *s = String::new();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter_mut().enumerate() {
                sanitize_at(v, &format!("{path}/{i}"), dropped);
            }
        }
        Value::Object(map) => {
            for (k, v) in map.iter_mut() {
                sanitize_at(v, &format!("{path}/{k}"), dropped);
            }
        }
        _ => {}
    }
}

impl Canvas {
    /// Calls `f` after every change; returns an id for [`Canvas::unsubscribe`].
    pub fn subscribe(&self, f: impl Fn(&CanvasChange) + Send + Sync + 'static) -> u64 {
        let mut next = self.next_listener.lock().unwrap();
        *next += 1;
        self.listeners.lock().unwrap().push((*next, Arc::new(f)));
        *next
    }

    pub fn unsubscribe(&self, id: u64) -> bool {
        let mut listeners = self.listeners.lock().unwrap();
        let before = listeners.len();
        listeners.retain(|(i, _)| *i != id);
        listeners.len() != before
    }

    /// Drops every listener (a closed pool's).
    pub(crate) fn unsubscribe_all(&self) {
        self.listeners.lock().unwrap().clear();
    }

    fn notify(&self, change: CanvasChange) {
        let listeners: Vec<Listener> = self
            .listeners
            .lock()
            .unwrap()
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        for l in listeners {
            l(&change);
        }
    }

    pub fn widgets(&self) -> Vec<Widget> {
        self.widgets.read().unwrap().clone()
    }

    /// Adds a widget (parameters already validated and sanitized) and returns it.
    pub fn add(&self, kind: &str, params: Value) -> Widget {
        let widget = Widget {
            id: new_widget_id(),
            kind: kind.to_string(),
            params,
            position: None,
            size: None,
            style: None,
        };
        self.widgets.write().unwrap().push(widget.clone());
        self.notify(CanvasChange::Added {
            widget: widget.clone(),
        });
        widget
    }

    /// `canvas(action, id, params)`: `move` (`{x, y}`), `resize` (`{width, height}`),
    /// `style` (any object), `update` (merged into the parameters), `clear` (one widget, or
    /// all when `id` is empty).
    pub fn apply(&self, action: &str, id: &str, mut params: Value) -> Result<Option<Widget>> {
        if action == "clear" {
            let mut widgets = self.widgets.write().unwrap();
            if id.is_empty() {
                widgets.clear();
                drop(widgets);
                self.notify(CanvasChange::Cleared);
                return Ok(None);
            }
            let before = widgets.len();
            widgets.retain(|w| w.id != id);
            if widgets.len() == before {
                return Err(Error::not_found("widget", id));
            }
            drop(widgets);
            self.notify(CanvasChange::Removed { id: id.to_string() });
            return Ok(None);
        }
        sanitize_urls(&mut params);
        let updated = {
            let mut widgets = self.widgets.write().unwrap();
            let w = widgets
                .iter_mut()
                .find(|w| w.id == id)
                .ok_or_else(|| Error::not_found("widget", id))?;
            match action {
                "move" => w.position = Some(params),
                "resize" => w.size = Some(params),
                "style" => w.style = Some(params),
                "update" => match (&mut w.params, params) {
                    (Value::Object(current), Value::Object(patch)) => current.extend(patch),
                    (current, patch) => *current = patch,
                },
                other => {
                    return Err(Error::invalid(format!(
                        "unknown canvas action '{other}' (move, resize, style, update, clear)"
                    )));
                }
            }
            w.clone()
        };
        self.notify(CanvasChange::Updated {
            widget: updated.clone(),
        });
        Ok(Some(updated))
    }

    pub fn to_json(&self) -> Value {
        serde_json::json!({"version": 1, "widgets": self.widgets()})
    }

    /// Replaces the widgets with those of a [`Canvas::to_json`] document.
    pub fn load_json(&self, doc: &Value) -> Result<()> {
        let mut widgets: Vec<Widget> =
            serde_json::from_value(doc.get("widgets").cloned().unwrap_or_default())
                .map_err(|e| Error::invalid(format!("not a canvas document: {e}")))?;
        for w in &mut widgets {
            sanitize_urls(&mut w.params);
        }
        *self.widgets.write().unwrap() = widgets;
        self.notify(CanvasChange::Cleared);
        for w in self.widgets() {
            self.notify(CanvasChange::Added { widget: w });
        }
        Ok(())
    }

    /// The canvas as a URL-safe string (base64url of its JSON), for links.
    pub fn to_url_string(&self) -> String {
        URL_SAFE_NO_PAD.encode(self.to_json().to_string())
    }

    pub fn load_url_string(&self, s: &str) -> Result<()> {
        let bytes = URL_SAFE_NO_PAD
            .decode(s.trim())
            .map_err(|e| Error::invalid(format!("not a canvas link: {e}")))?;
        let doc: Value = serde_json::from_slice(&bytes)
            .map_err(|e| Error::invalid(format!("not a canvas link: {e}")))?;
        self.load_json(&doc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn actions_notify_and_round_trip() {
        let canvas = Canvas::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let sub = canvas.subscribe(move |c| sink.lock().unwrap().push(c.clone()));
        let w = canvas.add("stat", json!({"label": "Visiteurs", "value": "1,234"}));
        assert!(w.id.starts_with("w_") && w.id.len() == 8);
        canvas
            .apply("move", &w.id, json!({"x": 10, "y": 20}))
            .unwrap();
        canvas
            .apply("update", &w.id, json!({"value": "1,300"}))
            .unwrap();
        let second = canvas.add("chart", json!({}));
        canvas.apply("clear", &second.id, json!(null)).unwrap();
        assert_eq!(seen.lock().unwrap().len(), 5);
        assert!(canvas.apply("spin", &w.id, json!({})).is_err());
        assert!(canvas.apply("move", "w_nope00", json!({})).is_err());

        let link = canvas.to_url_string();
        assert!(
            link.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
        let copy = Canvas::default();
        copy.load_url_string(&link).unwrap();
        assert_eq!(copy.widgets(), canvas.widgets());
        assert_eq!(copy.widgets()[0].params["value"], "1,300");
        assert_eq!(copy.widgets()[0].position, Some(json!({"x": 10, "y": 20})));
        assert!(copy.load_url_string("%%%").is_err());

        assert!(canvas.unsubscribe(sub));
        canvas.apply("clear", "", json!(null)).unwrap();
        assert!(canvas.widgets().is_empty());
        assert_eq!(seen.lock().unwrap().len(), 5);
    }

    #[test]
    fn dangerous_urls_are_removed() {
        let mut v = json!({
            "src": "javascript:alert(1)",
            "ok": "https://example.com/a.png",
            "img": "data:image/png;base64,iVBOR",
            "svg": "data:image/svg+xml,<svg onload=alert(1)>",
            "html": "data:text/html,<script>",
            "list": [" JavaScript:x", "fine"],
            "huge": format!("data:image/png;base64,{}", "A".repeat(MAX_DATA_URL_BYTES)),
        });
        let dropped = sanitize_urls(&mut v);
        assert_eq!(dropped.len(), 5, "{dropped:?}");
        assert_eq!(v["ok"], "https://example.com/a.png");
        assert_eq!(v["img"], "data:image/png;base64,iVBOR");
        assert_eq!(v["src"], "");
        assert_eq!(v["list"][1], "fine");
    }
}
