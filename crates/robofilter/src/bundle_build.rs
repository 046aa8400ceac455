//! The bundle builder: hosts and their fetch outcomes in, one bundle file
//! out (the layout is in `wire.rs`; the reader is [`Bundle`](crate::Bundle)).

use std::collections::HashMap;

use crate::access::{Fetch, Policy};
use crate::aligned::AlignedBytes;
use crate::bundle::host_hash;
use crate::compile::{Compiler, Config};
use crate::error::BuildError;
use crate::kind::InputKind;
use crate::url::normalize_host;
use crate::wire::{
    self, ALLOW_ALL, BUNDLE_FORMAT_VERSION, BUNDLE_MAGIC, CAUSE_REC,
    DISALLOW_ALL, HOST_REC, MEMBER_REC, push_rec,
};

/// Builds a bundle from hosts and their fetch outcomes.
///
/// Every distinct robots.txt body is compiled once (in parallel with
/// the `parallel` feature); hosts serving the same bytes share it.
#[derive(Debug)]
pub struct BundleBuilder {
    config: Config,
    hosts: HashMap<String, (Fetch, Option<String>)>,
}

impl BundleBuilder {
    /// A builder compiling robots.txt bodies with `config`.
    pub fn new(config: Config) -> BundleBuilder {
        BundleBuilder { config, hosts: HashMap::new() }
    }

    /// Adds a host (normalised by [`normalize_host`]) and its fetch
    /// outcome.
    ///
    /// # Errors
    ///
    /// If the name is not a valid authority, the host was already added,
    /// or a 2xx body is not text ([`BuildError::not_text`]: compressed or
    /// compiled; the caller decides what that host gets, for example
    /// [`Fetch::Unreadable`]).
    pub fn add(&mut self, host: &str, fetch: Fetch) -> Result<(), BuildError> {
        self.add_with_cause(host, fetch, "")
    }

    /// [`add`](BundleBuilder::add), recording why the host gets no rules
    /// (say, "connection refused" for [`Fetch::Unreachable`]): the bundle
    /// keeps `cause` for a host whose outcome decides every URL, and
    /// [`HostInfo::cause`](crate::HostInfo::cause) gives it back, so that
    /// an explanation can name it. A cause longer than 200 octets is cut
    /// at a character boundary; an empty one, and the cause of a host with
    /// rules, are not kept.
    ///
    /// # Errors
    ///
    /// As [`add`](BundleBuilder::add).
    pub fn add_with_cause(
        &mut self,
        host: &str,
        fetch: Fetch,
        cause: &str,
    ) -> Result<(), BuildError> {
        let name = normalize_host(host).map_err(BuildError::input)?;
        if let Fetch::Http { status: 200..=299, body } = &fetch {
            let kind = InputKind::of(body);
            if !kind.is_text() {
                return Err(BuildError::refused(kind));
            }
        }
        // A status outside 100-599 is not an HTTP response: a failed fetch.
        let mut cause = cause.trim().to_string();
        let fetch = match fetch {
            Fetch::Http { status, .. } if !(100..=599).contains(&status) => {
                if cause.is_empty() {
                    cause = format!("status {status} is not an HTTP status");
                }
                Fetch::Unreachable
            }
            fetch => fetch,
        };
        let cause = match fetch.policy() {
            Policy::Rules => None,
            _ if cause.is_empty() => None,
            _ => Some(cut(cause, wire::CAUSE_MAX)),
        };
        if self.hosts.contains_key(&name) {
            return Err(BuildError::input(format!(
                "host '{name}' is given twice"
            )));
        }
        self.hosts.insert(name, (fetch, cause));
        Ok(())
    }

    /// The number of hosts added.
    pub fn len(&self) -> usize {
        self.hosts.len()
    }

    /// Whether no host was added.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Compiles every distinct body and writes the bundle.
    ///
    /// # Errors
    ///
    /// Only if a table would exceed the format's 32-bit counts.
    pub fn finish(self) -> Result<Vec<u8>, BuildError> {
        let (index, members) = self.compile()?;
        let mut out = vec![0u8; index.file_len()];
        index.write(members, &mut out);
        Ok(out)
    }

    /// [`finish`](BundleBuilder::finish), written straight into an
    /// [`AlignedBytes`] that [`Bundle::from_bytes`](crate::Bundle::from_bytes)
    /// loads, without a copy: each member is freed once written, so a
    /// build holds the members and the file about once (not two or three
    /// times over, as a `Vec` grown and then copied would).
    ///
    /// # Errors
    ///
    /// As [`finish`](BundleBuilder::finish).
    pub fn finish_aligned(self) -> Result<AlignedBytes, BuildError> {
        let (index, members) = self.compile()?;
        let mut out = AlignedBytes::zeroed(index.file_len());
        index.write(members, out.as_bytes_mut());
        Ok(out)
    }

    /// Compiles every distinct body (then frees the bodies) and lays out
    /// the index.
    fn compile(self) -> Result<(Index, Vec<Vec<u8>>), BuildError> {
        let mut hosts: Vec<(String, (Fetch, Option<String>))> =
            self.hosts.into_iter().collect();
        hosts.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        // Distinct bodies, in order of first use.
        let mut member_of: HashMap<&[u8], u32> = HashMap::new();
        let mut bodies: Vec<&[u8]> = Vec::new();
        let mut entries = Vec::with_capacity(hosts.len());
        for (_, (fetch, _)) in &hosts {
            let entry = match (fetch.policy(), fetch) {
                (Policy::Rules, Fetch::Http { body, .. }) => {
                    *member_of.entry(body).or_insert_with(|| {
                        bodies.push(body);
                        bodies.len() as u32 - 1
                    })
                }
                (Policy::DisallowAll, _) => DISALLOW_ALL,
                _ => ALLOW_ALL,
            };
            entries.push(entry);
        }
        let members = compile_all(&self.config, &bodies)?;
        drop((member_of, bodies));
        for (_, (fetch, _)) in &mut hosts {
            if let Fetch::Http { body, .. } = fetch {
                *body = Vec::new();
            }
        }

        let host_len = to_u32(hosts.len(), "hosts")?;
        let slot_len = (hosts.len() * 2).max(2).next_power_of_two();
        let mut names = Vec::new();
        let mut host_tab = Vec::with_capacity(hosts.len() * HOST_REC);
        let mut slots = vec![0u32; slot_len];
        let mut cause_tab = Vec::new();
        for (i, ((name, (fetch, cause)), entry)) in
            hosts.iter().zip(&entries).enumerate()
        {
            let off = to_u32(names.len(), "host names")?;
            names.extend_from_slice(name.as_bytes());
            push_rec(
                &mut host_tab,
                &[off, name.len() as u32, *entry, fetch.status_code()],
            );
            let mut s = host_hash(name.as_bytes()) as usize & (slot_len - 1);
            while slots[s] != 0 {
                s = (s + 1) & (slot_len - 1);
            }
            slots[s] = i as u32 + 1;
            if let Some(cause) = cause {
                let off = to_u32(names.len(), "host names")?;
                names.extend_from_slice(cause.as_bytes());
                push_rec(
                    &mut cause_tab,
                    &[i as u32, off, cause.len() as u32, 0],
                );
            }
        }
        let mut head = vec![0u8; wire::HEADER_LEN];
        head.extend_from_slice(&host_tab);
        for s in &slots {
            head.extend_from_slice(&s.to_le_bytes());
        }
        let member_tab_at = head.len();
        head.resize(head.len() + members.len() * MEMBER_REC, 0);
        head.extend_from_slice(&cause_tab);
        head.extend_from_slice(&names);
        head.resize(head.len().next_multiple_of(wire::MEMBER_ALIGN), 0);
        // The members follow, each 64-byte aligned.
        let index_len = head.len();
        let mut member_tab = Vec::with_capacity(members.len() * MEMBER_REC);
        let mut at = index_len;
        let mut spans = Vec::with_capacity(members.len());
        for m in &members {
            at = at.next_multiple_of(wire::MEMBER_ALIGN);
            let (off, len) = (at as u64, m.len() as u64);
            push_rec(
                &mut member_tab,
                &[
                    off as u32,
                    (off >> 32) as u32,
                    len as u32,
                    (len >> 32) as u32,
                ],
            );
            spans.push(at);
            at += m.len();
        }
        let file_len = at;
        head[member_tab_at..member_tab_at + member_tab.len()]
            .copy_from_slice(&member_tab);
        head[..8].copy_from_slice(BUNDLE_MAGIC);
        head[8..12].copy_from_slice(&wire::ENDIAN_MARK.to_le_bytes());
        head[12..16].copy_from_slice(&BUNDLE_FORMAT_VERSION.to_le_bytes());
        head[16..24].copy_from_slice(&(file_len as u64).to_le_bytes());
        head[28] = self.config.get_dialect().to_byte();
        head[32..40].copy_from_slice(&(index_len as u64).to_le_bytes());
        head[40..44].copy_from_slice(&host_len.to_le_bytes());
        let member_len = to_u32(members.len(), "members")?;
        head[44..48].copy_from_slice(&member_len.to_le_bytes());
        let slot_len = to_u32(slot_len, "hash slots")?;
        head[48..52].copy_from_slice(&slot_len.to_le_bytes());
        let cause_len = to_u32(cause_tab.len() / CAUSE_REC, "causes")?;
        head[52..56].copy_from_slice(&cause_len.to_le_bytes());
        let crc = wire::checksum(&head);
        head[wire::CHECKSUM_AT..wire::CHECKSUM_AT + 4]
            .copy_from_slice(&crc.to_le_bytes());
        Ok((Index { head, spans, file_len }, members))
    }
}

/// A bundle's index, written, and where its members go.
struct Index {
    /// The index (header, tables, names), checksummed.
    head: Vec<u8>,
    /// Each member's offset in the file.
    spans: Vec<usize>,
    file_len: usize,
}

impl Index {
    fn file_len(&self) -> usize {
        self.file_len
    }

    /// Writes the bundle into `out` (`file_len` zeroed octets), freeing
    /// each member once it is copied.
    fn write(self, members: Vec<Vec<u8>>, out: &mut [u8]) {
        out[..self.head.len()].copy_from_slice(&self.head);
        for (m, at) in members.into_iter().zip(self.spans) {
            out[at..at + m.len()].copy_from_slice(&m);
        }
    }
}

/// `text` cut to at most `max` octets, at a character boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

/// A compiled member without the spare capacity its growth left: every
/// member is held until the bundle is written.
fn trimmed(mut member: Vec<u8>) -> Vec<u8> {
    member.shrink_to_fit();
    member
}

fn to_u32(n: usize, what: &str) -> Result<u32, BuildError> {
    u32::try_from(n).map_err(|_| BuildError::too_large(format!("{what}: {n}")))
}

#[cfg(feature = "parallel")]
fn compile_all(
    config: &Config,
    bodies: &[&[u8]],
) -> Result<Vec<Vec<u8>>, BuildError> {
    use rayon::prelude::*;
    let compiler = Compiler::with_config(config.clone());
    // Large bodies first, so that the slowest compile starts early.
    let mut order: Vec<usize> = (0..bodies.len()).collect();
    order.sort_by_key(|&i| core::cmp::Reverse(bodies[i].len()));
    let mut out: Vec<(usize, Vec<u8>)> = order
        .par_iter()
        .with_max_len(1)
        .map(|&i| compiler.compile(bodies[i]).map(|b| (i, trimmed(b))))
        .collect::<Result<_, _>>()?;
    out.sort_unstable_by_key(|p| p.0);
    Ok(out.into_iter().map(|p| p.1).collect())
}

#[cfg(not(feature = "parallel"))]
fn compile_all(
    config: &Config,
    bodies: &[&[u8]],
) -> Result<Vec<Vec<u8>>, BuildError> {
    let compiler = Compiler::with_config(config.clone());
    bodies.iter().map(|b| compiler.compile(b).map(trimmed)).collect()
}
