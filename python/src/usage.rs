//! The wheel's AI usage preferences: the columns `Rules.check(..., usage=KEYS)` adds, from the engine's `UrlChecker::preferences`, as `filter --usage` prints them.

use std::sync::Arc;

use arrow_array::types::UInt8Type;
use arrow_array::{Array, ArrayRef, DictionaryArray, StringArray, UInt8Array};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use robofilter::{HostCache, Preference, UrlChecker, UsageKey};

use crate::arrays::Urls;

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

/// A usage column's name: `usage_<key>` for one agent, with `_<agent>`
/// for a list of agents.
pub(crate) fn column_name(key: UsageKey, agent: Option<&str>) -> String {
    match agent {
        Some(agent) => format!("usage_{key}_{agent}"),
        None => format!("usage_{key}"),
    }
}

/// A usage column's field: `dictionary<uint8, string>` of `y`, `n` and
/// `unknown`, null where there is no preference to have.
pub(crate) fn field(name: &str) -> Arc<Field> {
    let ty = DataType::Dictionary(
        Box::new(DataType::UInt8),
        Box::new(DataType::Utf8),
    );
    Arc::new(Field::new(name, ty, true))
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
    // Per agent and key: the code (0 unknown, 1 y, 2 n) and validity.
    let mut codes = vec![vec![0u8; len]; agents * keys.len()];
    let mut valid = vec![vec![false; len]; agents * keys.len()];
    let mut cache = HostCache::new();
    let mut each = checker.unshared_outcomes();
    let mut prefs = Vec::with_capacity(agents);
    let fail = |e: &dyn std::fmt::Display| {
        crate::error(format!("bundle '{name}', {e}"))
    };
    let mut row = 0;
    for array in chunks {
        let urls = Urls::of(array.as_ref())?;
        for i in 0..array.len() {
            let at = row + i;
            if array.is_null(i) {
                continue;
            }
            let value = urls.value(i);
            let Some((url, path)) = robofilter::url_line(value, value.len())
            else {
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
                    let column = agent * keys.len() + k;
                    codes[column][at] = match prefs.get(key) {
                        Preference::Unknown => 0,
                        Preference::Yes => 1,
                        Preference::No => 2,
                    };
                    valid[column][at] = true;
                }
            }
        }
        row += array.len();
    }
    let values: ArrayRef =
        Arc::new(StringArray::from(vec!["unknown", "y", "n"]));
    Ok(codes
        .into_iter()
        .zip(valid)
        .map(|(c, v)| {
            let keys = UInt8Array::new(c.into(), Some(NullBuffer::from(v)));
            let dict =
                DictionaryArray::<UInt8Type>::try_new(keys, values.clone())
                    .expect("codes are in range");
            Arc::new(dict) as ArrayRef
        })
        .collect())
}
