//! MODULE and LOLWUT: a server without modules and without art, answering
//! as redis-server 7.0.15 does where it has none loaded.

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::{Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;

const MODULE_HELP: &[&str] = &[
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
];

/// Redis's refusal while `enable-module-command` is `no`, which is what
/// ember's is (it loads no modules).
const NOT_ALLOWED: &str = "ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";

/// MODULE LIST (none loaded), HELP, and LOAD, LOADEX, UNLOAD refused.
pub fn module(_: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let sub = argv[1].to_ascii_lowercase();
    let n = argv.len();
    match sub.as_slice() {
        b"help" if n == 2 => help_reply(MODULE_HELP).into(),
        b"list" if n == 2 => Frame::Array(Vec::new()).into(),
        b"load" | b"loadex" if n >= 3 => err::frame(NOT_ALLOWED).into(),
        b"unload" if n == 3 => err::frame(NOT_ALLOWED).into(),
        b"help" | b"list" | b"load" | b"loadex" | b"unload" => {
            err::wrong_arity(&format!("module|{}", String::from_utf8_lossy(&sub))).into()
        }
        _ => err::unknown_subcommand(&argv[1], "module").into(),
    }
}

/// LOLWUT [VERSION v]: the version line Redis 7.0 prints under its art
/// (ember draws none, for any version).
pub fn lolwut(_: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    if argv.len() >= 3 && argv[1].eq_ignore_ascii_case(b"version") {
        if let Err(e) = super::args::int_arg(&argv[2]) {
            return e.into();
        }
    }
    Frame::Verbatim(Bytes::from_static(b"Redis ver. 7.0.15\n")).into()
}
