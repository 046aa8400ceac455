//! peer-compare's runs of the robofilter CLI, as a user runs it: inputs
//! written to files, timed children, and the CLI's agreement with the
//! library.

use super::*;

// ---------------------------------------------------------------------------
// The robofilter CLI, as a user runs it

/// One workload's inputs for the CLI rows, on disk under this tool's
/// `target/cli/`: the workload's URL lines written once, and the rules file
/// (single host) or bundle (mixed hosts) the binary compiled.
pub(crate) struct CliInputs {
    pub(crate) bin: PathBuf,
    /// The rules file or bundle.
    pub(crate) rules: PathBuf,
    pub(crate) urls: PathBuf,
    /// Lines of `urls`.
    pub(crate) lines: usize,
    pub(crate) notes: Vec<String>,
}

/// CPU (user + sys) and wall time of one child process, in ns.
#[derive(Clone, Copy)]
pub(crate) struct ChildTime {
    pub(crate) cpu: f64,
    pub(crate) wall: f64,
}

/// The CPU time (user + sys) of this process's waited-for children, in ns.
pub(crate) fn children_cpu_ns() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `ru` is a writable rusage; getrusage writes only into it.
    let rc =
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) };
    assert_eq!(rc, 0, "getrusage(RUSAGE_CHILDREN) failed");
    // SAFETY: zero-initialised plain data, filled in by getrusage.
    let ru = unsafe { ru.assume_init() };
    let ns = |t: libc::timeval| t.tv_sec as f64 * 1e9 + t.tv_usec as f64 * 1e3;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}

/// Runs a command to its end with stdout dropped: its CPU time (the
/// `RUSAGE_CHILDREN` delta across its wait), wall time and stderr; an error
/// with its stderr if it fails.
pub(crate) fn timed_child(
    cmd: &mut Command,
) -> Result<(ChildTime, String), String> {
    let what = format!("{cmd:?}");
    let cpu = children_cpu_ns();
    let start = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running {what}: {e}"))?;
    let wall = start.elapsed().as_nanos() as f64;
    let cpu = children_cpu_ns() - cpu;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!(
            "{what} failed ({}): {}",
            out.status,
            stderr.trim()
        ));
    }
    Ok((ChildTime { cpu, wall }, stderr))
}

/// A file name for a workload: its name with anything but letters and
/// digits turned into `-`.
pub(crate) fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    s.split('-').filter(|p| !p.is_empty()).collect::<Vec<_>>().join("-")
}

/// When a file was last modified (UTC), as `date -r` prints it.
pub(crate) fn modified(path: &Path) -> String {
    Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC", "-r"])
        .arg(path)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "?".into())
}

/// Writes the workload's URLs once and compiles its rules with the CLI:
/// `compile --dialect google FILE -o RULES` for a single host (every agent,
/// as a user compiles a site's file), or for mixed hosts a directory
/// `HOST.txt` per bundle host key of the workload's URLs (hard links to the
/// file the library rows use for that URL) and `compile --dialect google
/// --agent A --hosts DIR -o BUNDLE`.
pub(crate) fn cli_inputs(
    bin: &Path,
    w: &Workload,
) -> Result<CliInputs, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/cli");
    let io = |e: std::io::Error, p: &Path| format!("{}: {e}", p.display());
    std::fs::create_dir_all(&dir).map_err(|e| io(e, &dir))?;
    let slug = slug(&w.name);
    let urls = dir.join(format!("{slug}.urls"));
    std::fs::write(&urls, w.buf.as_bytes()).map_err(|e| io(e, &urls))?;
    let lines = memchr::memchr_iter(b'\n', w.buf.as_bytes()).count();
    let mut notes = Vec::new();
    let mut cmd = Command::new(bin);
    let rules = match &w.hosts {
        None => {
            let rules = dir.join(format!("{slug}.rules"));
            cmd.args(["compile", "--dialect", "google"])
                .arg(&w.files[0].path)
                .arg("-o")
                .arg(&rules);
            rules
        }
        Some(map) => {
            let hosts = dir.join(format!("{slug}.hosts"));
            if hosts.exists() {
                std::fs::remove_dir_all(&hosts).map_err(|e| io(e, &hosts))?;
            }
            std::fs::create_dir_all(&hosts).map_err(|e| io(e, &hosts))?;
            let lookup = Lookup(Some(map));
            let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
            let (mut key, mut no_key) = (Vec::new(), 0usize);
            for url in w.buf.lines() {
                if robofilter::url_host_key(url.as_bytes(), &mut key).is_err()
                {
                    no_key += 1;
                    continue;
                }
                if seen.contains_key(&key) {
                    continue;
                }
                let Some(file) = lookup.file(url) else { continue };
                seen.insert(key.clone(), file);
                let name = format!("{}.txt", String::from_utf8_lossy(&key));
                let to = hosts.join(name);
                let from = &w.files[file].path;
                std::fs::hard_link(from, &to)
                    .or_else(|_| std::fs::copy(from, &to).map(drop))
                    .map_err(|e| io(e, &to))?;
            }
            notes.push(format!(
                "CLI bundle: {} host keys (`url_host_key` of the workload's \
                 URLs, port kept), each linked to the file the library rows \
                 use for its URLs; {no_key} URLs have no host key",
                thousands(seen.len())
            ));
            let bundle = dir.join(format!("{slug}.bundle"));
            cmd.args(["compile", "--dialect", "google", "--agent", &w.agent])
                .arg("--hosts")
                .arg(&hosts)
                .arg("-o")
                .arg(&bundle);
            bundle
        }
    };
    eprintln!("  CLI: {cmd:?}");
    let (t, stderr) = timed_child(&mut cmd)?;
    let size = std::fs::metadata(&rules).map(|m| m.len()).unwrap_or(0);
    notes.push(format!(
        "CLI set-up (not in the rates): `{}` took {:.2} s CPU, {:.2} s wall, \
         {} bytes; it said: {}",
        describe(&cmd),
        t.cpu / 1e9,
        t.wall / 1e9,
        thousands(size as usize),
        stderr.lines().last().unwrap_or("").trim()
    ));
    Ok(CliInputs { bin: bin.to_path_buf(), rules, urls, lines, notes })
}

/// A command line as a user would type it (paths relative to the
/// repository where they are under it).
pub(crate) fn describe(cmd: &Command) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let repo = repo.canonicalize().unwrap_or(repo);
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| {
            let p = Path::new(a);
            let p = p.strip_prefix(&repo).unwrap_or(p);
            p.to_string_lossy().into_owned()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `robofilter filter RULES URLS --agent A -j JOBS --emit all [-o OUT]`
/// (without `-o`: stdout).
pub(crate) fn filter_cmd(
    cli: &CliInputs,
    agent: &str,
    jobs: &str,
    out: Option<&str>,
) -> Command {
    let mut c = Command::new(&cli.bin);
    c.arg("filter").arg(&cli.rules).arg(&cli.urls);
    c.args(["--agent", agent, "-j", jobs, "--emit", "all"]);
    if let Some(out) = out {
        c.args(["-o", out]);
    }
    c
}

/// Runs the CLI once, untimed, with its output piped here, and compares its
/// verdict for each of the first `google.len()` lines with the library's
/// (google dialect); every line must come back in order.
pub(crate) fn cli_agreement(
    cli: &CliInputs,
    agent: &str,
    google: &[u8],
    distinct: &[&str],
) -> Result<(String, Vec<String>), String> {
    use std::io::BufRead as _;
    let errors = cli.urls.with_extension("stderr");
    let err_file = std::fs::File::create(&errors)
        .map_err(|e| format!("{}: {e}", errors.display()))?;
    let mut cmd = filter_cmd(cli, agent, "1", None);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(err_file))
        .spawn()
        .map_err(|e| format!("running {cmd:?}: {e}"))?;
    let stdout = child.stdout.take().expect("piped");
    let mut reader = std::io::BufReader::with_capacity(1 << 20, stdout);
    let (mut lines, mut same, mut kinds) = (0usize, 0usize, BTreeMap::new());
    let mut examples = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| format!("reading the output of {cmd:?}: {e}"))?;
        if n == 0 {
            break;
        }
        let i = lines;
        lines += 1;
        if i >= google.len() {
            continue;
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        let (said, url) = match memchr::memchr(b'\t', body) {
            Some(t) => (&body[..t], &body[t + 1..]),
            None => (body, &b""[..]),
        };
        let want: &[u8] = if google[i] == 1 { b"allow" } else { b"disallow" };
        let kind = if url != distinct[i].as_bytes() {
            "other line"
        } else if said == want {
            same += 1;
            continue;
        } else {
            match said {
                b"unknown" => "unknown",
                b"invalid" => "invalid",
                _ => "verdict",
            }
        };
        *kinds.entry(kind).or_insert(0usize) += 1;
        if examples.len() < 3 {
            examples.push(format!(
                "line {}: CLI `{}`, library {}",
                i + 1,
                String::from_utf8_lossy(body)
                    .chars()
                    .take(160)
                    .flat_map(|c| match c {
                        '\t' => vec!['\t'],
                        c if c.is_control() => c.escape_unicode().collect(),
                        c => vec![c],
                    })
                    .collect::<String>(),
                verdict(google[i])
            ));
        }
    }
    let status =
        child.wait().map_err(|e| format!("waiting for {cmd:?}: {e}"))?;
    if !status.success() {
        let err = std::fs::read_to_string(&errors).unwrap_or_default();
        return Err(format!("{cmd:?} failed ({status}): {}", err.trim()));
    }
    if lines != cli.lines {
        return Err(format!(
            "{cmd:?} printed {lines} lines for {} input lines",
            cli.lines
        ));
    }
    let compared = google.len();
    let mut text = format!(
        "library (google) {} ({} differ)",
        percent(same, compared),
        compared - same
    );
    if !kinds.is_empty() {
        let k: Vec<String> =
            kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        text.push_str(&format!(": {}", k.join(", ")));
    }
    Ok((text, examples))
}

/// The CLI rows of one workload, from the timed rounds.
pub(crate) struct CliReport {
    /// URLs per CPU-second (user + sys of the process).
    pub(crate) j1: f64,
    pub(crate) j2: f64,
    /// Median wall time of -j 1 over that of -j 2.
    pub(crate) speedup: f64,
    /// `wc -l` of the same URL file: lines per CPU-second.
    pub(crate) wc: f64,
    /// What the machine gives two processes: the median over rounds of
    /// twice the `-j 1` wall time over the wall time of two `-j 1` runs
    /// started together (2.0: two free cores; 1.0: one).
    pub(crate) pair: f64,
    pub(crate) agreement: String,
}

/// Times of the CLI in the rounds.
#[derive(Default)]
pub(crate) struct CliRounds {
    pub(crate) j1: Vec<ChildTime>,
    pub(crate) j2: Vec<ChildTime>,
    pub(crate) wc: Vec<ChildTime>,
    /// Two `-j 1` runs started together: CPU of both, wall until both end.
    pub(crate) pair: Vec<ChildTime>,
}

/// Runs two commands at once to their ends: the CPU time of both and the
/// wall time until the later one ends.
pub(crate) fn timed_pair(
    a: &mut Command,
    b: &mut Command,
) -> Result<ChildTime, String> {
    let what = format!("{a:?}");
    let cpu = children_cpu_ns();
    let start = Instant::now();
    let spawn = |c: &mut Command| {
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("running {what}: {e}"))
    };
    let (mut x, mut y) = (spawn(a)?, spawn(b)?);
    let (sx, sy) = (x.wait(), y.wait());
    let wall = start.elapsed().as_nanos() as f64;
    let cpu = children_cpu_ns() - cpu;
    for st in [sx, sy] {
        match st {
            Ok(st) if st.success() => {}
            Ok(st) => return Err(format!("{what} failed ({st})")),
            Err(e) => return Err(format!("waiting for {what}: {e}")),
        }
    }
    Ok(ChildTime { cpu, wall })
}

impl CliRounds {
    /// One round: `wc -l`, then `-j 1` and `-j 2` (their order alternates
    /// with the round), then two `-j 1` runs at once (what parallelism the
    /// machine offers now).
    pub(crate) fn round(
        &mut self,
        cli: &CliInputs,
        agent: &str,
        round: usize,
    ) -> Result<(), String> {
        let mut wc = Command::new("wc");
        wc.arg("-l").arg(&cli.urls);
        self.wc.push(timed_child(&mut wc)?.0);
        let order: [&str; 2] =
            if round.is_multiple_of(2) { ["1", "2"] } else { ["2", "1"] };
        for jobs in order {
            let t = timed_child(&mut filter_cmd(
                cli,
                agent,
                jobs,
                Some("/dev/null"),
            ))?
            .0;
            if jobs == "1" { self.j1.push(t) } else { self.j2.push(t) }
        }
        let null = Some("/dev/null");
        self.pair.push(timed_pair(
            &mut filter_cmd(cli, agent, "1", null),
            &mut filter_cmd(cli, agent, "1", null),
        )?);
        Ok(())
    }

    pub(crate) fn report(
        &self,
        cli: &CliInputs,
        agreement: String,
    ) -> (CliReport, String) {
        let med = |v: &[ChildTime], f: fn(&ChildTime) -> f64| {
            median(&mut v.iter().map(f).collect::<Vec<_>>())
        };
        let n = cli.lines as f64;
        let report = CliReport {
            j1: n / (med(&self.j1, |t| t.cpu) / 1e9),
            j2: n / (med(&self.j2, |t| t.cpu) / 1e9),
            speedup: med(&self.j1, |t| t.wall) / med(&self.j2, |t| t.wall),
            wc: n / (med(&self.wc, |t| t.cpu) / 1e9),
            pair: median(
                &mut (0..self.pair.len())
                    .map(|i| 2.0 * self.j1[i].wall / self.pair[i].wall)
                    .collect::<Vec<_>>(),
            ),
            agreement,
        };
        let rounds: Vec<String> = (0..self.j1.len())
            .map(|i| {
                format!(
                    "{:.3}/{:.3} | {:.3}/{:.3} | {:.3}/{:.3} | {:.3}",
                    self.j1[i].cpu / 1e9,
                    self.j1[i].wall / 1e9,
                    self.j2[i].cpu / 1e9,
                    self.j2[i].wall / 1e9,
                    self.pair[i].cpu / 1e9,
                    self.pair[i].wall / 1e9,
                    self.wc[i].cpu / 1e9
                )
            })
            .collect();
        let note = format!(
            "CLI rounds, CPU s/wall s of `-j 1` | `-j 2` | two `-j 1` at \
             once | CPU s of `wc -l`: {}",
            rounds.join("; ")
        );
        (report, note)
    }
}
