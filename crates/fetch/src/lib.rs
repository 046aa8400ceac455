//! robofilter's robots.txt fetcher: get the robots.txt of every host of a
//! frontier (RFC 9309 sections 2.3-2.4, docs/SEMANTICS.md section 4a),
//! politely, into the manifest `compile --manifest` reads. The CLI's
//! `robofilter fetch` and the wheel's `robofilter.fetch` are this crate's
//! [`fetch`] (blocking) with their arguments as [`Options`]; an async
//! program awaits [`fetch_async`].
//!
//! OUT is also the cache: the next run with the same `-o` keeps entries
//! that are still fresh without a request, revalidates stale ones with a
//! conditional GET, and keeps a previous copy (up to 30 days old) when a
//! refresh fails with a server error or no response (`stale_since`).
//! Results go to `OUT.journal` as they complete (locked; read back by an
//! interrupted run's successor), and OUT is replaced atomically at the
//! end.

mod cache;
mod client;
mod input;
mod journal;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use indicatif::{ProgressBar, ProgressStyle};

use crate::cache::Ttl;
use crate::client::{Client, Fetched, Pin, Reply, Settings, Validators};
use crate::input::Target;
use crate::journal::{Entry, Indexed, Journal, Lines, Loc, Previous, Status};
use robofilter_io as files;

/// `eprintln!` that never panics: a warning that cannot be written is
/// dropped.
macro_rules! diag {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// What to fetch, and how: the CLI's `robofilter fetch` arguments.
#[derive(Clone, Debug)]
pub struct Options {
    /// Host lists, URL lists or frontiers (plain, gzip or zstd; `-` or
    /// none: stdin).
    pub inputs: Vec<PathBuf>,
    /// The manifest to write, and the next run's cache; the journal is
    /// `OUT.journal`.
    pub output: PathBuf,
    /// The User-Agent header.
    pub user_agent: String,
    /// Seconds per request (each redirect hop and retry).
    pub timeout: f64,
    /// Hosts in flight at once (one request per host name at a time).
    pub concurrency: u32,
    /// curl's `--resolve` strings: `HOST:PORT:ADDR[,ADDR...]`.
    pub resolve: Vec<String>,
    /// The shortest and longest lifetime of an entry, in seconds.
    pub min_ttl: u64,
    /// See [`Options::min_ttl`].
    pub max_ttl: u64,
    /// Only the hosts of shard I of N (0-based).
    pub shard: Option<(u32, u32)>,
    /// Whether bare `host[:port]` lines are fetched over https (else
    /// http).
    pub https: bool,
    /// The most octets of a body kept (decoded).
    pub max_body: usize,
    /// Tries again after a connection failure.
    pub retries: u32,
    /// Requests in flight at once to one address, whatever the host
    /// names (shared hosting and CDNs put many on one).
    pub per_address: u32,
    /// Whether a progress bar is drawn (only ever on a terminal).
    pub progress: bool,
}

impl Options {
    /// The defaults of `robofilter fetch` for `inputs` into `output`.
    pub fn new(inputs: Vec<PathBuf>, output: PathBuf) -> Options {
        Options {
            inputs,
            output,
            user_agent: DEFAULT_USER_AGENT.to_string(),
            timeout: 10.0,
            concurrency: 256,
            resolve: Vec::new(),
            min_ttl: 0,
            max_ttl: 24 * 3600,
            shard: None,
            https: true,
            max_body: DEFAULT_MAX_BODY,
            retries: 2,
            per_address: DEFAULT_PER_ADDRESS,
            progress: false,
        }
    }
}

/// Requests in flight at once to one address by default: a few, as a
/// polite crawler keeps to one server (and below the listen backlog of a
/// small one).
pub const DEFAULT_PER_ADDRESS: u32 = 8;

/// The User-Agent header by default.
pub const DEFAULT_USER_AGENT: &str =
    concat!("robofilter/", env!("CARGO_PKG_VERSION"), " (robots.txt fetcher)");

/// The most octets of a body kept by default: the rfc9309 parse limit
/// (512,000) plus one line of 16,663 octets, so that the last line is
/// known whole or cut.
pub const DEFAULT_MAX_BODY: usize = 528_663;

/// What a run did, host by host: the counts `robofilter fetch` reports.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Summary {
    /// Hosts in the output.
    pub hosts: u64,
    /// 2xx bodies.
    pub ok: u64,
    /// 304s: the previous copy renewed.
    pub revalidated: u64,
    /// Unavailable (allow all): 4xx but 429, redirects not followed.
    pub unavailable: u64,
    /// Unreachable (disallow all): 5xx, 429, no response.
    pub unreachable: u64,
    /// Of the unreachable, those that refused the connection.
    pub refused: u64,
    /// Failed refreshes whose previous copy stays in use.
    pub stale: u64,
    /// Still fresh: no request.
    pub fresh: u64,
    /// Fetched by the interrupted run this one resumed.
    pub resumed: u64,
    /// Input lines that named no host (reported, skipped).
    pub bad_lines: u64,
    /// Hosts left to other shards (with [`Options::shard`]).
    pub other_shards: u64,
    /// Requests made.
    pub fetched: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// [`fetch`] for an async program: the run goes on a thread of its own
/// (with its own runtime), and the returned future completes with it.
pub async fn fetch_async(options: Options) -> Result<Summary> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("robofilter-fetch".into())
        .spawn(move || {
            let _ = tx.send(fetch(&options));
        })
        .context("cannot start the fetch thread")?;
    rx.await.context("the fetch thread stopped")?
}

/// What became of one host, for the counts.
#[derive(Clone, Copy, Debug, Eq, PartialEq)]
enum Settled {
    /// A 2xx body.
    Ok,
    /// 304: the previous copy, renewed.
    Revalidated,
    /// 3xx not followed to the end, more than five redirects, 4xx but
    /// 429: allow all.
    Unavailable,
    /// 5xx, 429 or no response: disallow all.
    Unreachable,
    /// A failed refresh; the previous copy stays in use.
    Stale,
    /// Still fresh: no request.
    Fresh,
    /// Fetched by the interrupted run whose journal this run resumed.
    Resumed,
}

#[derive(Default)]
struct Counts {
    /// Hosts by what became of them.
    by: [u64; 7],
    /// Of the unreachable, those that refused the connection.
    refused: u64,
}

impl Counts {
    fn add(&mut self, k: Settled) {
        self.by[k as usize] += 1;
    }

    fn get(&self, k: Settled) -> u64 {
        self.by[k as usize]
    }

    fn progress(&self) -> String {
        format!(
            "2xx {} · 304 {} · unavailable {} · unreachable {} · stale {}",
            self.get(Settled::Ok),
            self.get(Settled::Revalidated),
            self.get(Settled::Unavailable),
            self.get(Settled::Unreachable),
            self.get(Settled::Stale)
        )
    }
}

/// Fetches the robots.txt of every host `args` names into `args.output`
/// (and its journal), blocking until done.
///
/// # Errors
///
/// A bad option, an input that cannot be read, an output that cannot be
/// written, or a second run on the same output.
pub fn fetch(args: &Options) -> Result<Summary> {
    let start = Instant::now();
    let out_path = &args.output;
    if files::is_stdin(out_path) {
        bail!(
            "-o - is refused: fetch replaces OUT atomically at the end and \
             keeps OUT.journal beside it to resume an interrupted run; give a \
             file name (and read it with `compile --manifest OUT`)"
        );
    }
    let pins = args
        .resolve
        .iter()
        .map(|s| Pin::parse(s))
        .collect::<Result<Vec<_>>>()?;
    let ttl = Ttl { min: args.min_ttl, max: args.max_ttl };
    if ttl.min > ttl.max {
        bail!(
            "--min-ttl {} is above --max-ttl {} (give a minimum lifetime \
             no longer than the maximum)",
            ttl.min,
            ttl.max
        );
    }
    let inputs: Vec<&std::path::Path> =
        args.inputs.iter().map(|p| p.as_path()).collect();
    let stdin_only = [std::path::Path::new("-")];
    files::check_output_not_input(
        out_path,
        if inputs.is_empty() { &stdin_only } else { &inputs },
    )?;

    // The journal first: a second run on the same OUT stops here.
    let (mut journal, resumed, cut) = Journal::open(out_path)?;
    if cut > 0 {
        diag!(
            "robofilter: warning: {cut} line(s) of '{}' were cut by an \
             interruption or unreadable: those hosts are fetched again",
            journal.path().display()
        );
    }
    let previous = match Previous::open(out_path) {
        Ok(p) => Arc::new(p),
        Err(e) => return Err(journal.abandon(e)),
    };
    let unreadable = previous.bad;
    if unreadable > 0 {
        diag!(
            "robofilter: warning: {unreadable} line(s) of '{}' are not \
             entries of a previous fetch (no cache for them): their hosts \
             are fetched again",
            out_path.display()
        );
    }
    let mut out = match files::AtomicFile::create(out_path) {
        Ok(out) => out,
        Err(e) => return Err(journal.abandon(e)),
    };

    let https = args.https;
    let (targets, stats) =
        match input::read_targets(&args.inputs, https, args.shard) {
            Ok(t) => t,
            Err(e) => return Err(journal.abandon(e)),
        };
    for bad in &stats.bad {
        diag!("robofilter: warning: {bad}");
    }
    if stats.bad_len > stats.bad.len() as u64 {
        diag!(
            "robofilter: warning: {} more bad input line(s) skipped",
            stats.bad_len - stats.bad.len() as u64
        );
    }
    if !resumed.is_empty() {
        diag!(
            "robofilter: resuming: {} host(s) already fetched in '{}'",
            resumed.len(),
            journal.path().display()
        );
    }

    // Each host: resumed, still fresh, or to be asked.
    let now = unix_now();
    let mut counts = Counts::default();
    let mut results: Vec<Option<Loc>> = vec![None; targets.len()];
    let mut jobs = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let url = t.url();
        let same = |x: &&Indexed| x.entry.url == url;
        if let Some(x) = resumed.get(&t.key).filter(same) {
            results[i] = Some(x.loc);
            counts.add(Settled::Resumed);
        } else if let Some(x) = previous
            .index
            .get(&t.key)
            .filter(same)
            .filter(|x| now < x.entry.expires)
        {
            results[i] = Some(x.loc);
            counts.add(Settled::Fresh);
        } else {
            let prev = previous.index.get(&t.key).filter(same).map(|x| x.loc);
            jobs.push((i, t.clone(), prev));
        }
    }

    let settings = Settings {
        user_agent: args.user_agent.clone(),
        timeout: Duration::from_secs_f64(args.timeout),
        max_body: args.max_body,
        retries: args.retries,
        resolve: pins,
        per_address: args.per_address as usize,
    };
    let bar = match args.progress {
        true => progress_bar(jobs.len() as u64),
        false => None,
    };
    if !jobs.is_empty() {
        let mut concurrency = args.concurrency as usize;
        if let Some(files) = raise_open_files_limit() {
            // Two descriptors a host in flight (a socket, and one closing
            // or being opened), and room for the rest of the process.
            let fit = usize::try_from(files.saturating_sub(64) / 2)
                .unwrap_or(usize::MAX)
                .max(1);
            if fit < concurrency {
                diag!(
                    "robofilter: warning: --concurrency {concurrency} \
                     lowered to {fit}: the open-files limit is {files} \
                     (raise it with `ulimit -n`)"
                );
                concurrency = fit;
            }
        }
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .context("cannot start the async runtime")?;
        rt.block_on(fetch_all(
            jobs,
            previous.clone(),
            &settings,
            concurrency,
            ttl,
            &mut journal,
            &mut results,
            &mut counts,
            bar.as_ref(),
        ))?;
        // Idle connections and lookups in flight are dropped here.
        rt.shutdown_timeout(Duration::from_millis(100));
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }

    let lines = Lines { journal: &journal, previous: &previous };
    for loc in results.iter().flatten() {
        out.write_all(&lines.line(*loc)?).with_context(|| {
            format!("cannot write output '{}'", out_path.display())
        })?;
    }
    out.commit()?;
    journal.finish()?;

    let secs = start.elapsed().as_secs_f64();
    let asked = counts.get(Settled::Ok)
        + counts.get(Settled::Revalidated)
        + counts.get(Settled::Unavailable)
        + counts.get(Settled::Unreachable)
        + counts.get(Settled::Stale);
    Ok(Summary {
        hosts: targets.len() as u64,
        ok: counts.get(Settled::Ok),
        revalidated: counts.get(Settled::Revalidated),
        unavailable: counts.get(Settled::Unavailable),
        unreachable: counts.get(Settled::Unreachable),
        refused: counts.refused,
        stale: counts.get(Settled::Stale),
        fresh: counts.get(Settled::Fresh),
        resumed: counts.get(Settled::Resumed),
        bad_lines: stats.bad_len,
        other_shards: stats.other_shards,
        fetched: asked,
        seconds: secs,
    })
}

/// Fetches every job, `concurrency` hosts at a time, appending each
/// result to the journal as it completes.
#[allow(clippy::too_many_arguments)]
async fn fetch_all(
    jobs: Vec<(usize, Target, Option<Loc>)>,
    previous: Arc<Previous>,
    settings: &Settings,
    concurrency: usize,
    ttl: Ttl,
    journal: &mut Journal,
    results: &mut [Option<Loc>],
    counts: &mut Counts,
    bar: Option<&ProgressBar>,
) -> Result<()> {
    let started = Instant::now();
    let client = Arc::new(Client::new(settings)?);
    let slots = Arc::new(tokio::sync::Semaphore::new(concurrency));
    let (tx, mut rx) =
        tokio::sync::mpsc::channel::<(usize, Entry, Settled)>(1024);
    tokio::spawn(async move {
        for (i, target, prev) in jobs {
            // The previous copy, body included, read only now: memory
            // holds the bodies of the hosts in flight, not of all.
            let prev = prev.and_then(|loc| previous.entry(loc).ok());
            let Ok(slot) = slots.clone().acquire_owned().await else { return };
            let (tx, client) = (tx.clone(), client.clone());
            tokio::spawn(async move {
                let url = target.url();
                let v = match &prev {
                    Some(p) if p.status.is_2xx() => Validators {
                        etag: p.etag.clone(),
                        last_modified: p.last_modified.clone(),
                    },
                    _ => Validators::default(),
                };
                let fetched = client.fetch(&url, &v).await;
                let (entry, kind) = settle(
                    target.key,
                    url,
                    prev.as_ref(),
                    fetched,
                    unix_now(),
                    ttl,
                );
                let _ = tx.send((i, entry, kind)).await;
                drop(slot);
            });
        }
    });
    while let Some((i, entry, kind)) = rx.recv().await {
        results[i] = Some(journal.append(&entry)?);
        counts.add(kind);
        // Hosts that refused the connection: a sign of a server that
        // takes fewer connections than were opened to it.
        let refused = |e: &String| e.contains("Connection refused");
        if kind == Settled::Unreachable
            && entry.error.as_ref().is_some_and(refused)
        {
            counts.refused += 1;
        }
        if let Some(bar) = bar {
            bar.inc(1);
            let rate = bar.position() as f64
                / started.elapsed().as_secs_f64().max(1e-3);
            bar.set_message(format!("{rate:.0}/s · {}", counts.progress()));
        }
    }
    Ok(())
}

/// The entry a fetch gives, with the previous copy of the host (if any):
/// a 304 renews it; a server error or no response keeps it (as stale)
/// when it is a success younger than 30 days.
fn settle(
    host: String,
    url: String,
    prev: Option<&Entry>,
    f: Fetched,
    now: u64,
    ttl: Ttl,
) -> (Entry, Settled) {
    let elapsed_ms = u64::try_from(f.elapsed.as_millis()).unwrap_or(u64::MAX);
    let stale_candidate = prev.filter(|p| {
        p.status.is_success() && cache::stale_usable(p.fetched_at, now)
    });
    let stale = |p: &Entry, error: String| {
        let e = Entry {
            checked_at: now,
            expires: now + cache::failure_lifetime(ttl),
            error: Some(error),
            elapsed_ms,
            stale_since: Some(p.stale_since.unwrap_or(now)),
            ..p.clone()
        };
        (e, Settled::Stale)
    };
    let mut entry = Entry {
        host,
        url,
        status: Status::Unreachable,
        body: Vec::new(),
        truncated: false,
        redirect_chain: f.chain,
        fetched_at: now,
        checked_at: now,
        expires: now + cache::failure_lifetime(ttl),
        etag: None,
        last_modified: None,
        error: f.note,
        elapsed_ms,
        stale_since: None,
    };
    match f.reply {
        Reply::Failed(msg) => match stale_candidate {
            Some(p) => stale(p, msg),
            None => {
                entry.error = Some(msg);
                (entry, Settled::Unreachable)
            }
        },
        Reply::Http {
            status,
            body,
            truncated,
            etag,
            last_modified,
            cache_control,
            expires,
            date,
        } => {
            let headers = cache::Headers {
                cache_control: cache_control.as_deref(),
                expires: expires.as_deref(),
                date: date.as_deref(),
            };
            if let (304, Some(p)) =
                (status, prev.filter(|p| p.status.is_2xx()))
            {
                let e = Entry {
                    redirect_chain: entry.redirect_chain,
                    fetched_at: now,
                    checked_at: now,
                    expires: now + cache::lifetime(headers, now, ttl),
                    etag: etag.or_else(|| p.etag.clone()),
                    last_modified: last_modified
                        .or_else(|| p.last_modified.clone()),
                    error: None,
                    elapsed_ms,
                    stale_since: None,
                    ..p.clone()
                };
                return (e, Settled::Revalidated);
            }
            let st = Status::Http(status);
            if st.is_failure() {
                let msg = entry.error.clone().unwrap_or_else(|| {
                    format!(
                        "HTTP {status} from {}",
                        entry.redirect_chain.last().unwrap_or(&entry.url)
                    )
                });
                if let Some(p) = stale_candidate {
                    return stale(p, msg);
                }
                entry.status = st;
                entry.error = Some(msg);
                return (entry, Settled::Unreachable);
            }
            entry.status = st;
            entry.expires = now + cache::lifetime(headers, now, ttl);
            if st.is_2xx() {
                entry.body = body;
                entry.truncated = truncated;
                entry.etag = etag;
                entry.last_modified = last_modified;
                (entry, Settled::Ok)
            } else {
                (entry, Settled::Unavailable)
            }
        }
    }
}

/// Raises the soft limit of open files to the hard one: every host in
/// flight holds a socket, and idle connections are kept a moment for
/// reuse; at a soft limit of 1024 a busy run would fail connections with
/// EMFILE (and report live hosts as unreachable). Returns the limit.
fn raise_open_files_limit() -> Option<u64> {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, getrlimit, setrlimit};
        let mut lim = getrlimit(Resource::Nofile);
        // `None` is unlimited; Linux caps open files at `nr_open`
        // (1 Mi by default) whatever the hard limit says.
        let want = lim.maximum.unwrap_or(1 << 20).min(1 << 20);
        if lim.current.is_some_and(|c| c < want) {
            lim.current = Some(want);
            // Best effort: a refusal leaves the limit as it was.
            let _ = setrlimit(Resource::Nofile, lim);
        }
        getrlimit(Resource::Nofile).current
    }
    #[cfg(not(unix))]
    None
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A progress bar on stderr when it is a terminal.
fn progress_bar(len: u64) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() || len == 0 {
        return None;
    }
    let bar = ProgressBar::new(len).with_style(
        ProgressStyle::with_template(
            "{bar:30} {pos}/{len} hosts, eta {eta}: {msg}",
        )
        .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_764_028_471;
    const TTL: Ttl = Ttl { min: 0, max: cache::DEFAULT_TTL };

    fn prev(status: Status, fetched_at: u64) -> Entry {
        Entry {
            host: "a.example".into(),
            url: "https://a.example/robots.txt".into(),
            status,
            body: b"User-agent: *\nDisallow: /\n".to_vec(),
            truncated: false,
            redirect_chain: Vec::new(),
            fetched_at,
            checked_at: fetched_at,
            expires: fetched_at + 60,
            etag: Some("\"v1\"".into()),
            last_modified: None,
            error: None,
            elapsed_ms: 1,
            stale_since: None,
        }
    }

    fn fetched(reply: Reply) -> Fetched {
        Fetched {
            reply,
            chain: Vec::new(),
            note: None,
            elapsed: Duration::from_millis(7),
        }
    }

    fn http(status: u16, cache_control: Option<&str>) -> Reply {
        Reply::Http {
            status,
            body: b"new".to_vec(),
            truncated: false,
            etag: None,
            last_modified: None,
            cache_control: cache_control.map(str::to_string),
            expires: None,
            date: None,
        }
    }

    fn go(p: Option<&Entry>, reply: Reply, now: u64) -> (Entry, Settled) {
        let p_url = "https://a.example/robots.txt".to_string();
        settle("a.example".into(), p_url, p, fetched(reply), now, TTL)
    }

    #[test]
    fn stale_copies() {
        let p = prev(Status::Http(200), NOW - 86_400);
        // A failure keeps the copy, marked stale, and is tried again in
        // an hour.
        let (e, k) = go(Some(&p), Reply::Failed("reset".into()), NOW);
        assert_eq!(k, Settled::Stale);
        assert_eq!((e.status, &e.body), (Status::Http(200), &p.body));
        assert_eq!(e.stale_since, Some(NOW));
        assert_eq!(e.fetched_at, p.fetched_at);
        assert_eq!((e.checked_at, e.expires), (NOW, NOW + 3600));
        // A second failure keeps the first failure's time.
        let (e2, k) = go(Some(&e), http(503, None), NOW + 7200);
        assert_eq!(k, Settled::Stale);
        assert_eq!(e2.stale_since, Some(NOW));
        assert!(e2.error.as_deref().unwrap().contains("HTTP 503"));
        // A success ends it.
        let (e3, k) = go(Some(&e2), http(200, Some("max-age=60")), NOW + 9000);
        assert_eq!(k, Settled::Ok);
        assert_eq!((e3.stale_since, &e3.body[..]), (None, &b"new"[..]));
        assert_eq!(e3.expires, NOW + 9060);
        // A 404 stands in too; a 429, an unreachable or a too-old copy
        // does not.
        let gone = prev(Status::Http(404), NOW - 10);
        assert_eq!(go(Some(&gone), http(500, None), NOW).1, Settled::Stale);
        for bad in [
            prev(Status::Http(429), NOW - 10),
            prev(Status::Unreachable, NOW - 10),
            prev(Status::Http(200), NOW - 31 * 86_400),
        ] {
            let (e, k) = go(Some(&bad), Reply::Failed("timeout".into()), NOW);
            assert_eq!(
                (k, e.status),
                (Settled::Unreachable, Status::Unreachable)
            );
            assert_eq!(e.error.as_deref(), Some("timeout"));
        }
        // A 4xx is an answer, not a failure: no stale copy.
        assert_eq!(go(Some(&p), http(404, None), NOW).1, Settled::Unavailable);
    }

    #[test]
    fn not_modified_renews() {
        let p = prev(Status::Http(200), NOW - 86_400);
        let (e, k) = go(Some(&p), http(304, Some("max-age=120")), NOW);
        assert_eq!(k, Settled::Revalidated);
        assert_eq!(e.body, p.body);
        assert_eq!(e.etag, p.etag);
        assert_eq!((e.fetched_at, e.expires), (NOW, NOW + 120));
        // A 304 without a copy is a 3xx like any other.
        assert_eq!(go(None, http(304, None), NOW).1, Settled::Unavailable);
    }
}
