//! Tests: every URL column layout read as the same values, sliced or not, and the verdict and preference columns' codes, names and nulls.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Int32Type, UInt8Type};
use arrow_array::{
    Array, ArrayRef, BinaryArray, BinaryViewArray, DictionaryArray,
    Int64Array, LargeBinaryArray, LargeStringArray, StringArray,
    StringViewArray,
};
use robofilter::{Outcome, Preference, UsageKey};

use super::*;

/// Values with nulls, a repeat (for the dictionary) and one longer than
/// a view's 12 inline octets.
const VALUES: [Option<&str>; 6] = [
    Some("http://a.example/x"),
    None,
    Some("https://b.example/a/long/path?q=1#f"),
    Some("http://a.example/x"),
    Some(""),
    Some("not a url"),
];

/// The column in every layout a URL column may have.
fn layouts() -> Vec<ArrayRef> {
    let bytes: Vec<Option<&[u8]>> =
        VALUES.iter().map(|v| v.map(str::as_bytes)).collect();
    vec![
        Arc::new(StringArray::from(VALUES.to_vec())),
        Arc::new(LargeStringArray::from(VALUES.to_vec())),
        Arc::new(StringViewArray::from(VALUES.to_vec())),
        Arc::new(BinaryArray::from(bytes.clone())),
        Arc::new(LargeBinaryArray::from(bytes.clone())),
        Arc::new(BinaryViewArray::from(bytes)),
        Arc::new(VALUES.into_iter().collect::<DictionaryArray<Int32Type>>()),
    ]
}

/// What [`Urls::get`] gave for every row, as owned octets.
fn read(urls: &Urls<'_>) -> Vec<Option<Vec<u8>>> {
    (0..urls.len())
        .map(|i| urls.get(i).map(|(buf, len)| buf[..len].to_vec()))
        .collect()
}

#[test]
fn every_layout_reads_the_same_values() {
    let want: Vec<Option<Vec<u8>>> =
        VALUES.iter().map(|v| v.map(|v| v.as_bytes().to_vec())).collect();
    for array in layouts() {
        let ty = array.data_type().clone();
        assert!(is_url_type(&ty), "{ty}");
        let urls = Urls::of(array.as_ref()).expect("a URL column");
        assert_eq!(read(&urls), want, "{ty}");
        assert_eq!(urls.nulls().map(|n| n.null_count()), Some(1), "{ty}");
        assert_eq!(urls.value(1), (&[][..], 0), "{ty}");
        // A slice starts inside the buffers: its rows are its own.
        let slice = array.slice(2, 3);
        let urls = Urls::of(slice.as_ref()).expect("a URL column");
        assert_eq!(read(&urls), want[2..5], "{ty} sliced");
    }
}

/// Collects what [`Urls::visit`] gives for `n` rows.
struct Collect(usize);

impl<'c> Visit<'c> for Collect {
    type Output = Vec<Vec<u8>>;

    fn visit(
        self,
        value: impl Fn(usize) -> (&'c [u8], usize) + Sync,
    ) -> Vec<Vec<u8>> {
        (0..self.0).map(value).map(|(b, n)| b[..n].to_vec()).collect()
    }
}

#[test]
fn a_visit_gives_every_row_as_value_does() {
    let no_nulls: Vec<Option<&str>> =
        VALUES.iter().map(|v| Some(v.unwrap_or("x"))).collect();
    let bytes: Vec<Option<&[u8]>> =
        no_nulls.iter().map(|v| v.map(str::as_bytes)).collect();
    let mut arrays: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(no_nulls.clone())),
        Arc::new(LargeStringArray::from(no_nulls.clone())),
        Arc::new(StringViewArray::from(no_nulls.clone())),
        Arc::new(BinaryArray::from(bytes.clone())),
        Arc::new(LargeBinaryArray::from(bytes.clone())),
        Arc::new(BinaryViewArray::from(bytes)),
    ];
    arrays.extend(layouts());
    for array in arrays {
        // A slice past the null keeps a validity buffer with no null in it.
        for array in [array.clone(), array.slice(1, 4), array.slice(2, 3)] {
            let urls = Urls::of(array.as_ref()).expect("a URL column");
            let want: Vec<Vec<u8>> = (0..urls.len())
                .map(|i| urls.value(i))
                .map(|(b, n)| b[..n].to_vec())
                .collect();
            assert_eq!(urls.visit(Collect(urls.len())), want);
        }
    }
}

#[test]
fn other_columns_are_not_urls() {
    let numbers = Int64Array::from(vec![1, 2]);
    assert!(!is_url_type(numbers.data_type()));
    assert!(Urls::of(&numbers).is_none());
    let keys = arrow_array::Int32Array::from(vec![0, 1]);
    let dict = DictionaryArray::<Int32Type>::try_new(keys, Arc::new(numbers))
        .expect("a dictionary");
    assert!(!is_url_type(dict.data_type()));
    assert!(Urls::of(&dict).is_none());
}

#[test]
fn verdict_columns_name_their_codes() {
    let outcomes = [
        Outcome::Allow,
        Outcome::Disallow,
        Outcome::Unknown,
        Outcome::Invalid,
    ];
    let codes = outcomes.iter().map(|&o| verdict_code(o)).collect();
    let nulls = Some(NullBuffer::from(vec![true, true, false, true]));
    let column = verdict_array(codes, nulls);
    assert_eq!(column.data_type(), verdict_field("v").data_type());
    let column = column.as_dictionary::<UInt8Type>();
    let names: Vec<Option<&str>> = column
        .downcast_dict::<StringArray>()
        .expect("string values")
        .into_iter()
        .collect();
    assert_eq!(
        names,
        [Some("allow"), Some("disallow"), None, Some("invalid")]
    );
    for o in outcomes {
        assert_eq!(VERDICTS[usize::from(verdict_code(o))], o.as_str());
    }
}

#[test]
fn preference_columns_name_their_codes() {
    let prefs = [Preference::Unknown, Preference::Yes, Preference::No];
    let mut codes: Vec<Option<u8>> =
        prefs.iter().map(|&p| Some(preference_code(p))).collect();
    codes.push(None);
    let column = usage_array(&codes);
    assert_eq!(column.data_type(), usage_field("u").data_type());
    let names: Vec<Option<&str>> = column
        .as_dictionary::<UInt8Type>()
        .downcast_dict::<StringArray>()
        .expect("string values")
        .into_iter()
        .collect();
    assert_eq!(names, [Some("unknown"), Some("y"), Some("n"), None]);
    assert_eq!(usage_column_name(UsageKey::TrainAi, None), "usage_train-ai");
    assert_eq!(
        usage_column_name(UsageKey::Search, Some("GPTBot")),
        "usage_search_GPTBot"
    );
}
