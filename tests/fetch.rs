//! `robofilter fetch` against loopback HTTP servers started here (never
//! the network): raw responses written by hand give fault injection for
//! every status class, redirects, hangs, resets, cut and oversized bodies,
//! compression, conditional requests, per-host concurrency and resume;
//! and the whole pipeline `fetch` -> `compile --manifest` -> `filter`.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread;
use std::time::Duration;

use serde_json::Value;

use crate::util::{Dir, Run};

/// A request as the server saw it.
#[derive(Clone, Debug)]
struct Req {
    /// The Host header without its port.
    host: String,
    path: String,
    /// Lower-case names.
    headers: HashMap<String, String>,
}

/// What the server does with a request.
enum Action {
    /// Write these bytes and close.
    Raw(Vec<u8>),
    /// Hold the connection open without answering.
    Hang,
    /// Wait, then write.
    Delay(Duration, Vec<u8>),
    /// Write `head`, then up to `total` body octets in 16 KiB writes
    /// until the client goes away; send how many body octets were
    /// written.
    Stream { head: Vec<u8>, total: usize, written: mpsc::Sender<usize> },
}

type Handler = dyn Fn(&Req) -> Action + Send + Sync;

/// A loopback HTTP/1.1 server: one request per connection.
struct Server {
    port: u16,
    log: Arc<Mutex<Vec<Req>>>,
    /// Per host: the most requests in flight at once.
    peak: Arc<Mutex<HashMap<String, usize>>>,
    /// The most requests in flight at once, all hosts.
    peak_all: Arc<AtomicUsize>,
}

impl Server {
    fn start(
        handler: impl Fn(&Req) -> Action + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let handler: Arc<Handler> = Arc::new(handler);
        let log = Arc::new(Mutex::new(Vec::new()));
        let peak = Arc::new(Mutex::new(HashMap::new()));
        let peak_all = Arc::new(AtomicUsize::new(0));
        let inflight =
            Arc::new(Mutex::new((HashMap::<String, usize>::new(), 0usize)));
        let (l2, p2, a2) = (log.clone(), peak.clone(), peak_all.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (h, log, peak, all, inflight) = (
                    handler.clone(),
                    l2.clone(),
                    p2.clone(),
                    a2.clone(),
                    inflight.clone(),
                );
                thread::spawn(move || {
                    serve(stream, &*h, &log, &peak, &all, &inflight);
                });
            }
        });
        Server { port, log, peak, peak_all }
    }

    fn requests(&self) -> Vec<Req> {
        self.log.lock().unwrap().clone()
    }

    fn requests_to(&self, host: &str) -> Vec<Req> {
        self.requests().into_iter().filter(|r| r.host == host).collect()
    }

    /// `--resolve *:PORT:127.0.0.1`.
    fn pin(&self) -> String {
        format!("*:{}:127.0.0.1", self.port)
    }

    fn url(&self, host: &str) -> String {
        format!("http://{host}:{}/", self.port)
    }
}

fn serve(
    mut s: TcpStream,
    h: &Handler,
    log: &Mutex<Vec<Req>>,
    peak: &Mutex<HashMap<String, usize>>,
    all: &AtomicUsize,
    inflight: &Mutex<(HashMap<String, usize>, usize)>,
) {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut byte) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&byte[..n]),
        }
    }
    let text = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = text.split("\r\n");
    let path =
        lines.next().unwrap().split(' ').nth(1).unwrap_or("").to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let host = headers.get("host").cloned().unwrap_or_default();
    let host =
        host.rsplit_once(':').map_or(host.clone(), |(h, _)| h.to_string());
    let req = Req { host: host.clone(), path, headers };
    log.lock().unwrap().push(req.clone());
    {
        let mut f = inflight.lock().unwrap();
        let n = f.0.entry(host.clone()).or_default();
        *n += 1;
        let n = *n;
        f.1 += 1;
        all.fetch_max(f.1, Ordering::SeqCst);
        let mut p = peak.lock().unwrap();
        let e = p.entry(host.clone()).or_default();
        *e = (*e).max(n);
    }
    // A request stops counting as in flight when its whole response is
    // about to be written: the client cannot send its next request to the
    // host before reading this one, so that request can never be counted
    // while this one still is (counting after the write let a descheduled
    // server thread see a host's requests overlap that never did).
    let done = || {
        let mut f = inflight.lock().unwrap();
        *f.0.get_mut(&host).unwrap() -= 1;
        f.1 -= 1;
    };
    match h(&req) {
        Action::Raw(bytes) => {
            done();
            let _ = s.write_all(&bytes);
            return;
        }
        Action::Delay(d, bytes) => {
            thread::sleep(d);
            done();
            let _ = s.write_all(&bytes);
            return;
        }
        Action::Hang => thread::sleep(Duration::from_secs(30)),
        Action::Stream { head, total, written } => {
            let _ = s.write_all(&head);
            let block = vec![b'#'; 16 << 10];
            let mut n = 0;
            while n < total {
                match s.write(&block[..block.len().min(total - n)]) {
                    Ok(k) if k > 0 => n += k,
                    _ => break,
                }
            }
            let _ = written.send(n);
        }
    }
    done();
}

/// A whole response with Content-Length, closing the connection.
fn resp(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str("\r\n");
    let mut r = r.into_bytes();
    r.extend_from_slice(body);
    r
}

fn ok(body: &str) -> Action {
    Action::Raw(resp("200 OK", &[], body.as_bytes()))
}

fn redirect(status: &str, to: &str) -> Action {
    Action::Raw(resp(status, &[("Location", to)], b""))
}

/// Runs `fetch` in `dir` and returns the run.
fn fetch(dir: &Dir, args: &[&str]) -> Run {
    let mut all = vec!["fetch", "--retries", "0"];
    if !args.contains(&"--timeout") {
        all.extend(["--timeout", "5"]);
    }
    all.extend_from_slice(args);
    dir.run_within(&all, Duration::from_secs(60))
}

/// OUT's entries by host key.
fn entries(dir: &Dir, name: &str) -> HashMap<String, Value> {
    let text = String::from_utf8(dir.read(name)).unwrap();
    text.lines()
        .map(|l| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
            (v["host"].as_str().unwrap().to_string(), v)
        })
        .collect()
}

/// Fetches `HOST.test` for each of `hosts` from server `s` (every name
/// pinned to it) into `out.jsonl`, through a host list; the run must
/// succeed.
fn fetch_hosts(dir: &Dir, s: &Server, hosts: &[&str]) -> Run {
    let list: String = hosts
        .iter()
        .map(|h| format!("{}\n", s.url(&format!("{h}.test"))))
        .collect();
    dir.write("hosts.txt", list);
    let run =
        fetch(dir, &["hosts.txt", "-o", "out.jsonl", "--resolve", &s.pin()]);
    run.ok();
    run
}

/// `filter b.rf --agent bot --emit all` on `urls`: each line's verdict,
/// and the whole output (for messages).
fn verdicts(dir: &Dir, urls: &str) -> (Vec<String>, String) {
    let out = dir
        .run_with(
            &["filter", "b.rf", "--agent", "bot", "--emit", "all"],
            urls.as_bytes(),
        )
        .ok();
    let verdicts =
        out.lines().map(|l| l.split('\t').next().unwrap().to_string());
    (verdicts.collect(), out)
}

fn key(host: &str, s: &Server) -> String {
    format!("{host}:{}", s.port)
}

#[test]
fn fetch_status_classes() {
    let s = Server::start(|r| match r.host.as_str() {
        "ok.test" => Action::Raw(resp(
            "200 OK",
            &[("ETag", "\"e1\"")],
            b"User-agent: *\nDisallow: /p\n",
        )),
        "empty.test" => Action::Raw(resp("204 No Content", &[], b"")),
        "gone.test" => Action::Raw(resp("404 Not Found", &[], b"nope")),
        "auth.test" => Action::Raw(resp("401 Unauthorized", &[], b"")),
        "slow.test" => Action::Raw(resp("429 Too Many Requests", &[], b"")),
        "down.test" => Action::Raw(resp("503 Service Unavailable", &[], b"")),
        "err.test" => Action::Raw(resp("500 Internal Server Error", &[], b"")),
        "odd.test" => Action::Raw(resp("999 Request denied", &[], b"")),
        "multi.test" => Action::Raw(resp("300 Multiple Choices", &[], b"")),
        _ => Action::Raw(resp("418 I'm a teapot", &[], b"")),
    });
    let dir = Dir::new("fetch-status");
    let hosts =
        ["ok", "empty", "gone", "auth", "slow", "down", "err", "odd", "multi"];
    let run = fetch_hosts(&dir, &s, &hosts);
    run.stderr_has(&["9 hosts: 2 2xx", "3 unavailable", "4 unreachable"]);
    let e = entries(&dir, "out.jsonl");
    let get = |h: &str| e[&key(&format!("{h}.test"), &s)].clone();
    assert_eq!(get("ok")["status"], 200);
    assert_eq!(get("ok")["body"], "User-agent: *\nDisallow: /p\n");
    assert_eq!(get("ok")["etag"], "\"e1\"");
    assert_eq!(
        get("ok")["url"],
        format!("http://ok.test:{}/robots.txt", s.port)
    );
    assert_eq!(get("empty")["status"], 204);
    assert_eq!(get("gone")["status"], 404);
    // A non-2xx body is not kept.
    assert!(get("gone").get("body").is_none());
    assert_eq!(get("auth")["status"], 401);
    assert_eq!(get("multi")["status"], 300);
    for (h, code) in [("slow", 429), ("down", 503), ("err", 500)] {
        assert_eq!(get(h)["status"], code, "{h}");
        assert!(
            get(h)["error"]
                .as_str()
                .unwrap()
                .contains(&format!("HTTP {code}")),
            "{h}"
        );
    }
    assert_eq!(get("odd")["status"], "unreachable");
    assert!(get("odd")["error"].as_str().unwrap().contains("outside 100-599"));
    // The pipeline: compile --manifest, then filter (RFC 9309 2.3.1).
    dir.run(&["compile", "--manifest", "out.jsonl", "-o", "b.rf"]).ok();
    let p = s.port;
    let urls: String = [
        "ok.test/p",
        "ok.test/q",
        "gone.test/p",
        "slow.test/q",
        "down.test/q",
        "odd.test/q",
        "other.test/q",
    ]
    .iter()
    .map(|u| {
        let (h, path) = u.split_once('/').unwrap();
        format!("http://{h}:{p}/{path}\n")
    })
    .collect();
    let (verdicts, out) = verdicts(&dir, &urls);
    assert_eq!(
        verdicts,
        [
            "disallow", "allow", "allow", "disallow", "disallow", "disallow",
            "unknown"
        ],
        "{out}"
    );
    // Each host asked once, for /robots.txt, with our User-Agent.
    let reqs = s.requests();
    assert_eq!(reqs.len(), 9);
    assert!(reqs.iter().all(|r| r.path == "/robots.txt"));
    assert!(
        reqs.iter()
            .all(|r| r.headers["user-agent"].starts_with("robofilter/"))
    );
}

#[test]
fn fetch_redirects() {
    let s = Server::start(|r| {
        let n: usize = r.path.trim_start_matches("/r").parse().unwrap_or(0);
        match (r.host.as_str(), r.path.as_str()) {
            ("same.test", "/robots.txt") => redirect("301 Moved", "/r1"),
            ("same.test", "/r1") => redirect("302 Found", "/r2"),
            ("same.test", "/r2") => ok("User-agent: *\nDisallow: /same\n"),
            ("five.test", _) if n < 5 => {
                redirect("307 Temporary", &format!("/r{}", n + 1))
            }
            ("five.test", _) => ok("User-agent: *\nDisallow: /five\n"),
            ("endless.test", _) => {
                redirect("302 Found", &format!("/r{}", n + 1))
            }
            ("loop.test", "/robots.txt") => redirect("301 Moved", "/a"),
            ("loop.test", "/a") => redirect("301 Moved", "/robots.txt"),
            ("noloc.test", _) => Action::Raw(resp("302 Found", &[], b"")),
            _ => Action::Raw(resp("404 Not Found", &[], b"")),
        }
    });
    let dir = Dir::new("fetch-redirects");
    let hosts = ["same", "five", "endless", "loop", "noloc"];
    fetch_hosts(&dir, &s, &hosts);
    let e = entries(&dir, "out.jsonl");
    let get = |h: &str| e[&key(&format!("{h}.test"), &s)].clone();
    let p = s.port;
    let same = get("same");
    assert_eq!(same["status"], 200);
    assert_eq!(same["body"], "User-agent: *\nDisallow: /same\n");
    assert_eq!(same["redirects"], 2);
    assert_eq!(
        same["redirect_chain"],
        serde_json::json!([
            format!("http://same.test:{p}/r1"),
            format!("http://same.test:{p}/r2")
        ])
    );
    let five = get("five");
    assert_eq!(five["status"], 200);
    assert_eq!(five["redirects"], 5);
    let endless = get("endless");
    assert_eq!(endless["status"], 302);
    assert_eq!(endless["redirects"], 6);
    assert!(
        endless["error"].as_str().unwrap().contains("more than 5 redirects")
    );
    // Five redirects followed: six requests, no seventh.
    assert_eq!(s.requests_to("endless.test").len(), 6);
    let lp = get("loop");
    assert_eq!(lp["status"], 301);
    assert!(lp["error"].as_str().unwrap().contains("redirect loop"), "{lp}");
    assert_eq!(s.requests_to("loop.test").len(), 2);
    assert!(
        get("noloc")["error"].as_str().unwrap().contains("without a Location")
    );

    // compile: the endless host counts as "more than five redirects".
    dir.run(&["compile", "--manifest", "out.jsonl", "-o", "b.rf"]).ok();
    let urls: String = ["same", "five", "endless", "loop"]
        .iter()
        .map(|h| format!("http://{h}.test:{p}/{h}\n"))
        .collect();
    let (verdicts, out) = verdicts(&dir, &urls);
    assert_eq!(verdicts, ["disallow", "disallow", "allow", "allow"], "{out}");
}

/// A redirect to another host is followed to that host (the final body
/// counts for the original host).
#[test]
fn fetch_redirect_to_other_host() {
    let target = Server::start(|_| ok("User-agent: *\nDisallow: /other\n"));
    let tp = target.port;
    let s = Server::start(move |_| {
        redirect("301 Moved", &format!("http://cdn.test:{tp}/robots.txt"))
    });
    let dir = Dir::new("fetch-other-host");
    // cdn.test on the first server's port is not pinned (a pin is for
    // its port only, as curl's): DNS, which knows no `.test` name.
    dir.write(
        "hosts.txt",
        format!("{}\n{}\n", s.url("www.test"), s.url("cdn.test")),
    );
    let pins = [
        format!("www.test:{}:127.0.0.1", s.port),
        format!("cdn.test:{tp}:127.0.0.1"),
    ];
    fetch(
        &dir,
        &[
            "hosts.txt",
            "-o",
            "out.jsonl",
            "--resolve",
            &pins[0],
            "--resolve",
            &pins[1],
        ],
    )
    .ok();
    let e = entries(&dir, "out.jsonl");
    let w = &e[&key("www.test", &s)];
    assert_eq!(w["status"], 200);
    assert_eq!(w["body"], "User-agent: *\nDisallow: /other\n");
    assert_eq!(
        w["redirect_chain"],
        serde_json::json!([format!("http://cdn.test:{tp}/robots.txt")])
    );
    assert_eq!(target.requests_to("cdn.test").len(), 1);
    assert!(s.requests_to("cdn.test").is_empty());
    let c = &e[&key("cdn.test", &s)];
    assert_eq!(c["status"], "unreachable");
    assert!(c["error"].as_str().unwrap().contains("DNS"), "{c}");
}

#[test]
fn fetch_network_failures() {
    let hang = Server::start(|_| Action::Hang);
    // Reads one octet and closes with the rest unread: a reset.
    let reset = TcpListener::bind("127.0.0.1:0").unwrap();
    let reset_port = reset.local_addr().unwrap().port();
    let resets = Arc::new(AtomicUsize::new(0));
    let r2 = resets.clone();
    thread::spawn(move || {
        for s in reset.incoming() {
            let Ok(mut s) = s else { continue };
            r2.fetch_add(1, Ordering::SeqCst);
            let _ = s.read(&mut [0u8; 1]);
            drop(s);
        }
    });
    let cut = Server::start(|_| {
        let mut r = resp("200 OK", &[], &[b'a'; 100]);
        r.truncate(r.len() - 50);
        Action::Raw(r)
    });
    // Answers plain HTTP at once, to a TLS ClientHello too: a TLS failure.
    let plain = TcpListener::bind("127.0.0.1:0").unwrap();
    let plain_port = plain.local_addr().unwrap().port();
    thread::spawn(move || {
        for s in plain.incoming() {
            let Ok(mut s) = s else { continue };
            let _ = s.write_all(&resp("200 OK", &[], b"User-agent: *\n"));
            thread::sleep(Duration::from_millis(200));
        }
    });
    // A port nobody listens on.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let dir = Dir::new("fetch-network");
    dir.write(
        "hosts.txt",
        format!(
            "{}\nhttp://reset.test:{reset_port}/\n{}\nhttp://closed.test:{closed_port}/\nhttps://tls.test:{plain_port}/\nhttp://nxdomain.invalid/\n",
            hang.url("hang.test"),
            cut.url("cut.test"),
        ),
    );
    let start = std::time::Instant::now();
    let run = dir.run_within(
        &[
            "fetch",
            "hosts.txt",
            "-o",
            "out.jsonl",
            "--timeout",
            "1",
            "--retries",
            "2",
            "--resolve",
            &hang.pin(),
            "--resolve",
            &cut.pin(),
            "--resolve",
            &format!("reset.test:{reset_port}:127.0.0.1"),
            "--resolve",
            &format!("closed.test:{closed_port}:127.0.0.1"),
            "--resolve",
            &format!("tls.test:{plain_port}:127.0.0.1"),
        ],
        Duration::from_secs(60),
    );
    run.ok();
    // The hang costs one timeout (not retried); retries pause 0.25 + 0.5 s.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let e = entries(&dir, "out.jsonl");
    for (k, want) in [
        (key("hang.test", &hang), "no response within 1 s"),
        (format!("reset.test:{reset_port}"), "error sending request"),
        (key("cut.test", &cut), "the body was cut short after"),
        (format!("closed.test:{closed_port}"), "Connection refused"),
        (format!("tls.test:{plain_port}"), "InvalidContentType"),
        (format!("tls.test:{plain_port}"), "--scheme http"),
        (
            "nxdomain.invalid".to_string(),
            "DNS lookup of 'nxdomain.invalid' failed",
        ),
    ] {
        let v = &e[&k];
        assert_eq!(v["status"], "unreachable", "{k}: {v}");
        let err = v["error"].as_str().unwrap();
        assert!(err.contains(want), "{k}: {err}");
    }
    // A reset is a connection failure: tried again twice.
    assert_eq!(resets.load(Ordering::SeqCst), 3);
    // A timeout is not tried again.
    assert_eq!(hang.requests().len(), 1);
    // The bundle keeps each cause, and `--explain` names it (issue 37).
    dir.run(&["compile", "--manifest", "out.jsonl", "-o", "b.rf"]).ok();
    dir.write(
        "urls.txt",
        format!(
            "http://closed.test:{closed_port}/a\nhttp://nxdomain.invalid/b\n"
        ),
    );
    let out = dir
        .run(&[
            "filter",
            "b.rf",
            "urls.txt",
            "--agent",
            "bot",
            "--emit",
            "all",
            "--explain",
        ])
        .ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("disallow\t"), "{out}");
    assert!(lines[0].contains("Connection refused"), "{out}");
    assert!(lines[1].contains("DNS lookup of 'nxdomain.invalid'"), "{out}");
    let host = format!("closed.test:{closed_port}");
    let inspect = dir.run(&["inspect", "b.rf", "--host", &host]).ok();
    assert!(inspect.contains("cause: "), "{inspect}");
}

#[test]
fn fetch_encodings_and_body_cap() {
    use flate2::{Compression, write::GzEncoder};
    let rules = "User-agent: *\nDisallow: /gz\n".repeat(50);
    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(rules.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let s = Server::start(move |r| {
        match r.host.as_str() {
        "gzip.test" => Action::Raw(resp("200 OK", &[("Content-Encoding", "gzip")], &gz)),
        "chunked.test" => Action::Raw(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
              e\r\nUser-agent: *\n\r\n11\r\nDisallow: /chunk\n\r\n0\r\n\r\n"
                .to_vec(),
        ),
        "huge.test" => Action::Stream {
            head: b"HTTP/1.1 200 OK\r\nContent-Length: 268435456\r\n\r\n".to_vec(),
            total: 256 << 20,
            written: tx.lock().unwrap().clone(),
        },
        _ => Action::Raw(resp("404 Not Found", &[], b"")),
    }
    });
    let dir = Dir::new("fetch-encodings");
    dir.write(
        "hosts.txt",
        format!(
            "{}\n{}\n{}\n",
            s.url("gzip.test"),
            s.url("chunked.test"),
            s.url("huge.test")
        ),
    );
    fetch(&dir, &["hosts.txt", "-o", "out.jsonl", "--resolve", &s.pin()]).ok();
    let e = entries(&dir, "out.jsonl");
    assert_eq!(e[&key("gzip.test", &s)]["body"], rules.as_str());
    assert!(
        s.requests_to("gzip.test")[0].headers["accept-encoding"]
            .contains("gzip")
    );
    assert_eq!(
        e[&key("chunked.test", &s)]["body"],
        "User-agent: *\nDisallow: /chunk\n"
    );
    let huge = &e[&key("huge.test", &s)];
    assert_eq!(huge["truncated"], true);
    assert_eq!(huge["body"].as_str().unwrap().len(), 528_663);
    // The connection was dropped at the cap: of 256 MiB offered, only the
    // cap and what the socket buffers held were sent.
    let written = rx.recv_timeout(Duration::from_secs(20)).unwrap();
    eprintln!("body cap: the server wrote {written} octets");
    // (About 4 MiB here: the two sockets' buffers.)
    assert!(written < 16 << 20, "the server wrote {written} octets");
    // compile --manifest reads the cut body (rfc9309 parses its limit).
    dir.run(&["compile", "--manifest", "out.jsonl", "-o", "b.rf"]).ok();
}

/// Content codings the HTTP client leaves on a body (`x-gzip`, `GZIP`,
/// gzip applied twice) are undone by fetch; a gzip body sent without the
/// header is stored as it came and then refused by `compile --manifest`
/// (a bad member, its host disallowed), never compiled as allow-all text.
#[test]
fn fetch_undoes_every_gzip_coding_and_compile_refuses_the_rest() {
    use flate2::{Compression, write::GzEncoder};
    let gzip = |b: &[u8]| {
        let mut gz = GzEncoder::new(Vec::new(), Compression::default());
        gz.write_all(b).unwrap();
        gz.finish().unwrap()
    };
    let rules = "User-agent: *\nDisallow: /\n";
    let once = gzip(rules.as_bytes());
    let twice = gzip(&once);
    let s = Server::start(move |r| match r.host.as_str() {
        "xgzip.test" => Action::Raw(resp(
            "200 OK",
            &[("Content-Encoding", "x-gzip")],
            &once,
        )),
        "upper.test" => {
            Action::Raw(resp("200 OK", &[("Content-Encoding", "GZIP")], &once))
        }
        "twice.test" => Action::Raw(resp(
            "200 OK",
            &[("Content-Encoding", "gzip, gzip")],
            &twice,
        )),
        "raw.test" => Action::Raw(resp("200 OK", &[], &once)),
        _ => Action::Raw(resp("404 Not Found", &[], b"")),
    });
    let dir = Dir::new("fetch-codings");
    let hosts = ["xgzip.test", "upper.test", "twice.test", "raw.test"];
    let list: String =
        hosts.iter().map(|h| format!("{}\n", s.url(h))).collect();
    dir.write("hosts.txt", list);
    fetch(&dir, &["hosts.txt", "-o", "out.jsonl", "--resolve", &s.pin()]).ok();
    let e = entries(&dir, "out.jsonl");
    for h in ["xgzip.test", "upper.test", "twice.test"] {
        assert_eq!(e[&key(h, &s)]["body"], rules, "{h}");
    }
    // Sent without Content-Encoding: stored as it came (exact bytes).
    assert!(e[&key("raw.test", &s)]["body_base64"].is_string());
    let run = dir.run(&["compile", "--manifest", "out.jsonl", "-o", "b.rf"]);
    run.ok();
    run.stderr_has(&["gzip-compressed, not a robots.txt", "unreadable"]);
    let urls: String = hosts
        .iter()
        .map(|h| format!("http://{}/page\n", key(h, &s)))
        .collect();
    let (got, all) = verdicts(&dir, &urls);
    assert_eq!(got, ["disallow"; 4], "{all}");
}

/// Many host names on one address (shared hosting): at most
/// `--per-address` requests are in flight to it at once, whatever
/// `--concurrency` allows, and every host is fetched.
#[test]
fn fetch_caps_requests_per_address() {
    let s = Server::start(|_| {
        Action::Delay(
            Duration::from_millis(60),
            resp("200 OK", &[], b"User-agent: *\nDisallow: /x\n"),
        )
    });
    let dir = Dir::new("fetch-per-address");
    let hosts: String = (0..40)
        .map(|i| format!("{}\n", s.url(&format!("h{i}.test"))))
        .collect();
    dir.write("hosts.txt", hosts);
    let run = fetch(
        &dir,
        &[
            "hosts.txt",
            "-o",
            "out.jsonl",
            "--resolve",
            &s.pin(),
            "--concurrency",
            "64",
            "--per-address",
            "3",
        ],
    );
    run.ok();
    run.stderr_has(&["40 hosts: 40 2xx"]);
    let peak = s.peak_all.load(Ordering::SeqCst);
    assert!((2..=3).contains(&peak), "{peak} requests in flight at once");
    // The default (8) caps it too.
    let run = fetch(
        &dir,
        &[
            "hosts.txt",
            "-o",
            "out2.jsonl",
            "--resolve",
            &s.pin(),
            "--concurrency",
            "64",
        ],
    );
    run.ok();
    let peak = s.peak_all.load(Ordering::SeqCst);
    assert!(peak <= 8, "{peak} requests in flight at once");
}

/// Runs fetch twice against a server whose answer the test changes.
struct Twice {
    s: Server,
    mode: Arc<Mutex<&'static str>>,
}

fn twice() -> Twice {
    let mode = Arc::new(Mutex::new("first"));
    let m = mode.clone();
    let s = Server::start(move |r| {
        let mode = *m.lock().unwrap();
        let body = format!("User-agent: *\nDisallow: /{}\n", r.host);
        match (mode, r.host.as_str()) {
            ("first", "etag.test") => Action::Raw(resp(
                "200 OK",
                &[("ETag", "\"v1\""), ("Cache-Control", "max-age=0")],
                body.as_bytes(),
            )),
            ("first", "lm.test") => Action::Raw(resp(
                "200 OK",
                &[
                    ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
                    ("Cache-Control", "no-cache"),
                ],
                body.as_bytes(),
            )),
            ("first", "fresh.test") => Action::Raw(resp(
                "200 OK",
                &[("Cache-Control", "max-age=3600")],
                body.as_bytes(),
            )),
            ("first", _) => Action::Raw(resp(
                "200 OK",
                &[("Cache-Control", "no-store")],
                body.as_bytes(),
            )),
            ("second", "etag.test")
                if r.headers.get("if-none-match").map(String::as_str)
                    == Some("\"v1\"") =>
            {
                Action::Raw(resp(
                    "304 Not Modified",
                    &[("Cache-Control", "max-age=600")],
                    b"",
                ))
            }
            ("second", "lm.test")
                if r.headers.get("if-modified-since").map(String::as_str)
                    == Some("Wed, 21 Oct 2015 07:28:00 GMT") =>
            {
                Action::Raw(resp("304 Not Modified", &[], b""))
            }
            ("second", "down.test") => {
                Action::Raw(resp("503 Service Unavailable", &[], b""))
            }
            ("second", _) => Action::Raw(resp(
                "200 OK",
                &[],
                b"User-agent: *\nDisallow: /changed\n",
            )),
            _ => unreachable!(),
        }
    });
    Twice { s, mode }
}

#[test]
fn fetch_cache_revalidates_and_keeps() {
    let t = twice();
    let s = &t.s;
    let dir = Dir::new("fetch-cache");
    let hosts = ["etag", "lm", "fresh", "down"];
    fetch_hosts(&dir, s, &hosts);
    let pin = s.pin();
    let first = entries(&dir, "out.jsonl");
    assert_eq!(s.requests().len(), 4);
    *t.mode.lock().unwrap() = "second";
    let run =
        fetch(&dir, &["hosts.txt", "-o", "out.jsonl", "--resolve", &pin]);
    run.ok();
    run.stderr_has(&[
        "2 revalidated (304)",
        "1 stale copies kept",
        "1 still fresh",
    ]);
    let e = entries(&dir, "out.jsonl");
    let get = |h: &str| e[&key(&format!("{h}.test"), s)].clone();
    // Still fresh: no second request.
    assert_eq!(s.requests_to("fresh.test").len(), 1);
    assert_eq!(get("fresh"), first[&key("fresh.test", s)]);
    // The conditional headers arrived (the server answers 304 only then),
    // and the 304 kept the body and renewed the expiry.
    let etag = s.requests_to("etag.test");
    assert_eq!(etag[1].headers["if-none-match"], "\"v1\"");
    assert!(!etag[1].headers.contains_key("if-modified-since"));
    let lm = s.requests_to("lm.test");
    assert_eq!(
        lm[1].headers["if-modified-since"],
        "Wed, 21 Oct 2015 07:28:00 GMT"
    );
    for h in ["etag", "lm"] {
        assert_eq!(get(h)["status"], 200);
        assert_eq!(
            get(h)["body"],
            format!("User-agent: *\nDisallow: /{h}.test\n")
        );
    }
    assert_eq!(get("etag")["etag"], "\"v1\"");
    let exp = |v: &Value| v["expires"].as_str().unwrap().to_string();
    let fa = |v: &Value| v["fetched_at"].as_str().unwrap().to_string();
    assert!(exp(&get("etag")) > fa(&get("etag")), "max-age=600 from the 304");
    // 503 on refresh: the previous copy stays, marked stale.
    let down = get("down");
    assert_eq!(down["status"], 200);
    assert_eq!(down["body"], "User-agent: *\nDisallow: /down.test\n");
    assert!(down["stale_since"].is_string(), "{down}");
    assert!(down["error"].as_str().unwrap().contains("HTTP 503"));
    // The journal is gone; compile reads OUT without notes.
    assert_eq!(dir.list(), ["hosts.txt", "out.jsonl"]);
    let c = dir.run(&["compile", "--manifest", "out.jsonl", "-o", "b.rf"]);
    c.ok();
    assert!(!c.stderr.contains("unknown keys"), "{}", c.stderr);
    let p = s.port;
    let urls =
        format!("http://down.test:{p}/down.test\nhttp://down.test:{p}/x\n");
    let (verdicts, out) = verdicts(&dir, &urls);
    assert_eq!(verdicts, ["disallow", "allow"], "{out}");
}

/// A previous copy older than 30 days does not stand in: the failure's
/// own outcome applies.
#[test]
fn fetch_stale_copy_too_old() {
    let s = Server::start(|_| {
        Action::Raw(resp("503 Service Unavailable", &[], b""))
    });
    let dir = Dir::new("fetch-too-old");
    dir.write(
        "hosts.txt",
        format!("{}\n{}\n", s.url("old.test"), s.url("young.test")),
    );
    let p = s.port;
    let line = |h: &str, at: &str| {
        format!(
            "{{\"host\":\"{h}.test:{p}\",\"url\":\"http://{h}.test:{p}/robots.txt\",\"status\":200,\
             \"body\":\"User-agent: *\\nDisallow: /\\n\",\"fetched_at\":\"{at}\",\"checked_at\":\"{at}\",\
             \"expires\":\"2000-01-01T00:00:00Z\"}}\n"
        )
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let days_ago = |d: u64| {
        // RFC 3339 by GNU date, independent of the fetcher's formatter.
        let secs = now - d * 86_400;
        let out = std::process::Command::new("date")
            .args(["-u", "-d", &format!("@{secs}"), "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    dir.write(
        "out.jsonl",
        line("old", &days_ago(31)) + &line("young", &days_ago(29)),
    );
    fetch(&dir, &["hosts.txt", "-o", "out.jsonl", "--resolve", &s.pin()]).ok();
    let e = entries(&dir, "out.jsonl");
    assert_eq!(e[&key("old.test", &s)]["status"], 503);
    assert_eq!(e[&key("young.test", &s)]["status"], 200);
    assert!(e[&key("young.test", &s)]["stale_since"].is_string());
}

/// Ten hosts redirect to one: never two requests in flight to it, while
/// several hosts are in flight at once.
#[test]
fn fetch_one_request_per_host() {
    let port = Arc::new(AtomicUsize::new(0));
    let pc = port.clone();
    let s = Server::start(move |r| match r.host.as_str() {
        "shared.test" => Action::Delay(
            Duration::from_millis(100),
            resp("200 OK", &[], b"User-agent: *\nDisallow: /shared\n"),
        ),
        _ => {
            let to = format!(
                "http://shared.test:{}/robots.txt",
                pc.load(Ordering::SeqCst)
            );
            Action::Delay(
                Duration::from_millis(50),
                resp("302 Found", &[("Location", &to)], b""),
            )
        }
    });
    port.store(usize::from(s.port), Ordering::SeqCst);
    let dir = Dir::new("fetch-politeness");
    let list: String = (0..10)
        .map(|i| format!("{}\n", s.url(&format!("a{i}.test"))))
        .collect();
    dir.write("hosts.txt", list);
    fetch(
        &dir,
        &[
            "hosts.txt",
            "-o",
            "out.jsonl",
            "--resolve",
            &s.pin(),
            "--concurrency",
            "10",
        ],
    )
    .ok();
    assert_eq!(s.requests_to("shared.test").len(), 10);
    assert_eq!(s.peak.lock().unwrap()["shared.test"], 1);
    assert!(
        s.peak_all.load(Ordering::SeqCst) >= 2,
        "no two hosts were ever in flight together"
    );
    let e = entries(&dir, "out.jsonl");
    assert_eq!(e.len(), 10);
    for v in e.values() {
        assert_eq!(v["body"], "User-agent: *\nDisallow: /shared\n");
        assert_eq!(v["redirects"], 1);
    }
}

/// Input forms: frontier lines, bare authorities (--scheme), https named
/// for a key anywhere, compressed input, bad lines with their numbers;
/// and --shard.
#[test]
fn fetch_inputs_and_shards() {
    let s = Server::start(|r| {
        ok(&format!("User-agent: *\nDisallow: /{}\n", r.host))
    });
    let p = s.port;
    let dir = Dir::new("fetch-inputs");
    let text = format!(
        "# a comment\n\nhttp://A.test:{p}/x?y\tfield\tmore\nb.test:{p}\nhttp://a.test:{p}/again\nnot a host\nftp://c.test/\nhttp://C.test:{p}/\n"
    );
    let mut gz = flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    );
    gz.write_all(text.as_bytes()).unwrap();
    dir.write("frontier.gz", gz.finish().unwrap());
    let run = fetch(
        &dir,
        &[
            "frontier.gz",
            "-o",
            "out.jsonl",
            "--resolve",
            &s.pin(),
            "--scheme",
            "http",
        ],
    );
    run.ok();
    run.stderr_has(&[
        "frontier.gz:6: host name 'not a host'",
        "frontier.gz:7: 'ftp://c.test/'",
        "2 bad input lines",
    ]);
    let e = entries(&dir, "out.jsonl");
    let mut keys: Vec<&String> = e.keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [&key("a.test", &s), &key("b.test", &s), &key("c.test", &s)]
    );
    assert_eq!(s.requests_to("a.test").len(), 1);
    // OUT keeps the input order.
    let order: Vec<String> = String::from_utf8(dir.read("out.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["host"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        order,
        [key("a.test", &s), key("b.test", &s), key("c.test", &s)]
    );

    // https named for a key anywhere wins over http (and this plain
    // server never answers a TLS ClientHello: unreachable).
    dir.write(
        "mixed.txt",
        format!("http://m.test:{p}/a\nhttps://M.test:{p}/b\n"),
    );
    let pin = s.pin();
    fetch(
        &dir,
        &["mixed.txt", "-o", "m.jsonl", "--resolve", &pin, "--timeout", "1"],
    )
    .ok();
    let m = entries(&dir, "m.jsonl");
    assert_eq!(
        m[&key("m.test", &s)]["url"],
        format!("https://m.test:{p}/robots.txt")
    );
    assert_eq!(m[&key("m.test", &s)]["status"], "unreachable");

    // Shards partition the hosts by the shard hash of bundles.
    let hosts: Vec<String> =
        (0..30).map(|i| format!("h{i}.test:{p}")).collect();
    dir.write("many.txt", hosts.join("\n"));
    let placement = dir.run(&["shard", "--shards", "3", "many.txt"]).ok();
    let mut seen = Vec::new();
    for i in 0..3u32 {
        let out = format!("s{i}.jsonl");
        let shard = format!("{i}/3");
        fetch(
            &dir,
            &[
                "many.txt",
                "-o",
                &out,
                "--scheme",
                "http",
                "--resolve",
                &s.pin(),
                "--shard",
                &shard,
            ],
        )
        .ok();
        let mut got: Vec<String> = entries(&dir, &out).into_keys().collect();
        got.sort();
        let mut want: Vec<String> = hosts
            .iter()
            .filter(|h| robofilter::shard_of_key(h.as_bytes(), 3) == i)
            .cloned()
            .collect();
        want.sort();
        assert_eq!(got, want, "shard {i}");
        // The same hosts as `robofilter shard` places (as `compile
        // --shards` does).
        let mut placed: Vec<String> = placement
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(n, _)| *n == i.to_string())
            .map(|(_, h)| h.to_string())
            .collect();
        placed.sort();
        assert_eq!(got, placed, "shard {i}");
        seen.extend(got);
    }
    assert_eq!(seen.len(), 30);
}

/// An interrupted run keeps its journal and leaves OUT as it was; the
/// next run resumes from the journal without asking those hosts again.
#[test]
fn fetch_resumes_after_interruption() {
    let s = Server::start(|r| match r.host.as_str() {
        "hang.test" => Action::Hang,
        h => ok(&format!("User-agent: *\nDisallow: /{h}\n")),
    });
    let dir = Dir::new("fetch-resume");
    dir.write(
        "hosts.txt",
        format!(
            "{}\n{}\n{}\n",
            s.url("fast.test"),
            s.url("hang.test"),
            s.url("next.test")
        ),
    );
    dir.write("out.jsonl", "previous\n");
    let mut child = dir
        .command(&[
            "fetch",
            "hosts.txt",
            "-o",
            "out.jsonl",
            "--resolve",
            &s.pin(),
            "--timeout",
            "30",
            "--concurrency",
            "1",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first result in the journal, then SIGINT.
    let journal = dir.join("out.jsonl.journal");
    let start = std::time::Instant::now();
    while std::fs::read(&journal).map_or(true, |j| !j.ends_with(b"\n")) {
        assert!(start.elapsed() < Duration::from_secs(20), "no journal entry");
        thread::sleep(Duration::from_millis(20));
    }
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(dir.read("out.jsonl"), b"previous\n");
    let j = String::from_utf8(std::fs::read(&journal).unwrap()).unwrap();
    assert_eq!(j.lines().count(), 1, "{j}");
    assert!(j.contains("fast.test"), "{j}");
    // No temporary file is left.
    assert_eq!(dir.list(), ["hosts.txt", "out.jsonl", "out.jsonl.journal"]);
    assert_eq!(s.requests_to("fast.test").len(), 1);

    // The next run: fast.test from the journal, the others asked.
    let run = fetch(
        &dir,
        &[
            "hosts.txt",
            "-o",
            "out.jsonl",
            "--resolve",
            &s.pin(),
            "--timeout",
            "1",
        ],
    );
    run.ok();
    run.stderr_has(&["resuming: 1 host(s)", "1 resumed"]);
    assert_eq!(s.requests_to("fast.test").len(), 1);
    assert_eq!(s.requests_to("next.test").len(), 1);
    let e = entries(&dir, "out.jsonl");
    assert_eq!(
        e[&key("fast.test", &s)]["body"],
        "User-agent: *\nDisallow: /fast.test\n"
    );
    assert_eq!(e[&key("hang.test", &s)]["status"], "unreachable");
    assert_eq!(dir.list(), ["hosts.txt", "out.jsonl"]);
}

/// A journal pre-seeded by hand (as a crash would leave it, with a cut
/// last line) is resumed: its complete entries are not asked again.
#[test]
fn fetch_resumes_from_a_seeded_journal() {
    let s = Server::start(|r| {
        ok(&format!("User-agent: *\nDisallow: /{}\n", r.host))
    });
    let p = s.port;
    let dir = Dir::new("fetch-seeded");
    dir.write(
        "hosts.txt",
        format!("{}\n{}\n", s.url("seeded.test"), s.url("cut.test")),
    );
    let seeded = format!(
        "{{\"host\":\"seeded.test:{p}\",\"url\":\"http://seeded.test:{p}/robots.txt\",\"status\":200,\"body\":\"User-agent: *\\nDisallow: /from-journal\\n\"}}\n\
         {{\"host\":\"cut.test:{p}\",\"url\":\"http://cut.test:{p}/robots.txt\",\"sta"
    );
    dir.write("out.jsonl.journal", seeded);
    let run =
        fetch(&dir, &["hosts.txt", "-o", "out.jsonl", "--resolve", &s.pin()]);
    run.ok();
    run.stderr_has(&[
        "1 line(s) of 'out.jsonl.journal' were cut",
        "1 resumed",
    ]);
    assert!(s.requests_to("seeded.test").is_empty());
    assert_eq!(s.requests_to("cut.test").len(), 1);
    let e = entries(&dir, "out.jsonl");
    assert_eq!(
        e[&key("seeded.test", &s)]["body"],
        "User-agent: *\nDisallow: /from-journal\n"
    );
}

#[test]
fn fetch_refusals() {
    let dir = Dir::new("fetch-refusals");
    dir.write("hosts.txt", "a.test\n");
    dir.run(&["fetch", "hosts.txt", "-o", "-"]).fails(&["-o - is refused"]);
    // A journal locked by another run.
    let journal =
        std::fs::File::create(dir.join("out.jsonl.journal")).unwrap();
    fs4::FileExt::lock(&journal).unwrap();
    dir.run(&["fetch", "hosts.txt", "-o", "out.jsonl"])
        .fails(&["is locked", "another `robofilter fetch`"]);
    drop(journal);
    dir.run(&["fetch", "hosts.txt", "-o", "out.jsonl", "--shard", "3/3"])
        .fails(&["'3/3' is not I/N"]);
    dir.run(&[
        "fetch",
        "hosts.txt",
        "-o",
        "out.jsonl",
        "--resolve",
        "a.test:80",
    ])
    .fails(&["is not HOST:PORT:ADDR"]);
    dir.run(&[
        "fetch",
        "hosts.txt",
        "-o",
        "out.jsonl",
        "--min-ttl",
        "2h",
        "--max-ttl",
        "1h",
    ])
    .fails(&["--min-ttl 7200 is above --max-ttl 3600"]);
    assert!(!dir.join("out.jsonl").exists());
    // An output that cannot be written leaves no journal behind.
    std::fs::create_dir(dir.join("sub")).unwrap();
    dir.run(&["fetch", "hosts.txt", "-o", "sub"])
        .fails(&["'sub' is a directory"]);
    dir.run(&["fetch", "missing.txt", "-o", "x.jsonl"])
        .fails(&["missing.txt"]);
    assert_eq!(dir.list(), ["hosts.txt", "out.jsonl.journal", "sub"]);
}
