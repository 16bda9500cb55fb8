//! Recipes and the canvas in the pool: `register_recipe` also offers the agent the host tools
//! `widget_display(name, params)` and `canvas(action, id, params)` (WebMCP Auto-UI's autoui layer).

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::events::{Event, EventBus};
use crate::pool::Pool;
use crate::tools::host_tools::HostTool;
use crate::widgets::canvas::{Canvas, sanitize_urls};
use crate::widgets::recipes::{Recipe, RecipeRegistry};

impl Pool {
    /// The pool's recipes.
    pub fn recipes(&self) -> &RecipeRegistry {
        &self.inner.recipes
    }

    /// The pool's canvas store.
    pub fn canvas(&self) -> Arc<Canvas> {
        self.inner.canvas.clone()
    }

    /// Recipes ranked for `query`, best first, at most `limit` (`None`:
    /// [`crate::tools::search::DEFAULT_LIMIT`]; 0 is refused), as `{"name", "description"}`.
    pub fn search_recipes(
        &self,
        query: &str,
        limit: Option<usize>,
    ) -> Result<Vec<serde_json::Value>> {
        Ok(self
            .inner
            .recipes
            .search(query, crate::tools::search::limit(limit)?))
    }

    /// Adds a recipe (markdown with front matter) and makes sure `widget_display` and `canvas`
    /// are offered as host tools.
    pub fn register_recipe(&self, markdown: &str) -> Result<Recipe> {
        let recipe = self.inner.recipes.register(markdown)?;
        if self.tool_server("widget_display").is_none() {
            // Weak: the tool lives in the pool, and a strong handle would keep the pool
            // alive forever.
            let (pool, events) = (Arc::downgrade(&self.inner), self.inner.events.clone());
            self.register_tool(HostTool {
                name: "widget_display".into(),
                description: "Show a widget on the canvas: `name` is a recipe (read it first \
                              with get_recipe), `params` must follow its schema."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "params": {"type": "object"}},
                    "required": ["name", "params"]
                }),
                handler: Arc::new(move |args| {
                    let result = match pool.upgrade() {
                        Some(inner) => Pool {
                            inner,
                            client: None,
                        }
                        .widget_display(
                            args["name"].as_str().unwrap_or_default(),
                            args["params"].clone(),
                            &events,
                        ),
                        None => Err(Error::ShuttingDown),
                    };
                    Box::pin(async move { result.map_err(|e| e.to_string()) })
                }),
            })?;
            let canvas = self.canvas();
            self.register_tool(HostTool {
                name: "canvas".into(),
                description: "Change a widget on the canvas: action move ({x, y}), resize \
                              ({width, height}), style, update (params merged), clear (id, or \
                              all when id is empty)."
                    .into(),
                input_schema: json!({
                    "type": "object",
                    "properties": {
                        "action": {"type": "string", "enum": ["move", "resize", "style", "update", "clear"]},
                        "id": {"type": "string"},
                        "params": {"type": "object"}
                    },
                    "required": ["action"]
                }),
                handler: Arc::new(move |args| {
                    let result = canvas.apply(
                        args["action"].as_str().unwrap_or_default(),
                        args["id"].as_str().unwrap_or_default(),
                        args.get("params").cloned().unwrap_or(json!({})),
                    );
                    Box::pin(async move {
                        result
                            .map(|w| text_result(json!({"widget": w})))
                            .map_err(|e| e.to_string())
                    })
                }),
            })?;
        }
        Ok(recipe)
    }

    /// Validates `params` against the recipe's schema, removes dangerous URLs, adds the widget
    /// to the canvas and emits a `widget` event. Invalid parameters answer the errors and the
    /// schema (a result with `isError`), so an agent can retry.
    fn widget_display(
        &self,
        name: &str,
        mut params: Value,
        events: &EventBus,
    ) -> Result<CallToolResult> {
        let recipes = &self.inner.recipes;
        let Some(recipe) = recipes.get(name) else {
            return Err(Error::not_found("recipe", name));
        };
        if let Err(problems) = recipes.validate(name, &params)? {
            let mut r = CallToolResult::error(vec![ContentBlock::text(format!(
                "invalid params for widget '{name}':\n- {}\nexpected schema: {}",
                problems.join("\n- "),
                recipe.schema.clone().unwrap_or_default()
            ))]);
            r.structured_content = Some(json!({"errors": problems, "schema": recipe.schema}));
            return Ok(r);
        }
        let dropped = sanitize_urls(&mut params);
        let widget = self.inner.canvas.add(name, params);
        events.emit(Event::Widget {
            id: widget.id.clone(),
            name: name.to_string(),
            params: widget.params.clone(),
        });
        Ok(text_result(
            json!({"id": widget.id, "droppedUrls": dropped}),
        ))
    }
}

fn text_result(value: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    r.structured_content = Some(value);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_widget_tool_does_not_keep_the_pool_alive() {
        let dir = tempfile::tempdir().unwrap();
        let pool = crate::pool::empty_pool(dir.path()).await;
        pool.register_recipe("---\nwidget: stat\ndescription: A figure\n---\nShow it.\n")
            .unwrap();
        let weak = Arc::downgrade(&pool.inner);
        pool.close().await;
        drop(pool);
        assert!(weak.upgrade().is_none(), "the pool leaked");
    }
}
