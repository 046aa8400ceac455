//! Python `str` and `bytes` arguments as the octets the engine reads.

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// A `str` (as UTF-8) or `bytes` argument.
pub(crate) fn text_or_bytes<'b>(
    value: &'b Bound<'_, PyAny>,
    what: &str,
) -> PyResult<Cow<'b, [u8]>> {
    if let Ok(s) = value.cast::<PyString>() {
        match s.to_str() {
            Ok(text) => Ok(Cow::Borrowed(text.as_bytes())),
            // Lone surrogates: Python's stand-ins for undecodable octets
            // (`os.fsdecode`), given back as those octets.
            Err(_) => {
                let encoded =
                    s.call_method1("encode", ("utf-8", "surrogateescape"))?;
                let encoded = encoded.cast::<PyBytes>()?;
                Ok(Cow::Owned(encoded.as_bytes().to_vec()))
            }
        }
    } else if let Ok(b) = value.cast::<PyBytes>() {
        Ok(Cow::Borrowed(b.as_bytes()))
    } else {
        Err(PyTypeError::new_err(format!(
            "{what} must be str or bytes, not {}",
            value.get_type().name()?
        )))
    }
}
