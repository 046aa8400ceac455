//! robofilter's Arrow columns: URL columns read in place, and the verdict and preference columns that every front end writes (the wheel's `Rules.check`, `filter`'s Parquet outputs), in one place so that their names, types and codes cannot drift apart.
//!
//! - [`Urls`] reads a column of URLs in place: `string`, `large_string`,
//!   `string_view`, `binary`, `large_binary`, `binary_view`, or a
//!   dictionary of one ([`is_url_type`]).
//! - A verdict column is `dictionary<uint8, string>` over [`VERDICTS`],
//!   null where the URL is null, named `verdict` for one agent and
//!   `verdict_<agent>` for several ([`verdict_field`], [`verdict_array`]).
//! - A preference column (`--usage`, `usage=`) is
//!   `dictionary<uint8, string>` over [`PREFERENCES`], null where there is
//!   no preference to have, named by [`usage_column_name`].
//!
//! ```
//! use arrow_array::{Array, StringArray};
//! use robofilter::Outcome;
//!
//! let urls = StringArray::from(vec![Some("http://x/a"), None]);
//! let column = robofilter_arrow::Urls::of(&urls).unwrap();
//! assert_eq!(column.get(1), None);
//! let codes = vec![robofilter_arrow::verdict_code(Outcome::Allow), 0];
//! let verdicts = robofilter_arrow::verdict_array(codes, column.nulls().cloned());
//! assert_eq!((verdicts.len(), verdicts.null_count()), (2, 1));
//! ```

mod urls;

use std::sync::Arc;

use arrow_array::types::UInt8Type;
use arrow_array::{ArrayRef, DictionaryArray, StringArray, UInt8Array};
use arrow_buffer::NullBuffer;
use arrow_schema::{DataType, Field};
use robofilter::{Outcome, Preference, UsageKey};

pub use crate::urls::{Urls, Visit, is_url_type};

/// The verdict names, indexed by the codes of verdict columns
/// ([`verdict_code`]).
pub const VERDICTS: [&str; 4] = ["allow", "disallow", "unknown", "invalid"];

/// An outcome's code in a verdict column (its index in [`VERDICTS`]).
#[inline(always)]
pub fn verdict_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Allow => 0,
        Outcome::Disallow => 1,
        Outcome::Unknown => 2,
        Outcome::Invalid => 3,
    }
}

/// A verdict or preference column's field: `dictionary<uint8, string>`,
/// nullable.
fn dictionary_field(name: &str) -> Field {
    let ty = DataType::Dictionary(
        Box::new(DataType::UInt8),
        Box::new(DataType::Utf8),
    );
    Field::new(name, ty, true)
}

/// A verdict column's field (`verdict`, `verdict_<agent>`).
pub fn verdict_field(name: &str) -> Field {
    dictionary_field(name)
}

/// A verdict column of `codes` ([`verdict_code`]), null where `nulls`
/// says (the URL column's nulls).
///
/// # Panics
///
/// If a code is not below `VERDICTS.len()`, or `nulls` is not as long as
/// `codes`.
pub fn verdict_array(codes: Vec<u8>, nulls: Option<NullBuffer>) -> ArrayRef {
    dictionary_array(codes, nulls, &VERDICTS)
}

/// The values of preference columns, indexed by their codes
/// ([`preference_code`]).
pub const PREFERENCES: [&str; 3] = ["unknown", "y", "n"];

/// A preference's code in a preference column (its index in
/// [`PREFERENCES`]).
#[inline(always)]
pub fn preference_code(p: Preference) -> u8 {
    match p {
        Preference::Unknown => 0,
        Preference::Yes => 1,
        Preference::No => 2,
    }
}

/// A preference column's name: `usage_<key>` for one agent
/// (`agent: None`), `usage_<key>_<agent>` for each of several.
pub fn usage_column_name(key: UsageKey, agent: Option<&str>) -> String {
    match agent {
        Some(agent) => format!("usage_{key}_{agent}"),
        None => format!("usage_{key}"),
    }
}

/// A preference column's field.
pub fn usage_field(name: &str) -> Field {
    dictionary_field(name)
}

/// A preference column of `codes` ([`preference_code`], `None` where
/// there is no preference to have, which is null).
///
/// # Panics
///
/// If a code is not below `PREFERENCES.len()`.
pub fn usage_array(codes: &[Option<u8>]) -> ArrayRef {
    let nulls = NullBuffer::from_iter(codes.iter().map(Option::is_some));
    let codes = codes.iter().map(|c| c.unwrap_or(0)).collect();
    dictionary_array(codes, Some(nulls), &PREFERENCES)
}

/// A `dictionary<uint8, string>` column of `codes` into `values`.
fn dictionary_array(
    codes: Vec<u8>,
    nulls: Option<NullBuffer>,
    values: &[&str],
) -> ArrayRef {
    let keys = UInt8Array::new(codes.into(), nulls);
    let values: ArrayRef = Arc::new(StringArray::from(values.to_vec()));
    let column = DictionaryArray::<UInt8Type>::try_new(keys, values)
        .expect("codes are in range");
    Arc::new(column)
}

#[cfg(test)]
mod tests;
