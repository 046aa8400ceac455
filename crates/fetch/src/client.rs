//! HTTP for `robofilter fetch`: one robots.txt fetch with its redirects
//! followed by hand (up to five, chain recorded, loops caught), one
//! request in flight per host name across all fetches (redirect targets
//! included), bounded retries for connection failures, the body read
//! while streaming and cut at the cap, and a DNS resolver with a cache and
//! `--resolve` pins.

use std::collections::{HashMap, HashSet};
use std::error::Error as StdError;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{self, HeaderMap};
use tokio::sync::OnceCell;
use url::Url;

/// Redirects followed at most (RFC 9309 section 2.3.1.2).
pub const MAX_REDIRECTS: usize = 5;

/// What the client needs to know.
pub struct Settings {
    pub user_agent: String,
    pub timeout: Duration,
    pub max_body: usize,
    pub retries: u32,
    pub resolve: Vec<Pin>,
    /// Requests in flight at once to one address (many host names share
    /// one on shared hosting and CDNs).
    pub per_address: usize,
}

/// A `--resolve HOST:PORT:ADDR[,ADDR]...` entry.
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Pin {
    /// The host name, lower-case, or `*`.
    pub host: String,
    pub port: u16,
    pub addrs: Vec<IpAddr>,
}

impl Pin {
    /// Parses curl's `HOST:PORT:ADDR` (ADDR may be a bracketed IPv6
    /// address, and a comma-separated list).
    pub fn parse(s: &str) -> Result<Pin> {
        let usage = || {
            format!(
                "--resolve '{s}' is not HOST:PORT:ADDR (such as \
                 'example.com:443:127.0.0.1' or '*:8080:[::1]')"
            )
        };
        let (host, rest) = if let Some(r) = s.strip_prefix('[') {
            let (h, r) =
                r.split_once("]:").ok_or_else(|| anyhow::anyhow!(usage()))?;
            (format!("[{h}]"), r)
        } else {
            let (h, r) =
                s.split_once(':').ok_or_else(|| anyhow::anyhow!(usage()))?;
            (h.to_ascii_lowercase(), r)
        };
        let (port, addrs) =
            rest.split_once(':').ok_or_else(|| anyhow::anyhow!(usage()))?;
        let Ok(port) = port.parse::<u16>() else { bail!(usage()) };
        let mut ips = Vec::new();
        for a in addrs.split(',') {
            let a = a.trim();
            let a = a
                .strip_prefix('[')
                .and_then(|a| a.strip_suffix(']'))
                .unwrap_or(a);
            match a.parse::<IpAddr>() {
                Ok(ip) => ips.push(ip),
                Err(_) => bail!("{} ('{a}' is not an IP address)", usage()),
            }
        }
        if host.is_empty() || ips.is_empty() {
            bail!(usage());
        }
        Ok(Pin { host, port, addrs: ips })
    }
}

/// The error of a failed DNS lookup (told apart from other connection
/// failures: it is not retried).
#[derive(Debug)]
struct DnsError(String);

impl std::fmt::Display for DnsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for DnsError {}

/// Lookups answered by the `--resolve` pins for the name and port (then
/// `*` and port), else by the system resolver, each name once per run
/// (concurrent lookups of one name share the answer, failures included).
struct Resolver {
    pins: HashMap<(String, u16), Vec<IpAddr>>,
    cache: Mutex<HashMap<String, Lookup>>,
}

type Lookup = Arc<OnceCell<Result<Vec<IpAddr>, String>>>;

impl Resolver {
    fn new(pins: &[Pin]) -> Resolver {
        let mut map: HashMap<(String, u16), Vec<IpAddr>> = HashMap::new();
        for p in pins {
            let host = p.host.trim_start_matches('[').trim_end_matches(']');
            map.entry((host.to_string(), p.port))
                .or_default()
                .extend(&p.addrs);
        }
        Resolver { pins: map, cache: Mutex::new(HashMap::new()) }
    }

    async fn lookup(
        &self,
        name: &str,
        port: u16,
    ) -> Result<Vec<IpAddr>, String> {
        let pinned = self
            .pins
            .get(&(name.to_string(), port))
            .or_else(|| self.pins.get(&("*".to_string(), port)));
        if let Some(ips) = pinned {
            return Ok(ips.clone());
        }
        let cell = {
            let mut cache =
                self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.entry(name.to_string()).or_default().clone()
        };
        cell.get_or_init(|| async {
            match tokio::net::lookup_host((name, 0)).await {
                Ok(addrs) => {
                    let ips: Vec<IpAddr> = addrs.map(|a| a.ip()).collect();
                    if ips.is_empty() {
                        Err(format!("DNS: no address for '{name}'"))
                    } else {
                        Ok(ips)
                    }
                }
                Err(e) => Err(format!("DNS lookup of '{name}' failed: {e}")),
            }
        })
        .await
        .clone()
    }
}

/// The resolver of one host's fetch: the run's [`Resolver`], told the
/// port of the request in flight (reqwest asks for names only; a fetch
/// has one request in flight at a time, so the port is that request's).
#[derive(Clone)]
struct FetchResolver {
    run: Arc<Resolver>,
    port: Arc<AtomicU16>,
}

impl Resolve for FetchResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (run, port) = (self.run.clone(), self.port.load(Ordering::SeqCst));
        Box::pin(async move {
            let name = name.as_str().to_ascii_lowercase();
            match run.lookup(&name, port).await {
                // Port 0: the connector uses the URL's port.
                Ok(ips) => Ok(Box::new(
                    ips.into_iter().map(|ip| SocketAddr::new(ip, 0)),
                ) as Addrs),
                Err(msg) => {
                    Err(Box::new(DnsError(msg))
                        as Box<dyn StdError + Send + Sync>)
                }
            }
        })
    }
}

/// One lock per host name: a request to a host waits for the one in
/// flight there, whichever fetch (or redirect) it belongs to.
#[derive(Default)]
struct HostLocks {
    map: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// A host's lock, held while its request is in flight, with its address's
/// permit.
struct HostGuard<'a> {
    locks: &'a HostLocks,
    host: String,
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    /// A place among the requests in flight to the host's address.
    _address: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// One semaphore per resolved address: at most `per_address` requests in
/// flight to an address, whatever the host names (a server with a short
/// listen backlog refuses the rest, and a refusal would disallow the
/// host's every URL).
struct AddressSlots {
    per_address: usize,
    map: Mutex<HashMap<IpAddr, Arc<tokio::sync::Semaphore>>>,
}

impl AddressSlots {
    async fn take(
        &self,
        ip: IpAddr,
    ) -> Option<tokio::sync::OwnedSemaphorePermit> {
        let slots = {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            let n = self.per_address.max(1);
            map.entry(ip)
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(n)))
                .clone()
        };
        slots.acquire_owned().await.ok()
    }
}

impl HostLocks {
    async fn lock(&self, host: &str) -> HostGuard<'_> {
        let m = {
            let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(host.to_string()).or_default().clone()
        };
        let guard = m.lock_owned().await;
        HostGuard {
            locks: self,
            host: host.to_string(),
            guard: Some(guard),
            _address: None,
        }
    }
}

impl Drop for HostGuard<'_> {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut map = self.locks.map.lock().unwrap_or_else(|e| e.into_inner());
        // Forget a lock nobody else holds or waits for.
        if map.get(&self.host).is_some_and(|m| Arc::strong_count(m) == 1) {
            map.remove(&self.host);
        }
    }
}

/// The validators of a previous copy, for a conditional GET.
#[derive(Clone, Debug, Default)]
pub struct Validators {
    pub etag: Option<String>,
    pub last_modified: Option<String>,
}

/// The final response of a fetch, or why there was none.
#[derive(Debug)]
pub enum Reply {
    Http {
        status: u16,
        /// The body of a 2xx response (decoded, at most the cap).
        body: Vec<u8>,
        truncated: bool,
        etag: Option<String>,
        last_modified: Option<String>,
        cache_control: Option<String>,
        expires: Option<String>,
        date: Option<String>,
    },
    /// No usable response: DNS, connect, TLS, timeout, reset, a body cut
    /// short, or a status outside 100-599.
    Failed(String),
}

/// A fetch: its reply, the redirect targets, and why a redirect was not
/// followed.
#[derive(Debug)]
pub struct Fetched {
    pub reply: Reply,
    pub chain: Vec<String>,
    pub note: Option<String>,
    pub elapsed: Duration,
}

/// The HTTP client of a run.
pub struct Client {
    user_agent: String,
    resolver: Arc<Resolver>,
    hosts: HostLocks,
    addresses: AddressSlots,
    retries: u32,
    max_body: usize,
    timeout: Duration,
}

impl Client {
    pub fn new(s: &Settings) -> Result<Client> {
        let client = Client {
            user_agent: s.user_agent.clone(),
            resolver: Arc::new(Resolver::new(&s.resolve)),
            hosts: HostLocks::default(),
            addresses: AddressSlots {
                per_address: s.per_address,
                map: Mutex::new(HashMap::new()),
            },
            retries: s.retries,
            max_body: s.max_body,
            timeout: s.timeout,
        };
        // Fail here, once, rather than per host.
        client.http()?;
        Ok(client)
    }

    /// The connection pool of one host's fetch: its redirect hops and
    /// retries reuse a connection; dropped (closing it) when the fetch
    /// ends, since no later fetch asks that host again. One pool for the
    /// whole run would keep an idle socket per host for its idle timeout:
    /// thousands at a few thousand hosts a second, and EMFILE failures
    /// reported as unreachable hosts. (Measured: a client per fetch costs
    /// about a tenth more CPU, within the noise of a shared machine;
    /// docs/records.) The DNS cache is shared.
    fn http(&self) -> Result<(reqwest::Client, Arc<AtomicU16>)> {
        let port = Arc::new(AtomicU16::new(0));
        let resolver =
            FetchResolver { run: self.resolver.clone(), port: port.clone() };
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(&self.user_agent)
            .timeout(self.timeout)
            .connect_timeout(self.timeout)
            .pool_max_idle_per_host(1)
            .no_proxy()
            .dns_resolver(Arc::new(resolver))
            .build()
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot start the HTTP client: {}",
                    error_text(&e)
                )
            })?;
        Ok((http, port))
    }

    /// Fetches `url`, following up to five redirects.
    pub async fn fetch(&self, url: &str, v: &Validators) -> Fetched {
        let start = Instant::now();
        let mut chain = Vec::new();
        let done = |reply, chain, note: Option<String>| Fetched {
            reply,
            chain,
            note,
            elapsed: start.elapsed(),
        };
        let mut current = match Url::parse(url) {
            Ok(u) => u,
            Err(e) => {
                return done(
                    Reply::Failed(format!("bad URL '{url}': {e}")),
                    chain,
                    None,
                );
            }
        };
        let (http, port) = match self.http() {
            Ok(h) => h,
            Err(e) => {
                return done(Reply::Failed(format!("{e:#}")), chain, None);
            }
        };
        let mut seen = HashSet::from([current.to_string()]);
        loop {
            let host = current.host_str().unwrap_or("").to_string();
            port.store(
                current.port_or_known_default().unwrap_or(0),
                Ordering::SeqCst,
            );
            let (resp, guard) =
                match self.send(&http, &current, &host, v).await {
                    Ok(r) => r,
                    Err(msg) => return done(Reply::Failed(msg), chain, None),
                };
            let status = resp.status().as_u16();
            if !(100..=599).contains(&status) {
                let msg = format!(
                    "HTTP status {status} from {current} is outside 100-599 \
                     (not an HTTP response)"
                );
                return done(Reply::Failed(msg), chain, None);
            }
            if matches!(status, 301 | 302 | 303 | 307 | 308) {
                let headers =
                    cache_headers(resp.headers(), status, Vec::new(), false);
                let location = resp.headers().get(header::LOCATION).map(|l| {
                    String::from_utf8_lossy(l.as_bytes()).into_owned()
                });
                drop(resp);
                drop(guard);
                let Some(location) = location else {
                    let note = format!(
                        "HTTP {status} from {current} without a Location"
                    );
                    return done(headers, chain, Some(note));
                };
                let next = match current.join(location.trim()) {
                    Ok(mut u) if matches!(u.scheme(), "http" | "https") => {
                        u.set_fragment(None);
                        u
                    }
                    _ => {
                        let note = format!(
                            "HTTP {status} from {current} to '{location}', \
                             not an http(s) URL"
                        );
                        return done(headers, chain, Some(note));
                    }
                };
                chain.push(next.to_string());
                if chain.len() > MAX_REDIRECTS {
                    let note = format!(
                        "more than {MAX_REDIRECTS} redirects (the sixth, from \
                         {current}, was not followed)"
                    );
                    return done(headers, chain, Some(note));
                }
                if !seen.insert(next.to_string()) {
                    let note =
                        format!("redirect loop: {next} was already requested");
                    return done(headers, chain, Some(note));
                }
                current = next;
                continue;
            }
            if !(200..=299).contains(&status) {
                let reply =
                    cache_headers(resp.headers(), status, Vec::new(), false);
                return done(reply, chain, None);
            }
            let headers = resp.headers().clone();
            let (body, truncated) = match self.read_body(resp).await {
                Ok(b) => b,
                Err(msg) => {
                    return done(
                        Reply::Failed(format!("{current}: {msg}")),
                        chain,
                        None,
                    );
                }
            };
            drop(guard);
            let (body, truncated) =
                decode_codings(&headers, body, truncated, self.max_body);
            return done(
                cache_headers(&headers, status, body, truncated),
                chain,
                None,
            );
        }
    }

    /// One request, with the host's lock held (and returned: it is held
    /// while the body is read); connection failures are tried again after
    /// a pause, without the lock.
    async fn send(
        &self,
        http: &reqwest::Client,
        url: &Url,
        host: &str,
        v: &Validators,
    ) -> Result<(reqwest::Response, HostGuard<'_>), String> {
        let mut attempt = 0;
        loop {
            let mut guard = self.hosts.lock(host).await;
            // The address the request will go to (the lookup is cached;
            // a failed one is left to the request to report).
            let port = url.port_or_known_default().unwrap_or(0);
            let name = url.host_str().unwrap_or(host).to_ascii_lowercase();
            let name = name.trim_start_matches('[').trim_end_matches(']');
            let ip = match name.parse::<IpAddr>() {
                Ok(ip) => Some(ip),
                Err(_) => self
                    .resolver
                    .lookup(name, port)
                    .await
                    .ok()
                    .and_then(|ips| ips.first().copied()),
            };
            if let Some(ip) = ip {
                guard._address = self.addresses.take(ip).await;
            }
            let mut req = http.get(url.clone());
            if let Some(etag) = &v.etag {
                req = req.header(header::IF_NONE_MATCH, etag);
            }
            if let Some(lm) = &v.last_modified {
                req = req.header(header::IF_MODIFIED_SINCE, lm);
            }
            match req.send().await {
                Ok(resp) => return Ok((resp, guard)),
                Err(e) => {
                    drop(guard);
                    let text = if e.is_timeout() {
                        format!(
                            "{url}: no response within {} s (--timeout)",
                            self.timeout.as_secs_f64()
                        )
                    } else {
                        error_text(&e)
                    };
                    if e.is_timeout() || is_dns(&e) || attempt >= self.retries
                    {
                        return Err(text);
                    }
                    // 250 ms, 500 ms, 1 s, ...
                    let pause = Duration::from_millis(250 << attempt.min(6));
                    tokio::time::sleep(pause).await;
                    attempt += 1;
                }
            }
        }
    }

    /// The body, decoded, up to the cap (the connection is dropped there:
    /// never much more than the cap is downloaded).
    async fn read_body(
        &self,
        mut resp: reqwest::Response,
    ) -> Result<(Vec<u8>, bool), String> {
        let mut body = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    let room = self.max_body - body.len();
                    if chunk.len() > room {
                        body.extend_from_slice(&chunk[..room]);
                        return Ok((body, true));
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => return Ok((body, false)),
                Err(e) => {
                    let why = if e.is_timeout() {
                        format!(
                            "no complete body within {} s (--timeout)",
                            self.timeout.as_secs_f64()
                        )
                    } else {
                        error_text(&e)
                    };
                    return Err(format!(
                        "the body was cut short after {} octets: {why}",
                        body.len()
                    ));
                }
            }
        }
    }
}

/// The reply of an HTTP response with these headers.
fn cache_headers(
    h: &HeaderMap,
    status: u16,
    body: Vec<u8>,
    truncated: bool,
) -> Reply {
    let get = |name: header::HeaderName| {
        h.get(name).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    };
    Reply::Http {
        status,
        body,
        truncated,
        etag: get(header::ETAG),
        last_modified: get(header::LAST_MODIFIED),
        cache_control: get(header::CACHE_CONTROL),
        expires: get(header::EXPIRES),
        date: get(header::DATE),
    }
}

/// Whether the failure is a DNS lookup's.
fn is_dns(e: &reqwest::Error) -> bool {
    let mut src: Option<&(dyn StdError + 'static)> = e.source();
    while let Some(s) = src {
        if s.is::<DnsError>() {
            return true;
        }
        src = s.source();
    }
    false
}

/// An error and its causes, each said once: `error sending request for
/// url (...): client error (Connect): tcp connect error: Connection
/// refused (os error 111)`.
fn error_text(e: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut src: Option<&(dyn StdError + 'static)> = Some(e);
    while let Some(s) = src {
        let t = s.to_string();
        if !parts.iter().any(|p| p.contains(&t)) {
            parts.push(t);
        }
        src = s.source();
    }
    let text = parts.join(": ");
    // An https request answered in plain HTTP: rustls sees a record of
    // an unknown content type. Say what happened and what to do.
    if text.contains("InvalidContentType") || text.contains("corrupt message")
    {
        return format!(
            "{text} (the server answered in plain HTTP, not TLS: for such \
             hosts give http:// URLs, or --scheme http for bare host[:port] \
             lines)"
        );
    }
    text
}

/// The content codings the HTTP client left on a body: it decodes a lone
/// `gzip` (and `deflate`, `br`) itself and then drops the header, so a
/// `Content-Encoding` still present lists codings it did not undo:
/// `x-gzip` (which is gzip, RFC 9110 section 8.4.1), another spelling's
/// case, or gzip applied twice (`gzip, gzip`). Those that are gzip (or
/// zstd) are undone here, last applied first, up to the cap. What cannot
/// be undone is left as it is: a body that is still compressed is then
/// refused when a bundle is built (a bad member, its host disallowed),
/// never compiled as text.
fn decode_codings(
    headers: &reqwest::header::HeaderMap,
    mut body: Vec<u8>,
    mut truncated: bool,
    max_body: usize,
) -> (Vec<u8>, bool) {
    let codings: Vec<String> = headers
        .get_all(reqwest::header::CONTENT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|c| c.trim().to_ascii_lowercase())
        .filter(|c| !c.is_empty() && c != "identity")
        .collect();
    for coding in codings.iter().rev() {
        let known = matches!(coding.as_str(), "gzip" | "x-gzip" | "zstd");
        if !known || truncated {
            // Unknown, or cut: a cut stream does not decode whole.
            break;
        }
        match robofilter_io::decompress_bytes(&body, max_body as u64) {
            Ok(Some(mut out)) => {
                if out.len() > max_body {
                    out.truncate(max_body);
                    truncated = true;
                }
                body = out;
            }
            // Not compressed after all, or damaged: left as it is.
            _ => break,
        }
    }
    (body, truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins() {
        let p = Pin::parse("A.test:8080:127.0.0.1").unwrap();
        assert_eq!(p.host, "a.test");
        assert_eq!(p.port, 8080);
        assert_eq!(p.addrs, ["127.0.0.1".parse::<IpAddr>().unwrap()]);
        let p = Pin::parse("*:443:[::1],10.0.0.1").unwrap();
        assert_eq!(p.host, "*");
        assert_eq!(p.addrs.len(), 2);
        let p = Pin::parse("[::1]:80:127.0.0.1").unwrap();
        assert_eq!(p.host, "[::1]");
        for bad in [
            "a.test",
            "a.test:80",
            "a.test:x:127.0.0.1",
            ":80:1.2.3.4",
            "a:80:nope",
        ] {
            assert!(Pin::parse(bad).is_err(), "{bad}");
        }
    }
}
