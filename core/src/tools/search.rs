//! Ranked search over tool descriptions (BM25), fast enough to run on every keystroke over
//! thousands of tools.

use std::collections::HashMap;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::tools::ToolInfo;

/// How many results a search gives when the caller does not say.
pub const DEFAULT_LIMIT: usize = 10;

/// The number of results a caller asked for: `None` is [`DEFAULT_LIMIT`], and 0 is refused.
/// Every binding passes its caller's limit here as it is (C's 0 means "not given").
pub fn limit(asked: Option<usize>) -> Result<usize> {
    match asked {
        None => Ok(DEFAULT_LIMIT),
        Some(0) => Err(Error::invalid(format!(
            "limit must be at least 1 (leave it out for {DEFAULT_LIMIT})"
        ))),
        Some(n) => Ok(n),
    }
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub id: String,
    pub score: f32,
    pub server_name: String,
    pub name: String,
    /// The first sentence of the description, at most 160 characters.
    pub description: String,
}

/// Weight of a term by the field it comes from: a match in a tool's name says more than one
/// in its description.
const NAME_WEIGHT: f32 = 3.0;
const TITLE_WEIGHT: f32 = 2.0;
const PARAM_WEIGHT: f32 = 1.5;
const DESCRIPTION_WEIGHT: f32 = 1.0;
const SERVER_WEIGHT: f32 = 1.0;
const K1: f32 = 1.2;
const B: f32 = 0.75;

struct Doc {
    id: String,
    server_name: String,
    name: String,
    summary: String,
}

/// An immutable BM25 index over a set of tools.
pub struct SearchIndex {
    docs: Vec<Doc>,
    /// Term → (doc, weighted term frequency), docs ascending.
    postings: HashMap<String, Vec<(u32, f32)>>,
    /// Sorted vocabulary, for prefix matches of partly typed words.
    vocabulary: Vec<String>,
    doc_len: Vec<f32>,
    avg_len: f32,
}

/// Splits identifiers and prose into lowercase terms: `getCurrentTime`, `get_current_time`
/// and "get the current time" share `get`, `current`, `time`. A trailing plural `s` is
/// dropped so `recipes` finds `recipe`.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    let flush = |word: &mut String, out: &mut Vec<String>| {
        if !word.is_empty() {
            out.push(normalize(std::mem::take(word)));
        }
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower {
                flush(&mut word, &mut out);
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            flush(&mut word, &mut out);
        }
    }
    flush(&mut word, &mut out);
    out.retain(|t| !STOP_WORDS.contains(&t.as_str()));
    out
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "and", "or", "for", "in", "on", "is", "it", "be", "by", "with",
    "this", "that", "from", "as", "at",
];

fn normalize(mut t: String) -> String {
    if t.len() > 3 && t.ends_with('s') && !t.ends_with("ss") {
        t.pop();
    }
    t
}

fn summary(description: Option<&str>) -> String {
    let text = description.unwrap_or("").trim();
    let first = text
        .split_inclusive(['.', '\n'])
        .next()
        .unwrap_or("")
        .trim();
    if first.chars().count() <= 160 {
        first.to_string()
    } else {
        let cut: String = first.chars().take(157).collect();
        format!("{cut}...")
    }
}

/// Parameter names of an input schema's top-level properties (read from its text, their
/// own schemas skipped).
fn param_names(schema: &crate::shared_json::SharedJson) -> Vec<String> {
    #[derive(serde::Deserialize)]
    struct Properties {
        #[serde(default)]
        properties: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
    }
    schema
        .parse::<Properties>()
        .map(|p| p.properties.into_keys().collect())
        .unwrap_or_default()
}

impl SearchIndex {
    pub fn build(tools: &[ToolInfo]) -> SearchIndex {
        let mut postings: HashMap<String, Vec<(u32, f32)>> = HashMap::new();
        let mut docs = Vec::with_capacity(tools.len());
        let mut doc_len = Vec::with_capacity(tools.len());
        for (i, t) in tools.iter().enumerate() {
            let mut tf: HashMap<String, f32> = HashMap::new();
            let mut len = 0.0;
            let mut add = |text: &str, weight: f32| {
                for term in tokenize(text) {
                    *tf.entry(term).or_default() += weight;
                    len += weight;
                }
            };
            add(&t.name, NAME_WEIGHT);
            if let Some(title) = &t.title {
                add(title, TITLE_WEIGHT);
            }
            if let Some(d) = &t.description {
                add(d, DESCRIPTION_WEIGHT);
            }
            for p in param_names(&t.input_schema) {
                add(&p, PARAM_WEIGHT);
            }
            add(&t.server_name, SERVER_WEIGHT);
            for (term, f) in tf {
                postings.entry(term).or_default().push((i as u32, f));
            }
            doc_len.push(len);
            docs.push(Doc {
                id: t.id.clone(),
                server_name: t.server_name.clone(),
                name: t.name.clone(),
                summary: summary(t.description.as_deref()),
            });
        }
        let avg_len = if docs.is_empty() {
            1.0
        } else {
            (doc_len.iter().sum::<f32>() / docs.len() as f32).max(1.0)
        };
        let mut vocabulary: Vec<String> = postings.keys().cloned().collect();
        vocabulary.sort_unstable();
        SearchIndex {
            docs,
            postings,
            vocabulary,
            doc_len,
            avg_len,
        }
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The best `limit` tools for `query`, best first; ties go to the lower id.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let n = self.docs.len() as f32;
        // Dense scores: a common term touches thousands of tools, and indexing an array is
        // several times cheaper than a hash map entry per posting.
        let mut scores = vec![0f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for term in tokenize(query) {
            // An exact term scores fully; a prefix of longer terms (a word being typed)
            // scores half, through each term it starts.
            let mut matched: Vec<(&str, f32)> = Vec::new();
            if self.postings.contains_key(&term) {
                matched.push((term.as_str(), 1.0));
            }
            if term.len() >= 3 {
                let start = self
                    .vocabulary
                    .partition_point(|v| v.as_str() < term.as_str());
                for v in self.vocabulary[start..]
                    .iter()
                    .take_while(|v| v.starts_with(&term))
                {
                    if *v != term {
                        matched.push((v.as_str(), 0.5));
                    }
                }
            }
            for (t, factor) in matched {
                let list = &self.postings[t];
                let df = list.len() as f32;
                let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                for &(doc, tf) in list {
                    let norm = K1 * (1.0 - B + B * self.doc_len[doc as usize] / self.avg_len);
                    let score = &mut scores[doc as usize];
                    if *score == 0.0 {
                        touched.push(doc);
                    }
                    // BM25 terms are positive, so a touched doc never returns to zero.
                    *score += factor * idf * tf * (K1 + 1.0) / (tf + norm);
                }
            }
        }
        let mut ranked: Vec<(u32, f32)> = touched
            .into_iter()
            .map(|doc| (doc, scores[doc as usize]))
            .collect();
        let by_score = |a: &(u32, f32), b: &(u32, f32)| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.docs[a.0 as usize].id.cmp(&self.docs[b.0 as usize].id))
        };
        if ranked.len() > limit && limit > 0 {
            ranked.select_nth_unstable_by(limit - 1, by_score);
            ranked.truncate(limit);
        }
        ranked.sort_by(by_score);
        ranked.truncate(limit);
        ranked
            .into_iter()
            .map(|(doc, score)| {
                let d = &self.docs[doc as usize];
                SearchHit {
                    id: d.id.clone(),
                    score,
                    server_name: d.server_name.clone(),
                    name: d.name.clone(),
                    description: d.summary.clone(),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(server: &str, name: &str, description: &str, params: &[&str]) -> ToolInfo {
        let props: serde_json::Map<_, _> = params
            .iter()
            .map(|p| (p.to_string(), json!({"type": "string"})))
            .collect();
        ToolInfo {
            id: crate::tools::tool_id(server, name),
            server_id: server.into(),
            server_name: server.into(),
            name: name.into(),
            description: Some(description.into()),
            input_schema: json!({"type": "object", "properties": props}).into(),
            ..Default::default()
        }
    }

    /// Tool lists of real servers (server-everything, filesystem, memory, git, time).
    fn corpus() -> Vec<ToolInfo> {
        vec![
            tool(
                "everything",
                "echo",
                "Echoes back the input string",
                &["message"],
            ),
            tool(
                "everything",
                "get-sum",
                "Returns the sum of two numbers",
                &["a", "b"],
            ),
            tool(
                "everything",
                "get-tiny-image",
                "Returns a tiny MCP logo image.",
                &[],
            ),
            tool(
                "everything",
                "trigger-long-running-operation",
                "Demonstrates a long running operation with progress updates.",
                &["duration", "steps"],
            ),
            tool(
                "everything",
                "get-env",
                "Returns all environment variables, helpful for debugging MCP server configuration",
                &[],
            ),
            tool(
                "filesystem",
                "read_text_file",
                "Read the complete contents of a file from the file system as text.",
                &["path", "head", "tail"],
            ),
            tool(
                "filesystem",
                "write_file",
                "Create a new file or completely overwrite an existing file with new content.",
                &["path", "content"],
            ),
            tool(
                "filesystem",
                "list_directory",
                "Get a detailed listing of all files and directories in a specified path.",
                &["path"],
            ),
            tool(
                "filesystem",
                "search_files",
                "Recursively search for files and directories matching a pattern.",
                &["path", "pattern"],
            ),
            tool(
                "filesystem",
                "move_file",
                "Move or rename files and directories.",
                &["source", "destination"],
            ),
            tool(
                "memory",
                "create_entities",
                "Create multiple new entities in the knowledge graph",
                &["entities"],
            ),
            tool(
                "memory",
                "search_nodes",
                "Search for nodes in the knowledge graph based on a query",
                &["query"],
            ),
            tool(
                "memory",
                "delete_relations",
                "Delete multiple relations from the knowledge graph",
                &["relations"],
            ),
            tool(
                "git",
                "git_status",
                "Shows the working tree status",
                &["repo_path"],
            ),
            tool(
                "git",
                "git_commit",
                "Records changes to the repository",
                &["repo_path", "message"],
            ),
            tool(
                "git",
                "git_log",
                "Shows the commit logs",
                &["repo_path", "max_count"],
            ),
            tool(
                "time",
                "get_current_time",
                "Get current time in a specific timezones",
                &["timezone"],
            ),
            tool(
                "time",
                "convert_time",
                "Convert time between timezones",
                &["source_timezone", "time", "target_timezone"],
            ),
        ]
    }

    fn top(index: &SearchIndex, q: &str) -> String {
        index
            .search(q, 3)
            .first()
            .map(|h| h.name.clone())
            .unwrap_or_default()
    }

    #[test]
    fn tokenizer_splits_identifiers_and_prose() {
        assert_eq!(tokenize("getCurrentTime"), ["get", "current", "time"]);
        assert_eq!(tokenize("read_text_file"), ["read", "text", "file"]);
        assert_eq!(
            tokenize("trigger-long-running-operation"),
            ["trigger", "long", "running", "operation"]
        );
        assert_eq!(tokenize("Search the recipes"), ["search", "recipe"]);
        assert_eq!(tokenize("HTTPServer v2"), ["httpserver", "v2"]);
    }

    #[test]
    fn real_tool_lists_rank_the_expected_tool_first() {
        let index = SearchIndex::build(&corpus());
        for (query, expected) in [
            ("read a file", "read_text_file"),
            ("what is the current time in Tokyo", "get_current_time"),
            ("convert time", "convert_time"),
            ("commit changes", "git_commit"),
            ("knowledge graph search", "search_nodes"),
            ("rename", "move_file"),
            ("add two numbers sum", "get-sum"),
            ("environment variables", "get-env"),
            ("progress", "trigger-long-running-operation"),
            ("directory listing", "list_directory"),
            ("echo", "echo"),
        ] {
            assert_eq!(
                top(&index, query),
                expected,
                "query {query:?}: {:?}",
                index.search(query, 3)
            );
        }
    }

    #[test]
    fn prefixes_match_words_being_typed_and_nonsense_matches_nothing() {
        let index = SearchIndex::build(&corpus());
        let hits = index.search("timez", 5);
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert!(hits.iter().all(|h| h.server_name == "time"));
        assert!(index.search("zzyzx", 5).is_empty());
        assert!(index.search("", 5).is_empty());
    }

    #[test]
    fn results_are_limited_ordered_and_carry_ids() {
        let index = SearchIndex::build(&corpus());
        let hits = index.search("file", 3);
        assert_eq!(hits.len(), 3);
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(hits.iter().all(|h| h.id.starts_with("mcp__filesystem__")));
        assert!(!hits[0].description.is_empty());
    }
}
