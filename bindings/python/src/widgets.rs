//! Recipes and the canvas through the extension.

use pyo3::prelude::*;

use crate::pool::{NativePool, count, json_result, to_json};

#[pymethods]
impl NativePool {
    /// Adds a recipe (markdown with front matter); returns it as JSON.
    fn register_recipe(&self, markdown: &str) -> PyResult<String> {
        json_result(self.pool()?.register_recipe(markdown))
    }

    fn list_recipes(&self) -> PyResult<String> {
        to_json(&self.pool()?.recipes().list())
    }

    fn get_recipe(&self, name: &str) -> PyResult<Option<String>> {
        self.pool()?
            .recipes()
            .get(name)
            .map(|r| to_json(&r))
            .transpose()
    }

    #[pyo3(signature = (query, limit=None))]
    fn search_recipes(&self, query: &str, limit: Option<i64>) -> PyResult<String> {
        json_result(self.pool()?.search_recipes(query, limit.map(count)))
    }

    /// The canvas's widgets, as JSON.
    fn canvas(&self) -> PyResult<String> {
        to_json(&self.pool()?.canvas().to_json())
    }
}
