//! A column of URLs read in place: any Arrow string or binary array, or a
//! dictionary of one, each value a slice of the array's buffers (no copy
//! per row).

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, BinaryArray, BinaryViewArray, LargeBinaryArray, LargeStringArray,
    StringArray, StringViewArray,
};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;

/// Whether a column of this type can hold URLs ([`Urls::of`] reads it).
pub(crate) fn is_url_type(ty: &DataType) -> bool {
    match ty {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => true,
        DataType::Dictionary(_, values) => is_url_type(values),
        _ => false,
    }
}

/// The values of a string or binary array, read in place.
pub(crate) enum Values<'c> {
    Utf8(&'c StringArray),
    LargeUtf8(&'c LargeStringArray),
    Utf8View(&'c StringViewArray),
    Binary(&'c BinaryArray),
    LargeBinary(&'c LargeBinaryArray),
    BinaryView(&'c BinaryViewArray),
}

impl<'c> Values<'c> {
    fn of(array: &'c dyn Array) -> Option<Values<'c>> {
        Some(match array.data_type() {
            DataType::Utf8 => Values::Utf8(array.as_string()),
            DataType::LargeUtf8 => Values::LargeUtf8(array.as_string()),
            DataType::Utf8View => Values::Utf8View(array.as_string_view()),
            DataType::Binary => Values::Binary(array.as_binary()),
            DataType::LargeBinary => Values::LargeBinary(array.as_binary()),
            DataType::BinaryView => Values::BinaryView(array.as_binary_view()),
            _ => return None,
        })
    }

    /// Value `i` as `(buf, len)`: the value is `buf[..len]`, and `buf`
    /// goes on into the next values where the array keeps them in one
    /// buffer (the line scan reads ahead in whole blocks there).
    #[inline(always)]
    fn get(&self, i: usize) -> (&'c [u8], usize) {
        macro_rules! offsets {
            ($a:expr) => {{
                let (data, offsets) = ($a.value_data(), $a.value_offsets());
                let start = offsets[i] as usize;
                (&data[start..], offsets[i + 1] as usize - start)
            }};
        }
        match self {
            Values::Utf8(a) => offsets!(a),
            Values::LargeUtf8(a) => offsets!(a),
            Values::Binary(a) => offsets!(a),
            Values::LargeBinary(a) => offsets!(a),
            Values::Utf8View(a) => {
                let v = a.value(i).as_bytes();
                (v, v.len())
            }
            Values::BinaryView(a) => {
                let v = a.value(i);
                (v, v.len())
            }
        }
    }
}

/// A column of URLs: its values, and for a dictionary its keys.
pub(crate) struct Urls<'c> {
    values: Values<'c>,
    /// A dictionary's keys, as indexes into `values`.
    keys: Option<Vec<usize>>,
    /// The rows that are null (a dictionary's null keys and values).
    nulls: Option<NullBuffer>,
}

impl<'c> Urls<'c> {
    /// The URLs of `array`, if it is a string or binary array or a
    /// dictionary of one ([`is_url_type`]).
    pub(crate) fn of(array: &'c dyn Array) -> Option<Urls<'c>> {
        if let Some(dict) = array.as_any_dictionary_opt() {
            let values = Values::of(dict.values().as_ref())?;
            let keys = Some(dict.normalized_keys());
            let nulls = array.logical_nulls();
            return Some(Urls { values, keys, nulls });
        }
        let nulls = array.logical_nulls();
        Some(Urls { values: Values::of(array)?, keys: None, nulls })
    }

    /// The rows that are null.
    pub(crate) fn nulls(&self) -> Option<&NullBuffer> {
        self.nulls.as_ref()
    }

    /// Row `i`'s URL as `(buf, len)` (see [`Values::get`]), `None` where
    /// it is null.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<(&'c [u8], usize)> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        Some(match &self.keys {
            Some(keys) => self.values.get(keys[i]),
            None => self.values.get(i),
        })
    }
}
