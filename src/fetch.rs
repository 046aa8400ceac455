//! `robofilter fetch [INPUT]... -o OUT.jsonl`: the robots.txt of every host
//! of a frontier into a manifest, by the `robofilter-fetch` crate; this
//! file turns the arguments into its options and prints its summary.

use anyhow::Result;
use robofilter_fetch::{Options, Summary};

use crate::args::{FetchArgs, SchemeArg};

pub fn run(args: FetchArgs) -> Result<()> {
    let options = Options {
        inputs: args.inputs,
        output: args.output,
        user_agent: args.user_agent,
        timeout: args.timeout,
        concurrency: args.concurrency,
        resolve: args.resolve,
        min_ttl: args.min_ttl,
        max_ttl: args.max_ttl,
        shard: args.shard,
        https: matches!(args.scheme, SchemeArg::Https),
        max_body: args.max_body,
        retries: args.retries,
        per_address: args.per_address,
        progress: true,
    };
    let s = robofilter_fetch::fetch(&options)?;
    report(&s, &options);
    Ok(())
}

/// The summary line on stderr.
fn report(s: &Summary, options: &Options) {
    let mut shard = String::new();
    if let Some((i, n)) = options.shard {
        shard =
            format!(" (shard {i}/{n}; {} in other shards)", s.other_shards);
    }
    diag!(
        "robofilter: {}{shard}: {} 2xx, {} revalidated (304), {} \
         unavailable (allow all), {} unreachable (disallow all){}, {} stale \
         copies kept, {} still fresh, {} resumed; {}; {} fetched in \
         {:.2} s ({:.0} hosts/s); wrote '{}'",
        plural(s.hosts, "host"),
        s.ok,
        s.revalidated,
        s.unavailable,
        s.unreachable,
        match s.refused {
            0 => String::new(),
            n => format!(
                " ({n} refused the connection: a server taking fewer \
                 connections? lower --per-address)"
            ),
        },
        s.stale,
        s.fresh,
        s.resumed,
        plural(s.bad_lines, "bad input line"),
        s.fetched,
        s.seconds,
        s.fetched as f64 / s.seconds.max(1e-9),
        options.output.display()
    );
}

/// `1 host`, `2 hosts`.
fn plural(n: u64, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}
