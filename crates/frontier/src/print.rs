//! The printers: verdict columns, a line's text, `--explain` reasons and
//! `--json` objects.

use std::borrow::Cow;

use robofilter::{Outcome, Preferences, Reason, Target, UsageKey, write_why};

/// Writes `o`'s name ([`Outcome::as_str`]) and a TAB, a copy of known
/// length per outcome (so a few stores rather than a call to `memcpy`).
#[inline(always)]
pub fn write_column(out: &mut Vec<u8>, o: Outcome) {
    match o {
        Outcome::Allow => out.extend_from_slice(b"allow\t"),
        Outcome::Disallow => out.extend_from_slice(b"disallow\t"),
        Outcome::Unknown => out.extend_from_slice(b"unknown\t"),
        Outcome::Invalid => out.extend_from_slice(b"invalid\t"),
    }
}

/// Writes agent by agent, key by key, a line's `--usage` columns: `y`,
/// `n` or `unknown`, or `-` where there is no preference to have (each
/// followed by a TAB).
pub fn write_usage_columns(
    out: &mut Vec<u8>,
    keys: &[UsageKey],
    each: &[Option<Preferences>],
) {
    for prefs in each {
        for &key in keys {
            let text = prefs.map_or("-", |p| p.get(key).as_str());
            out.extend_from_slice(text.as_bytes());
            out.push(b'\t');
        }
    }
}

/// One agent's `--usage` preferences in JSON: an object with one key per
/// usage key asked for, `"y"`, `"n"`, `"unknown"`, or null where there is
/// no preference to have.
pub(crate) struct UsageJson<'k> {
    keys: &'k [UsageKey],
    prefs: Option<Preferences>,
}

impl serde::Serialize for UsageJson<'_> {
    fn serialize<S: serde::Serializer>(
        &self,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(self.keys.len()))?;
        for &key in self.keys {
            let value = self.prefs.map(|p| p.get(key).as_str());
            map.serialize_entry(key.as_str(), &value)?;
        }
        map.end()
    }
}

/// A line's `--usage` preferences, per agent in the checker's order
/// (`None`: none to have), and the keys asked for.
#[derive(Clone, Copy)]
pub struct Usage<'k> {
    /// The keys, in the order asked for.
    pub keys: &'k [UsageKey],
    /// Per agent.
    pub each: &'k [Option<Preferences>],
}

/// Appends `buf[..len]`, a line's text (`buf` runs on to its chunk's
/// end), to `out`. A line shorter than 128 octets that has 128 octets of
/// the chunk from its start is copied as those 128 octets and cut back: a
/// copy of known length is a few vector moves inline, where `memcpy` of
/// the line's length was a call that branched on the length. 2.4 % less
/// CPU time on one host with `--emit all`, although it executes more
/// instructions (the lab notes in docs/records).
#[inline(always)]
pub(crate) fn push_text(out: &mut Vec<u8>, buf: &[u8], len: usize) {
    match buf.first_chunk::<128>() {
        Some(line) if len < 128 => {
            let at = out.len();
            out.extend_from_slice(line);
            out.truncate(at + len);
        }
        _ => out.extend_from_slice(&buf[..len]),
    }
}

/// The URL part of a line (up to its first TAB) and its fields (after
/// that TAB), if it has one.
pub(crate) fn split_fields(text: &[u8]) -> (&[u8], Option<&[u8]>) {
    match memchr::memchr(b'\t', text) {
        Some(k) => (&text[..k], Some(&text[k + 1..])),
        None => (text, None),
    }
}

/// Text for JSON: a string if it is UTF-8, else `None` (then base64).
pub(crate) fn utf8_or_base64(bytes: &[u8]) -> (Option<&str>, Option<String>) {
    use base64::Engine as _;
    match std::str::from_utf8(bytes) {
        Ok(s) => (Some(s), None),
        Err(_) => {
            let b64 = base64::engine::general_purpose::STANDARD;
            (None, Some(b64.encode(bytes)))
        }
    }
}

/// Why one agent got its outcome, in JSON: `reason` in words, and the
/// deciding rule's `line` and `pattern` (null when no rule decided).
#[derive(Clone, serde::Serialize)]
pub(crate) struct Why<'t> {
    pub(crate) reason: Cow<'t, str>,
    pub(crate) line: Option<u32>,
    pub(crate) pattern: Option<Cow<'t, str>>,
}

impl<'t> Why<'t> {
    pub(crate) fn new(
        why: &'t [u8],
        rule: Option<(u32, &'t [u8])>,
    ) -> Why<'t> {
        Why {
            reason: String::from_utf8_lossy(why),
            line: rule.map(|r| r.0),
            pattern: rule.map(|r| String::from_utf8_lossy(r.1)),
        }
    }
}

/// A JSON object with one key per agent, in the order given.
pub(crate) struct PerAgent<'t, T> {
    pub(crate) agents: &'t [String],
    pub(crate) values: Vec<T>,
}

impl<T: serde::Serialize> serde::Serialize for PerAgent<'_, T> {
    fn serialize<S: serde::Serializer>(
        &self,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = s.serialize_map(Some(self.values.len()))?;
        for (agent, value) in self.agents.iter().zip(&self.values) {
            map.serialize_entry(agent, value)?;
        }
        map.end()
    }
}

/// One line of `--json` output. Fields are written in this order; the
/// `Option<Option<_>>` ones are left out when `None` and `null` when
/// `Some(None)`.
#[derive(serde::Serialize)]
pub(crate) struct JsonLine<'t> {
    /// The URL (the line up to its first TAB), if it is UTF-8 (`null`: a
    /// line not kept whole).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<Option<&'t str>>,
    /// The URL in base64, if it is not UTF-8 (JSON strings cannot carry
    /// arbitrary octets; the bytes stay exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    url_base64: Option<String>,
    /// The outcome for all agents together.
    pub(crate) verdict: &'static str,
    /// Per agent, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) verdicts: Option<PerAgent<'t, &'static str>>,
    /// The host key the URL was looked up by (`null`: none), if it is
    /// UTF-8; else left out and given in base64, as `url` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) host: Option<Option<Cow<'t, str>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host_base64: Option<String>,
    /// The octets after the line's first TAB, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) fields: Option<&'t str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fields_base64: Option<String>,
    /// A CDXJ line, whole (`SURT TIMESTAMP {json}`), if it is UTF-8;
    /// else in base64, as `url` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) record: Option<&'t str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    record_base64: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<Cow<'t, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<Option<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pattern: Option<Option<Cow<'t, str>>>,
    /// `--explain` per agent, when there are several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) reasons: Option<PerAgent<'t, Why<'t>>>,
    /// `--usage`: per agent, its preference per key asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<PerAgent<'t, UsageJson<'t>>>,
}

impl<'t> JsonLine<'t> {
    /// The URL `url` (`None`: not kept) with its outcome.
    pub(crate) fn new(
        url: Option<&'t [u8]>,
        outcome: Outcome,
    ) -> JsonLine<'t> {
        let (url, url_base64) = match url.map(utf8_or_base64) {
            None => (Some(None), None),
            Some((Some(url), _)) => (Some(Some(url)), None),
            Some((None, b64)) => (None, b64),
        };
        JsonLine {
            url,
            url_base64,
            verdict: outcome.as_str(),
            verdicts: None,
            host: Some(None),
            host_base64: None,
            fields: None,
            fields_base64: None,
            record: None,
            record_base64: None,
            reason: None,
            line: None,
            pattern: None,
            reasons: None,
            usage: None,
        }
    }

    /// Adds `usage` (with at least one key asked for).
    pub(crate) fn usage(&mut self, agents: &'t [String], usage: Usage<'t>) {
        if usage.keys.is_empty() {
            return;
        }
        let values = usage
            .each
            .iter()
            .map(|&prefs| UsageJson { keys: usage.keys, prefs })
            .collect();
        self.usage = Some(PerAgent { agents, values });
    }

    /// Adds `verdicts` when there are several agents.
    pub(crate) fn verdicts(&mut self, agents: &'t [String], each: &[Outcome]) {
        if agents.len() > 1 {
            let values = each.iter().map(|o| o.as_str()).collect();
            self.verdicts = Some(PerAgent { agents, values });
        }
    }

    /// Adds the line's fields.
    pub(crate) fn fields(&mut self, fields: &'t [u8]) {
        (self.fields, self.fields_base64) = utf8_or_base64(fields);
    }

    /// Adds a CDXJ line, whole.
    pub(crate) fn record(&mut self, line: &'t [u8]) {
        (self.record, self.record_base64) = utf8_or_base64(line);
    }

    /// Adds the `--explain` fields: for one agent, the reason in words and
    /// the deciding rule's line and pattern, if a rule decided; for
    /// several, `reasons`.
    pub(crate) fn explain(
        &mut self,
        agents: &'t [String],
        mut whys: Vec<Why<'t>>,
    ) {
        if whys.len() == 1 {
            let why = whys.pop().expect("one");
            self.reason = Some(why.reason);
            self.line = Some(why.line);
            self.pattern = Some(why.pattern);
        } else {
            self.reasons = Some(PerAgent { agents, values: whys });
        }
    }

    /// Appends the object and a newline to `out`.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        serde_json::to_writer(&mut *out, self).expect("a Vec takes any JSON");
        out.push(b'\n');
    }
}

/// Appends one frontier line's `--json` object and a newline to `out`, as
/// `robofilter filter --json` prints it (and the wheel's `explain`
/// returns it): `{"url":...,"verdict":...,"host":...}` with `"verdicts"`
/// for several `agents`, `"fields"` for a line with a TAB, and with
/// `explain` `"reason"`, `"line"` and `"pattern"` (null when no rule
/// decided), or with several agents `"reasons"`, and `"usage"` with
/// usage keys asked for. `text` is the line (without its newline), `url`
/// its URL (up to its first TAB), `each` the outcome per agent and
/// `target` what decided it (`None`: not a URL).
#[allow(clippy::too_many_arguments)]
pub fn json_line(
    out: &mut Vec<u8>,
    agents: &[String],
    text: &[u8],
    url: &[u8],
    each: &[Outcome],
    target: Option<Target<'_, '_>>,
    explain: bool,
    usage: Usage<'_>,
) {
    // The URL is the line up to its first TAB, if it has one.
    let rest = Rest::Fields(text.get(url.len() + 1..));
    let line = (Some(url), rest, each, target);
    json_object(out, agents, line, explain, usage);
}

/// What a `--json` object carries besides the URL and the verdicts.
#[derive(Clone, Copy)]
pub(crate) enum Rest<'t> {
    /// A frontier line's fields (after its first TAB), if it has any.
    Fields(Option<&'t [u8]>),
    /// A CDXJ line, whole.
    Record(&'t [u8]),
}

/// [`json_line`] for a URL that may be missing (`None`: a CDXJ line
/// without one) and either a frontier line's fields or a CDXJ line.
pub(crate) fn json_object(
    out: &mut Vec<u8>,
    agents: &[String],
    (url, rest, each, target): (
        Option<&[u8]>,
        Rest<'_>,
        &[Outcome],
        Option<Target<'_, '_>>,
    ),
    explain: bool,
    usage: Usage<'_>,
) {
    let mut host = Vec::new();
    let has_host = target.is_some()
        && url.is_some_and(|url| robofilter::url_authority(url, &mut host));
    let mut line = JsonLine::new(url, Outcome::combine(each));
    let url = url.unwrap_or(b"");
    line.verdicts(agents, each);
    if has_host {
        match utf8_or_base64(&host) {
            (Some(text), _) => {
                line.host = Some(Some(Cow::Owned(text.to_string())))
            }
            (None, b64) => (line.host, line.host_base64) = (None, b64),
        }
    }
    match rest {
        Rest::Fields(Some(fields)) => line.fields(fields),
        Rest::Fields(None) => {}
        Rest::Record(record) => line.record(record),
    }
    // The reasons' text, borrowed by `line` (no allocation without
    // `explain`).
    let mut why: Vec<Vec<u8>> = Vec::new();
    if explain {
        why.resize(each.len(), Vec::new());
        let mut whys = Vec::with_capacity(each.len());
        for (agent, why) in why.iter_mut().enumerate() {
            let reason = write_why(why, url, target, agent);
            let rule = match reason {
                Some(Reason::Rule(r) | Reason::IndexHtml(r)) => Some(r),
                _ => None,
            };
            whys.push((rule.map(|r| (r.line(), r.pattern())), agent));
        }
        let whys = whys
            .into_iter()
            .map(|(rule, agent)| Why::new(&why[agent], rule))
            .collect();
        line.explain(agents, whys);
    }
    line.usage(agents, usage);
    line.write(out);
}
