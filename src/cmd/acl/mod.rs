//! Access control for commands: the gate every command passes at
//! admission (NOAUTH, then the user's permissions), AUTH and HELLO's
//! credentials, and the ACL command.
//!
//! The gate runs on the connection's own shard before any hop. Its
//! common case is one test: a connection whose user may run anything and
//! that needs no login (`Auth::free`), with the registry unchanged since
//! it looked (`acl::Acl::generation`).
//!
//! # Layout
//! - `rules`: SETUSER's rules and the descriptions LIST gives back.
//! - `check`: a user against a command, its keys and channels.
//! - `file`: `user` lines of the config file and the ACL file.

pub mod check;
pub mod file;
pub mod rules;

use std::sync::Arc;

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::{CommandSpec, Session, ShardData};
use crate::acl::log::Entry;
use crate::acl::{Acl, Denial, User};
use crate::cmd::meta::{AclCategories, CommandFlags};
use crate::exec::{Action, ClientsOp, Job, Op, Shared};
use crate::resp::{Frame, Protocol};

/// What the gate decided against a command.
pub enum Refused {
    /// Answered with this error (which fails a transaction being queued).
    Reply(Frame),
    /// The connection's user was deleted: close it, as Redis does.
    Close,
}

const NOAUTH: &str = "NOAUTH Authentication required.";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Whether the gate has nothing to do for this connection now.
#[inline]
/// Every user as ACL LIST gives it (`user NAME RULES...`, by name): also
/// the lines CONFIG REWRITE writes.
pub fn user_lines(shared: &Shared) -> Vec<String> {
    shared
        .acl
        .all()
        .iter()
        .map(|u| format!("user {} {}", u.name, rules::describe_user(u)))
        .collect()
}

pub fn is_free(shard: &ShardData, session: &Session) -> bool {
    // A replica obeys its master whatever the ACL says.
    session.master || session.auth.free && session.auth.generation == shard.shared.acl.generation()
}

/// Whether the gate has nothing to do for this connection, its user taken
/// afresh if the registry changed (for a busy pass, which has no shard to
/// log a denial in: a client that must be checked waits for the script).
pub fn free_without_shard(acl: &Acl, session: &mut Session) -> bool {
    if session.auth.generation != acl.generation() && refresh(acl, session).is_err() {
        return false;
    }
    session.auth.free
}

/// Takes the user afresh after a change of the registry.
fn refresh(acl: &Acl, session: &mut Session) -> Result<(), Refused> {
    let generation = acl.generation();
    if session.auth.generation == 0 {
        // A new connection: logged in if the default user needs no password.
        session.auth.user = acl.default_user();
        session.auth.authenticated = !acl.auth_required();
    } else {
        match acl.get(&session.auth.user.name) {
            Some(user) => session.auth.user = user,
            None => return Err(Refused::Close),
        }
    }
    session.auth.generation = generation;
    update_free(acl, session);
    Ok(())
}

fn update_free(acl: &Acl, session: &mut Session) {
    session.auth.free = rules::unrestricted(&session.auth.user)
        && (session.auth.authenticated || !acl.auth_required());
}

/// Redis's `authRequired` then `ACLCheckAllPerm`, for `spec` with `argv`.
pub fn gate(
    shard: &mut ShardData,
    session: &mut Session,
    spec: &'static CommandSpec,
    argv: &[Bytes],
) -> Result<(), Refused> {
    let acl = &shard.shared.acl;
    if session.auth.generation != acl.generation() {
        refresh(acl, session)?;
        if session.auth.free {
            return Ok(());
        }
    }
    if !session.auth.authenticated
        && acl.auth_required()
        && !spec.flags.contains(CommandFlags::NO_AUTH)
    {
        return Err(Refused::Reply(err::frame(NOAUTH)));
    }
    match check::check(&session.auth.user, spec, argv) {
        Ok(()) => match check::sort_refusal(&session.auth.user, spec, argv) {
            Some(text) => Err(Refused::Reply(Frame::Error(text))),
            None => Ok(()),
        },
        Err(refusal) => {
            let context = if session.multi.is_some() {
                "multi"
            } else {
                "toplevel"
            };
            let object = refusal.object(spec, argv);
            let username = session.auth.user.name.clone();
            log_denial(shard, session, refusal.why, context, object, username);
            Err(Refused::Reply(Frame::Error(refusal.reply_text(spec, argv))))
        }
    }
}

/// EXEC's second look (Redis's): the queued commands the user may no
/// longer run are taken out of `queued`, each with its place and error.
pub fn exec_refusals(
    shard: &ShardData,
    session: &Session,
    queued: &mut Vec<Vec<Bytes>>,
) -> Vec<(usize, Frame)> {
    if session.auth.free || session.master {
        return Vec::new();
    }
    let mut refused = Vec::new();
    let mut at = 0;
    queued.retain(|argv| {
        let place = at;
        at += 1;
        let Some(spec) = super::lookup(&argv[0]) else {
            return true;
        };
        match check::check(&session.auth.user, spec, argv) {
            Ok(()) => true,
            Err(refusal) => {
                let object = refusal.object(spec, argv);
                let username = session.auth.user.name.clone();
                log_denial(shard, session, refusal.why, "multi", object, username);
                let reason = match refusal.why {
                    Denial::Key => "no permission to touch the specified keys",
                    Denial::Channel => {
                        "no permission to access one of the channels used as arguments"
                    }
                    _ => "no permission to execute the command or subcommand",
                };
                refused.push((place, Frame::Error(format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}"))));
                false
            }
        }
    });
    refused
}

/// Who runs a script, when that user may not run everything: its
/// `redis.call`s are checked against the user as Redis checks them
/// (`scriptVerifyACL`), on whatever shard the script runs. The client's
/// line for the ACL log is taken when the script is dispatched, since the
/// session stays on the connection's shard.
pub struct ScriptCaller {
    user: Arc<User>,
    client_info: String,
}

/// The caller of a script `session` runs, None when its user may run
/// anything (nothing to check).
pub fn script_caller(shard: &ShardData, session: &Session) -> Option<Arc<ScriptCaller>> {
    if is_free(shard, session) {
        return None;
    }
    Some(Arc::new(ScriptCaller {
        user: Arc::clone(&session.auth.user),
        client_info: client_info(session, shard.now_ms),
    }))
}

/// `redis.acl_check_cmd`: whether `caller` may run `argv` (nothing is
/// logged, as in Redis).
pub fn script_may_run(caller: &ScriptCaller, spec: &'static CommandSpec, argv: &[Bytes]) -> bool {
    check::check(&caller.user, spec, argv).is_ok()
}

/// Whether `caller` may run `argv` from its script; Err: the error text
/// (without `ERR `) Redis 7.0.15 gives the script, the refusal counted and
/// logged with context `lua`.
pub fn check_script_command(
    shard: &ShardData,
    caller: &ScriptCaller,
    spec: &'static CommandSpec,
    argv: &[Bytes],
) -> Result<(), &'static str> {
    let Err(refusal) = check::check(&caller.user, spec, argv) else {
        return Ok(());
    };
    let acl = &shard.shared.acl;
    acl.denied.count(refusal.why);
    let entry = Entry {
        count: 1,
        reason: refusal.why.reason(),
        context: "lua",
        object: refusal.object(spec, argv),
        username: caller.user.name.clone(),
        updated_ms: shard.now_ms,
        client_info: caller.client_info.clone(),
    };
    let max = shard.shared.config.acllog_max_len();
    if let Ok(mut log) = acl.log.lock() {
        log.add(entry, max);
    }
    Err(match refusal.why {
        Denial::Key => "The user executing the script can't access at least one of the keys mentioned in the command arguments",
        Denial::Channel => "The user executing the script can't publish to the channel mentioned in the command",
        _ => "The user executing the script can't run this command or subcommand",
    })
}

/// Counts a refusal in INFO and the ACL log.
fn log_denial(
    shard: &ShardData,
    session: &Session,
    why: Denial,
    context: &'static str,
    object: String,
    username: String,
) {
    let acl = &shard.shared.acl;
    acl.denied.count(why);
    let entry = Entry {
        count: 1,
        reason: why.reason(),
        context,
        object,
        username,
        updated_ms: shard.now_ms,
        client_info: client_info(session, shard.now_ms),
    };
    let max = shard.shared.config.acllog_max_len();
    if let Ok(mut log) = acl.log.lock() {
        log.add(entry, max);
    }
}

/// The client's CLIENT LIST line as far as the session knows it (its
/// buffers are the connection's; the log shows them as empty).
fn client_info(s: &Session, now_ms: u64) -> String {
    format!(
        "id={} addr={} laddr={} fd=0 name={} age={} idle=0 flags=N db={} sub={} psub={} ssub=0 multi={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={} user={} redir=-1 resp={}",
        s.id,
        s.addr,
        s.laddr,
        s.name.as_deref().unwrap_or(""),
        now_ms.saturating_sub(s.created_ms) / 1000,
        s.db,
        s.channels.len(),
        s.patterns.len(),
        s.multi.as_ref().map_or(-1, |tx| tx.queued.len() as i64),
        s.last_cmd,
        s.auth.user.name,
        if s.proto == Protocol::Resp3 { 3 } else { 2 },
    )
}

/// AUTH's and HELLO AUTH's check: logs the client in as `name`, or
/// answers WRONGPASS (and logs the attempt).
pub fn login(
    shard: &ShardData,
    session: &mut Session,
    name: &[u8],
    password: &[u8],
    command: &[u8],
) -> Result<(), Frame> {
    let acl = &shard.shared.acl;
    match acl.authenticate(name, password) {
        Some(user) => {
            session.auth.user = user;
            session.auth.authenticated = true;
            session.auth.generation = acl.generation();
            update_free(acl, session);
            Ok(())
        }
        None => {
            let context = if session.multi.is_some() {
                "multi"
            } else {
                "toplevel"
            };
            let username = String::from_utf8_lossy(name).into_owned();
            log_denial(
                shard,
                session,
                Denial::Auth,
                context,
                // The log names the command as the client spelled it.
                String::from_utf8_lossy(command).into_owned(),
                username,
            );
            Err(err::frame(WRONGPASS))
        }
    }
}

/// Whether the connection may run commands that need a login.
pub fn logged_in(shard: &ShardData, session: &Session) -> bool {
    session.auth.authenticated || !shard.shared.acl.auth_required()
}

/// The `default` user as Redis starts it, with every command's bit set.
pub fn default_user() -> User {
    let mut user = crate::acl::default_user();
    let _ = rules::apply_selector_rule(&mut user.root, b"+@all");
    user
}

/// Gives the default user `requirepass`'s password (none when empty), as
/// Redis's `ACLUpdateDefaultUserPassword`.
pub fn apply_requirepass(acl: &Acl, password: &str) {
    let mut user = (*acl.default_user()).clone();
    let _ = rules::apply_rule(&mut user, b"resetpass", false);
    let rule = if password.is_empty() {
        b"nopass".to_vec()
    } else {
        [b">".as_ref(), password.as_bytes()].concat()
    };
    let _ = rules::apply_rule(&mut user, &rule, false);
    acl.put(user);
}

const ACL_HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
];

/// The ACL command.
pub fn acl(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    let n = argv.len();
    let acl = &shard.shared.acl;
    let changed = |user: Option<String>, reply: Frame| {
        if reply.is_error() {
            return reply.into();
        }
        after_change(shard, session, user, false, reply)
    };
    match sub.as_str() {
        "setuser" if n >= 3 => {
            let reply = setuser(shard, &argv[2], &argv[3..]);
            return changed(Some(String::from_utf8_lossy(&argv[2]).into_owned()), reply);
        }
        "deluser" if n >= 3 => {
            let names: Vec<String> = argv[2..]
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            if names.iter().any(|u| u == "default") {
                return err::frame("ERR The 'default' user cannot be removed").into();
            }
            let reply = Frame::Integer(acl.delete(&names) as i64);
            return changed(None, reply);
        }
        "load" if n == 2 => {
            let reply = file::load(shard);
            if reply.is_error() {
                return reply.into();
            }
            return after_change(shard, session, None, true, reply);
        }
        _ => {}
    }
    let reply = match sub.as_str() {
        // Redis's handler takes at most one argument of these.
        "cat" | "genpass" | "log" if n > 3 => Frame::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try ACL HELP.",
            String::from_utf8_lossy(&argv[1])
        )),
        "getuser" if n == 3 => match std::str::from_utf8(&argv[2]).ok().and_then(|u| acl.get(u)) {
            Some(user) => getuser(&user),
            None => Frame::Null,
        },
        "list" if n == 2 => Frame::Array(
            user_lines(&shard.shared)
                .into_iter()
                .map(Frame::bulk)
                .collect(),
        ),
        "users" if n == 2 => Frame::Array(
            acl.all()
                .iter()
                .map(|u| Frame::bulk(u.name.clone()))
                .collect(),
        ),
        "whoami" if n == 2 => Frame::bulk(session.auth.user.name.clone()),
        "cat" if n == 2 => Frame::Array(
            AclCategories::NAMES
                .iter()
                .map(|(_, name)| Frame::bulk(*name))
                .collect(),
        ),
        "cat" if n == 3 => cat(&argv[2]),
        "genpass" if n <= 3 => genpass(argv.get(2)),
        "dryrun" if n >= 4 => dryrun(acl, &argv[2], &argv[3..]),
        "log" if n <= 3 => log(shard, argv.get(2)),
        "save" if n == 2 => file::save(shard),
        "help" if n == 2 => help_reply(ACL_HELP),
        "setuser" | "getuser" | "deluser" | "list" | "users" | "whoami" | "cat" | "genpass"
        | "dryrun" | "log" | "save" | "load" | "help" => err::wrong_arity(&format!("acl|{sub}")),
        _ => err::unknown_subcommand(&argv[1], "acl"),
    };
    reply.into()
}

/// Answers `reply` once every shard has closed the clients the change
/// to `user` (every user: None) leaves without a user or without the
/// channels they subscribe to (`reloaded`: every client not of
/// `default`, ACL LOAD having made the users anew).
fn after_change(
    shard: &ShardData,
    session: &Session,
    user: Option<String>,
    reloaded: bool,
    reply: Frame,
) -> Action {
    let asker = session.id;
    let ops = (0..shard.shared.nshards)
        .map(|s| {
            let user = user.clone();
            (
                s,
                Op::Clients(ClientsOp::AclChanged {
                    user,
                    reloaded,
                    asker,
                }),
            )
        })
        .collect();
    Action::Job(Job::new(ops, move |_| Action::Reply(reply)))
}

/// Whether a client of `user` (None: deleted) keeps its connection: its
/// user exists and allows every channel and pattern it subscribes to.
pub fn may_stay(user: Option<&User>, session: &Session) -> bool {
    let Some(user) = user else {
        return false;
    };
    let allowed = |name: &[u8], is_pattern: bool| {
        std::iter::once(&user.root)
            .chain(&user.selectors)
            .any(|sel| sel.channel_allowed(name, is_pattern))
    };
    session.channels.iter().all(|c| allowed(c, false))
        && session.shard_channels.iter().all(|c| allowed(c, false))
        && session.patterns.iter().all(|p| allowed(p, true))
}

/// Applies `rules` to a copy of the user (a new one if none), all or nothing.
pub fn setuser_rules(
    acl: &Acl,
    all_channels: bool,
    name: &[u8],
    args: &[Bytes],
) -> Result<User, Frame> {
    if name.iter().any(|&c| c == b' ' || c == 0) {
        return Err(err::frame(
            "ERR Usernames can't contain spaces or null characters",
        ));
    }
    let name = String::from_utf8_lossy(name).into_owned();
    let user = match acl.get(&name) {
        Some(u) => (*u).clone(),
        None => User::new(&name, all_channels),
    };
    apply_rules(user, all_channels, args)
}

/// `args` applied to `user` in order; the first bad one is the error.
pub fn apply_rules(mut user: User, all_channels: bool, args: &[Bytes]) -> Result<User, Frame> {
    let merged = rules::merge_selector_args(args).map_err(Frame::Error)?;
    for rule in merged {
        if let Err(e) = rules::apply_rule(&mut user, &rule, all_channels) {
            return Err(Frame::Error(format!(
                "ERR Error in ACL SETUSER modifier '{}': {}",
                String::from_utf8_lossy(&rule),
                e.text()
            )));
        }
    }
    Ok(user)
}

fn setuser(shard: &ShardData, name: &[u8], args: &[Bytes]) -> Frame {
    let acl = &shard.shared.acl;
    match setuser_rules(acl, shard.shared.config.acl_pubsub_all(), name, args) {
        Ok(user) => {
            acl.put(user);
            Frame::OK
        }
        Err(e) => e,
    }
}

fn selector_map(sel: &crate::acl::Selector) -> Vec<(Frame, Frame)> {
    vec![
        (
            Frame::bulk("commands"),
            Frame::bulk(rules::describe_commands(sel)),
        ),
        (Frame::bulk("keys"), Frame::bulk(sel.describe_keys())),
        (
            Frame::bulk("channels"),
            Frame::bulk(sel.describe_channels()),
        ),
    ]
}

fn getuser(user: &User) -> Frame {
    let mut fields = vec![
        (
            Frame::bulk("flags"),
            Frame::Array(user.flags().into_iter().map(Frame::bulk).collect()),
        ),
        (
            Frame::bulk("passwords"),
            Frame::Array(
                user.passwords
                    .iter()
                    .map(|p| Frame::bulk(p.clone()))
                    .collect(),
            ),
        ),
    ];
    fields.extend(selector_map(&user.root));
    fields.push((
        Frame::bulk("selectors"),
        Frame::Array(
            user.selectors
                .iter()
                .map(|s| Frame::Map(selector_map(s)))
                .collect(),
        ),
    ));
    Frame::Map(fields)
}

/// ACL CAT category: the commands (and subcommands) in it.
fn cat(name: &[u8]) -> Frame {
    let Some(bit) = AclCategories::named(name) else {
        return Frame::Error(format!(
            "ERR Unknown category '{}'",
            String::from_utf8_lossy(name)
        ));
    };
    let mut names = Vec::new();
    for row in super::COMMANDS {
        if row.meta.acl.contains(bit) {
            names.push(Frame::bulk(row.name));
        }
        for sub in row.meta.subcommands {
            if sub.acl.contains(bit) {
                names.push(Frame::bulk(sub.name));
            }
        }
    }
    Frame::Array(names)
}

fn genpass(bits: Option<&Bytes>) -> Frame {
    const RANGE: &str = "ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096";
    let bits = match bits {
        None => 256,
        Some(b) => match crate::util::num::parse_i64(b) {
            Some(n) if (1..=4096).contains(&n) => n as usize,
            Some(_) => return err::frame(RANGE),
            None => return err::not_integer(),
        },
    };
    match crate::acl::password::random_hex(bits) {
        Ok(text) => Frame::bulk(text),
        Err(_) => err::frame("ERR cannot read random bytes"),
    }
}

fn dryrun(acl: &Acl, name: &[u8], argv: &[Bytes]) -> Frame {
    let Some(user) = std::str::from_utf8(name).ok().and_then(|u| acl.get(u)) else {
        return Frame::Error(format!(
            "ERR User '{}' not found",
            String::from_utf8_lossy(name)
        ));
    };
    let Some(spec) = super::lookup(&argv[0]) else {
        return Frame::Error(format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(&argv[0])
        ));
    };
    if !spec.arity_ok(argv.len()) {
        return err::wrong_arity(&check::full_name(spec, argv));
    }
    match check::check(&user, spec, argv) {
        Ok(()) => Frame::OK,
        Err(refusal) => Frame::bulk(refusal.dryrun_text(spec, argv)),
    }
}

fn log(shard: &ShardData, arg: Option<&Bytes>) -> Frame {
    let acl = &shard.shared.acl;
    let count = match arg {
        Some(a) if a.eq_ignore_ascii_case(b"reset") => {
            if let Ok(mut log) = acl.log.lock() {
                log.reset();
            }
            return Frame::OK;
        }
        Some(a) => match crate::util::num::parse_i64(a) {
            Some(n) => n.max(0) as usize,
            None => return err::not_integer(),
        },
        None => 10,
    };
    let Ok(log) = acl.log.lock() else {
        return Frame::Array(Vec::new());
    };
    let now = shard.now_ms;
    Frame::Array(
        log.entries
            .iter()
            .take(count)
            .map(|e| {
                let age = now.saturating_sub(e.updated_ms) as f64 / 1000.0;
                Frame::Map(vec![
                    (Frame::bulk("count"), Frame::Integer(e.count as i64)),
                    (Frame::bulk("reason"), Frame::bulk(e.reason)),
                    (Frame::bulk("context"), Frame::bulk(e.context)),
                    (Frame::bulk("object"), Frame::bulk(e.object.clone())),
                    (Frame::bulk("username"), Frame::bulk(e.username.clone())),
                    (Frame::bulk("age-seconds"), Frame::Double(age)),
                    (
                        Frame::bulk("client-info"),
                        Frame::bulk(e.client_info.clone()),
                    ),
                ])
            })
            .collect(),
    )
}
