//! The wheel's AI usage preferences: the columns `Rules.check(..., usage=KEYS)` adds, from the engine's `UrlChecker::preferences`, as `filter --usage` prints them.

use arrow_array::{Array, ArrayRef};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use robofilter::{HostCache, UrlChecker, UsageKey};
use robofilter_arrow::{preference_code, usage_array};

use crate::arrays::urls_of;

/// The `usage=` argument: a key or a sequence of keys (`train-ai`,
/// `search`), each taken once, in the order given. `None`: no key.
pub(crate) fn keys(arg: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<UsageKey>> {
    let Some(arg) = arg.filter(|a| !a.is_none()) else {
        return Ok(Vec::new());
    };
    let names: Vec<String> = if arg.is_instance_of::<PyString>() {
        vec![arg.extract()?]
    } else {
        arg.extract().map_err(|_| {
            PyTypeError::new_err(
                "usage= takes a key or a list of keys ('train-ai', 'search')",
            )
        })?
    };
    let mut keys = Vec::with_capacity(names.len());
    for name in names {
        let key: UsageKey = name.parse().map_err(PyValueError::new_err)?;
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Ok(keys)
}

/// The usage columns of the URLs of `chunks` (one column over them
/// all), agent by agent and key by key: `y`, `n` or `unknown`, null where
/// the URL is null, not a URL, not allowed for that agent, or of a host
/// without an entry.
pub(crate) fn columns(
    checker: &UrlChecker<'_>,
    chunks: &[ArrayRef],
    keys: &[UsageKey],
    name: &str,
) -> PyResult<Vec<ArrayRef>> {
    let agents = checker.agents().len();
    let len = chunks.iter().map(|c| c.len()).sum();
    // Per agent and key: the code, `None` where there is no preference.
    let mut codes = vec![vec![None; len]; agents * keys.len()];
    let mut cache = HostCache::new();
    let mut each = checker.unshared_outcomes();
    let mut prefs = Vec::with_capacity(agents);
    let fail = |e: &dyn std::fmt::Display| {
        crate::error(format!("bundle '{name}', {e}"))
    };
    let mut row = 0;
    for array in chunks {
        let urls = urls_of(array.as_ref())?;
        for i in 0..urls.len() {
            let (buf, len) = urls.value(i);
            let Some((url, path)) = robofilter::url_line(buf, len) else {
                continue;
            };
            let target =
                checker.target(url, &mut cache).map_err(|e| fail(&e))?;
            target.outcomes(url, path, &mut each);
            checker
                .preferences_each(url, Some(target), &each, &mut prefs)
                .map_err(|e| fail(&e))?;
            for (agent, prefs) in prefs.iter().enumerate() {
                let Some(prefs) = prefs else { continue };
                for (k, &key) in keys.iter().enumerate() {
                    codes[agent * keys.len() + k][row + i] =
                        Some(preference_code(prefs.get(key)));
                }
            }
        }
        row += array.len();
    }
    Ok(codes.iter().map(|c| usage_array(c)).collect())
}
