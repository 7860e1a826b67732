//! Users from outside: the config file's `user` lines at start, and the
//! ACL file (`aclfile`) read at start and by ACL LOAD, written by ACL SAVE,
//! one `user <name> <rules...>` line per user as ACL LIST prints them.

use bytes::Bytes;

use super::{apply_rules, rules};
use crate::acl::{Acl, User};
use crate::cmd::args::err;
use crate::cmd::ShardData;
use crate::config::Live;
use crate::resp::Frame;

const NO_ACLFILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

/// Users made from `lines` (each a user's name then its rules) on top of
/// the registry's current ones; an error names the line's place and why.
fn users_from(config: &Live, lines: &[(usize, Vec<Bytes>)]) -> Result<Vec<User>, String> {
    let mut made: Vec<User> = Vec::new();
    for (at, words) in lines {
        let Some((name, rules)) = words.split_first() else {
            continue;
        };
        if made.iter().any(|u| u.name.as_bytes() == name.as_ref()) {
            return Err(format!(
                "line {at}: Duplicate user '{}' found",
                String::from_utf8_lossy(name)
            ));
        }
        // Each line starts from a new user, `default` included.
        if name.iter().any(|&c| c == b' ' || c == 0) {
            return Err(format!(
                "line {at}: Usernames can't contain spaces or null characters"
            ));
        }
        let fresh = User::new(&String::from_utf8_lossy(name), config.acl_pubsub_all());
        let user = apply_rules(fresh, config.acl_pubsub_all(), rules)
            .map_err(|e| format!("line {at}: {}", frame_text(&e)))?;
        made.push(user);
    }
    Ok(made)
}

fn frame_text(frame: &Frame) -> String {
    match frame {
        Frame::Error(text) => text.strip_prefix("ERR ").unwrap_or(text).to_string(),
        _ => String::new(),
    }
}

/// Splits an ACL file into its `user` lines' words (after `user`).
fn parse_file(text: &str) -> Result<Vec<(usize, Vec<Bytes>)>, String> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&"user") || words.len() < 2 {
            return Err(format!("line {}: should start with user keyword", i + 1));
        }
        let words = words[1..]
            .iter()
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        lines.push((i + 1, words));
    }
    Ok(lines)
}

/// Sets up the users when the server starts: `requirepass`, then the
/// config file's `user` lines or the ACL file (not both, as Redis refuses).
pub fn load_at_startup(acl: &Acl, config: &Live) -> Result<(), String> {
    // The registry's own default user knows no command ids.
    acl.put(super::default_user());
    let password = config.requirepass();
    if !password.is_empty() {
        super::apply_requirepass(acl, &password);
    }
    let user_lines = config.user_lines();
    let aclfile = config.aclfile();
    if !user_lines.is_empty() && !aclfile.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    if !user_lines.is_empty() {
        let lines: Vec<(usize, Vec<Bytes>)> = user_lines
            .iter()
            .enumerate()
            .map(|(i, words)| {
                (
                    i + 1,
                    words
                        .iter()
                        .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                        .collect(),
                )
            })
            .collect();
        let users =
            users_from(config, &lines).map_err(|e| format!("Error in user declaration '{e}'"))?;
        for user in users {
            acl.put(user);
        }
    }
    if !aclfile.is_empty() {
        load_file(acl, config, &aclfile)
            .map_err(|e| format!("Aborting Redis startup because of ACL errors: {e}"))?;
    }
    Ok(())
}

/// Replaces the users by the ACL file's.
fn load_file(acl: &Acl, config: &Live, path: &str) -> Result<(), String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        // As Redis, a missing file at start is an empty set of users.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("Error loading ACLs, opening file '{path}': {e}")),
    };
    let lines = parse_file(&text).map_err(|e| format!("{path}:{e}"))?;
    let users = users_from(config, &lines).map_err(|e| format!("{path}:{e}"))?;
    acl.replace_all(users);
    Ok(())
}

/// ACL LOAD.
pub fn load(shard: &ShardData) -> Frame {
    let path = shard.shared.config.aclfile();
    if path.is_empty() {
        return err::frame(NO_ACLFILE);
    }
    match load_file(&shard.shared.acl, &shard.shared.config, &path) {
        Ok(()) => Frame::OK,
        Err(e) => Frame::Error(format!("ERR {e}")),
    }
}

/// ACL SAVE: every user, written to a temporary file renamed over the ACL
/// file, so a reader never sees half of it.
pub fn save(shard: &ShardData) -> Frame {
    let path = shard.shared.config.aclfile();
    if path.is_empty() {
        return err::frame(NO_ACLFILE);
    }
    let text: String = shard
        .shared
        .acl
        .all()
        .iter()
        .map(|u| format!("user {} {}\n", u.name, rules::describe_user(u)))
        .collect();
    let tmp = format!("{path}.tmp-{}", std::process::id());
    let written = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &path));
    match written {
        Ok(()) => Frame::OK,
        Err(e) => Frame::Error(format!("ERR There was an error trying to save the ACLs. Please check the server logs for more information ({e})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acl_file_lines() {
        let lines = parse_file("# c\nuser a on >x ~*\n\nuser b off\n").unwrap();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 2);
        assert_eq!(
            lines[1].1,
            vec![Bytes::from_static(b"b"), Bytes::from_static(b"off")]
        );
        assert!(parse_file("usr a\n").is_err());
    }

    #[test]
    fn users_load_from_lines_and_refuse_bad_rules() {
        let live = Live::new();
        let lines =
            parse_file("user a on >x ~k* +get\nuser default on nopass ~* &* +@all\n").unwrap();
        let users = users_from(&live, &lines).unwrap();
        assert_eq!(rules::describe_user(&users[0]), "on #2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 ~k* resetchannels -@all +get");
        let bad = parse_file("user a on +nosuch\n").unwrap();
        let e = users_from(&live, &bad).unwrap_err();
        assert!(e.contains("line 1") && e.contains("Unknown command"), "{e}");
    }
}
