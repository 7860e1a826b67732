//! The RDB parameters with a syntax of their own: `save` (rules, kept
//! in their normal form), `dir` (the process's working directory, as in
//! Redis, which `chdir`s to it) and `dbfilename` (a bare file name).

use super::kind::{Custom, Value};

/// redis-server 7.0's built-in rules: after an hour if one key changed,
/// after 5 minutes if 100 did, after a minute if 10000 did.
pub const DEFAULT_SAVE: &str = "3600 1 300 100 60 10000";

/// `save` rules as Redis checks them before taking them: `""` (none), or
/// pairs of seconds (at least 1) and changes (at least 0); kept as the
/// numbers separated by single spaces, as CONFIG GET prints them.
fn normalize_save(text: &str) -> Result<String, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let valid = words.len().is_multiple_of(2)
        && words.iter().enumerate().all(|(i, w)| {
            let least = if i.is_multiple_of(2) { 1 } else { 0 };
            w.parse::<i64>().is_ok_and(|n| n >= least)
        });
    if !valid {
        return Err("Invalid save parameters".into());
    }
    let numbers: Vec<String> = words
        .iter()
        .map(|w| w.parse::<i64>().unwrap_or(0).to_string())
        .collect();
    Ok(numbers.join(" "))
}

pub(super) static SAVE: Custom = Custom {
    default: DEFAULT_SAVE,
    parse: |_, text| normalize_save(text).map(Value::Text),
    read: |live| Value::Text(live.save_text()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.save.write()) {
            *slot = text;
        }
    },
};

/// `dir`: the directory must exist; its absolute form is kept, and the
/// process moves there when it is stored (Redis `chdir`s too, so relative
/// paths in other settings mean the same in both).
pub(super) static DIR: Custom = Custom {
    default: "./",
    parse: |_, text| match std::fs::canonicalize(text) {
        Ok(path) if path.is_dir() => Ok(Value::Text(path.display().to_string())),
        Ok(_) => Err("Not a directory".into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            Err("No such file or directory".into())
        }
        Err(e) => Err(e.to_string()),
    },
    read: |live| Value::Text(live.dir()),
    store: |_, value| {
        if let Value::Text(path) = value {
            if let Err(e) = std::env::set_current_dir(&path) {
                log::warn!("Can't chdir to '{path}': {e}");
            }
        }
    },
};

pub(super) static DBFILENAME: Custom = Custom {
    default: "dump.rdb",
    parse: |_, text| {
        if text.contains('/') || text.contains('\\') {
            Err("dbfilename can't be a path, just a filename".into())
        } else {
            Ok(Value::Text(text.to_string()))
        }
    },
    read: |live| Value::Text(live.dbfilename()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.dbfilename.write()) {
            *slot = text;
        }
    },
};

/// `appendfilename`: a bare name, as Redis checks it.
pub(super) static APPENDFILENAME: Custom = Custom {
    default: "appendonly.aof",
    parse: |_, text| bare_name(text, "appendfilename"),
    read: |live| Value::Text(live.appendfilename()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.appendfilename.write()) {
            *slot = text;
        }
    },
};

/// `appenddirname`: a bare name inside `dir`, as Redis checks it.
pub(super) static APPENDDIRNAME: Custom = Custom {
    default: "appendonlydir",
    parse: |_, text| bare_name(text, "appenddirname"),
    read: |live| Value::Text(live.appenddirname()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.appenddirname.write()) {
            *slot = text;
        }
    },
};

/// A file or directory name with no path in it, with Redis's refusals.
fn bare_name(text: &str, what: &str) -> Result<Value, String> {
    let kind = if what == "appendfilename" {
        "filename"
    } else {
        "dirname"
    };
    if text.is_empty() {
        Err(format!("{what} can't be empty"))
    } else if text.contains('/') || text.contains('\\') {
        Err(format!("{what} can't be a path, just a {kind}"))
    } else {
        Ok(Value::Text(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_rules_are_checked_and_normalized() {
        assert_eq!(normalize_save("  900 1   300 10 ").unwrap(), "900 1 300 10");
        assert_eq!(normalize_save("").unwrap(), "");
        for bad in ["100", "0 1", "10 -1", "x 1"] {
            assert_eq!(normalize_save(bad).unwrap_err(), "Invalid save parameters");
        }
    }
}
