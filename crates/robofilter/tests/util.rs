//! Shared test helpers: loaders for the conformance data under
//! `data/conformance/`, skip records, and (feature `cli`) a temporary
//! directory that runs the `robofilter` binary.
//!
//! The conformance data has two sources:
//!
//! * `google-behaviours.jsonl`: the 164 pinned google-dialect examples of
//!   docs/SEMANTICS.md section 5 (`robots_hex` is the body in hex).
//! * `robotstxt-spec-test/correctness/*.textproto`: Google's public
//!   conformance cases, in protobuf text format. The tokenizer below knows
//!   just enough of that format for these files and panics on anything
//!   else, so a case is never dropped silently.

use std::path::{Path, PathBuf};

/// The workspace's root: the nearest directory above this crate that
/// holds the workspace's `Cargo.lock`. The engine's tests and the CLI's
/// share this file, so neither may assume its own crate is the root.
#[allow(dead_code)]
pub fn workspace_dir() -> PathBuf {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    here.ancestors()
        .find(|d| d.join("Cargo.lock").is_file())
        .unwrap_or(here)
        .to_path_buf()
}

/// The workspace's `data/` directory.
#[allow(dead_code)]
pub fn data_dir() -> PathBuf {
    workspace_dir().join("data")
}

/// `../shared` relative to the crate root (or `$ROBOFILTER_SHARED`), when
/// it exists (it holds the large benchmark corpora, which are not part of
/// the repository). A test that finds none calls [`skip`].
#[allow(dead_code)]
pub fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("ROBOFILTER_SHARED")
        .map_or_else(|| workspace_dir().join("../shared"), PathBuf::from);
    if dir.is_dir() { Some(dir) } else { None }
}

/// One line of `google-behaviours.jsonl`.
#[allow(dead_code)]
#[derive(Clone, Debug)]
pub struct GoogleVector {
    /// Behaviour id, e.g. `B37`.
    pub id: String,
    /// The robots.txt body, hex-decoded.
    pub robots: Vec<u8>,
    /// The caller agent; comma-separated when `multi_agent` is set.
    pub agent: String,
    pub url: String,
    pub allowed: bool,
    /// The reference used its multi-agent API: split `agent` at commas.
    pub multi_agent: bool,
}

/// Every vector of `data/conformance/google-behaviours.jsonl`, in file
/// order.
#[allow(dead_code)]
pub fn google_vectors() -> Vec<GoogleVector> {
    let path = data_dir().join("conformance/google-behaviours.jsonl");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let where_ = format!("{}:{}", path.display(), i + 1);
        let v: serde_json::Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{where_}: bad JSON: {e}"));
        let field = |name: &str| -> &serde_json::Value {
            v.get(name)
                .unwrap_or_else(|| panic!("{where_}: missing field {name:?}"))
        };
        let string = |name: &str| -> String {
            field(name)
                .as_str()
                .unwrap_or_else(|| panic!("{where_}: {name:?} not a string"))
                .to_string()
        };
        let allowed = match string("expect").as_str() {
            "allow" => true,
            "disallow" => false,
            other => panic!("{where_}: unknown expect {other:?}"),
        };
        let multi_agent = field("multi_agent")
            .as_bool()
            .unwrap_or_else(|| panic!("{where_}: multi_agent not a bool"));
        out.push(GoogleVector {
            id: string("id"),
            robots: decode_hex(&string("robots_hex"), &where_),
            agent: string("agent"),
            url: string("url"),
            allowed,
            multi_agent,
        });
    }
    assert!(!out.is_empty(), "{}: no vectors", path.display());
    out
}

fn decode_hex(hex: &str, where_: &str) -> Vec<u8> {
    let bytes = hex.as_bytes();
    let pairs = bytes.chunks_exact(2);
    assert!(pairs.remainder().is_empty(), "{where_}: odd-length robots_hex");
    pairs
        .map(|pair| {
            let digit = |b: u8| match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => panic!("{where_}: bad hex digit {:?}", b as char),
            };
            digit(pair[0]) << 4 | digit(pair[1])
        })
        .collect()
}

/// One expectation of a `robotstxt-spec-test` correctness case.
#[allow(dead_code)]
#[derive(Clone, Debug)]
pub struct SpecCase {
    /// File name plus test and expectation index, for messages.
    pub file: String,
    pub robots: Vec<u8>,
    pub url: String,
    pub agent: String,
    pub allowed: bool,
    /// `test_type: GOOGLE_SPECIFIC`.
    pub google_specific: bool,
}

/// Every expectation in
/// `data/conformance/robotstxt-spec-test/correctness/*.textproto`, files in
/// name order.
#[allow(dead_code)]
pub fn spec_cases() -> Vec<SpecCase> {
    let dir = data_dir().join("conformance/robotstxt-spec-test/correctness");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "textproto"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: no .textproto files", dir.display());
    let mut out = Vec::new();
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let root = TextProto::new(&name, &text).parse_document();
        spec_cases_from(&name, &root, &mut out);
    }
    out
}

/// Interprets a parsed file as a `RobotsTxtSpecification`.
fn spec_cases_from(name: &str, root: &[Field], out: &mut Vec<SpecCase>) {
    let mut test_index = 0;
    for field in root {
        if field.name != "tests" {
            panic!("{name}: unknown top-level field {:?}", field.name);
        }
        for test in field.value.messages(name) {
            let where_ = format!("{name} test #{test_index}");
            test_index += 1;
            let mut robots: Option<Vec<u8>> = None;
            let mut expectations: Vec<&[Field]> = Vec::new();
            for f in test {
                match f.name.as_str() {
                    "robotstxt" => {
                        assert!(robots.is_none(), "{where_}: two robotstxt");
                        robots = Some(f.value.string(&where_).to_vec());
                    }
                    "test_expectations" => {
                        expectations.extend(f.value.messages(&where_))
                    }
                    other => panic!("{where_}: unknown field {other:?}"),
                }
            }
            // proto2 `optional bytes`: absent means empty.
            let robots = robots.unwrap_or_default();
            assert!(!expectations.is_empty(), "{where_}: no expectations");
            for (j, exp) in expectations.into_iter().enumerate() {
                let where_ = format!("{where_} expectation #{j}");
                out.push(spec_case_from(&where_, &robots, exp));
            }
        }
    }
}

fn spec_case_from(where_: &str, robots: &[u8], exp: &[Field]) -> SpecCase {
    let mut url = None;
    let mut agent = None;
    let mut allowed = None;
    let mut google_specific = false;
    let utf8 = |v: &Value, what: &str| -> String {
        String::from_utf8(v.string(where_).to_vec())
            .unwrap_or_else(|_| panic!("{where_}: {what} is not UTF-8"))
    };
    for f in exp {
        match f.name.as_str() {
            "testurl" => url = Some(utf8(&f.value, "testurl")),
            "useragent" => agent = Some(utf8(&f.value, "useragent")),
            "expected_outcome" => {
                allowed = Some(match f.value.ident(where_) {
                    "ALLOWED" => true,
                    "DISALLOWED" => false,
                    other => panic!("{where_}: unknown outcome {other:?}"),
                })
            }
            "test_type" => {
                google_specific = match f.value.ident(where_) {
                    "GOOGLE_SPECIFIC" => true,
                    "STANDARD" => false,
                    other => panic!("{where_}: unknown test_type {other:?}"),
                }
            }
            "additional_explanation" => {
                f.value.string(where_);
            }
            other => panic!("{where_}: unknown field {other:?}"),
        }
    }
    SpecCase {
        file: where_.to_string(),
        robots: robots.to_vec(),
        url: url.unwrap_or_default(),
        agent: agent.unwrap_or_default(),
        allowed: allowed
            .unwrap_or_else(|| panic!("{where_}: no expected_outcome")),
        google_specific,
    }
}

/// A `name: value` pair of a text-format message.
struct Field {
    name: String,
    value: Value,
}

/// A text-format value. Lists (`[a, b]`) are flattened by `messages`.
enum Value {
    /// Adjacent string literals, already concatenated and unescaped.
    Str(Vec<u8>),
    /// An enum value such as `ALLOWED`.
    Ident(String),
    Message(Vec<Field>),
    List(Vec<Value>),
}

impl Value {
    fn string(&self, where_: &str) -> &[u8] {
        match self {
            Value::Str(s) => s,
            _ => panic!("{where_}: expected a string literal"),
        }
    }

    fn ident(&self, where_: &str) -> &str {
        match self {
            Value::Ident(s) => s,
            _ => panic!("{where_}: expected an enum identifier"),
        }
    }

    /// A repeated message field, written either as one message or a list.
    fn messages(&self, where_: &str) -> Vec<&[Field]> {
        match self {
            Value::Message(fields) => vec![fields],
            Value::List(items) => items
                .iter()
                .map(|item| match item {
                    Value::Message(fields) => fields.as_slice(),
                    _ => panic!("{where_}: list item is not a message"),
                })
                .collect(),
            _ => panic!("{where_}: expected a message or a list"),
        }
    }
}

/// A recursive-descent reader for the subset of protobuf text format used
/// by the correctness files.
struct TextProto<'a> {
    name: &'a str,
    text: &'a [u8],
    pos: usize,
}

impl<'a> TextProto<'a> {
    fn new(name: &'a str, text: &'a [u8]) -> Self {
        TextProto { name, text, pos: 0 }
    }

    fn fail(&self, what: &str) -> ! {
        let newlines = self.text[..self.pos].iter().filter(|&&b| b == b'\n');
        let line = 1 + newlines.count();
        panic!("{}:{line}: textproto: {what}", self.name)
    }

    /// Skips whitespace and `#` comments; returns the next byte, if any.
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.pos) {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if b == b'#' {
                while self.text.get(self.pos).is_some_and(|&b| b != b'\n') {
                    self.pos += 1;
                }
            } else {
                return Some(b);
            }
        }
        None
    }

    fn expect(&mut self, byte: u8) {
        if self.peek() != Some(byte) {
            self.fail(&format!("expected {:?}", byte as char));
        }
        self.pos += 1;
    }

    fn parse_document(&mut self) -> Vec<Field> {
        let fields = self.parse_fields();
        if self.peek().is_some() {
            self.fail("unexpected text after the last field");
        }
        fields
    }

    /// Fields up to (not including) a `}` or the end of input. Fields may
    /// be separated by `,` or `;`.
    fn parse_fields(&mut self) -> Vec<Field> {
        let mut fields = Vec::new();
        loop {
            match self.peek() {
                None | Some(b'}') => return fields,
                Some(b',' | b';') => self.pos += 1,
                Some(_) => {
                    let name = self.parse_ident();
                    let value = if self.peek() == Some(b':') {
                        self.pos += 1;
                        self.parse_value()
                    } else if self.peek() == Some(b'{') {
                        // `name { ... }` needs no colon.
                        self.parse_value()
                    } else {
                        self.fail(&format!("expected ':' after {name:?}"))
                    };
                    fields.push(Field { name, value });
                }
            }
        }
    }

    fn parse_ident(&mut self) -> String {
        self.peek();
        let start = self.pos;
        while self
            .text
            .get(self.pos)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
        {
            self.pos += 1;
        }
        if start == self.pos {
            self.fail("expected an identifier");
        }
        String::from_utf8(self.text[start..self.pos].to_vec()).unwrap()
    }

    fn parse_value(&mut self) -> Value {
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                let fields = self.parse_fields();
                self.expect(b'}');
                Value::Message(fields)
            }
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    match self.peek() {
                        Some(b']') => {
                            self.pos += 1;
                            return Value::List(items);
                        }
                        Some(b',') if !items.is_empty() => self.pos += 1,
                        Some(_) => items.push(self.parse_value()),
                        None => self.fail("unterminated list"),
                    }
                }
            }
            Some(b'"') => {
                let mut bytes = Vec::new();
                while self.peek() == Some(b'"') {
                    self.parse_string_literal(&mut bytes);
                }
                Value::Str(bytes)
            }
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                Value::Ident(self.parse_ident())
            }
            Some(b) => self.fail(&format!("unexpected {:?}", b as char)),
            None => self.fail("unexpected end of input"),
        }
    }

    /// One `"..."` literal, unescaped and appended to `out`.
    fn parse_string_literal(&mut self, out: &mut Vec<u8>) {
        self.expect(b'"');
        loop {
            let Some(&b) = self.text.get(self.pos) else {
                self.fail("unterminated string literal")
            };
            self.pos += 1;
            match b {
                b'"' => return,
                b'\n' => self.fail("newline inside a string literal"),
                b'\\' => self.parse_escape(out),
                _ => out.push(b),
            }
        }
    }

    fn parse_escape(&mut self, out: &mut Vec<u8>) {
        let Some(&b) = self.text.get(self.pos) else {
            self.fail("unterminated escape")
        };
        self.pos += 1;
        let simple = match b {
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'f' => Some(0x0c),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'"' | b'\'' | b'\\' | b'?' => Some(b),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
        } else if b == b'x' || b == b'X' {
            let mut value: u32 = 0;
            let mut digits = 0;
            while digits < 2 {
                let Some(d) = self
                    .text
                    .get(self.pos)
                    .and_then(|&c| (c as char).to_digit(16))
                else {
                    break;
                };
                value = value * 16 + d;
                digits += 1;
                self.pos += 1;
            }
            if digits == 0 {
                self.fail("\\x without hex digits");
            }
            out.push(value as u8);
        } else if (b'0'..=b'7').contains(&b) {
            let mut value = u32::from(b - b'0');
            let mut digits = 1;
            while digits < 3 {
                match self.text.get(self.pos) {
                    Some(&c @ b'0'..=b'7') => {
                        value = value * 8 + u32::from(c - b'0');
                        digits += 1;
                        self.pos += 1;
                    }
                    _ => break,
                }
            }
            if value > 0xff {
                self.fail("octal escape above \\377");
            }
            out.push(value as u8);
        } else {
            self.fail(&format!("unknown escape \\{}", b as char));
        }
    }
}

/// Where [`skip`] records skipped tests: `$ROBOFILTER_TEST_SKIPS`, or
/// `test-skips.txt` in the target directory, which `tools/skips` prints.
#[allow(dead_code)]
pub fn skips_file() -> PathBuf {
    std::env::var_os("ROBOFILTER_TEST_SKIPS").map_or_else(
        || {
            // CARGO_TARGET_TMPDIR is `<target>/tmp`, also under a custom
            // CARGO_TARGET_DIR.
            let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
            tmp.parent().unwrap_or(tmp).join("test-skips.txt")
        },
        PathBuf::from,
    )
}

/// Reports that `test` did not run its checks, and why. libtest hides the
/// output of passing tests, so besides stderr the line is appended to
/// [`skips_file`], where `tools/skips` shows it after the run.
#[allow(dead_code)]
pub fn skip(test: &str, reason: &str) {
    use std::io::Write;
    let line = format!("{test}: {reason}\n");
    eprint!("SKIPPED: {line}");
    let path = skips_file();
    // One write per line, in append mode: concurrent tests do not
    // interleave within a line.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        panic!("{test} skipped ({reason}), and {}: {e}", path.display());
    }
}
