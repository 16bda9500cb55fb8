//! Canonical tool names (as WebMCP Auto-UI resolves them): servers name the same job differently
//! (`find_recipe_by_keyword`, `recipes_search`, ...); the agent's prompt uses one canonical
//! name and an alias map sends each call to the server's real tool.

use crate::tools::search::tokenize;

/// The names the discovery prompt teaches an agent.
pub const CANONICAL: &[&str] = &[
    "search_recipes",
    "list_recipes",
    "get_recipe",
    "search_tools",
    "list_tools",
];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
    Search,
    List,
    Get,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Noun {
    Recipe,
    Tool,
}

fn verb(token: &str) -> Option<Verb> {
    match token {
        "search" | "find" | "query" | "lookup" | "look" | "match" => Some(Verb::Search),
        "list" | "enumerate" | "all" | "browse" | "catalog" | "index" => Some(Verb::List),
        "get" | "read" | "load" | "fetch" | "show" | "open" | "describe" => Some(Verb::Get),
        _ => None,
    }
}

fn noun(token: &str) -> Option<Noun> {
    match token {
        "recipe" | "widget" | "skill" => Some(Noun::Recipe),
        "tool" | "function" | "command" => Some(Noun::Tool),
        _ => None,
    }
}

fn name_of(v: Verb, n: Noun) -> Option<&'static str> {
    Some(match (v, n) {
        (Verb::Search, Noun::Recipe) => "search_recipes",
        (Verb::List, Noun::Recipe) => "list_recipes",
        (Verb::Get, Noun::Recipe) => "get_recipe",
        (Verb::Search, Noun::Tool) => "search_tools",
        (Verb::List, Noun::Tool) => "list_tools",
        (Verb::Get, Noun::Tool) => return None,
    })
}

/// The canonical name a server's tool stands for, if any, by the seed's four layers:
///
/// 1. the exact name;
/// 2. a (verb, noun) pair among the name's tokens, in order (`find_recipe_by_keyword` →
///    search + recipe);
/// 3. keywords of the description (`template`, `library` → `list_recipes`);
/// 4. none: the tool keeps its own name.
pub fn canonical_name(tool_name: &str, description: Option<&str>) -> Option<&'static str> {
    let lowered = tool_name.to_ascii_lowercase().replace('-', "_");
    if let Some(exact) = CANONICAL.iter().find(|c| **c == lowered) {
        return Some(exact);
    }
    let tokens = tokenize(tool_name);
    for (i, t) in tokens.iter().enumerate() {
        if let Some(v) = verb(t)
            && let Some(n) = tokens[i + 1..].iter().find_map(|t| noun(t))
            && let Some(name) = name_of(v, n)
        {
            return Some(name);
        }
    }
    let words = tokenize(description.unwrap_or(""));
    if words.iter().any(|w| w == "template" || w == "library") {
        return Some("list_recipes");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_one_exact_names() {
        assert_eq!(
            canonical_name("search_recipes", None),
            Some("search_recipes")
        );
        assert_eq!(canonical_name("list-tools", None), Some("list_tools"));
    }

    #[test]
    fn layer_two_token_pairs() {
        // The seed's example.
        assert_eq!(
            canonical_name("find_recipe_by_keyword", None),
            Some("search_recipes")
        );
        assert_eq!(canonical_name("getRecipe", None), Some("get_recipe"));
        assert_eq!(
            canonical_name("list_all_widgets", None),
            Some("list_recipes")
        );
        assert_eq!(canonical_name("lookupTools", None), Some("search_tools"));
        // Order matters: a noun before the verb is no pair.
        assert_eq!(canonical_name("recipe_search_stats", None), None);
    }

    #[test]
    fn layer_three_description_keywords_and_layer_four_fallback() {
        assert_eq!(
            canonical_name("browse", Some("Browse the template library")),
            Some("list_recipes")
        );
        assert_eq!(
            canonical_name("get_forecast", Some("Weather for a city")),
            None
        );
    }
}
