//! The module's functions over the CLI's crates: `fetch` (robofilter-fetch)
//! and `_shard_index` (robofilter-io's reader of `index.json`, for
//! `robofilter.spark`).

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::{error, io_error};

/// Fetches the robots.txt of every host named in `inputs` (host lists,
/// URL lists or frontiers; plain, gzip or zstd) into the manifest
/// `output`, exactly as `robofilter fetch` does: the same output, journal
/// (`OUTPUT.journal`, so an interrupted run resumes) and cache (a later
/// run with the same `output` keeps fresh entries and revalidates stale
/// ones). `resolve` takes curl's `HOST:PORT:ADDR` strings. The GIL is
/// released while it runs. Returns the summary counts as a dict.
#[pyfunction]
#[pyo3(signature = (inputs, output, *, resolve = None, scheme = "https", timeout = 10.0, user_agent = None, concurrency = 256, max_body = 528_663, min_ttl = 0, max_ttl = 86_400, shard = None, retries = 2, per_address = 8))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn fetch<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    output: PathBuf,
    resolve: Option<Vec<String>>,
    scheme: &str,
    timeout: f64,
    user_agent: Option<String>,
    concurrency: u32,
    max_body: usize,
    min_ttl: u64,
    max_ttl: u64,
    shard: Option<(u32, u32)>,
    retries: u32,
    per_address: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let inputs: Vec<PathBuf> = match inputs.is_instance_of::<PyString>()
        || inputs.hasattr("__fspath__")?
    {
        true => vec![inputs.extract()?],
        false => inputs.extract()?,
    };
    let https = match scheme {
        "https" => true,
        "http" => false,
        other => {
            return Err(PyValueError::new_err(format!(
                "scheme must be 'https' or 'http', not {other:?}"
            )));
        }
    };
    if !(timeout.is_finite() && timeout > 0.0) {
        return Err(PyValueError::new_err(
            "timeout must be a positive number of seconds",
        ));
    }
    if concurrency == 0 || per_address == 0 {
        return Err(PyValueError::new_err(
            "concurrency and per_address must be at least 1",
        ));
    }
    if let Some((i, n)) = shard {
        if n == 0 || i >= n {
            return Err(PyValueError::new_err(format!(
                "shard ({i}, {n}) is not (I, N) with 0 <= I < N"
            )));
        }
    }
    let mut options = robofilter_fetch::Options::new(inputs, output);
    options.resolve = resolve.unwrap_or_default();
    options.https = https;
    options.timeout = timeout;
    if let Some(ua) = user_agent {
        options.user_agent = ua;
    }
    options.concurrency = concurrency;
    options.max_body = max_body;
    options.min_ttl = min_ttl;
    options.max_ttl = max_ttl;
    options.shard = shard;
    options.retries = retries;
    options.per_address = per_address;
    let summary =
        py.detach(|| robofilter_fetch::fetch(&options)).map_err(io_error)?;
    let out = PyDict::new(py);
    out.set_item("hosts", summary.hosts)?;
    out.set_item("ok", summary.ok)?;
    out.set_item("revalidated", summary.revalidated)?;
    out.set_item("unavailable", summary.unavailable)?;
    out.set_item("unreachable", summary.unreachable)?;
    out.set_item("refused", summary.refused)?;
    out.set_item("stale", summary.stale)?;
    out.set_item("fresh", summary.fresh)?;
    out.set_item("resumed", summary.resumed)?;
    out.set_item("bad_lines", summary.bad_lines)?;
    out.set_item("other_shards", summary.other_shards)?;
    out.set_item("fetched", summary.fetched)?;
    out.set_item("seconds", summary.seconds)?;
    Ok(out)
}

/// The octets of a shard directory's `index.json` (named `name` in
/// errors), parsed and checked by the reader `robofilter` itself uses, as
/// a dict: `shards`, `dialect`, `agents`, `build_id`, `hosts`, and
/// `files` (per shard: `name`, `length`, `crc32`, `hosts`,
/// `fingerprint`). For
/// `robofilter.spark`, which reads the octets from any file system.
#[pyfunction]
pub(crate) fn _shard_index<'py>(
    py: Python<'py>,
    text: &[u8],
    name: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let index = robofilter_io::ShardIndex::from_json(text, name)
        .map_err(|e| error(format!("{e:#}")))?;
    let out = PyDict::new(py);
    out.set_item("shards", index.shards)?;
    out.set_item("dialect", &index.dialect)?;
    out.set_item("agents", &index.agents)?;
    out.set_item("build_id", &index.build_id)?;
    out.set_item("hosts", index.hosts)?;
    let files = PyList::empty(py);
    for f in &index.files {
        let d = PyDict::new(py);
        d.set_item("name", &f.name)?;
        d.set_item("length", f.length)?;
        d.set_item("crc32", f.crc32)?;
        d.set_item("hosts", f.hosts)?;
        d.set_item("fingerprint", f.fingerprint)?;
        files.append(d)?;
    }
    out.set_item("files", files)?;
    Ok(out)
}
