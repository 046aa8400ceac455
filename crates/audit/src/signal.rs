//! The AI-use signals a host's robots.txt gives an agent beside its rules: a Content-Usage `train-ai=n` (IETF AIPREF) and a Content-Signal `ai-train=no` (Cloudflare), counted by the summary.

use robofilter::{Preference, Rules, SignalKey, UsageError, UsageKey};

/// One signal the summary counts.
#[derive(Clone, Copy, Debug, Eq, Hash, PartialEq)]
pub enum Signal {
    /// A `Content-Usage` rule of the group the agent selects says
    /// `train-ai=n`, for any path.
    UsageTrainAiNo,
    /// The `Content-Signal` line of the group the agent selects says
    /// `ai-train=no`.
    SignalAiTrainNo,
}

impl Signal {
    /// Every signal, in the order of the summary's columns.
    pub const ALL: [Signal; 2] =
        [Signal::UsageTrainAiNo, Signal::SignalAiTrainNo];

    /// The name in JSON: `content_usage_train_ai_n` or
    /// `content_signal_ai_train_no`.
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::UsageTrainAiNo => "content_usage_train_ai_n",
            Signal::SignalAiTrainNo => "content_signal_ai_train_no",
        }
    }

    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            Signal::UsageTrainAiNo => "Content-Usage train-ai=n",
            Signal::SignalAiTrainNo => "Content-Signal ai-train=no",
        }
    }

    /// The index in [`Signal::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// The signals a host gives one agent.
#[derive(Clone, Copy, Debug, Default, Eq, Hash, PartialEq)]
pub struct Signals(u8);

impl Signals {
    /// Whether `s` is among them.
    pub fn has(self, s: Signal) -> bool {
        self.0 & (1 << s.index()) != 0
    }

    /// These and `s`.
    pub fn with(self, s: Signal) -> Signals {
        Signals(self.0 | (1 << s.index()))
    }

    /// Those of `self` or `other`.
    pub fn union(self, other: Signals) -> Signals {
        Signals(self.0 | other.0)
    }
}

/// The signals of a host with compiled `rules` toward each of `agents`,
/// in their order.
///
/// ```
/// use robofilter::{AlignedBytes, Compiler, Rules};
/// use robofilter_audit::{Signal, member_signals};
///
/// let robots = b"User-agent: *\nContent-Usage: /a train-ai=n\n\
///                Content-Signal: search=yes, ai-train=no\nDisallow: /x\n\n\
///                User-agent: GPTBot\nDisallow: /\n";
/// let bytes = AlignedBytes::from(&Compiler::new().compile(robots)?[..]);
/// let rules = Rules::from_bytes(bytes.as_bytes())?;
/// let got = member_signals(&rules, &["Other", "GPTBot"])?;
/// assert!(got[0].has(Signal::UsageTrainAiNo) && got[0].has(Signal::SignalAiTrainNo));
/// assert_eq!(got[1], Default::default());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Errors
///
/// As [`Rules::content_usage`].
pub fn member_signals(
    rules: &Rules<'_>,
    agents: &[&str],
) -> Result<Vec<Signals>, UsageError> {
    // Most robots.txt have neither line: one look at the other lines.
    let said = rules.other_lines()?.iter().any(|r| {
        r.key().eq_ignore_ascii_case(b"content-usage")
            || r.key().eq_ignore_ascii_case(b"content-signal")
    });
    if !said {
        return Ok(vec![Signals::default(); agents.len()]);
    }
    agents
        .iter()
        .map(|agent| {
            let mut s = Signals::default();
            if rules
                .content_usage(agent)?
                .states(UsageKey::TrainAi, Preference::No)
            {
                s = s.with(Signal::UsageTrainAiNo);
            }
            let signal = rules.content_signal(agent)?;
            if signal.is_some_and(|c| c.get(SignalKey::AiTrain) == Some(false))
            {
                s = s.with(Signal::SignalAiTrainNo);
            }
            Ok(s)
        })
        .collect()
}
