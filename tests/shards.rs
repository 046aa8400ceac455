//! Shard directories (issue 15): `compile --shards N` places each host in
//! the shard of its host key, `filter`/`check`/`explain`/`inspect` give
//! exactly the answers of the one bundle they split, a shard is opened
//! only when a URL needs it, and a missing or foreign shard is an error.

use std::collections::BTreeMap;

use crate::random::{Rng, random_robots, random_url};
use crate::util::Dir;

/// XXH3-64 (seed 0) of `www.example.com`, from Python's `xxhash` package
/// (`xxhash.xxh3_64_intdigest(b"www.example.com")`), an implementation
/// independent of the one robofilter uses.
const WWW_EXAMPLE_COM_XXH3: u64 = 4_695_089_154_048_864_997;

#[test]
fn host_hash_is_xxh3_64_of_the_host_key() {
    assert_eq!(
        robofilter::host_hash64(b"www.example.com"),
        WWW_EXAMPLE_COM_XXH3
    );
    for n in [1, 2, 7, 8, 1000] {
        let want = (WWW_EXAMPLE_COM_XXH3 % u64::from(n)) as u32;
        let mut key = Vec::new();
        for url in [
            &b"https://www.example.com/a"[..],
            b"HTTP://WWW.Example.COM:80/b?c",
            b"http://user@www.example.com:443",
        ] {
            assert_eq!(robofilter::shard_of_url(url, n, &mut key), Ok(want));
        }
        assert_eq!(robofilter::shard_of_key(b"www.example.com", n), want);
    }
}

/// A hosts directory of `hosts` random robots.txt files (named with
/// upper case, ports, and `www.` aliases), and URLs over those hosts and
/// unknown ones.
fn corpus(dir: &Dir, rng: &mut Rng, hosts: usize) -> (Vec<String>, Vec<u8>) {
    std::fs::create_dir_all(dir.join("hosts")).unwrap();
    let mut names = Vec::new();
    for i in 0..hosts {
        let name = match i % 4 {
            0 => format!("h{i}.example"),
            1 => format!("www.h{i}.example"),
            2 => format!("h{i}.example:8080"),
            _ => format!("H{i}.Example"),
        };
        dir.write(&format!("hosts/{name}.txt"), random_robots(rng));
        names.push(name);
    }
    let mut urls = Vec::new();
    for _ in 0..3000 {
        let url = random_url(rng);
        let path = &url[b"http://x".len()..];
        let host = match rng.below(10) {
            0 => format!("unknown{}.example", rng.below(50)),
            _ => names[rng.below(names.len())].to_ascii_lowercase(),
        };
        let scheme = if rng.one_in(2) { "https" } else { "http" };
        urls.extend_from_slice(format!("{scheme}://{host}").as_bytes());
        urls.extend_from_slice(path);
        if rng.one_in(5) {
            urls.extend_from_slice(b"\tdepth=3");
        }
        urls.push(b'\n');
    }
    urls.extend_from_slice(b"not a url\nhttp://a\\@h1.example/x\n\n");
    (names, urls)
}

#[test]
fn shards_decide_exactly_as_the_bundle() {
    let dir = Dir::new("shards-differential");
    let mut rng = Rng::new(0x5EED_0015);
    let (_, urls) = corpus(&dir, &mut rng, 60);
    dir.write("urls.txt", &urls);
    for dialect in ["google", "rfc9309"] {
        let bundle = format!("{dialect}.bundle");
        dir.run(&[
            "compile",
            "--dialect",
            dialect,
            "--hosts",
            "hosts",
            "-o",
            &bundle,
        ])
        .ok();
        let filter = |rules: &str| {
            dir.run(&[
                "filter",
                rules,
                "--agent",
                "FooBot",
                "--agent",
                "BarBot",
                "--emit",
                "all",
                "--explain",
                "urls.txt",
            ])
            .ok()
        };
        let want = filter(&bundle);
        let json = |rules: &str| {
            dir.run(&[
                "filter", rules, "--agent", "foobot", "--json", "--emit",
                "all", "urls.txt",
            ])
            .ok()
        };
        let want_json = json(&bundle);
        for n in [1, 3, 8] {
            let out = format!("{dialect}-{n}");
            dir.run(&[
                "compile",
                "--dialect",
                dialect,
                "--hosts",
                "hosts",
                "--shards",
                &n.to_string(),
                "-o",
                &out,
            ])
            .ok();
            let names = crate::util::list(&dir.join(&out));
            let mut expected: Vec<String> = (0..n)
                .map(|i| format!("shard-{i:05}-of-{n:05}.bundle"))
                .collect();
            expected.insert(0, "index.json".into());
            assert_eq!(names, expected, "{out}");
            assert_eq!(
                filter(&out),
                want,
                "{out}: filter --emit all --explain"
            );
            assert_eq!(json(&out), want_json, "{out}: filter --json");
            let check = |rules: &str| {
                dir.run(&[
                    "explain",
                    rules,
                    "--agent",
                    "BarBot",
                    "https://h1.example/a",
                    "http://h2.example:8080/b",
                    "http://nope.example/",
                ])
                .ok()
            };
            assert_eq!(check(&out), check(&bundle), "{out}: explain");
        }
    }
}

/// Every host is in the shard `robofilter shard` names for it, and only
/// there (`inspect --host` on each shard file).
#[test]
fn compile_places_each_host_where_shard_says() {
    let dir = Dir::new("shards-placement");
    let mut rng = Rng::new(0x5EED_0016);
    let (names, _) = corpus(&dir, &mut rng, 24);
    let n = 5;
    dir.run(&["compile", "--hosts", "hosts", "--shards", "5", "-o", "s"]).ok();
    let hosts: String = names.iter().map(|h| format!("{h}\n")).collect();
    let printed =
        dir.run_with(&["shard", "--shards", "5"], hosts.as_bytes()).ok();
    let mut shard_of = BTreeMap::new();
    for line in printed.lines() {
        let (s, host) = line.split_once('\t').unwrap();
        shard_of.insert(host.to_string(), s.parse::<u32>().unwrap());
    }
    assert_eq!(shard_of.len(), names.len());
    let mut counts = vec![0; n];
    for (host, &s) in &shard_of {
        for i in 0..n {
            let file = format!("s/shard-{i:05}-of-{n:05}.bundle");
            let run = dir.run(&["inspect", &file, "--host", host]);
            assert_eq!(
                run.code == Some(0),
                i == s as usize,
                "{host} in shard {i}: {}",
                run.stderr
            );
        }
        counts[s as usize] += 1;
    }
    // The index counts the same hosts per shard.
    let index: serde_json::Value =
        serde_json::from_slice(&dir.read("s/index.json")).unwrap();
    for (i, f) in index["files"].as_array().unwrap().iter().enumerate() {
        assert_eq!(f["hosts"], counts[i], "shard {i}");
    }
    assert_eq!(index["hash"], "xxh3-64");
    assert_eq!(index["shards"], 5);
}

/// A shard no URL needs is never opened (here: deleted), a needed one
/// that is missing, truncated or from another build is an error naming
/// it, and the output directory must be new.
#[test]
fn shards_are_opened_only_when_needed_and_checked() {
    let dir = Dir::new("shards-lazy");
    std::fs::create_dir_all(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", "User-agent: *\nDisallow: /private/\n");
    dir.write("hosts/b.example.txt", "User-agent: *\nDisallow: /\n");
    dir.run(&["compile", "--hosts", "hosts", "--shards", "64", "-o", "s"])
        .ok();
    let shard = |host: &str| -> String {
        let out =
            dir.run_with(&["shard", "--shards", "64"], host.as_bytes()).ok();
        let s: u32 = out.split('\t').next().unwrap().parse().unwrap();
        format!("s/shard-{s:05}-of-00064.bundle")
    };
    let (a, b) = (shard("a.example"), shard("b.example"));
    assert_ne!(a, b, "the test needs the two hosts in different shards");
    // Every shard but a's removed: a's URLs are still decided.
    for i in 0..64 {
        let f = format!("s/shard-{i:05}-of-00064.bundle");
        if f != a {
            std::fs::remove_file(dir.join(&f)).unwrap();
        }
    }
    let out = dir
        .run_with(
            &["filter", "s", "--agent", "bot", "--emit", "all"],
            b"https://a.example/private/x\nhttps://a.example/y\n",
        )
        .ok();
    assert_eq!(
        out,
        "disallow\thttps://a.example/private/x\nallow\thttps://a.example/y\n"
    );
    // b's shard is needed and missing.
    dir.run_with(&["filter", "s", "--agent", "bot"], b"https://b.example/\n")
        .exits(2)
        .stderr_has(&["shard", "missing", &b[2..]]);
    // A shard of another length is not this build's.
    let bytes = dir.read(&a);
    dir.write(&a, &bytes[..bytes.len() - 8]);
    dir.run_with(&["filter", "s", "--agent", "bot"], b"https://a.example/\n")
        .exits(2)
        .stderr_has(&["not the shard of this build"]);
    // `inspect` checks every shard's CRC.
    let mut bad = bytes.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    dir.write(&a, &bad);
    dir.run(&["inspect", "s", "--host", "a.example"])
        .exits(2)
        .stderr_has(&["damaged", "CRC-32"]);
    // An output that is a shard (or the index) is refused before any work.
    let shard_file = a.clone();
    dir.run_with(
        &["filter", "s", "--agent", "bot", "-o", &shard_file],
        b"https://a.example/\n",
    )
    .exits(2)
    .stderr_has(&["input"]);
    dir.run(&["inspect", "s", "-o", &shard_file])
        .exits(2)
        .stderr_has(&["input"]);
    dir.run(&["inspect", &shard_file, "-o", &shard_file])
        .exits(2)
        .stderr_has(&["input"]);
    assert_eq!(dir.read(&shard_file), bad, "the shard is untouched");
    // A directory that is not a shard directory is never replaced.
    std::fs::create_dir(dir.join("mine")).unwrap();
    dir.write("mine/notes.txt", "keep");
    dir.run(&["compile", "--hosts", "hosts", "--shards", "2", "-o", "mine"])
        .exits(2)
        .stderr_has(&["not a shard directory"]);
    assert_eq!(dir.read("mine/notes.txt"), b"keep");
    // An index of another version is refused.
    let index = String::from_utf8(dir.read("s/index.json")).unwrap();
    dir.write(
        "s/index.json",
        index.replace("\"version\": 1", "\"version\": 9"),
    );
    dir.run_with(&["filter", "s", "--agent", "bot"], b"https://a.example/\n")
        .exits(2)
        .stderr_has(&["version is 9"]);
    // No temporary directory is left beside the outputs.
    assert!(
        dir.list().iter().all(|n| !n.contains("robofilter-tmp")),
        "{:?}",
        dir.list()
    );
}

/// Another build's shard of the same length (the same hosts, bodies of the
/// same length) is refused before its first verdict, by `filter`, `check`
/// and `explain`, by the fingerprint `index.json` records; and an index
/// without one (an older build) still catches it, by the whole file's CRC.
#[test]
fn a_foreign_shard_of_the_same_length_is_refused() {
    let dir = Dir::new("shards-foreign");
    for (build, rule) in [("one", "/aaaa"), ("two", "/bbbb")] {
        std::fs::create_dir_all(dir.join(&format!("{build}/hosts"))).unwrap();
        for host in ["a.example", "b.example", "c.example"] {
            dir.write(
                &format!("{build}/hosts/{host}.txt"),
                format!("User-agent: *\nDisallow: {rule}\n"),
            );
        }
        let hosts = format!("{build}/hosts");
        let out = format!("{build}/s");
        dir.run(&["compile", "--hosts", &hosts, "--shards", "1", "-o", &out])
            .ok();
    }
    let name = "shard-00000-of-00001.bundle";
    let (one, two) = (
        dir.read(&format!("one/s/{name}")),
        dir.read(&format!("two/s/{name}")),
    );
    assert_eq!(one.len(), two.len(), "the test needs shards of one length");
    assert_ne!(one, two);
    let url = b"https://a.example/bbbb\n";
    let filter = ["filter", "one/s", "--agent", "bot", "--emit", "all"];
    assert_eq!(
        dir.run_with(&filter, url).ok(),
        "allow\thttps://a.example/bbbb\n"
    );
    // Build two's shard, copied into build one's directory.
    dir.write(&format!("one/s/{name}"), &two);
    dir.run_with(&filter, url)
        .exits(2)
        .stderr_has(&["not the shard of this build", "fingerprint"]);
    for cmd in ["check", "explain"] {
        dir.run(&[cmd, "--agent", "bot", "one/s", "https://a.example/bbbb"])
            .exits(2)
            .stderr_has(&["not the shard of this build"]);
    }
    // An index.json without fingerprints (written before they were):
    // the whole file's CRC-32 tells the shards apart.
    let index = String::from_utf8(dir.read("one/s/index.json")).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&index).unwrap();
    for f in json["files"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("fingerprint").unwrap();
    }
    let old = serde_json::to_string_pretty(&json).unwrap();
    assert_ne!(old, index, "the index had a fingerprint");
    dir.write("one/s/index.json", &old);
    dir.run_with(&filter, url).exits(2).stderr_has(&["CRC-32"]);
    dir.write(&format!("one/s/{name}"), &one);
    assert_eq!(
        dir.run_with(&filter, url).ok(),
        "allow\thttps://a.example/bbbb\n"
    );
}

/// `compile --shards -o DIR` replaces a shard directory as a whole, as
/// `compile -o FILE` replaces a file: the new build is written beside it
/// and put in its place in one step; nothing of the old one is left.
#[test]
fn compile_replaces_a_shard_directory_whole() {
    let dir = Dir::new("shards-replace");
    std::fs::create_dir_all(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", "User-agent: *\nDisallow: /a/\n");
    dir.write("hosts/b.example.txt", "User-agent: *\nDisallow: /b/\n");
    dir.run(&["compile", "--hosts", "hosts", "--shards", "4", "-o", "s"]).ok();
    dir.write("hosts/a.example.txt", "User-agent: *\nAllow: /\n");
    dir.run(&["compile", "--hosts", "hosts", "--shards", "2", "-o", "s"]).ok();
    assert_eq!(
        crate::util::list(&dir.join("s")),
        [
            "index.json",
            "shard-00000-of-00002.bundle",
            "shard-00001-of-00002.bundle"
        ]
    );
    let out = dir
        .run_with(
            &["filter", "s", "--agent", "bot", "--emit", "all"],
            b"https://a.example/a/x\nhttps://b.example/b/x\n",
        )
        .ok();
    assert_eq!(
        out,
        "allow\thttps://a.example/a/x\ndisallow\thttps://b.example/b/x\n"
    );
    // Nothing is left beside it: no temporary or old directory.
    assert_eq!(dir.list(), ["hosts", "s"]);
}

/// A shard directory compiled for some agents refuses others up front.
#[test]
fn shards_compiled_for_agents_refuse_others() {
    let dir = Dir::new("shards-agents");
    std::fs::create_dir_all(dir.join("hosts")).unwrap();
    dir.write("hosts/a.example.txt", "User-agent: FooBot\nDisallow: /\n");
    dir.run(&[
        "compile", "--hosts", "hosts", "--agent", "FooBot", "--shards", "2",
        "-o", "s",
    ])
    .ok();
    dir.run_with(
        &["filter", "s", "--agent", "foobot", "--emit", "all"],
        b"https://a.example/\n",
    )
    .ok();
    dir.run_with(
        &["filter", "s", "--agent", "BarBot"],
        b"https://a.example/\n",
    )
    .exits(2)
    .stderr_has(&["compiled for FooBot only", "BarBot"]);
}
