//! AI usage preferences in robots.txt: the IETF AIPREF `Content-Usage` rule and Cloudflare's `Content-Signal` line, read in this one module.
//!
//! # Content-Usage
//!
//! This module follows **draft-ietf-aipref-attach-05** (the rule and its
//! place in RFC 9309 groups) and **draft-ietf-aipref-vocab-07** (the keys),
//! both of August 2026; neither is an RFC yet, and every detail the engine
//! takes from them lives here, so that following the RFCs is a change to
//! this file. docs/SEMANTICS.md section 4c states the semantics; in short:
//!
//! - `Content-Usage: [path] expression` is a group rule. A value that starts
//!   with `/` begins with a path, which ends at the first space or TAB; the
//!   rest (after that run of spaces and TABs) is the expression. Without a
//!   path the rule applies as if its path were `/`.
//! - The expression is a Structured Fields Dictionary (RFC 9651 section
//!   3.2). The keys are `train-ai` and `search` ([`UsageKey`]), compared
//!   case-sensitively; `key=y` and `key=n` (the tokens `y` and `n`) are the
//!   preferences, any other value of a key is [`Preference::Unknown`], a
//!   repeated key's last value counts, parameters and unknown keys are
//!   ignored, and an expression that does not parse makes every key
//!   unknown.
//! - For a URL, the rules of the groups the agent selects (as for its
//!   Allow/Disallow rules and crawl delay) are matched against the path
//!   normalised as the dialect normalises Allow/Disallow, with `*` and `$`
//!   as there. The longest normalised path wins; rules of equal length that
//!   match combine per key, `n` over `y` over unknown (for rules with the
//!   identical path this is the drafts' rule; for different paths of one
//!   length, which the drafts leave open, it is this project's choice).
//!   No matching rule: every key is unknown.
//! - A disallowed URL has no preferences; the front ends show `-` there.
//!
//! Usage rules are matched by the direct matcher (`pattern::matches`, the
//! reference the automata are tested against) over the few rules a group
//! has, and only for a front end that asks for preferences: none of the
//! 74.6 k robots.txt files of the project's corpus has a Content-Usage
//! line, so an automaton per group would cost every file's size and every
//! load for rules that are rare.
//!
//! # Content-Signal
//!
//! `Content-Signal: search=yes, ai-train=no, ai-input=no` (Cloudflare's
//! Content Signals Policy) is read as fast-robotstxt reads it, whose
//! answers the wheel's tests compare with: comma-separated `key=value`
//! items, keys and the values `yes`/`no` compared case-insensitively and
//! trimmed, an item with another value is unset, a repeated key's last
//! value counts, and the first `Content-Signal` line of the groups the
//! agent selects is the one that counts (fast-robotstxt falls back to the
//! `*` group's line when the agent's own group has none; robofilter keeps
//! to the group the agent selects, as for every other rule).

use crate::dialect::Dialect;
use crate::normalize;
use crate::pattern;
use crate::url::MatchPath;

/// A key of the AIPREF vocabulary (draft-ietf-aipref-vocab-07).
#[derive(Clone, Copy, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum UsageKey {
    /// `train-ai`: training AI models.
    TrainAi,
    /// `search`: building a search index and showing results.
    Search,
}

impl UsageKey {
    /// Every key, in the vocabulary's order.
    pub const ALL: [UsageKey; 2] = [UsageKey::TrainAi, UsageKey::Search];

    /// The key as written in an expression.
    pub fn as_str(self) -> &'static str {
        match self {
            UsageKey::TrainAi => "train-ai",
            UsageKey::Search => "search",
        }
    }

    /// The key written exactly so (case-sensitive), if it is one.
    pub fn from_name(name: &[u8]) -> Option<UsageKey> {
        UsageKey::ALL.into_iter().find(|k| k.as_str().as_bytes() == name)
    }
}

impl core::fmt::Display for UsageKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::str::FromStr for UsageKey {
    type Err = String;

    fn from_str(s: &str) -> Result<UsageKey, String> {
        UsageKey::from_name(s.as_bytes()).ok_or_else(|| {
            format!(
                "'{s}' is not a usage key of draft-ietf-aipref-vocab-07 \
                 (the keys are train-ai and search, case-sensitive)"
            )
        })
    }
}

/// One key's preference, in the order in which rules of one length combine
/// (the greatest wins).
#[derive(
    Clone, Copy, Debug, Default, Eq, Hash, Ord, PartialEq, PartialOrd,
)]
pub enum Preference {
    /// No rule says, or its value is neither `y` nor `n`.
    #[default]
    Unknown,
    /// `y`: the use is allowed.
    Yes,
    /// `n`: the use is not allowed.
    No,
}

impl Preference {
    /// `y`, `n` or `unknown`, as the front ends print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Preference::Unknown => "unknown",
            Preference::Yes => "y",
            Preference::No => "n",
        }
    }
}

/// A preference per [`UsageKey`].
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Preferences([Preference; 2]);

impl Preferences {
    /// Every key unknown.
    pub const UNKNOWN: Preferences = Preferences([Preference::Unknown; 2]);

    /// The preference for `key`.
    pub fn get(&self, key: UsageKey) -> Preference {
        self.0[key as usize]
    }

    fn set(&mut self, key: UsageKey, value: Preference) {
        self.0[key as usize] = value;
    }

    /// Per key, the greater of the two (`n` over `y` over unknown).
    fn combine(self, other: Preferences) -> Preferences {
        Preferences([self.0[0].max(other.0[0]), self.0[1].max(other.0[1])])
    }
}

/// One `Content-Usage` rule of a group, as loaded for matching.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct UsageRule {
    line: u32,
    path: Vec<u8>,
    expression: Vec<u8>,
    pattern: Vec<u8>,
    preferences: Preferences,
    parsed: bool,
}

impl UsageRule {
    /// Reads the value of a `Content-Usage` line (as written, trimmed) on
    /// line `line`, its path normalised for `dialect`.
    pub fn new(line: u32, value: &[u8], dialect: Dialect) -> UsageRule {
        let (path, expression) = split_rule(value);
        let parsed = parse_dictionary(expression);
        UsageRule {
            line,
            path: path.to_vec(),
            expression: expression.to_vec(),
            pattern: normalize::pattern(path, dialect),
            preferences: parsed.unwrap_or(Preferences::UNKNOWN),
            parsed: parsed.is_some(),
        }
    }

    /// The robots.txt line number.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The path as written (`/` when the rule has none).
    pub fn path(&self) -> &[u8] {
        &self.path
    }

    /// The path normalised as the dialect normalises Allow/Disallow
    /// patterns: what is matched, and whose length is the precedence.
    pub fn pattern(&self) -> &[u8] {
        &self.pattern
    }

    /// The expression as written.
    pub fn expression(&self) -> &[u8] {
        &self.expression
    }

    /// The preferences the expression states (every key unknown if it does
    /// not parse).
    pub fn preferences(&self) -> Preferences {
        self.preferences
    }

    /// Whether the expression parses as a Structured Fields Dictionary.
    pub fn is_parsed(&self) -> bool {
        self.parsed
    }
}

/// The `Content-Usage` rules that apply to one agent in one robots.txt,
/// ready to give each URL its [`Preferences`]: from
/// [`Rules::content_usage`](crate::Rules::content_usage).
#[derive(Clone, Debug)]
pub struct UsageRules {
    dialect: Dialect,
    /// In file order.
    rules: Vec<UsageRule>,
    /// Indexes into `rules`, longest pattern first.
    by_length: Vec<u32>,
}

impl UsageRules {
    /// The rules, in file order, matched in `dialect`.
    pub fn new(rules: Vec<UsageRule>, dialect: Dialect) -> UsageRules {
        let mut by_length: Vec<u32> = (0..rules.len() as u32).collect();
        by_length.sort_by_key(|&i| {
            core::cmp::Reverse(rules[i as usize].pattern.len())
        });
        UsageRules { dialect, rules, by_length }
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[UsageRule] {
        &self.rules
    }

    /// Whether some rule states `preference` for `key`, for any path.
    pub fn states(&self, key: UsageKey, preference: Preference) -> bool {
        self.rules.iter().any(|r| r.preferences.get(key) == preference)
    }

    /// The preferences for `url` (its path read as the dialect reads it):
    /// those of the longest matching rule, rules of that length combined.
    pub fn preferences(&self, url: &[u8]) -> Preferences {
        if self.rules.is_empty() {
            return Preferences::UNKNOWN;
        }
        let path = MatchPath::parse(url, self.dialect);
        let mut matchable = Vec::with_capacity(path.tail().len() + 1);
        path.matchable(self.dialect, |b| matchable.push(b));
        self.preferences_of(&matchable)
    }

    /// The preferences for a matchable path (normalised in the rfc9309
    /// dialect, with its leading `/`).
    pub fn preferences_of(&self, path: &[u8]) -> Preferences {
        let mut found: Option<(usize, Preferences)> = None;
        for &i in &self.by_length {
            let rule = &self.rules[i as usize];
            let len = rule.pattern.len();
            if found.is_some_and(|(best, _)| len < best) {
                break;
            }
            if pattern::matches(&rule.pattern, self.dialect, path) {
                let prefs = match found {
                    Some((_, p)) => p.combine(rule.preferences),
                    None => rule.preferences,
                };
                found = Some((len, prefs));
            }
        }
        found.map_or(Preferences::UNKNOWN, |(_, p)| p)
    }
}

/// Splits a `Content-Usage` value into its path (`/` when it has none) and
/// its expression.
fn split_rule(value: &[u8]) -> (&[u8], &[u8]) {
    if value.first() != Some(&b'/') {
        return (b"/", value);
    }
    let end = value
        .iter()
        .position(|&b| b == b' ' || b == b'\t')
        .unwrap_or(value.len());
    let rest = &value[end..];
    let skip = rest.iter().take_while(|&&b| b == b' ' || b == b'\t').count();
    (&value[..end], &rest[skip..])
}

/// Parses an expression as a Structured Fields Dictionary (RFC 9651
/// section 4.2.2): the preferences of its known keys, or `None` if it
/// does not parse.
fn parse_dictionary(input: &[u8]) -> Option<Preferences> {
    let mut p = Parser { s: input, i: 0 };
    let mut prefs = Preferences::UNKNOWN;
    p.skip(|b| b == b' ');
    while !p.done() {
        let key = p.key()?;
        let value = if p.eat(b'=') {
            p.item_or_inner_list()?
        } else {
            p.parameters()?;
            Preference::Unknown // Boolean true: neither y nor n.
        };
        if let Some(key) = UsageKey::from_name(key) {
            prefs.set(key, value);
        }
        p.skip(|b| b == b' ' || b == b'\t');
        if p.done() {
            break;
        }
        if !p.eat(b',') {
            return None;
        }
        p.skip(|b| b == b' ' || b == b'\t');
        if p.done() {
            return None; // A trailing comma.
        }
    }
    Some(prefs)
}

/// A cursor over a Structured Field.
struct Parser<'s> {
    s: &'s [u8],
    i: usize,
}

impl<'s> Parser<'s> {
    fn done(&self) -> bool {
        self.i == self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.i += usize::from(hit);
        hit
    }

    fn skip(&mut self, class: impl Fn(u8) -> bool) -> usize {
        let from = self.i;
        while self.peek().is_some_and(&class) {
            self.i += 1;
        }
        self.i - from
    }

    /// `key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" )`
    fn key(&mut self) -> Option<&'s [u8]> {
        let from = self.i;
        if !self.peek().is_some_and(|b| b.is_ascii_lowercase() || b == b'*') {
            return None;
        }
        self.skip(|b| {
            b.is_ascii_lowercase()
                || b.is_ascii_digit()
                || matches!(b, b'_' | b'-' | b'.' | b'*')
        });
        Some(&self.s[from..self.i])
    }

    /// A member's value: the preference it states (`y` or `n` as a bare
    /// token, with any parameters), unknown for anything else that parses.
    fn item_or_inner_list(&mut self) -> Option<Preference> {
        if self.eat(b'(') {
            loop {
                self.skip(|b| b == b' ');
                if self.eat(b')') {
                    break;
                }
                self.bare_item()?;
                self.parameters()?;
                if !matches!(self.peek(), Some(b' ' | b')')) {
                    return None;
                }
            }
            self.parameters()?;
            return Some(Preference::Unknown);
        }
        let item = self.bare_item()?;
        self.parameters()?;
        Some(match item {
            b"y" => Preference::Yes,
            b"n" => Preference::No,
            _ => Preference::Unknown,
        })
    }

    /// `*( ";" *SP key [ "=" bare-item ] )`
    fn parameters(&mut self) -> Option<()> {
        while self.eat(b';') {
            self.skip(|b| b == b' ');
            self.key()?;
            if self.eat(b'=') {
                self.bare_item()?;
            }
        }
        Some(())
    }

    /// A bare item; returns a token's text (empty for every other kind).
    fn bare_item(&mut self) -> Option<&'s [u8]> {
        let from = self.i;
        match self.peek()? {
            b'-' | b'0'..=b'9' => self.number().map(|()| &b""[..]),
            b'"' => self.quoted(false).map(|()| &b""[..]),
            b'%' => {
                self.i += 1;
                (self.peek() == Some(b'"'))
                    .then(|| self.quoted(true))
                    .flatten()
                    .map(|()| &b""[..])
            }
            b':' => {
                self.i += 1;
                self.skip(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'+' | b'/' | b'=')
                });
                self.eat(b':').then_some(&b""[..])
            }
            b'?' => {
                self.i += 1;
                (self.eat(b'0') || self.eat(b'1')).then_some(&b""[..])
            }
            b'@' => {
                self.i += 1;
                let at = self.i;
                self.number()?;
                // A date is an integer.
                (!self.s[at..self.i].contains(&b'.')).then_some(&b""[..])
            }
            b if b.is_ascii_alphabetic() || b == b'*' => {
                self.i += 1;
                self.skip(|b| is_tchar(b) || b == b':' || b == b'/');
                Some(&self.s[from..self.i])
            }
            _ => None,
        }
    }

    /// An Integer or Decimal (RFC 9651 section 4.2.4).
    fn number(&mut self) -> Option<()> {
        self.eat(b'-');
        let int = self.skip(|b| b.is_ascii_digit());
        if int == 0 {
            return None;
        }
        if self.eat(b'.') {
            let frac = self.skip(|b| b.is_ascii_digit());
            (int <= 12 && (1..=3).contains(&frac)).then_some(())
        } else {
            (int <= 15).then_some(())
        }
    }

    /// A String (`display` false: `"`, printable ASCII with `\"` and
    /// `\\` escapes, `"`) or a Display String's quoted part (`display`
    /// true: `%` followed by two lower-case hex digits instead).
    fn quoted(&mut self, display: bool) -> Option<()> {
        self.i += 1;
        loop {
            match self.peek()? {
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                b'\\' if !display => {
                    if !matches!(self.s.get(self.i + 1)?, b'"' | b'\\') {
                        return None;
                    }
                    self.i += 2;
                }
                b'%' if display => {
                    let pair = self.s.get(self.i + 1..self.i + 3)?;
                    let hex = |b: &u8| matches!(b, b'0'..=b'9' | b'a'..=b'f');
                    if !pair.iter().all(hex) {
                        return None;
                    }
                    self.i += 3;
                }
                0x20..=0x7E => self.i += 1,
                _ => return None,
            }
        }
    }
}

/// RFC 9110's `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'*'
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

/// One `Content-Signal` key (Cloudflare's Content Signals Policy).
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum SignalKey {
    /// `search`.
    Search,
    /// `ai-input`.
    AiInput,
    /// `ai-train`.
    AiTrain,
}

impl SignalKey {
    /// Every key.
    pub const ALL: [SignalKey; 3] =
        [SignalKey::Search, SignalKey::AiInput, SignalKey::AiTrain];

    /// The key as written.
    pub fn as_str(self) -> &'static str {
        match self {
            SignalKey::Search => "search",
            SignalKey::AiInput => "ai-input",
            SignalKey::AiTrain => "ai-train",
        }
    }
}

/// A `Content-Signal` line's values: per key, `Some(true)` for `yes`,
/// `Some(false)` for `no`, `None` when unset.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct ContentSignal([Option<bool>; 3]);

impl ContentSignal {
    /// Reads a `Content-Signal` value (see the module docs).
    pub fn parse(value: &[u8]) -> ContentSignal {
        let mut signal = ContentSignal::default();
        for item in value.split(|&b| b == b',') {
            let Some(eq) = item.iter().position(|&b| b == b'=') else {
                continue;
            };
            let (key, value) =
                (item[..eq].trim_ascii(), item[eq + 1..].trim_ascii());
            let Some(k) = SignalKey::ALL
                .into_iter()
                .position(|k| k.as_str().as_bytes().eq_ignore_ascii_case(key))
            else {
                continue;
            };
            signal.0[k] = if value.eq_ignore_ascii_case(b"yes") {
                Some(true)
            } else if value.eq_ignore_ascii_case(b"no") {
                Some(false)
            } else {
                None
            };
        }
        signal
    }

    /// The value for `key`.
    pub fn get(&self, key: SignalKey) -> Option<bool> {
        let i = SignalKey::ALL.iter().position(|&k| k == key).expect("a key");
        self.0[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Preference::{No, Unknown, Yes};

    fn prefs(expr: &str) -> Option<(Preference, Preference)> {
        parse_dictionary(expr.as_bytes())
            .map(|p| (p.get(UsageKey::TrainAi), p.get(UsageKey::Search)))
    }

    #[test]
    fn dictionaries_parse_as_rfc_9651_says() {
        assert_eq!(prefs("train-ai=n"), Some((No, Unknown)));
        assert_eq!(prefs("train-ai=y, search=n"), Some((Yes, No)));
        assert_eq!(prefs("train-ai=y,search=n"), Some((Yes, No)));
        assert_eq!(prefs("train-ai=y ,\tsearch=n"), Some((Yes, No)));
        assert_eq!(prefs(""), Some((Unknown, Unknown)));
        assert_eq!(prefs("  train-ai=n"), Some((No, Unknown)));
        // The last of a repeated key.
        assert_eq!(prefs("train-ai=n, train-ai=y"), Some((Yes, Unknown)));
        // Unknown keys and parameters are ignored.
        assert_eq!(prefs("foo=n, train-ai=n;v=1"), Some((No, Unknown)));
        assert_eq!(prefs("foo=(a b);x=1, search=y"), Some((Unknown, Yes)));
        assert_eq!(prefs("bar=\"q\\\"\", search=n"), Some((Unknown, No)));
        assert_eq!(
            prefs("a=1.5, b=-2, c=?0, d=:YWJj:, e=@1, search=n"),
            Some((Unknown, No))
        );
        assert_eq!(prefs("d=%\"caf%c3%a9\", search=n"), Some((Unknown, No)));
        // `%` is plain in a String, `\` plain in a Display String.
        assert_eq!(
            prefs("s=\"50%\", d=%\"a\\b\", search=n"),
            Some((Unknown, No))
        );
        // Values other than the tokens y and n.
        assert_eq!(prefs("train-ai"), Some((Unknown, Unknown)));
        assert_eq!(prefs("train-ai=\"n\""), Some((Unknown, Unknown)));
        assert_eq!(prefs("train-ai=N"), Some((Unknown, Unknown)));
        assert_eq!(prefs("train-ai=no"), Some((Unknown, Unknown)));
        assert_eq!(prefs("train-ai=?0"), Some((Unknown, Unknown)));
        assert_eq!(prefs("train-ai=(n)"), Some((Unknown, Unknown)));
        // A key that was `n` and then given without a value is unknown.
        assert_eq!(prefs("train-ai=n, train-ai"), Some((Unknown, Unknown)));
    }

    #[test]
    fn expressions_that_do_not_parse_say_nothing() {
        for bad in [
            "Train-AI=n",
            "train-ai=n,",
            "train-ai=n;",
            "train-ai=n search=y",
            "train-ai=n;; search=y",
            "train-ai = n",
            "train-ai=n, ,search=y",
            ",train-ai=n",
            "train-ai=\"unterminated",
            "train-ai=n, x=1.",
            "train-ai=n, x=1.2345",
            "train-ai=n, x=1234567890123456",
            "train-ai=n, x=(a b",
            "train-ai=n, x=%\"%C3\"",
            "train-ai=n, x=?2",
            "train-ai=n, x=@1.5",
            "\ttrain-ai=n",
            "train-ai=n, é=n",
        ] {
            assert_eq!(prefs(bad), None, "{bad:?}");
            let rule = UsageRule::new(1, bad.as_bytes(), Dialect::Rfc9309);
            assert!(!rule.is_parsed());
            assert_eq!(rule.preferences(), Preferences::UNKNOWN, "{bad:?}");
        }
    }

    #[test]
    fn a_rule_is_a_path_and_an_expression() {
        assert_eq!(
            split_rule(b"/a/b train-ai=n"),
            (&b"/a/b"[..], &b"train-ai=n"[..])
        );
        assert_eq!(
            split_rule(b"/a\t \ttrain-ai=n"),
            (&b"/a"[..], &b"train-ai=n"[..])
        );
        assert_eq!(split_rule(b"train-ai=n"), (&b"/"[..], &b"train-ai=n"[..]));
        assert_eq!(split_rule(b"/only"), (&b"/only"[..], &b""[..]));
        assert_eq!(
            split_rule(b"*.pdf train-ai=n"),
            (&b"/"[..], &b"*.pdf train-ai=n"[..])
        );
        let r =
            UsageRule::new(3, b"/caf\xc3\xa9 train-ai=n", Dialect::Rfc9309);
        assert_eq!(r.pattern(), b"/caf%C3%A9");
        assert_eq!(r.path(), b"/caf\xc3\xa9");
        assert_eq!(r.line(), 3);
    }

    fn rules(lines: &[&str], dialect: Dialect) -> UsageRules {
        let rules = lines
            .iter()
            .enumerate()
            .map(|(i, v)| UsageRule::new(i as u32 + 1, v.as_bytes(), dialect))
            .collect();
        UsageRules::new(rules, dialect)
    }

    fn at(r: &UsageRules, url: &str) -> (Preference, Preference) {
        let p = r.preferences(url.as_bytes());
        (p.get(UsageKey::TrainAi), p.get(UsageKey::Search))
    }

    #[test]
    fn the_longest_path_wins_and_equal_ones_combine() {
        let r = rules(
            &[
                "train-ai=n, search=y",
                "/docs/ train-ai=y",
                "/docs/ search=n",
                "/docs/private search=y",
                "/*.pdf$ train-ai=n",
                "/x train-ai=y",
                "/x train-ai=n",
                "/y train-ai=y, search=y",
                "/y garbage!",
            ],
            Dialect::Rfc9309,
        );
        assert_eq!(at(&r, "https://a.example/"), (No, Yes));
        assert_eq!(at(&r, "https://a.example/other"), (No, Yes));
        assert_eq!(at(&r, "https://a.example/docs/a"), (Yes, No));
        // The longest wins whole: train-ai is unknown there.
        assert_eq!(at(&r, "https://a.example/docs/private/1"), (Unknown, Yes));
        assert_eq!(at(&r, "https://a.example/a.pdf"), (No, Unknown));
        assert_eq!(at(&r, "https://a.example/a.pdf?x"), (No, Yes));
        assert_eq!(at(&r, "https://a.example/x"), (No, Unknown));
        // A rule that does not parse says unknown, which loses to y.
        assert_eq!(at(&r, "https://a.example/y"), (Yes, Yes));
        assert!(r.states(UsageKey::TrainAi, No));
        assert!(
            !rules(&["/a train-ai=y"], Dialect::Google)
                .states(UsageKey::TrainAi, No)
        );
    }

    #[test]
    fn no_rule_no_preference_and_paths_are_normalised() {
        let none = rules(&[], Dialect::Rfc9309);
        assert_eq!(at(&none, "https://a.example/"), (Unknown, Unknown));
        let r = rules(&["/a/ train-ai=n"], Dialect::Rfc9309);
        assert_eq!(at(&r, "https://a.example/b"), (Unknown, Unknown));
        // rfc9309: %61 is `a`.
        assert_eq!(at(&r, "https://a.example/%61/x"), (No, Unknown));
        let g = rules(&["/a/ train-ai=n"], Dialect::Google);
        assert_eq!(at(&g, "https://a.example/%61/x"), (Unknown, Unknown));
        // `%24` in a pattern is a literal `$` in rfc9309.
        let d = rules(&["/p%24 train-ai=n"], Dialect::Rfc9309);
        assert_eq!(at(&d, "https://a.example/p$x"), (No, Unknown));
    }

    #[test]
    fn content_signals_read_as_fast_robotstxt_does() {
        let s = ContentSignal::parse(b"search=yes, ai-train=no, ai-input=no");
        assert_eq!(s.get(SignalKey::Search), Some(true));
        assert_eq!(s.get(SignalKey::AiTrain), Some(false));
        assert_eq!(s.get(SignalKey::AiInput), Some(false));
        let s = ContentSignal::parse(b"AI-TRAIN = No,,search=maybe");
        assert_eq!(s.get(SignalKey::AiTrain), Some(false));
        assert_eq!(s.get(SignalKey::Search), None);
        let s = ContentSignal::parse(b"ai-train=yes, ai-train=no");
        assert_eq!(s.get(SignalKey::AiTrain), Some(false));
        let s = ContentSignal::parse(b"ai-train=no; search=yes");
        assert_eq!(s.get(SignalKey::AiTrain), None);
        assert_eq!(ContentSignal::parse(b""), ContentSignal::default());
    }
}
