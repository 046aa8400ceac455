//! Arrow arrays in and out of the wheel: URL columns read in place (every string and binary layout), decided on rayon's threads into verdict columns (`dictionary<uint8, string>`).

use std::ops::ControlFlow;
use std::sync::Arc;

use arrow_array::types::UInt8Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, DictionaryArray,
    LargeBinaryArray, LargeStringArray, StringArray, StringViewArray,
    UInt8Array,
};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use pyo3_arrow::{PyArray, PyChunkedArray};
use rayon::prelude::*;
use robofilter::{
    HostCache, MemberError, Outcome, UrlChecker, for_each_url_value,
};

/// The verdict names, indexed by the codes in verdict arrays.
pub(crate) const VERDICTS: [&str; 4] =
    ["allow", "disallow", "unknown", "invalid"];

/// The code of an outcome in verdict arrays (an index into [`VERDICTS`]).
pub(crate) fn code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Allow => 0,
        Outcome::Disallow => 1,
        Outcome::Unknown => 2,
        Outcome::Invalid => 3,
    }
}

/// A column of URLs, read in place.
pub(crate) enum Urls<'c> {
    Utf8(&'c StringArray),
    LargeUtf8(&'c LargeStringArray),
    Utf8View(&'c StringViewArray),
    Binary(&'c BinaryArray),
    LargeBinary(&'c LargeBinaryArray),
    BinaryView(&'c BinaryViewArray),
}

impl<'c> Urls<'c> {
    /// Value `i`'s octets.
    pub(crate) fn value(&self, i: usize) -> &'c [u8] {
        match self {
            Urls::Utf8(a) => a.value(i).as_bytes(),
            Urls::LargeUtf8(a) => a.value(i).as_bytes(),
            Urls::Utf8View(a) => a.value(i).as_bytes(),
            Urls::Binary(a) => a.value(i),
            Urls::LargeBinary(a) => a.value(i),
            Urls::BinaryView(a) => a.value(i),
        }
    }

    pub(crate) fn of(array: &'c dyn Array) -> PyResult<Urls<'c>> {
        let any = array.as_any();
        let urls = match array.data_type() {
            DataType::Utf8 => any.downcast_ref().map(Urls::Utf8),
            DataType::LargeUtf8 => any.downcast_ref().map(Urls::LargeUtf8),
            DataType::Utf8View => any.downcast_ref().map(Urls::Utf8View),
            DataType::Binary => any.downcast_ref().map(Urls::Binary),
            DataType::LargeBinary => any.downcast_ref().map(Urls::LargeBinary),
            DataType::BinaryView => any.downcast_ref().map(Urls::BinaryView),
            _ => None,
        };
        urls.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "URLs must be an Arrow string or binary array (string, \
                 large_string, string_view, binary, large_binary, \
                 binary_view), not {}",
                array.data_type()
            ))
        })
    }

    /// Decides every URL into `out`, one column per agent of `checker`
    /// (one code per URL; nulls get a code too, masked by the validity
    /// copied from the input).
    pub(crate) fn decide(
        &self,
        checker: &UrlChecker<'_>,
        out: &mut [Vec<u8>],
        threads: usize,
    ) -> Result<(), MemberError> {
        // Offset arrays: a value goes on into the next ones, which the
        // line scan may read ahead in (as it does in the CLI's chunks).
        macro_rules! offsets {
            ($a:expr) => {{
                let (data, offsets) = ($a.value_data(), $a.value_offsets());
                decide(checker, out, threads, |i| {
                    let start = offsets[i] as usize;
                    (&data[start..], offsets[i + 1] as usize - start)
                })
            }};
        }
        match self {
            Urls::Utf8(a) => offsets!(a),
            Urls::LargeUtf8(a) => offsets!(a),
            Urls::Binary(a) => offsets!(a),
            Urls::LargeBinary(a) => offsets!(a),
            Urls::Utf8View(a) => decide(checker, out, threads, |i| {
                let v = a.value(i).as_bytes();
                (v, v.len())
            }),
            Urls::BinaryView(a) => decide(checker, out, threads, |i| {
                let v = a.value(i);
                (v, v.len())
            }),
        }
    }
}

/// Fewest URLs per thread: below this a thread costs more than it saves.
pub(crate) const MIN_PER_THREAD: usize = 16 << 10;

/// Decides line `i` for every agent of `checker` into `out[agent][i]`,
/// for every `i`, where `line(i)` is `(buf, len)`: the line is
/// `buf[..len]` and `buf` may go on past it. Each URL is decided once for
/// all agents (one host lookup, one path). Up to `threads` threads of
/// rayon's pool each take one contiguous range of URLs (so that each
/// keeps its own host cache over a run of URLs).
pub(crate) fn decide<'u>(
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
                        column[k] = code(*outcome);
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
) -> PyResult<Vec<DictionaryArray<UInt8Type>>> {
    let urls = Urls::of(array)?;
    let agents = checker.agents().len();
    let mut codes = vec![vec![0u8; array.len()]; agents];
    urls.decide(checker, &mut codes, threads)
        .map_err(|e| crate::error(format!("bundle '{name}', {e}")))?;
    let nulls: Option<NullBuffer> = array.logical_nulls();
    let values: ArrayRef = Arc::new(StringArray::from(VERDICTS.to_vec()));
    Ok(codes
        .into_iter()
        .map(|c| {
            let keys = UInt8Array::new(c.into(), nulls.clone());
            DictionaryArray::try_new(keys, values.clone())
                .expect("codes are in range")
        })
        .collect())
}

/// A verdict column's field: `dictionary<uint8, string>`, nullable.
pub(crate) fn verdict_field(name: &str) -> Arc<Field> {
    let ty = DataType::Dictionary(
        Box::new(DataType::UInt8),
        Box::new(DataType::Utf8),
    );
    Arc::new(Field::new(name, ty, true))
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
        let d = a
            .as_any()
            .downcast_ref::<DictionaryArray<UInt8Type>>()
            .expect("verdict arrays");
        codes.extend_from_slice(d.keys().values());
        match d.keys().nulls() {
            Some(n) => {
                any_null = true;
                valid.extend(n.iter());
            }
            None => valid.extend(std::iter::repeat_n(true, d.len())),
        }
    }
    let nulls = any_null.then(|| NullBuffer::from(valid));
    let keys = UInt8Array::new(codes.into(), nulls);
    let values: ArrayRef = Arc::new(StringArray::from(VERDICTS.to_vec()));
    Arc::new(
        DictionaryArray::try_new(keys, values).expect("codes are in range"),
    )
}
