//! LATENCY LATEST / HISTORY / RESET / DOCTOR / HELP over every shard's
//! latency monitor (`crate::latency`), as Redis answers them.

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::table::{self, CommandSpec};
use super::{Session, ShardData};
use crate::exec::stats::{CmdStat, CommandStats, ShardReport};
use crate::exec::{Action, Job, Op, Out};
use crate::latency::{doctor, Event, Monitor};
use crate::resp::Frame;

const LATENCY_HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
    "Events: command, fast-command, expire-cycle, event-loop, off-cpu.",
];

/// Gathers every shard's monitor and answers with `reply` over their merge
/// (and the threshold).
fn over_merged(shard: &ShardData, reply: impl FnOnce(&Monitor, u64) -> Frame + 'static) -> Action {
    let shared = std::sync::Arc::clone(&shard.shared);
    let ops = (0..shared.nshards)
        .map(|s| {
            let op = |ctx: &mut super::Ctx| Out::Latency(Box::new(ctx.shard.latency.clone()));
            (s, Op::keyless(op))
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let mut merged = Monitor::default();
        for out in &outs {
            if let Out::Latency(m) = out {
                merged.merge(m);
            }
        }
        let threshold = shared.config.latency_threshold_ms();
        Action::Reply(reply(&merged, threshold))
    }))
}

fn latest(m: &Monitor, _: u64) -> Frame {
    Frame::Array(
        m.events()
            .filter_map(|(event, series)| {
                let last = series.latest()?;
                Some(Frame::Array(vec![
                    Frame::bulk(event.name()),
                    Frame::Integer(last.time_s as i64),
                    Frame::Integer(last.ms as i64),
                    Frame::Integer(series.max_ms as i64),
                ]))
            })
            .collect(),
    )
}

fn history(m: &Monitor, event: Event) -> Frame {
    let samples = m.series(event).map(|s| &s.samples);
    Frame::Array(
        samples
            .into_iter()
            .flatten()
            .map(|s| {
                Frame::Array(vec![
                    Frame::Integer(s.time_s as i64),
                    Frame::Integer(s.ms as i64),
                ])
            })
            .collect(),
    )
}

pub fn latency(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    match sub.as_str() {
        "latest" if argv.len() == 2 => over_merged(shard, latest),
        "doctor" if argv.len() == 2 => over_merged(shard, |m, threshold| {
            Frame::Verbatim(Bytes::from(doctor(m, threshold)))
        }),
        "history" if argv.len() == 3 => match Event::named(&argv[2]) {
            Some(event) => over_merged(shard, move |m, _| history(m, event)),
            // An unknown event has no samples, as in Redis.
            None => Frame::Array(Vec::new()).into(),
        },
        "reset" => {
            let events: Vec<Event> = argv[2..].iter().filter_map(|a| Event::named(a)).collect();
            if events.is_empty() && argv.len() > 2 {
                // Only unknown names: nothing to reset.
                return Frame::Integer(0).into();
            }
            reset(shard, events)
        }
        "help" if argv.len() == 2 => help_reply(LATENCY_HELP).into(),
        "graph" if argv.len() == 3 => not_supported("GRAPH"),
        "histogram" => histogram(shard, &argv[2..]),
        "latest" | "doctor" | "history" | "help" | "graph" => {
            err::wrong_arity(&format!("latency|{sub}")).into()
        }
        _ => err::unknown_subcommand(&argv[1], "latency").into(),
    }
}

fn not_supported(sub: &str) -> Action {
    err::frame(&format!(
        "ERR LATENCY {sub} is not supported by ember; LATENCY HISTORY has the samples and INFO latencystats the percentiles"
    ))
    .into()
}

/// LATENCY RESET: every shard forgets the events; the reply counts the
/// events that had a series on any shard.
fn reset(shard: &ShardData, events: Vec<Event>) -> Action {
    let ops = (0..shard.shared.nshards)
        .map(|s| {
            let events = events.clone();
            let op = move |ctx: &mut super::Ctx| {
                let cleared = ctx.shard.latency.reset(&events);
                Out::Lines(cleared.iter().map(|e| e.name().to_string()).collect())
            };
            (s, Op::keyless(op))
        })
        .collect();
    Action::Job(Job::new(ops, |outs| {
        let mut names: Vec<String> = outs
            .into_iter()
            .flat_map(|o| match o {
                Out::Lines(l) => l,
                _ => Vec::new(),
            })
            .collect();
        names.sort();
        names.dedup();
        Action::Reply(Frame::Integer(names.len() as i64))
    }))
}

/// LATENCY HISTOGRAM [command ...]: every shard's per-command latency
/// histograms merged, for the named commands (a container stands for its
/// subcommands; unknown names are skipped) or all of them, each as its
/// call count and Redis's cumulative buckets.
fn histogram(shard: &ShardData, names: &[Bytes]) -> Action {
    let wanted: Option<Vec<&'static CommandSpec>> = (!names.is_empty()).then(|| {
        names
            .iter()
            .filter_map(|name| match name.iter().position(|&b| b == b'|') {
                Some(bar) => {
                    let row = super::lookup(&name[..bar])?;
                    let i = table::sub_index(row, &name[bar + 1..])?;
                    Some(table::by_id(table::sub_id(row, i)))
                }
                None => super::lookup(name),
            })
            .collect()
    });
    let ops = (0..shard.shared.nshards)
        .map(|s| {
            let op = |ctx: &mut super::Ctx| Out::Report(Box::new(ShardReport::of(ctx.shard, true)));
            (s, Op::keyless(op))
        })
        .collect();
    Action::Job(Job::new(ops, move |outs| {
        let mut merged = CommandStats::default();
        for out in &outs {
            if let Out::Report(r) = out {
                merged.merge(&r.counters.commands);
            }
        }
        let called: Vec<(usize, &CmdStat)> = merged.called().collect();
        let stat_of = |id: usize| called.iter().find(|(i, _)| *i == id).map(|(_, s)| *s);
        let mut entries = Vec::new();
        let mut add = |spec: &'static CommandSpec| {
            let id = spec.id();
            if let Some(latency) = stat_of(id).and_then(|s| s.latency.as_deref()) {
                entries.push((Frame::bulk(spec.name), cumulative(latency)));
            }
        };
        match wanted {
            None => called.iter().for_each(|(id, _)| add(table::by_id(*id))),
            Some(specs) => {
                for spec in specs {
                    if spec.container {
                        for i in 0..spec.meta.subcommands.len() {
                            add(table::by_id(table::sub_id(spec, i)));
                        }
                    }
                    add(spec);
                }
            }
        }
        Action::Reply(Frame::Map(entries))
    }))
}

/// One command's entry: `calls` and `histogram_usec`, the latter as
/// Redis's log-2 buckets of its nanosecond histogram (1024 ns first, each
/// labelled with the highest value it holds in µs: 1, 2, 4, 8, 16, 33, 66,
/// 132, ...) mapped to the calls at or below it, buckets that add nothing
/// left out. ember keeps whole microseconds, so a bucket counts the calls
/// of at most its label.
fn cumulative(h: &hdrhistogram::Histogram<u64>) -> Frame {
    let total = h.len();
    let mut buckets = Vec::new();
    let mut previous = 0;
    let mut level_ns: u64 = 1024;
    while previous < total && level_ns < (1 << 40) {
        let label_us = (level_ns + level_ns / 128 - 1) / 1000;
        let count = h.count_between(0, label_us);
        if count > previous {
            buckets.push((
                Frame::Integer(label_us as i64),
                Frame::Integer(count as i64),
            ));
            previous = count;
        }
        level_ns *= 2;
    }
    Frame::Map(vec![
        (Frame::bulk("calls"), Frame::Integer(total as i64)),
        (Frame::bulk("histogram_usec"), Frame::Map(buckets)),
    ])
}
