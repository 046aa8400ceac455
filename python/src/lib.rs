//! `robofilter._robofilter`: the Python extension module. The `Rules` class
//! wraps a rules file or a bundle (memory-mapped or owned). Each line is
//! classified by the library's [`robofilter::url_line`] (the CLI's one
//! vectorised pass) and decided by the library's
//! [`UrlChecker`], the code `robofilter filter` runs, so both front ends
//! give the same verdict for the same line.
//!
//! URLs come in as Arrow arrays (any object with `__arrow_c_array__` or
//! `__arrow_c_stream__`, such as pyarrow's arrays, chunked arrays and record
//! batches) and are read in place; verdicts go out as a pyarrow
//! `dictionary<uint8, string>` array whose validity is the input's.

use std::cell::RefCell;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use pyo3_arrow::{PyArray, PyRecordBatch};
use robofilter::{
    AlignedBytes, Bundle, Compiler, Config, Dialect, Fetch, HostCache,
    Members, Outcome, Rules, Target, UrlChecker,
};
use robofilter_io::Compiled;
use robofilter_sources::HostSource;

mod arrays;
mod facts;
mod functions;
mod text;
mod usage;

use arrays::{
    concat_verdicts, thread_count, url_chunks, urls_of, verdict_field,
    verdicts,
};
use robofilter_arrow::{VERDICTS, usage_column_name, usage_field};
use text::text_or_bytes;

create_exception!(
    robofilter,
    RobofilterError,
    PyValueError,
    "A rules file that cannot be loaded, a robots.txt that cannot be \
     compiled, or an agent the rules were not compiled for. The message is \
     the one `robofilter` prints for the same problem."
);

/// The bytes the rules are read from: a rules file or bundle read into
/// memory when loaded (so that a file changed afterwards changes no
/// answer), or none for a shard directory (its shards are opened by
/// robofilter-io when a URL first needs one).
enum Backing {
    Read(robofilter_io::Bytes),
    Owned(AlignedBytes),
    Shards(robofilter_io::OpenShards),
}

impl Backing {
    fn bytes(&self) -> &[u8] {
        match self {
            Backing::Read(b) => b,
            Backing::Owned(b) => b.as_bytes(),
            Backing::Shards(_) => &[],
        }
    }
}

/// The loaded rules: one rules file, or a bundle and its members (loaded
/// on first use, then kept for the object's life), and the checkers built
/// for the agent lists asked about so far.
struct View<'a> {
    rules: Form<'a>,
    checkers: Checkers<'a>,
}

/// What form the loaded rules take.
enum Form<'a> {
    Single(Rules<'a>),
    Bundle {
        bundle: Bundle<'a>,
        members: Arc<Members<'a>>,
    },
    /// A shard directory, whose checkers borrow what it opened for the
    /// process's life (robofilter-io), so they have a cache of their own.
    Shards {
        shards: robofilter_io::OpenShards,
        checkers: Checkers<'static>,
    },
}

/// The checkers built so far, by agent list (most recently built last).
/// A checker keeps the matchers it built for each bundle member, so a
/// call after the first costs a host lookup and a walk; a member is
/// checked and loaded once, whatever the agents.
type Checkers<'a> = Mutex<Vec<(Box<[String]>, Arc<UrlChecker<'a>>)>>;

/// The checker of `list` for `agents`, or a new one from `build` (then
/// cached; the oldest is dropped past [`CHECKER_CACHE_LEN`]).
fn cached_checker<'a>(
    list: &Checkers<'a>,
    agents: &[&str],
    build: impl FnOnce() -> PyResult<UrlChecker<'a>>,
) -> PyResult<Arc<UrlChecker<'a>>> {
    let cached = |list: &mut Vec<(Box<[String]>, Arc<UrlChecker<'a>>)>| {
        let found = list.iter().find(|(a, _)| {
            a.iter().map(String::as_str).eq(agents.iter().copied())
        });
        found.map(|(_, c)| Arc::clone(c))
    };
    // A poisoned lock only means another thread panicked while holding
    // it; the list itself is always whole.
    let lock = || list.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(checker) = cached(&mut lock()) {
        return Ok(checker);
    }
    let checker = build()?;
    let mut list = lock();
    // Another thread may have built one meanwhile: keep the first.
    if let Some(checker) = cached(&mut list) {
        return Ok(checker);
    }
    if list.len() == CHECKER_CACHE_LEN {
        list.remove(0);
    }
    let checker = Arc::new(checker);
    let names = agents.iter().map(|a| a.to_string()).collect();
    list.push((names, Arc::clone(&checker)));
    Ok(checker)
}

/// How many agent lists keep their checker; the oldest is dropped past
/// that (a program asks about a handful of agent lists).
const CHECKER_CACHE_LEN: usize = 16;

self_cell::self_cell!(
    struct Loaded {
        owner: Backing,
        #[not_covariant]
        dependent: View,
    }
);

/// Compiled robots.txt rules: one rules file, or a bundle of many hosts.
#[pyclass(frozen, module = "robofilter", name = "Rules")]
struct PyRules {
    loaded: Loaded,
    /// How messages name the rules: the path, `<bytes>` or `<compiled>`.
    name: String,
}

/// A `RobofilterError` with `message`.
fn error(message: impl std::fmt::Display) -> PyErr {
    RobofilterError::new_err(message.to_string())
}

/// An error of robofilter-io, whole (`{:#}`: with its causes): an
/// `OSError` when a file could not be opened or read, else a
/// `RobofilterError` (a damaged or foreign file, a bad argument).
fn io_error(e: anyhow::Error) -> PyErr {
    let message = format!("{e:#}");
    match e.chain().any(|c| c.downcast_ref::<std::io::Error>().is_some()) {
        true => PyOSError::new_err(message),
        false => error(message),
    }
}

impl PyRules {
    /// Loads rules from `backing`, checking them as `robofilter filter`
    /// does (with the CLI's messages).
    fn open(backing: Backing, name: String) -> PyResult<PyRules> {
        // The CLI's loaders, with its messages.
        let path = Path::new(&name);
        let loaded =
            Loaded::try_new(backing, |b| -> anyhow::Result<View<'_>> {
                let rules = match b {
                    Backing::Shards(shards) => Form::Shards {
                        shards: *shards,
                        checkers: Mutex::default(),
                    },
                    _ => match Compiled::load(b.bytes(), path)? {
                        Compiled::Bundle(bundle) => {
                            let members = Arc::new(Members::new(&bundle));
                            Form::Bundle { bundle, members }
                        }
                        Compiled::Rules(rules) => Form::Single(rules),
                    },
                };
                Ok(View { rules, checkers: Mutex::default() })
            })
            .map_err(|e| error(format!("{e:#}")))?;
        Ok(PyRules { loaded, name })
    }

    /// Loads rules compiled or copied into memory.
    fn owned(bytes: &[u8], name: &str) -> PyResult<PyRules> {
        PyRules::open(Backing::Owned(AlignedBytes::from(bytes)), name.into())
    }

    /// Fails for a shard directory, which has no single file's bytes.
    fn not_shards(&self, what: &str) -> PyResult<()> {
        let shards = self
            .loaded
            .with_dependent(|_, v| matches!(v.rules, Form::Shards { .. }));
        match shards {
            true => Err(error(format!(
                "'{}' is a shard directory: {what} needs a rules file or a \
                 bundle (copy the directory instead)",
                self.name
            ))),
            false => Ok(()),
        }
    }

    /// Warns (a Python `UserWarning`) when the google dialect is asked
    /// about an agent that is not a product token: it decides it as
    /// google/robotstxt does (the `*` group), as the CLI warns; one
    /// warning per such agent. The rfc9309 dialect refuses such an agent
    /// (`Rules::matcher` fails).
    fn warn_agents(&self, agents: &[&str]) -> PyResult<()> {
        let dialect = self.loaded.with_dependent(|_, v| match &v.rules {
            Form::Single(r) => r.dialect(),
            Form::Bundle { bundle, .. } => bundle.dialect(),
            Form::Shards { shards, .. } => shards.dialect(),
        });
        if dialect != Dialect::Google {
            return Ok(());
        }
        for agent in agents {
            let Err(e) = robofilter::check_product_token(agent) else {
                continue;
            };
            let text = format!(
                "{e}; the google dialect decides it as google/robotstxt \
                 does: it names no group, so the '*' group applies"
            );
            let text = std::ffi::CString::new(text.replace('\0', "\\0"))
                .expect("no NUL left");
            Python::attach(|py| {
                let category =
                    py.get_type::<pyo3::exceptions::PyUserWarning>();
                PyErr::warn(py, &category, &text, 1)
            })?;
        }
        Ok(())
    }

    /// Runs `f` with the checker for `agents` (in their order), built on
    /// the first call for that list and then reused.
    fn with_checker<T>(
        &self,
        agents: &[&str],
        f: impl for<'a> FnOnce(&UrlChecker<'a>) -> PyResult<T>,
    ) -> PyResult<T> {
        self.warn_agents(agents)?;
        self.loaded.with_dependent(|_, view| match &view.rules {
            Form::Shards { shards, checkers } => {
                let build = || Ok(shards.checker(agents));
                f(&*cached_checker(checkers, agents, build)?)
            }
            _ => f(&*self.checker(view, agents)?),
        })
    }

    /// The cached checker of `view` (a rules file or a bundle) for
    /// `agents`, or a new one (cached).
    fn checker<'a>(
        &self,
        view: &View<'a>,
        agents: &[&str],
    ) -> PyResult<Arc<UrlChecker<'a>>> {
        cached_checker(&view.checkers, agents, || match &view.rules {
            Form::Single(rules) => {
                UrlChecker::rules(rules, agents).map_err(|e| {
                    error(format!("rules file '{}': {e}", self.name))
                })
            }
            Form::Bundle { bundle, members } => {
                UrlChecker::bundle(bundle, Arc::clone(members), agents)
                    .map_err(|e| error(format!("bundle '{}', {e}", self.name)))
            }
            Form::Shards { .. } => unreachable!("shards have their own"),
        })
    }

    /// Runs `f` with the compiled robots.txt that speaks for `host`: the
    /// rules file itself (`host` must be `None`), or the host's member of
    /// a bundle or shard directory (`None` for a host whose fetch outcome
    /// decides every URL). A bundle needs `host`, and a host without an
    /// entry is a `KeyError`.
    fn with_host_rules<T>(
        &self,
        host: Option<&str>,
        f: impl for<'a> FnOnce(Option<&Rules<'a>>) -> PyResult<T>,
    ) -> PyResult<T> {
        let single = self.loaded.with_dependent(|_, view| match &view.rules {
            Form::Single(_) => true,
            Form::Bundle { .. } | Form::Shards { .. } => false,
        });
        match (single, host) {
            (true, None) => self.loaded.with_dependent(|_, view| {
                let Form::Single(rules) = &view.rules else {
                    unreachable!("checked above")
                };
                f(Some(rules))
            }),
            (true, Some(_)) => Err(PyValueError::new_err(format!(
                "'{}' is one robots.txt, which speaks for its own host: call \
                 without host=",
                self.name
            ))),
            (false, None) => Err(PyValueError::new_err(format!(
                "'{}' holds many hosts: name one with host= (a host name or \
                 a URL)",
                self.name
            ))),
            (false, Some(host)) => {
                let key = facts::host_key(host)?;
                self.with_checker(&[], |checker| {
                    let entry = checker
                        .host_entry(&key)
                        .map_err(|e| error(format!("'{}', {e}", self.name)))?;
                    match entry {
                        Some(entry) => f(entry.rules),
                        None => Err(facts::no_entry(&key)),
                    }
                })
            }
        }
    }

    /// Runs `f` with the outcome of one line for each of `agents` and
    /// what decided it (`None`: not a URL): the cached checker's host
    /// lookup and walk, as `robofilter filter` decides the line.
    fn with_line<T>(
        &self,
        agents: &[&str],
        line: &[u8],
        f: impl for<'m, 'a> FnOnce(
            &[Outcome],
            Option<Target<'m, 'a>>,
        ) -> PyResult<T>,
    ) -> PyResult<T> {
        self.with_checker(agents, |checker| {
            // One agent's outcome on the stack: a call decides one URL,
            // and each allocation costs it tens of nanoseconds.
            let (mut one, mut many) = ([Outcome::Invalid], Vec::new());
            let each: &mut [Outcome] = match agents.len() {
                1 => &mut one,
                n => {
                    many.resize(n, Outcome::Invalid);
                    &mut many
                }
            };
            let Some((url, path)) = robofilter::url_line(line, line.len())
            else {
                return f(each, None);
            };
            let mut cache = ONE_URL_CACHE.with(RefCell::take);
            let target = checker.target(url, &mut cache);
            ONE_URL_CACHE.with(|kept| kept.replace(cache.emptied()));
            let target = target
                .map_err(|e| error(format!("bundle '{}', {e}", self.name)))?;
            target.outcomes(url, path, each);
            f(each, Some(target))
        })
    }
}

thread_local! {
    /// The host cache of this thread's one-URL calls (`verdict`, `allowed`,
    /// `explain`), emptied between them: its buffers are allocated once
    /// per thread rather than on every call.
    static ONE_URL_CACHE: RefCell<HostCache<'static, 'static>> =
        RefCell::new(HostCache::new());
}

/// The `agent` argument of the public calls: one agent (`str`, answered
/// as before: one verdict, one array) or a list or tuple of agents (one
/// verdict per agent, keyed or named by the agent, in the order given).
enum AgentsArg<'b> {
    /// A `str`, borrowed (a call that decides one URL allocates nothing
    /// for its agent).
    One(&'b str),
    /// A list or tuple.
    List(Vec<String>),
}

impl<'b> AgentsArg<'b> {
    fn of(value: &'b Bound<'_, PyAny>) -> PyResult<AgentsArg<'b>> {
        if let Ok(s) = value.cast::<PyString>() {
            return Ok(AgentsArg::One(s.to_str()?));
        }
        let is_list = value.is_instance_of::<PyList>()
            || value.is_instance_of::<pyo3::types::PyTuple>();
        if !is_list {
            return Err(PyTypeError::new_err(format!(
                "agent must be a str or a list or tuple of str, not {}",
                value.get_type().name()?
            )));
        }
        let mut agents: Vec<String> = Vec::new();
        for item in value.try_iter()? {
            let item = item?;
            let Ok(s) = item.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "each agent must be a str, not {}",
                    item.get_type().name()?
                )));
            };
            let agent = s.to_str()?;
            // As the CLI's repeated --agent: agents match
            // case-insensitively, so `GPTBot` and `gptbot` are one agent.
            if let Some(first) =
                agents.iter().find(|a| a.eq_ignore_ascii_case(agent))
            {
                return Err(PyValueError::new_err(format!(
                    "agent '{agent}' is given twice (agents match \
                     case-insensitively: '{first}' names the same one); \
                     name each agent once"
                )));
            }
            agents.push(agent.to_string());
        }
        if agents.is_empty() {
            return Err(PyValueError::new_err(
                "the list of agents is empty; name at least one agent",
            ));
        }
        Ok(AgentsArg::List(agents))
    }

    /// Whether the agents came as a list (answered per agent, by name).
    fn is_list(&self) -> bool {
        matches!(self, AgentsArg::List(_))
    }

    /// The agents, in the order given.
    fn names(&self) -> Names<'_> {
        match self {
            AgentsArg::One(one) => Names::One([one]),
            AgentsArg::List(agents) => {
                Names::Many(agents.iter().map(String::as_str).collect())
            }
        }
    }

    /// The agents, owned.
    fn into_owned(self) -> Vec<String> {
        match self {
            AgentsArg::One(one) => vec![one.to_string()],
            AgentsArg::List(agents) => agents,
        }
    }
}

/// [`AgentsArg::names`]: a slice of the agents' names.
enum Names<'n> {
    One([&'n str; 1]),
    Many(Vec<&'n str>),
}

impl<'n> core::ops::Deref for Names<'n> {
    type Target = [&'n str];

    fn deref(&self) -> &[&'n str] {
        match self {
            Names::One(one) => one,
            Names::Many(many) => many,
        }
    }
}

#[pymethods]
impl PyRules {
    /// Loads a rules file, a bundle or a shard directory written by
    /// `robofilter compile` (or `Rules.save`), checked as `robofilter
    /// filter` checks it.
    ///
    /// A rules file or bundle is read into memory whole: a file cut or
    /// rewritten afterwards changes no answer (the old answers stay). A
    /// shard directory's `index.json` is read now and each shard when a
    /// URL of one of its hosts first needs it, checked against the index;
    /// a shard changed in place after that raises `RobofilterError` rather
    /// than answer from a mix of two builds.
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<PyRules> {
        let name = path.display().to_string();
        if robofilter_io::ShardIndex::is_dir(&path) {
            let shards = py
                .detach(|| robofilter_io::open_shards(&path, &[], None))
                .map_err(io_error)?;
            return PyRules::open(Backing::Shards(shards), name);
        }
        let bytes = py
            .detach(|| {
                robofilter_io::read_compiled(&path, "rules file or bundle")
            })
            .map_err(io_error)?;
        PyRules::open(Backing::Read(bytes), name)
    }

    /// Loads rules from bytes (copied once, to align them).
    #[staticmethod]
    fn from_bytes(data: &[u8]) -> PyResult<PyRules> {
        PyRules::owned(data, "<bytes>")
    }

    /// Compiles one robots.txt.
    #[staticmethod]
    #[pyo3(signature = (robots_txt, *, dialect = "rfc9309", agents = None, dfa_byte_limit = None))]
    fn compile(
        py: Python<'_>,
        robots_txt: &Bound<'_, PyAny>,
        dialect: &str,
        agents: Option<Vec<String>>,
        dfa_byte_limit: Option<usize>,
    ) -> PyResult<PyRules> {
        let body = text_or_bytes(robots_txt, "robots_txt")?;
        let config = config(dialect, agents, dfa_byte_limit)?;
        // The cap every front end reads a robots.txt up to: cut where the
        // dialect parses no further, refused (google) where a cut could
        // change a verdict.
        let limits = robofilter_io::Limits::new(&config);
        let body = match body.len() > limits.body {
            true => std::borrow::Cow::Owned(
                limits.apply(body.into_owned()).map_err(|e| {
                    error(format!("cannot compile robots.txt: {e}"))
                })?,
            ),
            false => body,
        };
        let bytes = py
            .detach(|| Compiler::with_config(config).compile(&body))
            .map_err(|e| error(format!("cannot compile robots.txt: {e}")))?;
        PyRules::owned(&bytes, "<compiled>")
    }

    /// Compiles many hosts into a bundle. `sources` maps each host to what
    /// its robots.txt fetch gave (a body, a status, `(status, body)` or
    /// `None` for unreachable), or is a path, read exactly as `robofilter
    /// compile` reads it (the same bytes come out): a directory of
    /// `HOST.txt` files (`--hosts`), a WARC file (`.warc`, `.warc.gz`:
    /// `--warc`), or any other file a manifest (`--manifest`, what
    /// `robofilter.fetch` writes).
    ///
    /// A bad member (an unreadable file, a body that is compressed or
    /// compiled rather than robots.txt text) is reported as a
    /// `UserWarning` and its host disallowed, as the CLI does; with
    /// `strict=True` it raises `RobofilterError` instead.
    #[staticmethod]
    #[pyo3(signature = (sources, *, dialect = "rfc9309", agents = None, dfa_byte_limit = Some(robofilter_sources::BUNDLE_DFA_BYTE_LIMIT), strict = false))]
    fn compile_hosts(
        py: Python<'_>,
        sources: &Bound<'_, PyAny>,
        dialect: &str,
        agents: Option<Vec<String>>,
        dfa_byte_limit: Option<usize>,
        strict: bool,
    ) -> PyResult<PyRules> {
        let config = config(dialect, agents, dfa_byte_limit)?;
        let is_path = sources.is_instance_of::<PyString>()
            || sources.hasattr("__fspath__")?;
        let (hosts, bad) = match is_path {
            true => {
                let path = sources.extract::<PathBuf>()?;
                if std::fs::metadata(&path).is_err() {
                    return Err(PyOSError::new_err(format!(
                        "cannot find '{}': compile_hosts takes a directory of \
                         HOST.txt files, a manifest or a WARC file (check the \
                         path)",
                        path.display()
                    )));
                }
                let limits = robofilter_sources::Limits::new(&config);
                let name = path.to_string_lossy();
                let read = match () {
                    _ if path.is_dir() => robofilter_sources::read_hosts_dir,
                    _ if name.ends_with(".warc")
                        || name.ends_with(".warc.gz") =>
                    {
                        robofilter_sources::read_warc
                    }
                    _ => robofilter_sources::read_manifest,
                };
                let (hosts, stats) =
                    py.detach(|| read(&path, limits)).map_err(io_error)?;
                (hosts, stats.bad)
            }
            false => hosts_mapping(sources)?,
        };
        if strict && !bad.is_empty() {
            return Err(error(format!(
                "{} bad input(s), fatal with strict=True: {}",
                bad.len(),
                bad.join("; ")
            )));
        }
        for message in &bad {
            warn(py, message)?;
        }
        let bytes = py
            .detach(|| robofilter_sources::build_bundle(hosts, config, |_| {}))
            .map_err(|e| error(format!("{e:#}")))?;
        PyRules::owned(bytes.as_bytes(), "<compiled>")
    }

    /// The rules file's (or bundle's) bytes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        self.not_shards("to_bytes")?;
        Ok(PyBytes::new(py, self.loaded.borrow_owner().bytes()))
    }

    /// Writes the rules to `path`, through a temporary file renamed over
    /// it, so that a failed write leaves no half-written file.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.not_shards("save")?;
        save(&path, self.loaded.borrow_owner().bytes()).map_err(|e| {
            PyOSError::new_err(format!(
                "cannot write rules file '{}': {e}",
                path.display()
            ))
        })
    }

    /// Whether these rules are a bundle of hosts.
    #[getter]
    fn is_bundle(&self) -> bool {
        self.loaded.with_dependent(|_, v| {
            matches!(v.rules, Form::Bundle { .. } | Form::Shards { .. })
        })
    }

    /// The dialect the rules were compiled in: `"rfc9309"` or `"google"`.
    #[getter]
    fn dialect(&self) -> String {
        self.loaded.with_dependent(|_, v| match &v.rules {
            Form::Single(r) => r.dialect().to_string(),
            Form::Bundle { bundle, .. } => bundle.dialect().to_string(),
            Form::Shards { shards, .. } => shards.dialect().to_string(),
        })
    }

    /// How many hosts a bundle has (0 for a single rules file).
    #[getter]
    fn host_count(&self) -> usize {
        self.loaded.with_dependent(|_, v| match &v.rules {
            Form::Single(_) => 0,
            Form::Bundle { bundle, .. } => bundle.host_len(),
            Form::Shards { shards, .. } => {
                usize::try_from(shards.host_len()).unwrap_or(usize::MAX)
            }
        })
    }

    fn __repr__(&self) -> String {
        let shards = self.loaded.with_dependent(|_, v| match &v.rules {
            Form::Shards { shards, .. } => Some(shards.shard_len()),
            _ => None,
        });
        let (what, size) = match (shards, self.is_bundle()) {
            (Some(n), _) => (
                format!("shard directory of {} hosts", self.host_count()),
                format!("{n} shards"),
            ),
            (None, true) => (
                format!("bundle of {} hosts", self.host_count()),
                format!("{} bytes", self.loaded.borrow_owner().bytes().len()),
            ),
            (None, false) => (
                "rules file".to_string(),
                format!("{} bytes", self.loaded.borrow_owner().bytes().len()),
            ),
        };
        format!(
            "<robofilter.Rules {what}, {}, {size}, from {}>",
            self.dialect(),
            self.name
        )
    }

    /// The verdict of one URL: `"allow"`, `"disallow"`, `"unknown"` (a
    /// bundle without the URL's host) or `"invalid"` (not a URL). For a
    /// list of agents, a dict agent -> verdict, in the order given.
    fn verdict<'py>(
        &self,
        py: Python<'py>,
        url: &Bound<'py, PyAny>,
        agent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let agents = AgentsArg::of(agent)?;
        let url = text_or_bytes(url, "url")?;
        let names = agents.names();
        self.with_line(&names, &url, |each, _| {
            if !agents.is_list() {
                return Ok(outcome_str(py, each[0]).clone().into_any());
            }
            let dict = PyDict::new(py);
            for (a, &outcome) in names.iter().zip(each) {
                dict.set_item(a, outcome_str(py, outcome))?;
            }
            Ok(dict.into_any())
        })
    }

    /// Whether `url` may be crawled: its verdict is `"allow"` (for a list
    /// of agents: for every one of them).
    fn allowed(
        &self,
        url: &Bound<'_, PyAny>,
        agent: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let agents = AgentsArg::of(agent)?;
        let url = text_or_bytes(url, "url")?;
        self.with_line(&agents.names(), &url, |each, _| {
            Ok(each.iter().all(|&o| o == Outcome::Allow))
        })
    }

    /// The verdict of one URL with its reason, as `robofilter filter
    /// --json --explain` writes it: a dict with `url`, `verdict`, `host`,
    /// `reason`, `line` and `pattern` (and `fields` when the line has a
    /// TAB). For a list of agents, `verdict` is the combined verdict and
    /// `verdicts` and `reasons` are keyed by agent, as the CLI writes them
    /// for several agents.
    fn explain<'py>(
        &self,
        py: Python<'py>,
        url: &Bound<'py, PyAny>,
        agent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let agents = AgentsArg::of(agent)?;
        let bytes = text_or_bytes(url, "url")?;
        // As the CLI does: a trailing `\r` is not part of the line.
        let text = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
        // The URL is the line up to its first TAB; the rest are fields.
        let tab = text.iter().position(|&b| b == b'\t');
        let url_part = &text[..tab.unwrap_or(text.len())];
        let names = agents.names();
        let owned: Vec<String> = names.iter().map(|a| a.to_string()).collect();
        // The object `filter --json --explain` prints for the line, by the
        // same printer.
        let mut json = Vec::new();
        self.with_line(&names, text, |each, target| {
            let usage = robofilter_frontier::Usage { keys: &[], each: &[] };
            robofilter_frontier::json_line(
                &mut json, &owned, text, url_part, each, target, true, usage,
            );
            Ok(())
        })?;
        let parsed = py
            .import("json")?
            .call_method1("loads", (PyBytes::new(py, &json),))?;
        let parsed = parsed.cast::<PyDict>()?;
        // The URL and fields come back in the input's type (`str` or
        // `bytes`; JSON's base64 forms are not needed in Python).
        let same_type = |b: &[u8]| -> PyResult<Bound<'py, PyAny>> {
            match url.is_instance_of::<PyString>() {
                // A `str` is UTF-8, and a TAB is a character boundary.
                true => {
                    let s = String::from_utf8_lossy(b);
                    Ok(PyString::new(py, &s).into_any())
                }
                false => Ok(PyBytes::new(py, b).into_any()),
            }
        };
        let dict = PyDict::new(py);
        for (key, value) in parsed.iter() {
            let key: String = key.extract()?;
            match key.as_str() {
                "url" | "url_base64" => match tab {
                    Some(_) => dict.set_item("url", same_type(url_part)?)?,
                    None => dict.set_item("url", url)?,
                },
                "fields" | "fields_base64" => {
                    let k = tab.expect("a line with fields has a TAB");
                    dict.set_item("fields", same_type(&text[k + 1..])?)?
                }
                // A host key that is not UTF-8: its bytes.
                "host_base64" => dict.set_item(
                    "host",
                    py.import("base64")?
                        .call_method1("b64decode", (value,))?,
                )?,
                _ => dict.set_item(key, value)?,
            }
        }
        Ok(dict)
    }

    /// The `Content-Signal` line (Cloudflare's Content Signals Policy)
    /// that applies to `agent`: the first of the groups whose rules the
    /// agent gets, as a dict of `ai_train`, `ai_input` and `search`, each
    /// `True` (yes), `False` (no) or `None` (unset), the shape
    /// fast-robotstxt gives; `None` without such a line. `host` as for
    /// `crawl_delay`.
    #[pyo3(signature = (agent, host = None))]
    fn content_signal<'py>(
        &self,
        py: Python<'py>,
        agent: &str,
        host: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.warn_agents(&[agent])?;
        self.with_host_rules(host, |rules| {
            facts::content_signal(py, rules, agent, &self.name)
        })
    }

    /// The crawl delay in seconds that applies to `agent`: the first
    /// `crawl-delay` line, in file order, of the groups whose rules the
    /// agent gets (those naming it, or else the `*` groups) whose value is
    /// a number. `None` if there is none, or the host has no robots.txt
    /// rules. For a bundle or shard directory, `host` names the host (a
    /// host name or a URL; `KeyError` if it has no entry).
    #[pyo3(signature = (agent, host = None))]
    fn crawl_delay(
        &self,
        agent: &str,
        host: Option<&str>,
    ) -> PyResult<Option<f64>> {
        self.warn_agents(&[agent])?;
        self.with_host_rules(host, |rules| match rules {
            Some(rules) => rules
                .crawl_delay(agent)
                .map_err(|e| error(format!("'{}': {e}", self.name))),
            None => Ok(None),
        })
    }

    /// The sitemap URLs the robots.txt lists, in file order (`host` as
    /// for `crawl_delay`).
    #[pyo3(signature = (host = None))]
    fn sitemaps<'py>(
        &self,
        py: Python<'py>,
        host: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.with_host_rules(host, |rules| facts::sitemaps(py, rules))
    }

    /// The robots.txt's lines that decide no verdict (Content-Signal,
    /// Content-Usage, Request-rate, Host, Crawl-delay, unknown keys), in
    /// file order, as `inspect --json` lists them: a dict each with
    /// `line`, `key` (as written; `Crawl-delay` for crawl delays),
    /// `value`, `group` (the group's index in the file, `None` before any
    /// `user-agent` line) and `agents` (that group's `user-agent` values).
    /// `host` as for `crawl_delay`. With `agent`, only the lines of the
    /// groups whose rules that agent gets (those naming it, or else the
    /// `*` groups).
    #[pyo3(signature = (host = None, *, agent = None))]
    fn directives<'py>(
        &self,
        py: Python<'py>,
        host: Option<&str>,
        agent: Option<&str>,
    ) -> PyResult<Bound<'py, PyList>> {
        if let Some(agent) = agent {
            self.warn_agents(&[agent])?;
        }
        self.with_host_rules(host, |rules| facts::directives(py, rules, agent))
    }

    /// The verdicts of many URLs: a pyarrow `dictionary<uint8, string>`
    /// array (codes 0 allow, 1 disallow, 2 unknown, 3 invalid; null where
    /// the URL is null); for a list of agents, a record batch with one
    /// such column per agent, named by the agent, in the order given (each
    /// URL is decided once for all of them). `urls` is an Arrow string or
    /// binary array, a chunked array (verdicts come back as one array), or
    /// a sequence of `str`/`bytes`/`None`. Arrow URLs are read in place;
    /// the GIL is released while deciding, on up to `threads` threads (0:
    /// all cores).
    /// With `usage` (a key or a list: `train-ai`, `search`), a record
    /// batch with columns `usage_<key>` (`usage_<key>_<agent>` for a list
    /// of agents) after the verdicts: `y`, `n`, `unknown`, null where
    /// there is no preference to have (as `filter --usage` prints `-`).
    #[pyo3(signature = (urls, agent, *, threads = 1, usage = None))]
    fn check<'py>(
        &self,
        py: Python<'py>,
        urls: &Bound<'py, PyAny>,
        agent: &Bound<'py, PyAny>,
        threads: usize,
        usage: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let agents = AgentsArg::of(agent)?;
        let keys = usage::keys(usage)?;
        let chunks = url_chunks(urls)?;
        let threads = thread_count(threads);
        // Per chunk, one array per agent.
        let names = agents.names();
        let arrays = self.with_checker(&names, |checker| {
            py.detach(|| {
                chunks
                    .iter()
                    .map(|chunk| {
                        verdicts(checker, chunk.as_ref(), threads, &self.name)
                    })
                    .collect::<PyResult<Vec<_>>>()
            })
        })?;
        let mut columns: Vec<ArrayRef> = Vec::new();
        for a in 0..names.len() {
            columns.push(match &arrays[..] {
                [one] => Arc::new(one[a].clone()),
                many => {
                    let refs: Vec<&dyn Array> =
                        many.iter().map(|c| &c[a] as &dyn Array).collect();
                    concat_verdicts(&refs)
                }
            });
        }
        // `usage=` given (even empty) asks for a record batch.
        if !agents.is_list() && usage.is_none_or(|u| u.is_none()) {
            let column = columns.pop().expect("one agent");
            let out = PyArray::new(column, verdict_field("verdict"));
            let out: Py<PyAny> = out.to_pyarrow(py)?.unbind();
            return Ok(out.into_bound(py));
        }
        let mut fields: Vec<Arc<Field>> = match agents.is_list() {
            true => names.iter().map(|a| verdict_field(a)).collect(),
            false => vec![verdict_field("verdict")],
        };
        if !keys.is_empty() {
            let list = agents.is_list();
            columns.extend(self.with_checker(&names, |checker| {
                py.detach(|| {
                    usage::columns(checker, &chunks, &keys, &self.name)
                })
            })?);
            for agent in names.iter() {
                fields.extend(keys.iter().map(|&k| {
                    let name = usage_column_name(k, list.then_some(agent));
                    Arc::new(usage_field(&name))
                }));
            }
        }
        let schema = Arc::new(arrow_schema::Schema::new(fields));
        let batch = RecordBatch::try_new(schema, columns)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyRecordBatch::new(batch).into_pyarrow(py)
    }

    /// Maps an iterable of Arrow record batches to record batches with a
    /// `verdict` column added (see `check`), or for a list of agents one
    /// column `verdict_<agent>` per agent (the prefix is `verdict_column`);
    /// every other column is passed through. The shape PySpark's
    /// `mapInArrow` wants. Lazy: one batch is decided per step.
    #[pyo3(signature = (batches, agent, url_column = String::from("url"), *, threads = 1, verdict_column = String::from("verdict")))]
    fn filter_batches(
        slf: Py<PyRules>,
        batches: &Bound<'_, PyAny>,
        agent: &Bound<'_, PyAny>,
        url_column: String,
        threads: usize,
        verdict_column: String,
    ) -> PyResult<VerdictBatches> {
        let agents = AgentsArg::of(agent)?;
        // Fail early for an agent the rules were not compiled for.
        slf.get().with_checker(&agents.names(), |_| Ok(()))?;
        let columns = match &agents {
            AgentsArg::One(_) => vec![verdict_column],
            AgentsArg::List(agents) => agents
                .iter()
                .map(|a| format!("{verdict_column}_{a}"))
                .collect(),
        };
        let check_names = agents.is_list();
        Ok(VerdictBatches {
            rules: slf,
            batches: batches.try_iter()?.unbind().into_any(),
            agents: agents.into_owned(),
            columns,
            check_names,
            url_column,
            threads: thread_count(threads),
        })
    }
}

/// The iterator `Rules.filter_batches` returns.
#[pyclass(module = "robofilter")]
struct VerdictBatches {
    rules: Py<PyRules>,
    batches: Py<PyAny>,
    agents: Vec<String>,
    /// The names of the verdict columns, one per agent.
    columns: Vec<String>,
    /// Whether a batch that already has one of `columns` is refused (the
    /// list form; one agent appends `verdict` as before).
    check_names: bool,
    url_column: String,
    threads: usize,
}

#[pymethods]
impl VerdictBatches {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(next) = self
            .batches
            .bind(py)
            .call_method0("__next__")
            .map(Some)
            .or_else(|e| {
                if e.is_instance_of::<pyo3::exceptions::PyStopIteration>(py) {
                    Ok(None)
                } else {
                    Err(e)
                }
            })?
        else {
            return Ok(None);
        };
        let batch = next.extract::<PyRecordBatch>()?.into_inner();
        let names: Vec<String> =
            batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        let Ok(index) = batch.schema().index_of(&self.url_column) else {
            return Err(PyValueError::new_err(format!(
                "the batch has no column '{}' (its columns: {}); pass \
                 url_column=",
                self.url_column,
                names.join(", ")
            )));
        };
        if self.check_names {
            if let Some(c) = self.columns.iter().find(|c| names.contains(c)) {
                return Err(PyValueError::new_err(format!(
                    "the batch already has a column '{c}' (pass \
                     verdict_column= to name the verdict columns otherwise)"
                )));
            }
        }
        let rules = self.rules.get();
        let column = batch.column(index).clone();
        let threads = self.threads;
        let names: Vec<&str> =
            self.agents.iter().map(String::as_str).collect();
        let verdicts = rules.with_checker(&names, |checker| {
            py.detach(|| {
                verdicts(checker, column.as_ref(), threads, &rules.name)
            })
        })?;
        let mut fields: Vec<Arc<Field>> =
            batch.schema().fields().iter().cloned().collect();
        let mut columns = batch.columns().to_vec();
        for (name, v) in self.columns.iter().zip(verdicts) {
            fields.push(verdict_field(name));
            columns.push(v);
        }
        let schema = Arc::new(arrow_schema::Schema::new_with_metadata(
            fields,
            batch.schema().metadata().clone(),
        ));
        let out = RecordBatch::try_new(schema, columns)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyRecordBatch::new(out).into_pyarrow(py).map(Some)
    }
}

/// An outcome's name as a Python string, interned: one `verdict()` call
/// returns it without allocating.
fn outcome_str(py: Python<'_>, outcome: Outcome) -> &Bound<'_, PyString> {
    match outcome {
        Outcome::Allow => pyo3::intern!(py, "allow"),
        Outcome::Disallow => pyo3::intern!(py, "disallow"),
        Outcome::Unknown => pyo3::intern!(py, "unknown"),
        Outcome::Invalid => pyo3::intern!(py, "invalid"),
    }
}

/// The hosts of a mapping from host to fetch outcome, and the bad
/// members: a 2xx body that is not robots.txt text (compressed, or
/// compiled: read as text it would allow everything) is reported and its
/// host disallowed, as every source of the CLI does
/// ([`robofilter_sources::SourceStats::add`]).
fn hosts_mapping(
    sources: &Bound<'_, PyAny>,
) -> PyResult<(Vec<HostSource>, Vec<String>)> {
    let mut out = Vec::new();
    let mut stats = robofilter_sources::SourceStats::default();
    for item in sources.call_method0("items")?.try_iter()? {
        let (host, value): (String, Bound<'_, PyAny>) = item?.extract()?;
        let fetch = fetch_outcome(&host, &value)?;
        let origin = format!("host '{host}'");
        let cause = String::new();
        stats.add(&mut out, HostSource { host, fetch, origin, cause });
    }
    Ok((out, stats.bad))
}

/// Issues a Python `UserWarning` with `text`.
fn warn(py: Python<'_>, text: &str) -> PyResult<()> {
    let text = std::ffi::CString::new(text.replace('\0', "\\0"))
        .expect("no NUL left");
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    PyErr::warn(py, &category, &text, 1)
}

/// One host's fetch outcome: `None` (unreachable), a body (`bytes` or
/// `str`, status 200), a status (`int`, no body) or `(status, body)`.
fn fetch_outcome(host: &str, value: &Bound<'_, PyAny>) -> PyResult<Fetch> {
    let status = |v: &Bound<'_, PyAny>| -> PyResult<u16> {
        let s: i64 = v.extract()?;
        u16::try_from(s).map_err(|_| {
            error(format!("host '{host}': {s} is not an HTTP status code"))
        })
    };
    if value.is_none() {
        return Ok(Fetch::Unreachable);
    }
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>()
    {
        return Ok(Fetch::http(
            200,
            0,
            text_or_bytes(value, "a body")?.to_vec(),
        ));
    }
    if value.is_instance_of::<pyo3::types::PyInt>()
        && !value.is_instance_of::<pyo3::types::PyBool>()
    {
        return Ok(Fetch::http(status(value)?, 0, Vec::new()));
    }
    if let Ok(t) = value.cast::<pyo3::types::PyTuple>() {
        if t.len() == 2 {
            let body = t.get_item(1)?;
            let body = match body.is_none() {
                true => Vec::new(),
                false => text_or_bytes(&body, "a body")?.to_vec(),
            };
            return Ok(Fetch::http(status(&t.get_item(0)?)?, 0, body));
        }
    }
    Err(PyTypeError::new_err(format!(
        "host '{host}': a fetch outcome is bytes, str, int, (status, body) \
         or None, not {}",
        value.get_type().name()?
    )))
}

/// A compiler configuration from Python's keyword arguments.
fn config(
    dialect: &str,
    agents: Option<Vec<String>>,
    dfa_byte_limit: Option<usize>,
) -> PyResult<Config> {
    let dialect: Dialect = dialect.parse().map_err(error)?;
    let mut config = Config::new().dialect(dialect);
    for agent in agents.iter().flatten() {
        config = config.agent(agent);
    }
    if let Some(limit) = dfa_byte_limit {
        config = config.dfa_byte_limit(limit);
    }
    Ok(config)
}

/// Writes `bytes` to `path` through a temporary file in the same
/// directory, synced and renamed over `path`.
fn save(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map_or_else(|| "rules".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The shard (0-based) of each URL's or host's host key among `shards`,
/// as `robofilter compile --shards` places hosts and `robofilter shard`
/// prints it: XXH3-64 (seed 0) of the bundle host key, mod `shards`. A
/// line is a URL (or frontier line: the URL up to its first TAB) or a host
/// name (`Example.com`, `example.com:8080`).
///
/// For one `str`/`bytes`: an `int`, or `None` if it names no host. For an
/// Arrow string or binary array (or chunked array, or a sequence): a
/// pyarrow `uint32` array, null where the input is null or names no host.
#[pyfunction]
fn shard_of<'py>(
    py: Python<'py>,
    urls: &Bound<'py, PyAny>,
    shards: u32,
) -> PyResult<Bound<'py, PyAny>> {
    if shards == 0 {
        return Err(PyValueError::new_err("shards must be at least 1"));
    }
    let mut key = Vec::new();
    if urls.is_instance_of::<PyString>() || urls.is_instance_of::<PyBytes>() {
        let line = text_or_bytes(urls, "urls")?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let shard = robofilter::shard_of_line(line, shards, &mut key);
        return Ok(shard.into_pyobject(py)?.into_any());
    }
    let chunks = url_chunks(urls)?;
    let mut out = arrow_array::builder::UInt32Builder::new();
    for chunk in &chunks {
        let text = urls_of(chunk.as_ref())?;
        for i in 0..chunk.len() {
            let Some((buf, len)) = text.get(i) else {
                out.append_null();
                continue;
            };
            let line = &buf[..len];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            out.append_option(robofilter::shard_of_line(
                line, shards, &mut key,
            ));
        }
    }
    let array: ArrayRef = Arc::new(out.finish());
    let field = Arc::new(Field::new("shard", DataType::UInt32, true));
    let out: Py<PyAny> = PyArray::new(array, field).to_pyarrow(py)?.unbind();
    Ok(out.into_bound(py))
}

#[pymodule]
fn _robofilter(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRules>()?;
    m.add_class::<VerdictBatches>()?;
    m.add_function(wrap_pyfunction!(shard_of, m)?)?;
    m.add_function(wrap_pyfunction!(functions::fetch, m)?)?;
    m.add_function(wrap_pyfunction!(functions::_shard_index, m)?)?;
    m.add("RobofilterError", m.py().get_type::<RobofilterError>())?;
    m.add("VERDICTS", PyList::new(m.py(), VERDICTS)?)?;
    Ok(())
}
