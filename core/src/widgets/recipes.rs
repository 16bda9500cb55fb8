//! Recipes (WebMCP Auto-UI's widget registry): markdown documents whose YAML front matter names a
//! widget, says what it is for and gives the JSON Schema of its parameters, and whose body
//! tells an agent when and how to use it.

use crate::front_matter::Missing;
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::tools::ToolInfo;
use crate::tools::search::SearchIndex;

/// One recipe.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recipe {
    pub name: String,
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// The markdown instructions after the front matter.
    pub body: String,
}

#[derive(Deserialize)]
struct FrontMatter {
    widget: Option<String>,
    name: Option<String>,
    #[serde(default)]
    description: String,
    schema: Option<Value>,
}

/// Parses a recipe: `---`, YAML (`widget` or `name`, `description`, `schema`), `---`, body.
pub fn parse_recipe(markdown: &str) -> Result<Recipe> {
    let (yaml, body) = crate::front_matter::split(markdown).map_err(|missing| match missing {
        Missing::Start => Error::invalid("a recipe starts with a `---` front matter block"),
        Missing::End => Error::invalid("the recipe's front matter has no closing `---`"),
    })?;
    let front: FrontMatter = yaml_serde::from_str(yaml)
        .map_err(|e| Error::invalid(format!("the recipe's front matter is not valid YAML: {e}")))?;
    let name = front
        .widget
        .or(front.name)
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| Error::invalid("the recipe's front matter needs `widget` (or `name`)"))?;
    Ok(Recipe {
        name,
        description: front.description,
        schema: front.schema,
        body: body
            .trim_start_matches(['-', '\r', '\n'])
            .trim()
            .to_string(),
    })
}

struct Entry {
    recipe: Recipe,
    validator: Option<Arc<jsonschema::Validator>>,
}

/// The recipes of a pool: list, search, get, and parameter checks.
#[derive(Default)]
pub struct RecipeRegistry {
    recipes: RwLock<BTreeMap<String, Entry>>,
    index: RwLock<Option<Arc<SearchIndex>>>,
}

impl RecipeRegistry {
    /// Adds (or replaces) a recipe from its markdown.
    pub fn register(&self, markdown: &str) -> Result<Recipe> {
        let recipe = parse_recipe(markdown)?;
        let validator = match &recipe.schema {
            None => None,
            Some(schema) => Some(Arc::new(jsonschema::validator_for(schema).map_err(
                |e| {
                    Error::invalid(format!(
                        "recipe '{}': invalid JSON Schema: {e}",
                        recipe.name
                    ))
                },
            )?)),
        };
        self.recipes.write().unwrap().insert(
            recipe.name.clone(),
            Entry {
                recipe: recipe.clone(),
                validator,
            },
        );
        *self.index.write().unwrap() = None;
        Ok(recipe)
    }

    /// Name and description of every recipe.
    pub fn list(&self) -> Vec<Value> {
        self.recipes
            .read()
            .unwrap()
            .values()
            .map(
                |e| serde_json::json!({"name": e.recipe.name, "description": e.recipe.description}),
            )
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<Recipe> {
        self.recipes
            .read()
            .unwrap()
            .get(name)
            .map(|e| e.recipe.clone())
    }

    /// Recipes ranked for `query` by name, description and parameter names.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Value> {
        let index = {
            let mut cached = self.index.write().unwrap();
            cached
                .get_or_insert_with(|| {
                    let docs: Vec<ToolInfo> = self
                        .recipes
                        .read()
                        .unwrap()
                        .values()
                        .map(|e| ToolInfo {
                            id: e.recipe.name.clone(),
                            server_id: String::new(),
                            server_name: String::new(),
                            name: e.recipe.name.clone(),
                            description: Some(format!(
                                "{} {}",
                                e.recipe.description, e.recipe.body
                            )),
                            input_schema: e.recipe.schema.clone().unwrap_or_default().into(),
                            ..Default::default()
                        })
                        .collect();
                    Arc::new(SearchIndex::build(&docs))
                })
                .clone()
        };
        index
            .search(query, limit)
            .into_iter()
            .filter_map(|h| {
                let recipes = self.recipes.read().unwrap();
                let r = &recipes.get(&h.id)?.recipe;
                Some(serde_json::json!({"name": r.name, "description": r.description, "score": h.score}))
            })
            .collect()
    }

    /// Checks widget parameters against the recipe's schema; the errors say what is wrong.
    pub fn validate(
        &self,
        name: &str,
        params: &Value,
    ) -> Result<std::result::Result<(), Vec<String>>> {
        let recipes = self.recipes.read().unwrap();
        let entry = recipes
            .get(name)
            .ok_or_else(|| Error::not_found("recipe", name))?;
        let Some(validator) = &entry.validator else {
            return Ok(Ok(()));
        };
        let problems = crate::tools::host_tools::schema_problems(validator, params);
        Ok(if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The seed's own example.
    const STAT: &str = "---
widget: stat
description: Statistique cle (KPI, compteur)
schema:
  type: object
  required: [label, value]
  properties:
    label: { type: string }
    value: { type: string }
    trend: { type: string, enum: [up, down, stable] }
---
## Comment utiliser
Appeler widget_display('stat', {label: \"X\", value: \"Y\"})
";

    #[test]
    fn parses_the_seed_recipe() {
        let r = parse_recipe(STAT).unwrap();
        assert_eq!(r.name, "stat");
        assert_eq!(r.description, "Statistique cle (KPI, compteur)");
        assert_eq!(
            r.schema.as_ref().unwrap()["required"],
            json!(["label", "value"])
        );
        assert!(r.body.starts_with("## Comment utiliser"), "{}", r.body);
    }

    #[test]
    fn bad_recipes_are_clear_errors() {
        assert!(
            parse_recipe("no front matter")
                .unwrap_err()
                .to_string()
                .contains("---")
        );
        assert!(
            parse_recipe("---\nwidget: x\n")
                .unwrap_err()
                .to_string()
                .contains("closing")
        );
        assert!(
            parse_recipe("---\ndescription: d\n---\n")
                .unwrap_err()
                .to_string()
                .contains("widget")
        );
        assert!(
            parse_recipe("---\nwidget: [\n---\n")
                .unwrap_err()
                .to_string()
                .contains("YAML")
        );
    }

    #[test]
    fn registry_lists_searches_gets_and_validates() {
        let reg = RecipeRegistry::default();
        reg.register(STAT).unwrap();
        reg.register("---\nname: chart\ndescription: A line chart of a time series\n---\nUse for trends over time.").unwrap();
        assert_eq!(reg.list().len(), 2);
        assert_eq!(reg.search("line chart", 5)[0]["name"], "chart");
        assert_eq!(reg.search("kpi compteur", 5)[0]["name"], "stat");
        assert!(reg.get("stat").unwrap().body.contains("widget_display"));
        assert!(
            reg.validate("stat", &json!({"label": "a", "value": "1"}))
                .unwrap()
                .is_ok()
        );
        let errors = reg
            .validate("stat", &json!({"label": 3, "trend": "sideways"}))
            .unwrap()
            .unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            reg.validate("chart", &json!({"anything": 1}))
                .unwrap()
                .is_ok()
        );
        assert!(reg.validate("nope", &json!({})).is_err());
    }
}
