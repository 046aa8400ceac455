//! Command-line arguments: one plain struct per subcommand.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use robofilter::{Dialect, UsageKey};

const EXIT_CODES: &str = "\
Exit status:
  0  success (invalid input lines in `filter` are reported, not errors)
  2  error: unreadable or damaged file, unknown agent, write failure, or a
     usage error; also a bundle opened for writing or rewritten in place
     during the run (a temporary output file is removed)
  130, 143, 129  interrupted by SIGINT, SIGTERM or SIGHUP: a temporary
     output file is removed and the previous output is left unchanged
  135  a memory-mapped input was cut underneath the run or could not be
     read (SIGBUS), with the same clean-up (a cut seen between reads is
     status 2)

Data goes to stdout, diagnostics and summaries to stderr as
`robofilter: <message>`. A closed stdout pipe (`| head`) ends the run
quietly with status 0.";

const URL_LINES: &str = "\
Input lines:
  Lines are separated by `\\n`; a last line without `\\n` counts. One
  trailing `\\r` is stripped. The URL is the line up to its first TAB; what
  follows the TAB (the fields, as Nutch or StormCrawler keep them) is
  passed through unchanged. A line is NOT a URL (and is reported as
  `invalid`) if its URL does not start with `scheme://` (scheme is
  `[A-Za-z][A-Za-z0-9+.-]*`), contains an ASCII control octet, or ends
  with a space. Spaces inside a URL belong to it (google matches them raw,
  rfc9309 as %20). A line longer than --max-url-len octets (default 65536;
  URL and fields, the trailing `\\r` does not count) is not a URL either,
  the same from a file as from a pipe.

Inputs may be plain, gzip or zstd (told by their first bytes).

Rules:
  A rules file from `compile ROBOTS_TXT` applies to every URL. With a
  bundle (from `compile --hosts/--manifest/--warc`), each URL's authority
  selects its host's rules; a host without an entry gets the verdict
  `unknown`, never a silent allow.

Agents:
  --agent may be repeated: each line is decided for every agent in one
  pass (independent verdicts, not a merged group).

Output:
  Lines are printed whole, fields included (without the `\\r`).
  --emit allowed (default) prints the lines allowed for every agent,
  --emit disallowed those disallowed for at least one, --emit unknown
  those whose host has no entry. --emit all prints every line, in input
  order, after one verdict column per agent (`allow`, `disallow`,
  `unknown` or `invalid`): `allow<TAB>disallow<TAB>LINE` for two agents.
  --explain adds one reason column per agent before the line. --json
  prints one object per selected line instead.

Empty and invalid lines are counted and reported on stderr (with the first
few line numbers), followed by the summary:
  robofilter: N lines: A allowed, D disallowed, U unknown, I invalid (E
  empty) in T s (X M lines/s)
Every line is counted once: N = A + D + U + I (with several agents, a line
counts as disallowed if any agent is disallowed).

A progress bar is shown on stderr when it is a terminal. A plain URL list
file is memory-mapped a window at a time (others are read); inputs are
never modified, and one cut underneath the run stops it.";

/// Compile robots.txt into verdict automata and filter URL lists.
#[derive(Debug, Parser)]
#[command(
    name = "robofilter",
    version,
    propagate_version = true,
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Decide URLs against a robots.txt.
    ///
    /// Prints `allow<TAB>URL` or `disallow<TAB>URL`, one line per URL, in
    /// the order given; with several agents, one verdict column per agent
    /// (`allow<TAB>disallow<TAB>URL`). A robots.txt is compiled in memory
    /// for the agents; a rules file or a bundle is used as it is.
    ///
    /// Each URL is read as google/robotstxt reads any string: an empty one
    /// is the path `/`, `example.com/a` has the path `/a`. (`filter`, which
    /// reads frontier lines, counts a line that does not start with
    /// `scheme://` invalid instead.)
    #[command(after_help = EXIT_CODES)]
    Check(CheckArgs),
    /// Compile a robots.txt into a rules file, or many hosts' robots.txt
    /// files and fetch outcomes into a bundle.
    ///
    /// A bundle maps each host (its authority: lower-case host, `:port`
    /// unless 80 or 443) to its rules. Fetch outcomes follow RFC 9309
    /// §2.3.1: 2xx: the body's rules; 3xx not followed to the end, 4xx
    /// (except 429) and more than five redirects: allow all; 429, 5xx and
    /// unreachable: disallow all. Identical bodies are compiled once.
    ///
    /// The file is written under a temporary name in the output's directory
    /// and renamed into place (see --output). A one-line summary goes to
    /// stderr.
    #[command(after_help = EXIT_CODES)]
    Compile(CompileArgs),
    /// Filter URL lists (one URL per line) with a rules file or bundle.
    ///
    /// Input files are split into newline-aligned chunks decided in
    /// parallel; the output keeps the input order.
    #[command(after_help = format!("{URL_LINES}\n\n{EXIT_CODES}"))]
    Filter(FilterArgs),
    /// Show the verdict for URLs and the rule that decided it.
    ///
    /// Prints `VERDICT<TAB>URL<TAB>REASON<TAB>GROUP` per URL, in order.
    /// REASON is `line N: Allow: VALUE` or `line N: Disallow: VALUE` (with
    /// ` (allows DIR by the index.html rule)` when google's index.html rule
    /// applied), `no matching rule`, `no group for this agent`, or
    /// `/robots.txt is always allowed (RFC 9309)`. GROUP says whose rules
    /// applied: `own group` (groups naming the agent), `* group` or
    /// `no group`. With several agents, one line per URL and agent, with
    /// the agent as a fifth column.
    #[command(after_help = EXIT_CODES)]
    Explain(ExplainArgs),
    /// Describe a robots.txt, a rules file or a bundle.
    ///
    /// Prints one fact per line: dialect, parse limit, groups (engine, rule
    /// count, DFA states and byte classes, size, budget notes), agents and
    /// their groups (with the `*` fallback), sitemaps, crawl-delays and the
    /// parser's diagnostics, with line numbers. A robots.txt is compiled
    /// in memory for all agents. For a bundle: one line per host
    /// (`host: NAME<TAB>fetch STATUS<TAB>member M (N bytes)|allow
    /// all|disallow all`), or with --host, that host's rules in full.
    #[command(after_help = EXIT_CODES)]
    Inspect(InspectArgs),
    /// Show how hosts' stances toward agents changed between two bundles
    /// (or shard directories): an aligned table of transitions.
    ///
    /// A stance is `blocked_entirely`, `blocks_some`, `allows_all`,
    /// `failed_to_fetch` (5xx, 429, unreachable), `undecided` (not
    /// settled within the search budget) or `absent` (no entry). The
    /// table counts, per agent, the hosts of each transition; --json
    /// prints one object per changed host and agent instead. With
    /// --frontier, the frontier lines whose verdict changed are printed
    /// instead, as `OLD<TAB>NEW<TAB>LINE` (a pair of columns per agent),
    /// in one pass with both open.
    #[command(after_help = EXIT_CODES)]
    Diff(DiffArgs),
    /// Fetch the robots.txt of every host in host lists, URL lists or
    /// frontiers, into the manifest `compile --manifest` reads.
    ///
    /// One fetch per bundle host key (lower-case host, `:port` unless 80
    /// or 443): `https://KEY/robots.txt` if an input names https for the
    /// key (a bare `host[:port]` counts as --scheme), else http. Per RFC
    /// 9309: up to five redirects followed (to other hosts too; the chain
    /// is recorded); 2xx: the body, read up to --max-body (`truncated`);
    /// 3xx not followed to the end, more than five redirects, 4xx but 429:
    /// unavailable (allow all); 429, 5xx, and no response (DNS, connect,
    /// TLS, timeout, reset, a body cut short): unreachable (disallow all).
    ///
    /// Re-running with the same -o is the cache: an entry still fresh is
    /// kept without a request; a stale one is revalidated (If-None-Match,
    /// If-Modified-Since; a 304 keeps the body); when a refresh fails with
    /// 5xx, 429 or no response, a previous 2xx/4xx copy younger than 30
    /// days stays in use, marked `stale_since`. Lifetimes: Cache-Control
    /// max-age (no-store and no-cache: 0), else Expires, else 24 hours,
    /// clamped to --min-ttl..--max-ttl; failures are tried again after an
    /// hour (within the same bounds).
    ///
    /// Results are appended to OUT.journal (locked: a second run on the
    /// same OUT is refused) as they complete; an interrupted run (SIGINT:
    /// status 130, OUT unchanged) resumes from it; OUT is replaced
    /// atomically at the end and the journal removed. OUT holds exactly
    /// this run's hosts. One request in flight per host name; at most
    /// --concurrency hosts at a time; connection failures (not timeouts
    /// or DNS failures) tried again --retries times with backoff.
    #[command(after_help = EXIT_CODES)]
    Fetch(FetchArgs),
    /// Print the shard of each URL's or host's host key, as `compile
    /// --shards N` places hosts.
    ///
    /// Reads lines (files or stdin; plain, gzip or zstd) holding a URL (or
    /// a frontier line: a URL, a TAB and fields) or a host (`example.com`,
    /// `example.com:8080`), and prints `SHARD<TAB>LINE` for each, in order;
    /// SHARD is `-` for a line without a host key. The shard of a host key
    /// is XXH3-64 (seed 0) of its octets, mod N.
    #[command(after_help = EXIT_CODES)]
    Shard(ShardArgs),
    /// Print the man page or a shell's completion script (to stdout).
    ///
    /// `robofilter generate man > robofilter.1`, `robofilter generate
    /// complete-bash > /etc/bash_completion.d/robofilter`, and likewise
    /// complete-zsh, complete-fish, complete-powershell, complete-elvish.
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// `robofilter generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What to print.
    #[arg(value_enum)]
    pub what: Generate,
}

/// What `robofilter generate` prints.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Generate {
    /// The man page (roff), with every subcommand's options.
    Man,
    /// Completions for bash.
    CompleteBash,
    /// Completions for zsh.
    CompleteZsh,
    /// Completions for fish.
    CompleteFish,
    /// Completions for PowerShell.
    CompletePowershell,
    /// Completions for elvish.
    CompleteElvish,
}

/// A dialect name on the command line.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DialectArg {
    /// google/robotstxt's verdicts exactly.
    Google,
    /// RFC 9309 as written (the default).
    Rfc9309,
}

impl From<DialectArg> for Dialect {
    fn from(d: DialectArg) -> Dialect {
        match d {
            DialectArg::Google => Dialect::Google,
            DialectArg::Rfc9309 => Dialect::Rfc9309,
        }
    }
}

/// `robofilter check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The dialect [default: rfc9309].
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
    /// The crawler's product token (e.g. `Googlebot`); repeat for several
    /// agents (one verdict column each, in the order given).
    #[arg(long, value_name = "NAME", required_unless_present = "agent_list")]
    pub agent: Vec<String>,
    /// Add the agents of a list: `ai` (the AI crawlers, built in) or a
    /// FILE of product tokens, one a line, each optionally followed by a
    /// TAB and a category (training, search, assistant, other);
    /// repeatable. An agent named twice is taken once.
    #[arg(long, value_name = "ai|FILE")]
    pub agent_list: Vec<String>,
    /// The robots.txt (`-`: stdin).
    #[arg(value_name = "ROBOTS_TXT")]
    pub robots: PathBuf,
    /// The URLs to decide.
    #[arg(value_name = "URL", required = true)]
    pub urls: Vec<OsString>,
}

/// `robofilter compile`.
#[derive(Debug, Args)]
#[command(group(
    clap::ArgGroup::new("input")
        .required(true)
        .args(["robots", "hosts", "manifest", "warc"])
))]
pub struct CompileArgs {
    /// The dialect [default: rfc9309].
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
    /// Compile only this agent (repeatable). Without it, every agent the
    /// file names is compiled, plus the `*` fallback for all others.
    #[arg(long, value_name = "NAME")]
    pub agent: Vec<String>,
    /// Add the agents of a list: `ai` (the AI crawlers, built in) or a
    /// FILE of product tokens, one a line, each optionally followed by a
    /// TAB and a category (training, search, assistant, other);
    /// repeatable. An agent named twice is taken once.
    #[arg(long, value_name = "ai|FILE")]
    pub agent_list: Vec<String>,
    /// rfc9309 only: parse at most this many octets [default and minimum:
    /// 512000 (500 KiB); smaller values are raised to it].
    #[arg(long, value_name = "BYTES")]
    pub parse_limit: Option<usize>,
    /// The most DFA states one group may take before it is split or uses
    /// the direct matcher (same verdicts, slower) [default: 50000].
    #[arg(long, value_name = "N")]
    pub dfa_state_limit: Option<usize>,
    /// The most octets one group's automata may take before the group is
    /// split or uses the direct matcher (same verdicts, slower); small
    /// values make bundles small [default: 4194304 (4 MiB) for one
    /// robots.txt, 32768 (32 KiB) for a bundle].
    #[arg(long, value_name = "BYTES")]
    pub dfa_byte_limit: Option<usize>,
    /// The robots.txt (`-`: stdin).
    #[arg(value_name = "ROBOTS_TXT")]
    pub robots: Option<PathBuf>,
    /// Build a bundle from a directory of `<host>.txt` robots.txt files.
    #[arg(long, value_name = "DIR")]
    pub hosts: Option<PathBuf>,
    /// Build a bundle from a JSON-lines manifest of fetch outcomes: `host`,
    /// `status` (HTTP status or "unreachable"), optional `body` or
    /// `body_base64`, optional `redirects`. May be gzip or zstd.
    #[arg(long, value_name = "FILE.jsonl")]
    pub manifest: Option<PathBuf>,
    /// Build a bundle from the robots.txt captures (`response` records) of
    /// a WARC file (plain, gzip or zstd).
    #[arg(long, value_name = "FILE.warc[.gz]")]
    pub warc: Option<PathBuf>,
    /// Bundles: make any bad member (an unreadable file, a broken manifest
    /// line, a capture that is not an HTTP response) fatal, instead of
    /// reporting it and recording its host as unreadable.
    #[arg(long)]
    pub strict: bool,
    /// Bundles: write N bundles into the directory OUTPUT (new, or a
    /// shard directory, replaced whole) (each holding the hosts whose
    /// shard, XXH3-64 of the host key mod N, is its number) and an
    /// `index.json` naming them; `filter`, `check`, `explain` and
    /// `inspect` take the directory wherever they take a bundle.
    #[arg(long, value_name = "N", conflicts_with = "robots",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SHARDS)))]
    pub shards: Option<u32>,
    /// The rules file or bundle to write (`-`: stdout). A regular file is
    /// replaced atomically and keeps its permissions; through a symbolic
    /// link, the link's target is replaced; a FIFO or device is written in
    /// place. An output that is one of the inputs is refused.
    #[arg(short, long, value_name = "RULES")]
    pub output: PathBuf,
}

/// What `filter` prints: selected lines whole (fields included).
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq, ValueEnum)]
pub enum EmitArg {
    /// The lines allowed for every agent.
    #[default]
    Allowed,
    /// The lines disallowed for at least one agent.
    Disallowed,
    /// The lines whose host has no entry in the bundle.
    Unknown,
    /// Every input line after its verdict columns (one per agent, or
    /// `invalid`).
    All,
}

/// `robofilter filter`.
#[derive(Debug, Args)]
pub struct FilterArgs {
    /// The rules file, bundle or shard directory (from `robofilter
    /// compile`).
    #[arg(value_name = "RULES")]
    pub rules: PathBuf,
    /// The crawler's product token (e.g. `Googlebot`); repeat for several
    /// agents (one verdict column each, in the order given).
    #[arg(long, value_name = "NAME", required_unless_present = "agent_list")]
    pub agent: Vec<String>,
    /// Add the agents of a list: `ai` (the AI crawlers, built in) or a
    /// FILE of product tokens, one a line, each optionally followed by a
    /// TAB and a category (training, search, assistant, other);
    /// repeatable. An agent named twice is taken once.
    #[arg(long, value_name = "ai|FILE")]
    pub agent_list: Vec<String>,
    /// What to print.
    #[arg(long, value_enum, default_value_t = EmitArg::Allowed)]
    pub emit: EmitArg,
    /// Print one JSON object per selected line instead: `url` (or
    /// `url_base64` when it is not UTF-8; null for a line over
    /// --max-url-len), `verdict` (all agents together), `verdicts` (per
    /// agent, with several), `host`, and `fields` (or `fields_base64`)
    /// when the line has a TAB.
    #[arg(long)]
    pub json: bool,
    /// Lines longer than this many octets (URL and fields, without `\n`
    /// and a trailing `\r`) are not URLs: counted as invalid and reported,
    /// never decided.
    #[arg(long, value_name = "OCTETS", default_value_t = 65_536,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_url_len: usize,
    /// Add why: one reason column per agent, after the verdict columns and
    /// before the line (or `reason`, `line` and `pattern`, or `reasons`
    /// per agent with several, with --json). Slower: every selected URL is
    /// matched again rule by rule.
    #[arg(long)]
    pub explain: bool,
    /// Add each agent's AI usage preference for KEY (IETF AIPREF
    /// `Content-Usage` rules; keys `train-ai` and `search`): a column per
    /// agent and key, after the verdict columns, of `y`, `n`, `unknown`,
    /// or `-` where there is none to have (not allowed, no entry for the
    /// host, not a URL); with --json, `usage`. Repeatable.
    #[arg(long, value_name = "KEY")]
    pub usage: Vec<UsageKey>,
    /// With --emit allowed: drop the allowed lines whose preference for
    /// KEY is `n` for an agent too (they are counted on stderr).
    /// Repeatable.
    #[arg(long, value_name = "KEY")]
    pub respect: Vec<UsageKey>,
    /// Write to this file instead of stdout (`-`: stdout). A regular file
    /// is replaced atomically and keeps its permissions; through a
    /// symbolic link, the link's target is replaced; a FIFO or device is
    /// written in place. An output that is one of the inputs is refused.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Worker threads [default: all cores; at most 4 per core].
    #[arg(
        short = 'j',
        long = "threads",
        value_name = "THREADS",
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub threads: Option<u16>,
    /// How the inputs hold their URLs: `lines` (a URL per line, then
    /// optionally a TAB and fields), `cdxj` (Common Crawl's `SURT
    /// TIMESTAMP {json}` lines: the JSON's `url`), or `parquet` (the
    /// --url-column of Parquet files; a directory is its `*.parquet`
    /// files in name order).
    #[arg(long, value_name = "FORMAT", default_value = "lines",
          value_parser = ["lines", "cdxj", "parquet"])]
    pub input_format: String,
    /// The column of Parquet inputs that holds the URLs (string, binary,
    /// or a dictionary of them).
    #[arg(long, value_name = "NAME", default_value = "url")]
    pub url_column: String,
    /// URL lists, one URL per line, optionally followed by a TAB and
    /// fields that are kept as they are (`-` or none: stdin); with
    /// --input-format cdxj, CDXJ files; with parquet, Parquet files or
    /// directories of them.
    #[arg(value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
}

/// The scheme of bare `host[:port]` input lines.
#[derive(Clone, Copy, Debug, Default, Eq, PartialEq, ValueEnum)]
pub enum SchemeArg {
    /// `https://HOST/robots.txt`.
    #[default]
    Https,
    /// `http://HOST/robots.txt`.
    Http,
}

/// The most shards a directory may have (`--shards`; a shard directory's
/// `index.json` with more is refused).
pub const MAX_SHARDS: u32 = robofilter_io::MAX_SHARDS;

/// The User-Agent header `fetch` sends unless told otherwise.
pub const DEFAULT_USER_AGENT: &str = robofilter_fetch::DEFAULT_USER_AGENT;

/// `robofilter fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// Host lists, URL lists or frontiers (`URL<TAB>fields`), plain, gzip
    /// or zstd (`-` or none: stdin): one `host`, `host:port`, origin or
    /// URL per line; blank lines and `#` comments are skipped, bad lines
    /// reported with their line number and skipped.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// The manifest to write (JSON lines), and the cache of the next run
    /// with the same -o; `-` is refused. The journal is OUT.journal.
    #[arg(short, long, value_name = "OUT.jsonl")]
    pub output: PathBuf,
    /// The User-Agent header.
    #[arg(long, value_name = "UA", default_value = DEFAULT_USER_AGENT)]
    pub user_agent: String,
    /// Per request (each redirect hop and retry), from connecting to the
    /// end of the body.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = parse_timeout)]
    pub timeout: f64,
    /// Hosts in flight at once (one request per host name at a time).
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub concurrency: u32,
    /// As curl's --resolve: requests to HOST on PORT connect to ADDR
    /// (a comma-separated list; IPv6 in brackets) instead of asking DNS;
    /// HOST `*` matches every host on PORT. Repeatable.
    #[arg(long, value_name = "HOST:PORT:ADDR")]
    pub resolve: Vec<String>,
    /// The shortest lifetime of an entry (`30`, `10m`, `2h`, `7d`).
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = parse_duration)]
    pub min_ttl: u64,
    /// The longest lifetime of an entry [default: 24h, RFC 9309 section
    /// 2.4].
    #[arg(long, value_name = "DURATION", default_value = "86400", value_parser = parse_duration, hide_default_value = true)]
    pub max_ttl: u64,
    /// Fetch only the hosts of shard I of N (0-based), by the shard hash
    /// of sharded bundles (XXH3-64 of the host key, mod N).
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u32, u32)>,
    /// The scheme of bare `host[:port]` lines.
    #[arg(long, value_enum, default_value_t = SchemeArg::Https)]
    pub scheme: SchemeArg,
    /// The most octets of a body kept (decoded); the connection is closed
    /// there and the entry marked `truncated` [default: 528663, the
    /// rfc9309 parse limit 512000 plus one line of 16663 octets, so that
    /// the last line is known whole or cut].
    #[arg(
        long,
        value_name = "OCTETS",
        default_value_t = 528_663,
        hide_default_value = true
    )]
    pub max_body: usize,
    /// Tries again after a connection failure (refused, reset; not a
    /// timeout or DNS failure), pausing 250 ms, 500 ms, 1 s, ...
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub retries: u32,
    /// Requests in flight at once to one IP address, whatever the host
    /// names (shared hosting and CDNs serve hundreds of names from one
    /// address, and a server with a short listen backlog refuses the
    /// rest: their hosts would come out unreachable, disallow all).
    #[arg(long, value_name = "N", default_value_t = robofilter_fetch::DEFAULT_PER_ADDRESS,
          value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub per_address: u32,
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 86_400.0 => Ok(t),
        _ => Err(format!("'{s}' is not a number of seconds in (0, 86400]")),
    }
}

/// Seconds, or a number with `s`, `m`, `h` or `d`.
fn parse_duration(s: &str) -> Result<u64, String> {
    let (num, unit) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&s[..i], c),
        _ => (s, 's'),
    };
    let mult = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(format!("'{s}': the unit is s, m, h or d")),
    };
    num.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).ok_or_else(
        || format!("'{s}' is not a duration (such as 3600, 10m, 2h, 7d)"),
    )
}

/// `I/N` with `I < N`.
fn parse_shard(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{s}' is not I/N with 0 <= I < N (such as 0/4)");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        i.parse::<u32>().map_err(|_| bad())?,
        n.parse::<u32>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// `robofilter explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rules file, bundle, shard directory or robots.txt (`-`: stdin),
    /// told apart by the compiled files' magic bytes.
    #[arg(value_name = "RULES|ROBOTS_TXT")]
    pub file: PathBuf,
    /// The crawler's product token (e.g. `Googlebot`); repeat for several
    /// agents (one verdict column each, in the order given).
    #[arg(long, value_name = "NAME", required_unless_present = "agent_list")]
    pub agent: Vec<String>,
    /// Add the agents of a list: `ai` (the AI crawlers, built in) or a
    /// FILE of product tokens, one a line, each optionally followed by a
    /// TAB and a category (training, search, assistant, other);
    /// repeatable. An agent named twice is taken once.
    #[arg(long, value_name = "ai|FILE")]
    pub agent_list: Vec<String>,
    /// The dialect for a robots.txt [default: rfc9309]; a rules file
    /// keeps the dialect it was compiled with.
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
    /// The URLs to explain.
    #[arg(value_name = "URL", required = true)]
    pub urls: Vec<OsString>,
}

/// `robofilter shard`.
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// The number of shards.
    #[arg(long, value_name = "N", required = true,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SHARDS)))]
    pub shards: u32,
    /// Where to write (`-`: stdout, the default).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// The input files (`-` or none: stdin).
    #[arg(value_name = "FILE")]
    pub inputs: Vec<PathBuf>,
}

/// `robofilter inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A robots.txt, rules file, bundle or shard directory (`-`: stdin).
    #[arg(value_name = "ROBOTS_TXT|RULES")]
    pub file: PathBuf,
    /// The dialect for a robots.txt [default: rfc9309]; a rules file
    /// keeps the dialect it was compiled with.
    #[arg(long, value_enum)]
    pub dialect: Option<DialectArg>,
    /// For a bundle: show this host's rules in full (default: list the
    /// hosts).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// JSON lines: one object per host of a bundle (one for a robots.txt
    /// or rules file): fetch outcome, sitemaps, crawl-delays, the other
    /// `key: value` lines with their group and line, and per --agent
    /// whether it is blocked entirely. With --summary, one object per
    /// agent (or category) instead of the table. With --lint, one object
    /// per finding.
    #[arg(long)]
    pub json: bool,
    /// For a bundle or shard directory: per --agent, how many hosts block
    /// it entirely, block some paths, allow everything, and failed to
    /// fetch (an aligned table).
    #[arg(long, conflicts_with = "host")]
    pub summary: bool,
    /// Lint the file instead: rules that never decide any path (proved on
    /// automata: shadowed, duplicate, cancelled, matching nothing, or
    /// `undecided` past the proof's budget), groups no crawler reaches,
    /// user-agent values that look like a known crawler's token (the `ai`
    /// list, plus --agent and --agent-list) but are not it, and lines the
    /// parser did not understand. Prints `LINE<TAB>KIND<TAB>MESSAGE` per
    /// finding (a bundle: `HOST<TAB>` first; --host: one host), or with
    /// --json one object per finding.
    #[arg(long, conflicts_with = "summary")]
    pub lint: bool,
    /// An agent (product token) for --json or --summary; repeatable.
    #[arg(long, value_name = "NAME")]
    pub agent: Vec<String>,
    /// Add the agents of a list: `ai` (the AI crawlers, built in) or a
    /// FILE of product tokens, one a line, each optionally followed by a
    /// TAB and a category (training, search, assistant, other);
    /// repeatable. An agent named twice is taken once.
    #[arg(long, value_name = "ai|FILE")]
    pub agent_list: Vec<String>,
    /// With --summary: one line per category of the agents' lists
    /// instead of per agent (a host's stance toward a category: blocked
    /// entirely or allows all if it is so for every agent of it).
    #[arg(long, requires = "summary")]
    pub by_category: bool,
    /// With --summary: a ranking of domains (`rank,domain` lines, such as
    /// the Tranco list): the counts again among the ranked hosts of the
    /// top 1,000, 10,000, ... (a domain stands for its host, else for
    /// `www.` and the domain).
    #[arg(long, value_name = "FILE", requires = "summary")]
    pub ranks: Option<PathBuf>,
    /// With --summary: also write the summary as one self-contained HTML
    /// page (bars per agent and category, sortable tables, per-host
    /// stances as CSV), which loads nothing from the network.
    #[arg(long, value_name = "OUT.html", requires = "summary")]
    pub report: Option<PathBuf>,
    /// Write the output here instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `robofilter diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old bundle or shard directory (a rules file too, with
    /// --frontier).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The new bundle or shard directory (a rules file too, with
    /// --frontier).
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// An agent (product token); repeatable.
    #[arg(long, value_name = "NAME", required_unless_present = "agent_list")]
    pub agent: Vec<String>,
    /// Add the agents of a list: `ai` (the AI crawlers, built in) or a
    /// FILE of product tokens, one a line, each optionally followed by a
    /// TAB and a category; repeatable. An agent named twice is taken once.
    #[arg(long, value_name = "ai|FILE")]
    pub agent_list: Vec<String>,
    /// One JSON object per changed host and agent: `host`, `agent`, `old`,
    /// `new`.
    #[arg(long, conflicts_with = "frontier")]
    pub json: bool,
    /// Instead: read this frontier (URL lines, optionally a TAB and
    /// fields; plain, gzip or zstd; `-`: stdin) and print the lines whose
    /// verdict changed for an agent, as `OLD<TAB>NEW<TAB>LINE` with a pair
    /// of verdict columns (`allow`, `disallow`, `unknown`) per agent.
    #[arg(long, value_name = "FILE")]
    pub frontier: Option<PathBuf>,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
