//! Arrow arrays in and out of the wheel: URL columns read in place (robofilter-arrow's `Urls`: every string and binary layout and dictionaries of them), decided on rayon's threads into verdict columns.

use std::ops::ControlFlow;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::UInt8Type;
use arrow_array::{Array, ArrayRef, BinaryArray};
use arrow_buffer::NullBuffer;
use arrow_schema::Field;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use pyo3_arrow::{PyArray, PyChunkedArray};
use rayon::prelude::*;
use robofilter::{
    HostCache, MemberError, Outcome, UrlChecker, for_each_url_value,
};
use robofilter_arrow::{Urls, Visit, verdict_array, verdict_code};

/// The URLs of `array`, read in place ([`robofilter_arrow::Urls`]), or a
/// `TypeError` naming the layouts a URL column may have.
pub(crate) fn urls_of(array: &dyn Array) -> PyResult<Urls<'_>> {
    Urls::of(array).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "URLs must be an Arrow string or binary array (string, \
             large_string, string_view, binary, large_binary, binary_view, \
             or a dictionary of one), not {}",
            array.data_type()
        ))
    })
}

/// Fewest URLs per thread: below this a thread costs more than it saves.
pub(crate) const MIN_PER_THREAD: usize = 16 << 10;

/// Decides row `i` for every agent of `checker` into `out[agent][i]`,
/// for every `i`, where `line(i)` is `(buf, len)`: the row's URL is
/// `buf[..len]` and `buf` may go on past it (a null row is empty, not a
/// URL; the caller masks it). Each URL is decided once for all agents
/// (one host lookup, one path). Up to `threads` threads of
/// rayon's pool each take one contiguous range of URLs (so that each
/// keeps its own host cache over a run of URLs).
fn decide<'u>(
    checker: &UrlChecker<'_>,
    out: &mut [Vec<u8>],
    threads: usize,
    line: impl Fn(usize) -> (&'u [u8], usize) + Sync,
) -> Result<(), MemberError> {
    let agents = checker.agents().len();
    let len = out.first().map_or(0, Vec::len);
    // `part[agent]` is that agent's codes for URLs `base..`.
    let run =
        |base: usize, part: &mut [&mut [u8]]| -> Result<(), MemberError> {
            // Written for every URL while other threads write theirs:
            // buffers that share no cache line with another thread's.
            let mut cache = HostCache::unshared();
            let mut each = checker.unshared_outcomes();
            let n = part.first().map_or(0, |p| p.len());
            // The loop inside the scan's vector pass, so that the walk is
            // inlined into it, as in the CLI's loop over lines.
            let each_url = for_each_url_value(
                n,
                |k| line(base + k),
                #[inline(always)]
                |k, url| {
                    match url {
                        Some((url, path)) => {
                            let decided = checker
                                .decide_url(url, path, &mut cache, &mut each);
                            if let Err(e) = decided {
                                return ControlFlow::Break(e);
                            }
                        }
                        None => each.fill(Outcome::Invalid),
                    }
                    for (column, outcome) in part.iter_mut().zip(&each) {
                        column[k] = verdict_code(*outcome);
                    }
                    ControlFlow::Continue(())
                },
            );
            match each_url {
                ControlFlow::Break(e) => Err(e),
                ControlFlow::Continue(()) => Ok(()),
            }
        };
    let parts = threads.min(len / MIN_PER_THREAD).max(1);
    if parts == 1 {
        let mut whole: Vec<&mut [u8]> =
            out.iter_mut().map(|c| &mut c[..]).collect();
        return run(0, &mut whole);
    }
    let part_len = len.div_ceil(parts);
    // Each part: its slice of every agent's column.
    let mut split: Vec<Vec<&mut [u8]>> =
        (0..parts).map(|_| Vec::with_capacity(agents)).collect();
    for column in out.iter_mut() {
        for (p, chunk) in column.chunks_mut(part_len).enumerate() {
            split[p].push(chunk);
        }
    }
    split
        .into_par_iter()
        .enumerate()
        .try_for_each(|(p, mut part)| run(p * part_len, &mut part))
}

/// The verdicts of one Arrow array of URLs, one array per agent of
/// `checker`; `name` names the rules in messages.
pub(crate) fn verdicts(
    checker: &UrlChecker<'_>,
    array: &dyn Array,
    threads: usize,
    name: &str,
) -> PyResult<Vec<ArrayRef>> {
    let urls = urls_of(array)?;
    let agents = checker.agents().len();
    let mut codes = vec![vec![0u8; array.len()]; agents];
    urls.visit(Decide { checker, out: &mut codes, threads })
        .map_err(|e| crate::error(format!("bundle '{name}', {e}")))?;
    let nulls = urls.nulls();
    Ok(codes.into_iter().map(|c| verdict_array(c, nulls.cloned())).collect())
}

/// [`decide`] of a column's rows, each layout's loop compiled apart
/// ([`Urls::visit`]).
struct Decide<'x, 'a> {
    checker: &'x UrlChecker<'a>,
    out: &'x mut [Vec<u8>],
    threads: usize,
}

impl<'c> Visit<'c> for Decide<'_, '_> {
    type Output = Result<(), MemberError>;

    fn visit(
        self,
        value: impl Fn(usize) -> (&'c [u8], usize) + Sync,
    ) -> Result<(), MemberError> {
        decide(self.checker, self.out, self.threads, value)
    }
}

/// A verdict column's field (see [`robofilter_arrow::verdict_field`]).
pub(crate) fn verdict_field(name: &str) -> Arc<Field> {
    Arc::new(robofilter_arrow::verdict_field(name))
}

/// `threads` as given to Python: 0 means every core.
pub(crate) fn thread_count(threads: usize) -> usize {
    match threads {
        0 => rayon::current_num_threads(),
        n => n,
    }
}

/// The URLs of a bulk call as Arrow arrays: an array (read in place), a
/// chunked array (its chunks), or a sequence of `str`/`bytes`/`None`.
pub(crate) fn url_chunks(urls: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    // A lone `str` or `bytes` is one URL, not a sequence of characters.
    if urls.is_instance_of::<PyString>()
        || urls.is_instance_of::<PyBytes>()
        || urls.is_instance_of::<pyo3::types::PyByteArray>()
    {
        return Err(PyTypeError::new_err(format!(
            "expected many URLs (an Arrow array or a list), not one {}: for \
             one URL use verdict(url, agent), or pass [url]",
            urls.get_type().name()?
        )));
    }
    Ok(if urls.hasattr("__arrow_c_array__")? {
        vec![urls.extract::<PyArray>()?.into_inner().0]
    } else if urls.hasattr("__arrow_c_stream__")? {
        urls.extract::<PyChunkedArray>()?.into_inner().0
    } else {
        vec![Arc::new(sequence_urls(urls)?)]
    })
}

/// URLs given as a Python list (or other sequence) of `str`, `bytes` or
/// `None`, copied into one binary array.
pub(crate) fn sequence_urls(urls: &Bound<'_, PyAny>) -> PyResult<BinaryArray> {
    let mut values: Vec<Option<Vec<u8>>> = Vec::new();
    for item in urls.try_iter()? {
        let item = item?;
        if item.is_none() {
            values.push(None);
        } else if let Ok(s) = item.cast::<PyString>() {
            values.push(Some(s.to_str()?.as_bytes().to_vec()));
        } else if let Ok(b) = item.cast::<PyBytes>() {
            values.push(Some(b.as_bytes().to_vec()));
        } else {
            return Err(PyTypeError::new_err(format!(
                "a URL must be str, bytes or None, not {}",
                item.get_type().name()?
            )));
        }
    }
    Ok(BinaryArray::from_iter(values))
}

/// Concatenates verdict arrays (one per chunk of a chunked array).
pub(crate) fn concat_verdicts(arrays: &[&dyn Array]) -> ArrayRef {
    let mut codes: Vec<u8> = Vec::new();
    let mut valid: Vec<bool> = Vec::new();
    let mut any_null = false;
    for a in arrays {
        let d = a.as_dictionary::<UInt8Type>();
        codes.extend_from_slice(d.keys().values());
        match d.keys().nulls() {
            Some(n) => {
                any_null = true;
                valid.extend(n.iter());
            }
            None => valid.extend(std::iter::repeat_n(true, d.len())),
        }
    }
    verdict_array(codes, any_null.then(|| NullBuffer::from(valid)))
}
