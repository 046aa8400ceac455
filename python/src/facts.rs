//! The per-host facts `Rules` answers besides verdicts, read from the
//! compiled robots.txt as `robofilter inspect --json` reads them: the crawl
//! delay and the Content-Signal line that apply to an agent, the sitemaps,
//! and the other lines (Content-Usage, Request-rate, Host, ...).

use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use robofilter::{Rules, SignalKey};

/// The bundle key of `host`: a host name (`A.example`, `a.example:8080`)
/// or a URL (`https://a.example/x`), normalised as a bundle's names are.
pub(crate) fn host_key(host: &str) -> PyResult<Vec<u8>> {
    if host.contains("://") {
        let mut key = Vec::new();
        return match robofilter::url_host_key(host.as_bytes(), &mut key) {
            Ok(()) => Ok(key),
            Err(_) => Err(PyValueError::new_err(format!(
                "host= '{host}' is a URL without a host one can look up \
                 (give the host name)"
            ))),
        };
    }
    robofilter::normalize_host(host)
        .map(String::into_bytes)
        .map_err(|e| PyValueError::new_err(format!("host= '{host}': {e}")))
}

/// The error for a bundle without an entry for `key`: a `KeyError`, since
/// an answer of "no sitemaps" would be a silent wrong one.
pub(crate) fn no_entry(key: &[u8]) -> PyErr {
    let key = String::from_utf8_lossy(key);
    PyKeyError::new_err(format!("no entry for host {key}"))
}

/// Text as Python `str` (a robots.txt's bytes, read as UTF-8 with any
/// invalid sequence replaced).
fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// The `user-agent` values of a group, as stored (one per line).
fn agent_list<'py>(
    py: Python<'py>,
    agents: &[u8],
) -> PyResult<Bound<'py, PyList>> {
    let values = agents
        .split(|&b| b == b'\n')
        .filter(|a| !a.is_empty())
        .map(|a| text(a).into_owned());
    PyList::new(py, values)
}

/// The sitemap URLs of `rules`, in file order.
pub(crate) fn sitemaps<'py>(
    py: Python<'py>,
    rules: Option<&Rules<'_>>,
) -> PyResult<Bound<'py, PyList>> {
    let urls = rules.into_iter().flat_map(|r| r.sitemaps());
    PyList::new(py, urls.map(|s| text(s.text()).into_owned()))
}

/// The lines of `rules` that no verdict uses, in file order: a dict each
/// with `line`, `key`, `value`, `group` (its index in the file, or `None`
/// before any `user-agent` line) and `agents` (that group's `user-agent`
/// values). Crawl-delay lines are included, with the others. With
/// `agent`, only the lines of the groups whose rules that agent gets
/// ([`Rules::applies_to`]).
pub(crate) fn directives<'py>(
    py: Python<'py>,
    rules: Option<&Rules<'_>>,
    agent: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    let Some(rules) = rules else { return Ok(out) };
    let applies = agent
        .map(|a| rules.applies_to(a))
        .transpose()
        .map_err(crate::error)?;
    let keep = |agents: &[u8]| applies.as_ref().is_none_or(|f| f(agents));
    let other = rules.other_lines().map_err(crate::error)?;
    let mut each: Vec<(u32, Bound<'py, PyDict>)> = Vec::new();
    let item = |line: u32,
                key: &str,
                value: &[u8],
                group: Option<usize>,
                agents: &[u8]|
     -> PyResult<(u32, Bound<'py, PyDict>)> {
        let d = PyDict::new(py);
        d.set_item("line", line)?;
        d.set_item("key", key)?;
        d.set_item("value", text(value))?;
        d.set_item("group", group)?;
        d.set_item("agents", agent_list(py, agents)?)?;
        Ok((line, d))
    };
    for o in other.iter().filter(|o| keep(o.agents())) {
        let key = text(o.key());
        each.push(item(o.line(), &key, o.value(), o.group(), o.agents())?);
    }
    for d in rules.crawl_delays().filter(|d| keep(d.agents())) {
        each.push(item(
            d.line(),
            "Crawl-delay",
            d.text(),
            d.group(),
            d.agents(),
        )?);
    }
    each.sort_by_key(|(line, _)| *line);
    for (_, d) in each {
        out.append(d)?;
    }
    Ok(out)
}

/// The Content-Signal line of the groups `agent` gets in `rules`, as a
/// dict (`ai_train`, `ai_input`, `search`: `True`, `False` or `None`);
/// `None` without one, or without rules. `name` names the rules in
/// errors.
pub(crate) fn content_signal<'py>(
    py: Python<'py>,
    rules: Option<&Rules<'_>>,
    agent: &str,
    name: &str,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(rules) = rules else { return Ok(None) };
    let signal = rules
        .content_signal(agent)
        .map_err(|e| crate::error(format!("'{name}': {e}")))?;
    let Some(signal) = signal else { return Ok(None) };
    let dict = PyDict::new(py);
    for key in [SignalKey::AiTrain, SignalKey::AiInput, SignalKey::Search] {
        let name = key.as_str().replace('-', "_");
        dict.set_item(name, signal.get(key))?;
    }
    Ok(Some(dict))
}
