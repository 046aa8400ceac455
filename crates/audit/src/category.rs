//! What an AI crawler's visits are for: the small fixed set of categories
//! of an agent list.

use core::fmt;

/// The purpose of an agent, as an agent list records it.
///
/// The set is fixed, so that roll-ups from different lists compare:
///
/// ```
/// use robofilter_audit::Category;
///
/// assert_eq!("search".parse::<Category>()?, Category::Search);
/// assert_eq!(Category::Assistant.as_str(), "assistant");
/// assert!("crawler".parse::<Category>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum Category {
    /// Collects pages to train models (`training`).
    Training,
    /// Indexes pages for a search engine or its AI answers (`search`).
    Search,
    /// Fetches a page because a user asked: assistants, agents,
    /// user-initiated fetches (`assistant`).
    Assistant,
    /// Anything else: several uses, data sold on, undocumented (`other`).
    Other,
}

impl Category {
    /// Every category, in the order roll-ups list them.
    pub const ALL: [Category; 4] = [
        Category::Training,
        Category::Search,
        Category::Assistant,
        Category::Other,
    ];

    /// The category's name in lists, JSON and the report.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Training => "training",
            Category::Search => "search",
            Category::Assistant => "assistant",
            Category::Other => "other",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A category name that is not one of [`Category::ALL`].
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct UnknownCategory {
    name: String,
}

impl fmt::Display for UnknownCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown category '{}' (the categories are training, search, \
             assistant and other)",
            self.name
        )
    }
}

impl std::error::Error for UnknownCategory {}

impl core::str::FromStr for Category {
    type Err = UnknownCategory;

    fn from_str(s: &str) -> Result<Category, UnknownCategory> {
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCategory { name: s.to_string() })
    }
}
