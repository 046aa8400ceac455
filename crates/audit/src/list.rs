//! Agent lists: product tokens, one a line, each with an optional
//! [`Category`]; the built-in `ai` list is `data/agents/ai.tsv`.

use core::fmt;

use crate::category::{Category, UnknownCategory};

/// The built-in `ai` list (`data/agents/ai.tsv`): the AI crawlers of
/// ai.robots.txt that are RFC 9309 product tokens, with their operators
/// and sources (see `data/agents/README.md`).
pub const AI_LIST: &str = include_str!("../../../data/agents/ai.tsv");

/// The names of the built-in lists, which `--agent-list NAME` takes
/// instead of a file.
pub const BUILTIN_LISTS: &[&str] = &["ai"];

/// One agent of a list.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ListEntry {
    token: String,
    category: Option<Category>,
}

impl ListEntry {
    /// The product token.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The category, if the line gives one.
    pub fn category(&self) -> Option<Category> {
        self.category
    }
}

/// A list of agents, in the order of its lines.
///
/// Each line is `TOKEN`, or `TOKEN<TAB>CATEGORY` where CATEGORY is
/// `training`, `search`, `assistant` or `other`; further TAB fields
/// (the built-in list's operator and source) are not read. Empty lines
/// and lines starting with `#` are skipped, a `\r` before the line's end
/// is dropped, and a token named twice (tokens match case-insensitively)
/// is an error.
///
/// ```
/// use robofilter_audit::{AgentList, Category};
///
/// let list = AgentList::parse("# mine\nGPTBot\ttraining\tOpenAI\nMyBot\n")?;
/// let entries = list.entries();
/// assert_eq!(entries[0].token(), "GPTBot");
/// assert_eq!(entries[0].category(), Some(Category::Training));
/// assert_eq!(entries[1].category(), None);
/// assert!(AgentList::parse("A\nB\na\n").is_err());
/// assert!(AgentList::builtin("ai").is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, Eq, PartialEq)]
pub struct AgentList {
    entries: Vec<ListEntry>,
}

impl AgentList {
    /// Reads a list from its text.
    ///
    /// # Errors
    ///
    /// A [`ListError`] naming the line: an unknown category, an empty
    /// token, or a token named twice.
    pub fn parse(text: &str) -> Result<AgentList, ListError> {
        let mut entries: Vec<ListEntry> = Vec::new();
        let mut lines: Vec<usize> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let line = line.strip_suffix('\r').unwrap_or(line);
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let mut fields = line.split('\t');
            let token = fields.next().unwrap_or("").trim();
            if token.is_empty() {
                return Err(ListError::new(n, ListErrorKind::NoToken));
            }
            let category = match fields.next().map(str::trim) {
                None | Some("") => None,
                Some(name) => Some(name.parse().map_err(|e| {
                    ListError::new(n, ListErrorKind::Category(e))
                })?),
            };
            if let Some(at) = entries
                .iter()
                .position(|e| e.token.eq_ignore_ascii_case(token))
            {
                return Err(ListError::new(
                    n,
                    ListErrorKind::Twice {
                        token: token.to_string(),
                        first: entries[at].token.clone(),
                        line: lines[at],
                    },
                ));
            }
            entries.push(ListEntry { token: token.to_string(), category });
            lines.push(n);
        }
        Ok(AgentList { entries })
    }

    /// The built-in list called `name` ([`BUILTIN_LISTS`]), if there is
    /// one.
    pub fn builtin(name: &str) -> Option<AgentList> {
        match name {
            "ai" => Some(AgentList::parse(AI_LIST).expect("ai.tsv is valid")),
            _ => None,
        }
    }

    /// The agents, in the list's order.
    pub fn entries(&self) -> &[ListEntry] {
        &self.entries
    }
}

/// A line of an agent list that cannot be read.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ListError {
    line: usize,
    kind: ListErrorKind,
}

#[derive(Clone, Debug, Eq, PartialEq)]
enum ListErrorKind {
    NoToken,
    Category(UnknownCategory),
    Twice { token: String, first: String, line: usize },
}

impl ListError {
    fn new(line: usize, kind: ListErrorKind) -> ListError {
        ListError { line, kind }
    }

    /// The line's number, from 1.
    pub fn line(&self) -> usize {
        self.line
    }
}

impl fmt::Display for ListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: ", self.line)?;
        match &self.kind {
            ListErrorKind::NoToken => {
                f.write_str("no product token before the TAB")
            }
            ListErrorKind::Category(e) => e.fmt(f),
            ListErrorKind::Twice { token, first, line } => write!(
                f,
                "'{token}' is listed twice (line {line} names '{first}'; \
                 tokens match case-insensitively)"
            ),
        }
    }
}

impl std::error::Error for ListError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ai_list_is_product_tokens_with_categories_and_sources() {
        let list = AgentList::builtin("ai").unwrap();
        assert!(list.entries().len() > 100);
        for line in AI_LIST.lines().filter(|l| !l.starts_with('#')) {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), 4, "{line:?}");
            let token_ok = fields[0]
                .bytes()
                .all(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'-');
            assert!(token_ok, "not a product token: {line:?}");
            assert!(fields[1].parse::<Category>().is_ok(), "{line:?}");
            assert!(!fields[2].is_empty(), "{line:?}");
            assert!(fields[3].starts_with("https://"), "{line:?}");
        }
        let find = |t: &str| {
            list.entries().iter().find(|e| e.token() == t).unwrap().category()
        };
        assert_eq!(find("GPTBot"), Some(Category::Training));
        assert_eq!(find("OAI-SearchBot"), Some(Category::Search));
        assert_eq!(find("ChatGPT-User"), Some(Category::Assistant));
        assert_eq!(find("ClaudeBot"), Some(Category::Training));
        assert_eq!(find("Claude-User"), Some(Category::Assistant));
        assert_eq!(find("Google-Extended"), Some(Category::Training));
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            ("A\n\tsearch\n", "line 2: no product token"),
            ("# c\nA\tcrawling\n", "line 2: unknown category 'crawling'"),
            ("A\r\nB\r\na\r\n", "line 3: 'a' is listed twice (line 1"),
        ];
        for (text, want) in cases {
            let got = AgentList::parse(text).unwrap_err().to_string();
            assert!(got.starts_with(want), "{text:?}: {got}");
        }
        let ok = AgentList::parse("\n  # indented comment\nA\t\tnote\r\n");
        assert_eq!(ok.unwrap().entries()[0].category(), None);
    }
}
