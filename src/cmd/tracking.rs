//! Client-side caching commands: CLIENT TRACKING, CACHING, GETREDIR and
//! TRACKINGINFO, with Redis 7.0's options, checks and error texts, and the
//! read side of tracking: [`remember`], which `propagate::call` runs after
//! a read-only command of a tracking client, on the shard of its keys.
//!
//! The client's own options live in its session; what other shards need
//! (home, redirect target, BCAST, NOLOOP) is mirrored into the shared
//! registry (`crate::tracking`) whenever they change. The invalidations
//! themselves are routed by the shard loop (`shard::worker::tracking`).

use bytes::Bytes;

use super::args::err;
use super::{lookup, CommandFlags, Ctx, Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;
use crate::tracking::Client;

/// A tracking client's options (Redis's CLIENT_TRACKING_* flags).
#[derive(Debug, Clone, Default)]
pub struct ClientTracking {
    /// REDIRECT's client id (0: none, as Redis reports it).
    pub redirect: u64,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// CLIENT CACHING was given for the next command.
    pub caching: bool,
    /// The REDIRECT target went away (`tracking-redir-broken`).
    pub broken: bool,
    /// BCAST prefixes, sorted (TRACKINGINFO lists them so).
    pub prefixes: Vec<Bytes>,
}

impl Session {
    /// Whether this client's next reads are remembered: tracking on,
    /// not broadcasting, and OPTIN/OPTOUT's CACHING choice allows it.
    pub fn tracks_reads(&self) -> bool {
        self.tracking.as_ref().is_some_and(|t| {
            // OPTIN: only after CACHING YES; OPTOUT: unless CACHING NO.
            let chosen = if t.optin {
                t.caching
            } else {
                !(t.optout && t.caching)
            };
            !t.bcast && chosen
        })
    }

    /// After each command: CLIENT CACHING holds for the next command only
    /// (CLIENT's own subcommands, TRACKINGINFO among them, keep it; so
    /// does queueing in MULTI, until EXEC), as in Redis.
    pub fn command_done(&mut self) {
        let keep = self.multi.is_some() || self.last_cmd == "client";
        if let Some(t) = self.tracking.as_mut() {
            if !keep {
                t.caching = false;
            }
        }
    }
}

/// Runs a command of tracking client `id` (`run`), then remembers the keys
/// it read (Redis's trackingRememberKeys: those of every read-only command,
/// whatever its result; Pub/Sub's shard channels are no keys). A script's
/// own commands remember nothing: the script's declared keys are
/// remembered if any of them read, as Redis remembers the caller's keys.
pub fn tracked_call(
    ctx: &mut Ctx,
    argv: &[Bytes],
    id: u64,
    run: impl FnOnce(&mut Ctx) -> super::args::Reply,
) -> super::args::Reply {
    let Some(spec) = lookup(&argv[0]) else {
        return run(ctx);
    };
    let reads = || reads(spec, argv);
    if let Some(read) = ctx.shard.script_reads.as_mut() {
        // A command of a script: note whether it reads.
        *read |= reads();
        return run(ctx);
    }
    let script = super::scripting::is_script(spec);
    if script {
        ctx.shard.script_reads = Some(false);
    }
    let reply = run(ctx);
    let remember = match script {
        true => ctx.shard.script_reads.take() == Some(true),
        false => reads(),
    };
    if remember {
        let table = &mut ctx.shard.store.stats.notify.tracking;
        for p in spec.key_positions(argv) {
            if let Some(key) = argv.get(p) {
                table.remember(key, id);
            }
        }
    }
    reply
}

/// Whether `argv` (of `spec`) reads keys a tracking client then caches:
/// a read-only command (by its subcommand for a container), not Pub/Sub.
pub fn reads(spec: &super::CommandSpec, argv: &[Bytes]) -> bool {
    let flags = match argv.get(1).filter(|_| spec.container) {
        Some(sub) => spec.meta.subcommand(sub).map_or(spec.flags, |m| m.flags),
        None => spec.flags,
    };
    flags.contains(CommandFlags::READONLY) && !flags.contains(CommandFlags::PUBSUB)
}

/// Runs a script that a job runs over several shards (`scripting::
/// across_shards`) for the tracking client the shard works for now, if
/// any: [`tracked_call`]'s rule for scripts, applied where the script
/// really runs (the call that dispatched the job ran nothing). Its declared
/// keys are remembered on their own shards when one of its commands read,
/// those of shards the script's transaction `tx` holds through a message
/// that shard serves before it is let go.
pub fn tracked_script<R>(
    ctx: &mut Ctx,
    keys: &[Bytes],
    tx: Option<crate::exec::TxId>,
    run: impl FnOnce(&mut Ctx) -> R,
) -> R {
    let Some(id) = ctx.shard.reader else {
        return run(ctx);
    };
    ctx.shard.script_reads = Some(false);
    let out = run(ctx);
    if ctx.shard.script_reads.take() != Some(true) {
        return out;
    }
    let nshards = ctx.shard.shared.nshards;
    let mut remote: Vec<Vec<Bytes>> = vec![Vec::new(); nshards];
    for key in keys {
        match super::shard_of(key, nshards) {
            own if own == ctx.shard.id => ctx.shard.store.stats.notify.tracking.remember(key, id),
            other => remote[other].push(key.clone()),
        }
    }
    for (owner, keys) in remote
        .into_iter()
        .enumerate()
        .filter(|(_, k)| !k.is_empty())
    {
        let f = Box::new(move |ctx: &mut Ctx| {
            for key in &keys {
                ctx.shard.store.stats.notify.tracking.remember(key, id);
            }
        });
        let peer = &ctx.shard.shared.peers()[owner];
        if peer
            .inbox
            .send(vec![crate::exec::Msg::Serve { db: ctx.db, tx, f }])
            .is_ok()
        {
            let _ = peer.waker.wake();
        }
    }
    out
}

/// Turns tracking off for the session (CLIENT TRACKING OFF, RESET, a
/// closed connection).
pub fn disable(shard: &ShardData, session: &mut Session) {
    if let Some(t) = session.tracking.take() {
        shard.shared.tracking.disable(session.id, &t.prefixes);
    }
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p]... [OPTIN]
/// [OPTOUT] [NOLOOP].
pub fn client_tracking(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let registry = &shard.shared.tracking;
    let mut redirect = 0u64;
    let mut target = None;
    let (mut bcast, mut optin, mut optout, mut noloop) = (false, false, false, false);
    let mut prefixes: Vec<Bytes> = Vec::new();
    let mut j = 3;
    while j < argv.len() {
        let more = j + 1 < argv.len();
        let opt = argv[j].to_ascii_lowercase();
        match opt.as_slice() {
            b"redirect" if more => {
                j += 1;
                if redirect != 0 {
                    return err::frame("ERR A client can only redirect to a single other client")
                        .into();
                }
                let Some(id) = crate::util::num::parse_i64(&argv[j]) else {
                    return err::not_integer().into();
                };
                target = (id > 0).then(|| registry.find(id as u64)).flatten();
                if target.is_none() {
                    return err::frame("ERR The client ID you want redirect to does not exist")
                        .into();
                }
                redirect = id as u64;
            }
            b"bcast" => bcast = true,
            b"optin" => optin = true,
            b"optout" => optout = true,
            b"noloop" => noloop = true,
            b"prefix" if more => {
                j += 1;
                prefixes.push(argv[j].clone());
            }
            _ => return err::syntax().into(),
        }
        j += 1;
    }
    let mode = argv[2].to_ascii_lowercase();
    if mode.as_slice() == b"off" {
        disable(shard, session);
        return Frame::OK.into();
    }
    if mode.as_slice() != b"on" {
        return err::syntax().into();
    }
    if !bcast && !prefixes.is_empty() {
        return err::frame("ERR PREFIX option requires BCAST mode to be enabled").into();
    }
    if let Some(t) = &session.tracking {
        if t.bcast != bcast {
            return err::frame("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.").into();
        }
    }
    if bcast && (optin || optout) {
        return err::frame("ERR OPTIN and OPTOUT are not compatible with BCAST").into();
    }
    if optin && optout {
        return err::frame("ERR You can't specify both OPTIN mode and OPTOUT mode").into();
    }
    if let Some(t) = &session.tracking {
        if (optin && t.optout) || (optout && t.optin) {
            return err::frame("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.").into();
        }
    }
    let mut state = session.tracking.as_deref().cloned().unwrap_or_default();
    if bcast {
        if let Some(e) = crate::tracking::prefix_collision(&state.prefixes, &prefixes) {
            return Frame::Error(e).into();
        }
        if prefixes.is_empty() {
            // BCAST with no prefix broadcasts every key: the empty prefix.
            prefixes.push(Bytes::new());
        }
        prefixes.retain(|p| !state.prefixes.contains(p));
    }
    state.redirect = redirect;
    state.bcast = bcast;
    state.optin = optin;
    state.optout = optout;
    state.noloop = noloop;
    state.broken = false;
    state.prefixes.extend(prefixes.iter().cloned());
    state.prefixes.sort();
    let client = Client {
        home: session.subscriber(),
        redirect: target.map(|t| (redirect, t)),
        bcast,
        noloop,
    };
    registry.enable(session.id, client, &prefixes);
    session.tracking = Some(Box::new(state));
    Frame::OK.into()
}

/// CLIENT CACHING YES|NO.
pub fn client_caching(session: &mut Session, argv: &[Bytes]) -> Action {
    let Some(t) = session.tracking.as_mut() else {
        return err::frame("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled").into();
    };
    match argv[2].to_ascii_lowercase().as_slice() {
        b"yes" if t.optin => {}
        b"yes" => {
            return err::frame(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            )
            .into()
        }
        b"no" if t.optout => {}
        b"no" => {
            return err::frame(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            )
            .into()
        }
        _ => return err::syntax().into(),
    }
    t.caching = true;
    Frame::OK.into()
}

/// CLIENT GETREDIR: the REDIRECT target, 0 without one, -1 when not tracking.
pub fn client_getredir(session: &Session) -> Action {
    Frame::Integer(session.tracking.as_ref().map_or(-1, |t| t.redirect as i64)).into()
}

/// CLIENT TRACKINGINFO: flags, redirect and prefixes, as Redis lists them.
pub fn client_trackinginfo(session: &Session) -> Action {
    let mut flags = Vec::new();
    let (redirect, prefixes) = match &session.tracking {
        None => {
            flags.push("off");
            (-1, Vec::new())
        }
        Some(t) => {
            flags.push("on");
            for (on, name) in [
                (t.bcast, "bcast"),
                (t.optin, "optin"),
                (t.optin && t.caching, "caching-yes"),
                (t.optout, "optout"),
                (t.optout && t.caching, "caching-no"),
                (t.noloop, "noloop"),
                (t.broken, "broken_redirect"),
            ] {
                if on {
                    flags.push(name);
                }
            }
            let prefixes = if t.bcast {
                t.prefixes.iter().cloned().map(Frame::Bulk).collect()
            } else {
                Vec::new()
            };
            (t.redirect as i64, prefixes)
        }
    };
    Frame::Map(vec![
        (
            Frame::bulk("flags"),
            Frame::Set(flags.into_iter().map(Frame::bulk).collect()),
        ),
        (Frame::bulk("redirect"), Frame::Integer(redirect)),
        (Frame::bulk("prefixes"), Frame::Array(prefixes)),
    ])
    .into()
}
