//! robofilter's audit of many hosts' robots.txt, for the people who ask
//! what the web tells AI crawlers: researchers measuring consent to AI
//! data use, publishers checking their own sites, crawl operators.
//!
//! - [`AgentList`]: agents to audit, each with an optional [`Category`]
//!   (`training`, `search`, `assistant`, `other`); the built-in `ai` list
//!   ([`AI_LIST`]) holds the AI crawlers of ai.robots.txt.
//! - [`member_stances`] and [`Stance`]: a host's stance toward each
//!   agent, decided exactly from its compiled robots.txt (blocked
//!   entirely, blocks some paths, allows all) or its fetch outcome (failed
//!   to fetch); [`member_signals`], the AI-use [`Signal`]s it gives each
//!   (Content-Usage `train-ai=n`, Content-Signal `ai-train=no`);
//!   [`StanceTable`] holds every host's.
//! - [`Summary`]: the stances counted per agent, rolled up per category,
//!   and over the top-ranked hosts of a [`Ranks`] list (such as Tranco),
//!   as a table or JSON lines; [`report_html`], the same numbers as one
//!   self-contained HTML page.
//! - [`Comparison`]: two snapshots' stances, host by host.
//!
//! The crate does no I/O: the CLI reads the bundles (on all cores), the
//! lists and the ranks, and writes what this crate renders.
//!
//! # Example: a bundle's stances toward two AI crawlers
//!
//! ```
//! use robofilter::{AlignedBytes, Bundle, BundleBuilder, Config, Fetch};
//! use robofilter_audit::{AgentList, StanceTable, Summary, Stance, member_stances};
//!
//! let mut builder = BundleBuilder::new(Config::new());
//! let ok = |body: &[u8]| Fetch::Http { status: 200, body: body.to_vec() };
//! builder.add("a.example", ok(b"User-agent: GPTBot\nDisallow: /\n"))?;
//! builder.add("b.example", ok(b"User-agent: *\nDisallow: /cgi-bin/\n"))?;
//! let bytes = AlignedBytes::from(&builder.finish()?[..]);
//! let bundle = Bundle::from_bytes(bytes.as_bytes())?;
//!
//! let list = AgentList::parse("GPTBot\ttraining\nOAI-SearchBot\tsearch\n")?;
//! let agents: Vec<&str> = list.entries().iter().map(|e| e.token()).collect();
//! let members = (0..bundle.member_len())
//!     .map(|m| Ok(member_stances(&bundle.member(m)?, &agents)?))
//!     .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
//! let mut table = StanceTable::new(&agents);
//! table.push_bundle(&bundle, &members, None);
//! table.finish();
//! assert_eq!(table.host(0).1, [Stance::BlockedEntirely, Stance::AllowsAll]);
//!
//! let categories: Vec<_> = list.entries().iter().map(|e| e.category()).collect();
//! let summary = Summary::new(&table, &categories, None);
//! let mut json = Vec::new();
//! summary.write_json(&mut json, false)?;
//! assert!(String::from_utf8(json)?.starts_with(
//!     r#"{"agent":"GPTBot","category":"training","blocked_entirely":1,"blocks_some":1"#
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![deny(missing_docs)]

// The modules, bottom-up: `category`; `list` (agent lists), `stance`,
// `signal`; `table`; `ranks`; `summary`; `report`, `diff`.
mod category;
mod diff;
mod list;
mod ranks;
mod report;
mod signal;
mod stance;
mod summary;
mod table;

pub use crate::category::{Category, UnknownCategory};
pub use crate::diff::{Change, Comparison};
pub use crate::list::{
    AI_LIST, AgentList, BUILTIN_LISTS, ListEntry, ListError,
};
pub use crate::ranks::{Ranks, RanksError};
pub use crate::report::report_html;
pub use crate::signal::{Signal, Signals, member_signals};
pub use crate::stance::{Stance, member_stances};
pub use crate::summary::{Counts, Line, Summary};
pub use crate::table::StanceTable;
