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
pub fn is_url_type(ty: &DataType) -> bool {
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
enum Values<'c> {
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
        match self {
            Values::Utf8(a) => a.value_at(i),
            Values::LargeUtf8(a) => a.value_at(i),
            Values::Utf8View(a) => a.value_at(i),
            Values::Binary(a) => a.value_at(i),
            Values::LargeBinary(a) => a.value_at(i),
            Values::BinaryView(a) => a.value_at(i),
        }
    }
}

/// A column of URLs: its values, and for a dictionary its keys.
pub struct Urls<'c> {
    values: Values<'c>,
    /// A dictionary's keys, as indexes into `values`.
    keys: Option<Vec<usize>>,
    /// The rows that are null (a dictionary's null keys and values).
    nulls: Option<NullBuffer>,
    len: usize,
}

impl<'c> Urls<'c> {
    /// The URLs of `array`, if it is a string or binary array or a
    /// dictionary of one ([`is_url_type`]).
    pub fn of(array: &'c dyn Array) -> Option<Urls<'c>> {
        if let Some(dict) = array.as_any_dictionary_opt() {
            let values = Values::of(dict.values().as_ref())?;
            let keys = Some(dict.normalized_keys());
            let nulls = array.logical_nulls();
            return Some(Urls { values, keys, nulls, len: array.len() });
        }
        let nulls = array.logical_nulls();
        let values = Values::of(array)?;
        Some(Urls { values, keys: None, nulls, len: array.len() })
    }

    /// How many rows the column has.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the column has no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The rows that are null.
    pub fn nulls(&self) -> Option<&NullBuffer> {
        self.nulls.as_ref()
    }

    /// Row `i`'s URL as `(buf, len)`: the value is `buf[..len]`, and
    /// `buf` goes on into the next values where the array keeps them in
    /// one buffer (the line scan reads ahead in whole blocks there);
    /// `None` where the row is null.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Option<(&'c [u8], usize)> {
        if self.nulls.as_ref().is_some_and(|n| n.is_null(i)) {
            return None;
        }
        Some(match &self.keys {
            Some(keys) => self.values.get(keys[i]),
            None => self.values.get(i),
        })
    }

    /// Row `i`'s URL as [`Urls::get`] gives it, and an empty value where
    /// the row is null (which is not a URL): the shape
    /// [`robofilter::for_each_url_value`] reads a column in.
    #[inline(always)]
    pub fn value(&self, i: usize) -> (&'c [u8], usize) {
        self.get(i).unwrap_or((&[], 0))
    }

    /// `visitor.visit(value)`, where `value(i)` is [`Urls::value`]`(i)`:
    /// for a column without nulls or a dictionary, a function of its
    /// layout alone, so that a loop over the rows compiled for it tests
    /// no null, key or layout per row (which cost the wheel's `check`
    /// about 5 % on one host).
    pub fn visit<V: Visit<'c>>(&self, visitor: V) -> V::Output {
        let no_nulls = self.nulls.as_ref().is_none_or(|n| n.null_count() == 0);
        if self.keys.is_none() && no_nulls {
            macro_rules! each {
                ($a:expr) => {{
                    let a = *$a;
                    visitor.visit(move |i| a.value_at(i))
                }};
            }
            return match &self.values {
                Values::Utf8(a) => each!(a),
                Values::LargeUtf8(a) => each!(a),
                Values::Utf8View(a) => each!(a),
                Values::Binary(a) => each!(a),
                Values::LargeBinary(a) => each!(a),
                Values::BinaryView(a) => each!(a),
            };
        }
        visitor.visit(|i| self.value(i))
    }
}

/// What [`Urls::visit`] gives a column's rows to.
pub trait Visit<'c> {
    /// What the visit returns.
    type Output;

    /// Visits the rows `value(0)`, `value(1)` ... (as [`Urls::value`]
    /// gives them).
    fn visit(
        self,
        value: impl Fn(usize) -> (&'c [u8], usize) + Sync,
    ) -> Self::Output;
}

/// A string or binary array's value `i` as `(buf, len)` (see
/// [`Values::get`]).
trait Value<'c>: Copy + Sync {
    fn value_at(self, i: usize) -> (&'c [u8], usize);
}

macro_rules! offsets_value {
    ($($t:ty),*) => {$(
        impl<'c> Value<'c> for &'c $t {
            #[inline(always)]
            fn value_at(self, i: usize) -> (&'c [u8], usize) {
                let (data, offsets) = (self.value_data(), self.value_offsets());
                let start = offsets[i] as usize;
                (&data[start..], offsets[i + 1] as usize - start)
            }
        }
    )*};
}

offsets_value!(StringArray, LargeStringArray, BinaryArray, LargeBinaryArray);

impl<'c> Value<'c> for &'c StringViewArray {
    #[inline(always)]
    fn value_at(self, i: usize) -> (&'c [u8], usize) {
        let v = self.value(i).as_bytes();
        (v, v.len())
    }
}

impl<'c> Value<'c> for &'c BinaryViewArray {
    #[inline(always)]
    fn value_at(self, i: usize) -> (&'c [u8], usize) {
        let v = self.value(i);
        (v, v.len())
    }
}
