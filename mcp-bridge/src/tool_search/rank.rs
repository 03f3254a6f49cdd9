//! Ranking tools for a query: BM25 (the `bm25` crate's scorer) over the
//! words of each tool's name, title and description, the name's words
//! counted twice: a name says what a tool is, a description says much
//! else besides.
//!
//! Words are what a person would type: names split on `_`, `-`, `.`,
//! `/` and camelCase (`github__listPullRequests` is `github list pull
//! requests`), lower-cased, the commonest English words dropped, and
//! endings taken off (`issues`, `issue` and `issued` are one word), so a
//! query need not spell a tool's name.

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};
use serde_json::Value;

/// How many times a name's words count against the description's once.
const NAME_WEIGHT: usize = 2;

/// Words that say nothing of what a tool does.
const STOP: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does",
    "for", "from", "given", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of",
    "on", "or", "some", "that", "the", "their", "them", "this", "to", "tool", "was", "what",
    "when", "which", "who", "will", "with", "you", "your",
];

/// The tools of one list, ready to be searched.
pub(crate) struct Index {
    tools: Vec<Value>,
    embedder: Embedder<u32, Words>,
    scorer: Scorer<usize, u32>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Index")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

impl Index {
    /// Indexes tool definitions as `tools/list` gives them.
    pub(crate) fn new(tools: Vec<Value>) -> Index {
        let texts: Vec<String> = tools.iter().map(searched_text).collect();
        let corpus: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::with_tokenizer_and_fit_to_corpus(Words, &corpus).build();
        let mut scorer = Scorer::new();
        for (i, text) in texts.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(text));
        }
        Index {
            tools,
            embedder,
            scorer,
        }
    }

    /// The `limit` tools that match `query` best, best first; a query of
    /// no words at all gives the first tools listed.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<&Value> {
        if words(query).is_empty() {
            return self.tools.iter().take(limit).collect();
        }
        let mut matches = self.scorer.matches(&self.embedder.embed(query));
        // Ties go to the tool listed first, so a search gives the same
        // answer every time.
        matches.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        matches
            .into_iter()
            .take(limit)
            .map(|m| &self.tools[m.id])
            .collect()
    }

    /// The tool named `name`.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.tools.iter().find(|t| t["name"].as_str() == Some(name))
    }

    /// How many tools there are.
    pub(crate) fn len(&self) -> usize {
        self.tools.len()
    }
}

/// What a tool is searched by: its name (weighted), title and
/// description.
fn searched_text(tool: &Value) -> String {
    let field = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or_default();
    let mut text = String::new();
    for _ in 0..NAME_WEIGHT {
        text.push_str(field("name"));
        text.push(' ');
    }
    text.push_str(field("title"));
    text.push(' ');
    text.push_str(field("description"));
    text
}

/// The tokenizer of both tools and queries: [`words`].
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Words;

impl Tokenizer for Words {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        words(input_text)
    }
}

/// The words of a text, as they are compared.
pub(crate) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .flat_map(camel_case)
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOP.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

/// A word split where its case turns up: `listPullRequests` is `list`,
/// `Pull`, `Requests`; `HTTPServer` is `HTTP`, `Server`.
fn camel_case(piece: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = piece.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for k in 1..chars.len() {
        let (at, c) = chars[k];
        let before = chars[k - 1].1;
        let lower_next = chars.get(k + 1).is_some_and(|(_, n)| n.is_lowercase());
        if c.is_uppercase()
            && (before.is_lowercase()
                || before.is_ascii_digit()
                || (before.is_uppercase() && lower_next))
        {
            parts.push(&piece[start..at]);
            start = at;
        }
    }
    parts.push(&piece[start..]);
    parts
}

/// A word without its English ending: plurals, `-ing`, `-ed` and a final
/// `e` go (`created`, `creates`, `creating` and `create` are `creat`).
fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 3 {
        return word.to_owned();
    }
    let mut w = word.to_owned();
    if w.len() > 4 && w.ends_with("ies") {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with('s') && !["ss", "us", "is"].iter().any(|end| w.ends_with(end)) {
        w.pop();
    }
    for ending in ["ing", "ed"] {
        if w.ends_with(ending) && w.len() - ending.len() >= 3 {
            w.truncate(w.len() - ending.len());
            // A doubled last letter (`running`, `committed`), where the
            // word is long enough not to be the whole word (`adding`).
            let b = w.as_bytes();
            let n = b.len();
            if n >= 4 && b[n - 1] == b[n - 2] && !b"lsz".contains(&b[n - 1]) {
                w.pop();
            }
            break;
        }
    }
    if w.len() > 3 && w.ends_with('e') {
        w.pop();
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_split_into_the_words_a_query_would_use() {
        assert_eq!(words("github__create_issue"), ["github", "creat", "issu"]);
        assert_eq!(words("listPullRequests"), ["list", "pull", "request"]);
        assert_eq!(
            words("HTTPServer get-item.v2"),
            ["http", "server", "get", "item", "v2"]
        );
        assert_eq!(words("Create the issues"), ["creat", "issu"]);
        assert_eq!(words("running committed adding"), ["run", "commit", "add"]);
        assert_eq!(words("queries status"), ["query", "status"]);
        assert!(words("to the of").is_empty());
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description, "inputSchema": {"type": "object"}})
    }

    fn names(found: Vec<&Value>) -> Vec<&str> {
        found.iter().map(|t| t["name"].as_str().unwrap()).collect()
    }

    #[test]
    fn the_best_match_comes_first_and_the_name_weighs_most() {
        let index = Index::new(vec![
            tool("fs__read_file", "Read a file from disk"),
            tool("fs__write_file", "Write a file to disk"),
            tool("mail__send", "Send an email; a file may be attached"),
        ]);
        assert_eq!(names(index.search("write file", 3))[0], "fs__write_file");
        assert_eq!(names(index.search("send email", 1)), ["mail__send"]);
        assert_eq!(names(index.search("reading files", 3))[0], "fs__read_file");
        assert!(index.search("kubernetes", 3).is_empty());
        assert_eq!(index.search("", 2).len(), 2, "no words: the first tools");
        assert_eq!(index.len(), 3);
        assert!(index.get("mail__send").is_some() && index.get("mail").is_none());
    }

    #[test]
    fn a_search_gives_the_same_order_every_time() {
        let index = Index::new((0..20).map(|i| tool(&format!("t{i}"), "same")).collect());
        let first = names(index.search("same", 20));
        assert_eq!(first[0], "t0");
        assert_eq!(first, names(index.search("same", 20)));
    }
}
