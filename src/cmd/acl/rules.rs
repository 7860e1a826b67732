//! ACL SETUSER's rules as Redis 7.0 reads them, applied to a user, and
//! the description ACL LIST and GETUSER give back.
//!
//! Command rules name commands and categories of ember's table: a
//! command's id is its row's place in the table, a subcommand's comes
//! after every row. A selector keeps the resulting bits, not the rules;
//! the description is worked out from the bits as Redis 7.0 does it
//! (`describe_commands`).

use bytes::Bytes;

use crate::acl::password;
use crate::acl::user::{KeyPattern, Selector, User, READ, WRITE};
use crate::cmd::meta::AclCategories;
pub use crate::cmd::table::{id_count, sub_id, sub_index};
use crate::cmd::{lookup, CommandSpec, COMMANDS};

/// Why a rule was refused: the text after `modifier '...': `.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleError {
    UnknownCommand,
    Syntax,
    KeyAfterAll,
    ChannelAfterAll,
    NoSuchPassword,
    BadHash,
    SubcommandFirstArg,
}

impl RuleError {
    pub fn text(self) -> &'static str {
        match self {
            RuleError::UnknownCommand => "Unknown command or category name in ACL",
            RuleError::Syntax => "Syntax error",
            RuleError::KeyAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => "The password you are trying to remove from the user does not exist",
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::SubcommandFirstArg => "Allowing first-arg of a subcommand is not supported",
        }
    }
}

/// A command and all its subcommands.
fn set_command(sel: &mut Selector, row: &'static CommandSpec, on: bool) {
    sel.set_id(row.id(), on);
    for i in 0..row.meta.subcommands.len() {
        sel.set_id(sub_id(row, i), on);
    }
    let ids: Vec<usize> = std::iter::once(row.id())
        .chain((0..row.meta.subcommands.len()).map(|i| sub_id(row, i)))
        .collect();
    sel.first_args.retain(|(id, _)| !ids.contains(id));
}

fn set_category(sel: &mut Selector, cat: AclCategories, on: bool) {
    for row in COMMANDS {
        if row.meta.acl.contains(cat) {
            set_command(sel, row, on);
        }
        for (i, sub) in row.meta.subcommands.iter().enumerate() {
            if sub.acl.contains(cat) {
                let id = sub_id(row, i);
                sel.set_id(id, on);
                sel.first_args.retain(|(x, _)| *x != id);
            }
        }
    }
}

fn set_all_commands(sel: &mut Selector, on: bool) {
    for row in COMMANDS {
        set_command(sel, row, on);
    }
    sel.all_commands = on;
    sel.first_args.clear();
}

/// Whether a user may run anything on any key and channel (the default
/// user's reach): its connections skip the checks.
pub fn unrestricted(user: &User) -> bool {
    let sel = &user.root;
    sel.all_commands
        && sel.all_keys
        && sel.all_channels
        && (0..id_count()).all(|id| sel.allows_id(id))
}

/// Applies a command rule (`+get`, `-@hash`, `+config|get`, `+select|0`)
/// to `sel`'s bits, without recording it.
fn apply_command_bits(sel: &mut Selector, rule: &str) -> Result<String, RuleError> {
    let allow = rule.starts_with('+');
    let body = &rule[1..];
    if let Some(cat) = body.strip_prefix('@') {
        let bit = AclCategories::named(cat.as_bytes()).ok_or(RuleError::UnknownCommand)?;
        set_category(sel, bit, allow);
        return Ok(format!("@{}", cat.to_ascii_lowercase()));
    }
    // `-` takes a command or a subcommand; `+` also a first argument.
    let lookup_full = |name: &str| -> Option<(&'static CommandSpec, Option<usize>)> {
        match name.split_once('|') {
            None => lookup(name.as_bytes()).map(|row| (row, None)),
            Some((cmd, sub)) => {
                let row = lookup(cmd.as_bytes()).filter(|r| r.container)?;
                Some((row, Some(sub_index(row, sub.as_bytes())?)))
            }
        }
    };
    let set_found = |sel: &mut Selector, found: (&'static CommandSpec, Option<usize>)| match found {
        (row, None) => {
            set_command(sel, row, allow);
            row.name.to_string()
        }
        (row, Some(i)) => {
            let id = sub_id(row, i);
            sel.set_id(id, allow);
            sel.first_args.retain(|(x, _)| *x != id);
            row.meta.subcommands[i].name.to_string()
        }
    };
    if !allow || !body.contains('|') {
        let found = lookup_full(body).ok_or(RuleError::UnknownCommand)?;
        return Ok(set_found(sel, found));
    }
    // As Redis: split at the last `|`; what is before names a command.
    let (cmd, sub) = body.rsplit_once('|').ok_or(RuleError::Syntax)?;
    let (row, parent_sub) = lookup_full(cmd).ok_or(RuleError::UnknownCommand)?;
    if parent_sub.is_some() {
        return Err(RuleError::SubcommandFirstArg);
    }
    if sub.is_empty() {
        return Err(RuleError::Syntax);
    }
    if row.container {
        let i = sub_index(row, sub.as_bytes()).ok_or(RuleError::UnknownCommand)?;
        return Ok(set_found(sel, (row, Some(i))));
    }
    // A first argument of a plain command (`+select|0`).
    let id = row.id();
    if !sel.allows_id(id) {
        match sel.first_args.iter_mut().find(|(x, _)| *x == id) {
            Some((_, args)) => {
                if !args.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
                    args.push(sub.to_string());
                }
            }
            None => sel.first_args.push((id, vec![sub.to_string()])),
        }
    }
    Ok(format!("{}|{sub}", row.name))
}

/// Applies one selector rule (commands, keys, channels) to `sel`.
pub fn apply_selector_rule(sel: &mut Selector, rule: &[u8]) -> Result<(), RuleError> {
    let text = std::str::from_utf8(rule).map_err(|_| RuleError::Syntax)?;
    let lower = text.to_ascii_lowercase();
    match lower.as_str() {
        // As Redis, `~*` and `&*` are the flags' other names, accepted
        // even when the flag is already set.
        "allkeys" | "~*" => {
            sel.all_keys = true;
            sel.keys.clear();
            return Ok(());
        }
        "resetkeys" => {
            sel.all_keys = false;
            sel.keys.clear();
            return Ok(());
        }
        "allchannels" | "&*" => {
            sel.all_channels = true;
            sel.channels.clear();
            return Ok(());
        }
        "resetchannels" => {
            sel.all_channels = false;
            sel.channels.clear();
            return Ok(());
        }
        "allcommands" | "+@all" => {
            set_all_commands(sel, true);
            return Ok(());
        }
        "nocommands" | "-@all" => {
            set_all_commands(sel, false);
            return Ok(());
        }
        _ => {}
    }
    match rule.first() {
        Some(b'~') | Some(b'%') => key_rule(sel, rule),
        Some(b'&') => {
            if sel.all_channels {
                return Err(RuleError::ChannelAfterAll);
            }
            let pattern = &rule[1..];
            if pattern == b"*" {
                sel.all_channels = true;
                sel.channels.clear();
            } else if !sel.channels.iter().any(|c| c.as_ref() == pattern) {
                sel.channels.push(Bytes::copy_from_slice(pattern));
            }
            Ok(())
        }
        Some(b'+') | Some(b'-') if rule.len() > 1 => apply_command_bits(sel, text).map(|_| ()),
        _ => Err(RuleError::Syntax),
    }
}

/// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
fn key_rule(sel: &mut Selector, rule: &[u8]) -> Result<(), RuleError> {
    if sel.all_keys {
        return Err(RuleError::KeyAfterAll);
    }
    let (perms, pattern) = if rule[0] == b'~' {
        (READ | WRITE, &rule[1..])
    } else {
        let mut perms = 0;
        let mut at = 1;
        loop {
            match rule.get(at).map(u8::to_ascii_uppercase) {
                Some(b'R') if perms & READ == 0 => perms |= READ,
                Some(b'W') if perms & WRITE == 0 => perms |= WRITE,
                Some(b'~') => break,
                _ => return Err(RuleError::Syntax),
            }
            at += 1;
        }
        if perms == 0 || at + 1 >= rule.len() {
            return Err(RuleError::Syntax);
        }
        (perms, &rule[at + 1..])
    };
    if pattern == b"*" && perms == READ | WRITE {
        sel.all_keys = true;
        sel.keys.clear();
        return Ok(());
    }
    match sel.keys.iter_mut().find(|k| k.pattern.as_ref() == pattern) {
        Some(existing) => existing.perms |= perms,
        None => sel
            .keys
            .push(KeyPattern::new(Bytes::copy_from_slice(pattern), perms)),
    }
    Ok(())
}

/// Applies one SETUSER rule to `user`; `all_channels` is what `reset`
/// and new selectors start with (`acl-pubsub-default`).
pub fn apply_rule(user: &mut User, rule: &[u8], all_channels: bool) -> Result<(), RuleError> {
    if rule.first() == Some(&b'(') && rule.last() == Some(&b')') && rule.len() >= 2 {
        let mut sel = Selector {
            all_channels,
            ..Selector::default()
        };
        for part in rule[1..rule.len() - 1].split(|&c| c == b' ') {
            if !part.is_empty() {
                apply_selector_rule(&mut sel, part)?;
            }
        }
        user.selectors.push(sel);
        return Ok(());
    }
    let lower = rule.to_ascii_lowercase();
    match lower.as_slice() {
        b"on" => user.enabled = true,
        b"off" => user.enabled = false,
        b"nopass" => {
            user.nopass = true;
            user.passwords.clear();
        }
        b"resetpass" => {
            user.nopass = false;
            user.passwords.clear();
        }
        b"sanitize-payload" => user.sanitize = Some(true),
        b"skip-sanitize-payload" => user.sanitize = Some(false),
        b"clearselectors" => user.selectors.clear(),
        b"reset" => {
            for step in [
                &b"resetpass"[..],
                b"resetkeys",
                b"resetchannels",
                b"off",
                b"sanitize-payload",
                b"clearselectors",
                b"-@all",
            ] {
                apply_rule(user, step, all_channels)?;
            }
            if all_channels {
                apply_rule(user, b"allchannels", all_channels)?;
            }
        }
        _ => match rule.first() {
            Some(b'>') => add_hash(user, password::hash_hex(&rule[1..])),
            Some(b'#') => {
                if !password::is_hash(&rule[1..]) {
                    return Err(RuleError::BadHash);
                }
                add_hash(user, String::from_utf8_lossy(&rule[1..]).into_owned());
            }
            Some(b'<') => remove_hash(user, &password::hash_hex(&rule[1..]))?,
            Some(b'!') => {
                if !password::is_hash(&rule[1..]) {
                    return Err(RuleError::BadHash);
                }
                remove_hash(user, &String::from_utf8_lossy(&rule[1..]))?;
            }
            _ => apply_selector_rule(&mut user.root, rule)?,
        },
    }
    Ok(())
}

fn add_hash(user: &mut User, hash: String) {
    user.nopass = false;
    if !user.passwords.contains(&hash) {
        user.passwords.push(hash);
    }
}

fn remove_hash(user: &mut User, hash: &str) -> Result<(), RuleError> {
    user.nopass = false;
    let before = user.passwords.len();
    user.passwords.retain(|p| p != hash);
    if user.passwords.len() == before {
        return Err(RuleError::NoSuchPassword);
    }
    Ok(())
}

/// SETUSER's arguments with a selector that spans several of them
/// (`(~a` `+get)`) joined into one; the error names where an unmatched
/// one starts.
pub fn merge_selector_args(args: &[Bytes]) -> Result<Vec<Vec<u8>>, String> {
    let mut out = Vec::new();
    let mut open: Option<Vec<u8>> = None;
    for arg in args {
        match open.as_mut() {
            Some(acc) => {
                acc.push(b' ');
                acc.extend_from_slice(arg);
                if arg.last() == Some(&b')') {
                    out.extend(open.take());
                }
            }
            None if arg.first() == Some(&b'(') && arg.last() != Some(&b')') => {
                open = Some(arg.to_vec())
            }
            None => out.push(arg.to_vec()),
        }
    }
    if let Some(acc) = open {
        return Err(format!(
            "ERR Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(&acc)
        ));
    }
    Ok(out)
}

/// How many commands (and subcommands) of category `cat` `sel` allows
/// and denies, as Redis counts them.
fn category_counts(sel: &Selector, cat: AclCategories) -> (usize, usize) {
    let (mut on, mut off) = (0, 0);
    let mut count = |allowed: bool| {
        if allowed {
            on += 1
        } else {
            off += 1
        }
    };
    for row in COMMANDS {
        if row.meta.acl.contains(cat) {
            count(sel.allows_id(row.id()));
        }
        for (i, sub) in row.meta.subcommands.iter().enumerate() {
            if sub.acl.contains(cat) {
                count(sel.allows_id(sub_id(row, i)));
            }
        }
    }
    (on, off)
}

/// The command rules as Redis 7.0's ACL LIST writes them: `+@all` (the
/// selector takes commands added later) or `-@all`; then categories,
/// greedily: each round takes the category with the fewest commands
/// that differ from the selector's (more commands alike than different;
/// a tie goes to more alike, then to Redis's category order), until none
/// qualifies, counting only commands no earlier pick covered; then the
/// single commands and subcommands that still differ, and the allowed
/// first arguments. (Redis lists the single commands in its command
/// dictionary's order, which changes with every process; ember lists
/// them in its table's order.)
pub fn describe_commands(sel: &Selector) -> String {
    let additive = !sel.all_commands;
    let mut fake = Selector::default();
    set_all_commands(&mut fake, sel.all_commands);
    let mut out = vec![if additive { "-@all" } else { "+@all" }.to_string()];
    // The selector's bits with each picked category turned to the start's
    // value, so a later round counts only what is left to explain.
    let mut left = sel.clone();
    loop {
        let mut best: Option<(AclCategories, &str)> = None;
        let (mut min_diff, mut max_same) = (usize::MAX, 0);
        for (cat, name) in AclCategories::NAMES {
            let (on, off) = category_counts(&left, *cat);
            let (diff, same) = if additive { (off, on) } else { (on, off) };
            if same > diff && (diff < min_diff || (diff == min_diff && same > max_same)) {
                best = Some((*cat, name));
                min_diff = diff;
                max_same = same;
            }
        }
        let Some((cat, name)) = best else {
            break;
        };
        set_category(&mut fake, cat, additive);
        set_category(&mut left, cat, !additive);
        out.push(format!("{}@{name}", if additive { '+' } else { '-' }));
    }
    for row in COMMANDS {
        let bit = sel.allows_id(row.id());
        if bit != fake.allows_id(row.id()) {
            out.push(format!("{}{}", if bit { '+' } else { '-' }, row.name));
            set_command(&mut fake, row, bit);
        }
        for (i, sub) in row.meta.subcommands.iter().enumerate() {
            let id = sub_id(row, i);
            let bit = sel.allows_id(id);
            if bit != fake.allows_id(id) {
                out.push(format!("{}{}", if bit { '+' } else { '-' }, sub.name));
                fake.set_id(id, bit);
            }
        }
        if !bit {
            if let Some((_, args)) = sel.first_args.iter().find(|(id, _)| *id == row.id()) {
                out.extend(args.iter().map(|a| format!("+{}|{a}", row.name)));
            }
        }
    }
    out.join(" ")
}

/// A selector as ACL LIST writes it: keys, channels, commands.
pub fn describe_selector(sel: &Selector) -> String {
    let mut parts = Vec::new();
    if sel.all_keys {
        parts.push("~*".to_string());
    } else {
        parts.extend(sel.keys.iter().map(KeyPattern::describe));
    }
    if sel.all_channels {
        parts.push("&*".into());
    } else {
        parts.push("resetchannels".into());
        parts.extend(
            sel.channels
                .iter()
                .map(|c| format!("&{}", String::from_utf8_lossy(c))),
        );
    }
    parts.push(describe_commands(sel));
    parts.join(" ")
}

/// A user as ACL LIST and the ACL file write it, after `user <name> `.
pub fn describe_user(user: &User) -> String {
    let mut parts: Vec<String> = user.flags().iter().map(|f| f.to_string()).collect();
    parts.extend(user.passwords.iter().map(|p| format!("#{p}")));
    parts.push(describe_selector(&user.root));
    for sel in &user.selectors {
        parts.push(format!("({})", describe_selector(sel)));
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(rules: &[&str]) -> Result<User, RuleError> {
        let mut u = User::new("t", false);
        for r in rules {
            apply_rule(&mut u, r.as_bytes(), false)?;
        }
        Ok(u)
    }

    fn commands(rules: &[&str]) -> String {
        describe_commands(&user(rules).unwrap().root)
    }

    /// Each expectation is what redis-server 7.0.15's ACL LIST printed
    /// (single commands in ember's order where Redis's varies).
    #[test]
    fn command_rules_describe_as_redis() {
        assert_eq!(commands(&["-get"]), "-@all");
        assert_eq!(commands(&["+get", "-get"]), "-@all");
        assert_eq!(commands(&["+@all", "-get", "-get"]), "+@all -get");
        assert_eq!(commands(&["+@hash", "-@hash"]), "-@all");
        assert_eq!(commands(&["-@hash", "+@hash"]), "-@all +@hash");
        assert_eq!(
            commands(&["+get", "+@hash", "-hset", "+get"]),
            "-@all +@hash +get -hset"
        );
        assert_eq!(commands(&["+config", "-config"]), "-@all");
        assert_eq!(
            commands(&["+config", "-config|get"]),
            "-@all +config -config|get"
        );
        assert_eq!(commands(&["+config|get", "+config"]), "-@all +config");
        assert_eq!(
            commands(&["+@all", "-config|get", "+get"]),
            "+@all -config|get"
        );
        assert_eq!(
            commands(&["+select|0", "+select|1"]),
            "-@all +select|0 +select|1"
        );
        assert_eq!(commands(&["+select|0", "-select"]), "-@all");
        assert_eq!(commands(&["+select|0", "+select"]), "-@all +select");
        assert_eq!(commands(&["+@all", "+select|0"]), "+@all");
        assert_eq!(
            commands(&["+@all", "-@hash", "+hget"]),
            "+@all -@hash +hget"
        );
        assert_eq!(
            commands(&["+@all", "-@hash", "+hget", "-@all", "+get"]),
            "-@all +get"
        );
    }

    #[test]
    fn bad_rules_are_refused() {
        assert_eq!(user(&["foo"]).unwrap_err(), RuleError::Syntax);
        assert_eq!(user(&["+nosuch"]).unwrap_err(), RuleError::UnknownCommand);
        assert_eq!(user(&["+@nosuch"]).unwrap_err(), RuleError::UnknownCommand);
        assert_eq!(user(&["-select|0"]).unwrap_err(), RuleError::UnknownCommand);
        assert_eq!(user(&["%Q~x"]).unwrap_err(), RuleError::Syntax);
        assert_eq!(
            user(&["+config|get|port"]).unwrap_err(),
            RuleError::SubcommandFirstArg
        );
        assert_eq!(user(&["+get|a|b"]).unwrap_err(), RuleError::UnknownCommand);
        assert_eq!(user(&["+select|"]).unwrap_err(), RuleError::Syntax);
        assert_eq!(
            user(&["+config|nosuch"]).unwrap_err(),
            RuleError::UnknownCommand
        );
        assert_eq!(user(&["%RR~x"]).unwrap_err(), RuleError::Syntax);
        assert_eq!(user(&["%R~"]).unwrap_err(), RuleError::Syntax);
        assert!(user(&["%r~x"]).is_ok());
        assert_eq!(user(&["~*", "~x"]).unwrap_err(), RuleError::KeyAfterAll);
        assert!(user(&["allkeys", "~*", "allchannels", "&*"]).is_ok());
        assert_eq!(user(&["&*", "&x"]).unwrap_err(), RuleError::ChannelAfterAll);
        assert_eq!(user(&["#abc"]).unwrap_err(), RuleError::BadHash);
        assert_eq!(user(&["<x"]).unwrap_err(), RuleError::NoSuchPassword);
    }

    #[test]
    fn users_describe_as_redis() {
        let u = user(&[
            "on",
            ">p",
            "~a*",
            "%R~b*",
            "&ch*",
            "+get",
            "+@hash",
            "-hset",
            "+get",
            "(+set ~x*)",
        ])
        .unwrap();
        assert_eq!(
            describe_user(&u),
            "on #148de9c5a7a44d19e56cd9ae1a554bf67847afb0c58f6e12fa29ac7ddfca9940 ~a* %R~b* resetchannels &ch* -@all +@hash +get -hset (~x* resetchannels -@all +set)"
        );
        let u = user(&["reset"]).unwrap();
        assert_eq!(
            describe_user(&u),
            "off sanitize-payload resetchannels -@all"
        );
        let u = user(&["%R~k", "%W~k"]).unwrap();
        assert_eq!(describe_selector(&u.root), "~k resetchannels -@all");
    }

    #[test]
    fn selectors_spanning_arguments_are_joined() {
        let args: Vec<Bytes> = ["on", "(~a", "+get)", "(+set)"]
            .iter()
            .map(|s| Bytes::from(s.to_string()))
            .collect();
        let merged = merge_selector_args(&args).unwrap();
        assert_eq!(
            merged,
            vec![b"on".to_vec(), b"(~a +get)".to_vec(), b"(+set)".to_vec()]
        );
        let bad: Vec<Bytes> = vec![Bytes::from_static(b"(~x")];
        assert_eq!(
            merge_selector_args(&bad).unwrap_err(),
            "ERR Unmatched parenthesis in acl selector starting at '(~x'."
        );
    }
}
