//! The crate's top-level modules form layers: each may use only modules of
//! the layers below it, so there is no import circle between them and each
//! layer can be understood (and tested) without those above.
//!
//! ```text
//!   shard           the loops: connections, hops, expiry pacing, blocked clients
//!   net             connections and their ordered reply queues
//!   cmd             the commands and the dispatcher
//!   exec            the execution core: context, jobs, key locks, waits, hops
//!   persist         RDB files and the persistence state
//!   tracking        client-side caching's registry (uses pubsub's Subscriber)
//!   store pubsub latency slowlog acl
//!   resp config
//!   util logging
//! ```
//!
//! Why a test over the source rather than a tool such as `cargo-cycles`:
//! it needs nothing installed, runs with `cargo test`, states the intended
//! order (not only the absence of circles), and names the offending file.
//! It reads every `crate::name` path outside comments, which is how the
//! crate refers across top-level modules (`super::` stays inside one).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom to top; a module may use those in earlier rows only.
const LAYERS: &[&[&str]] = &[
    &["util", "logging"],
    &["resp", "config"],
    &["store", "pubsub", "latency", "slowlog", "acl"],
    &["tracking"],
    &["persist"],
    &["exec"],
    &["cmd"],
    &["net"],
    &["shard"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|row| row.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source directory") {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules named by `crate::` paths in `source`, comments left out.
fn crate_paths(source: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `crate::{a, b::c}`: every first segment of the group.
                let inner = group.split('}').next().unwrap_or("");
                for item in inner.split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        used.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                used.insert(name);
            }
        }
    }
    used
}

/// The top-level modules `lib.rs` declares.
fn top_level_modules(lib: &str) -> Vec<String> {
    lib.lines()
        .filter_map(|l| {
            l.trim()
                .strip_prefix("pub mod ")
                .or(l.trim().strip_prefix("mod "))
        })
        .map(|l| l.trim_end_matches(';').to_string())
        .collect()
}

#[test]
fn top_level_modules_use_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let modules = top_level_modules(&lib);
    assert!(
        modules.len() >= LAYERS.len(),
        "modules read from lib.rs: {modules:?}"
    );
    let mut violations = Vec::new();
    for module in &modules {
        let Some(layer) = layer_of(module) else {
            violations.push(format!("`{module}` has no layer: add it to LAYERS"));
            continue;
        };
        let mut files = Vec::new();
        let file = src.join(format!("{module}.rs"));
        if file.exists() {
            files.push(file);
        }
        let dir = src.join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        assert!(!files.is_empty(), "no source for module `{module}`");
        for file in files {
            let source = std::fs::read_to_string(&file).expect("readable source");
            for used in crate_paths(&source) {
                if used == *module {
                    continue;
                }
                match layer_of(&used) {
                    Some(l) if l < layer => {}
                    Some(_) => violations.push(format!(
                        "{} ({module}) uses crate::{used}, which is not in a lower layer",
                        file.strip_prefix(&src).unwrap_or(&file).display()
                    )),
                    None => violations.push(format!(
                        "{} uses crate::{used}, which is not a known module",
                        file.display()
                    )),
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_reader_sees_grouped_and_plain_paths_but_not_comments() {
    let used = crate_paths(
        "use crate::exec::{Ctx, Job};\nuse crate::{resp::Frame, util::slot};\n// crate::shard in a comment\nlet x = crate::store::Value::Nil; // crate::net",
    );
    let used: Vec<&str> = used.iter().map(String::as_str).collect();
    assert_eq!(used, ["exec", "resp", "store", "util"]);
}
