//! Start-up: the command line and the config file, both redis-server's
//! syntax, applied over the defaults in the order redis-server applies
//! them (the file's lines, then the flags as lines after them), and the
//! `--help` text, generated from the rows.

use std::path::PathBuf;

use super::access::BAD_DIRECTIVE;
use super::live::Live;
use super::params::{Set, PARAMS};
use super::ConfigError;

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Startup {
    Run(Flags),
    /// `--help` or `--version`: print this and exit.
    Print(String),
}

/// A parsed command line.
#[derive(Debug, Default, PartialEq)]
pub struct Flags {
    /// The config file: the first argument when it is not a flag, or
    /// `--config FILE`.
    pub config_file: Option<PathBuf>,
    /// The flags as the config lines redis-server makes of them, in order.
    pub directives: Vec<Directive>,
}

/// One `--name value...` flag: a config line after the file's.
#[derive(Debug, Default, PartialEq)]
pub struct Directive {
    /// The flag without its `--`: a name, or a name and its value in one
    /// argument (`"--maxmemory 700mb"`), split as a config line is.
    pub head: String,
    /// The arguments after it, each one value however it is spelled.
    pub values: Vec<String>,
}

impl Directive {
    /// The line as redis-server prints it in an error: the head, then
    /// every value quoted.
    pub fn text(&self) -> String {
        self.values
            .iter()
            .fold(self.head.clone(), |text, v| text + &format!(" {v:?}"))
            .trim()
            .to_string()
    }

    /// Its words, the name first; `None` for unbalanced quotes in the head.
    fn words(&self) -> Option<Vec<String>> {
        let mut words = split_config_line(&self.head)?;
        words.extend(self.values.iter().cloned());
        Some(words)
    }
}

impl Flags {
    /// Parses a command line (`args[0]` is the program) as redis-server
    /// 7.0 does: an optional config file first, then flags. A `--word`
    /// starts a new directive only once the one before has a value, so a
    /// value may itself start with `--` (`--port --bla` gives port the
    /// value `--bla`); a bare `--save` before another flag or at the end
    /// is `save ""`. Words before any flag form a directive of their own.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Startup {
        let mut words = args.into_iter().skip(1).peekable();
        let mut flags = Flags::default();
        if let Some(file) = words.next_if(|w| !w.starts_with('-')) {
            flags.config_file = Some(file.into());
        }
        match words.peek().map(String::as_str) {
            Some("-h") => return Startup::Print(help()),
            Some("-v" | "-V") => return Startup::Print(version()),
            _ => {}
        }
        let words: Vec<String> = words.collect();
        let mut lines: Vec<Directive> = Vec::new();
        let mut wants_value = false;
        for (j, word) in words.iter().enumerate() {
            let Some(head) = word.strip_prefix("--").filter(|_| !wants_value) else {
                match lines.last_mut() {
                    Some(line) => line.values.push(word.clone()),
                    None => lines.push(Directive {
                        head: String::new(),
                        values: vec![word.clone()],
                    }),
                }
                wants_value = false;
                continue;
            };
            match head {
                "help" | "h" => return Startup::Print(help()),
                "version" => return Startup::Print(version()),
                _ => {}
            }
            let mut line = Directive {
                head: head.to_string(),
                values: Vec::new(),
            };
            // `--port=7000` too, as the clap flags of earlier versions took it.
            if let Some((name, value)) = head.split_once('=') {
                if super::params::find_param(name.as_bytes()).is_some() {
                    line.head = name.to_string();
                    line.values.push(value.to_string());
                }
            }
            wants_value = line.values.is_empty()
                && split_config_line(&line.head).is_some_and(|w| w.len() == 1);
            let next_is_flag = words.get(j + 1).is_none_or(|w| w.starts_with("--"));
            if wants_value && head.eq_ignore_ascii_case("save") && next_is_flag {
                line.values.push(String::new());
                wants_value = false;
            }
            lines.push(line);
        }
        for line in lines {
            match line.words().as_deref() {
                Some([name, file]) if name.eq_ignore_ascii_case("config") => {
                    flags.config_file = Some(file.into())
                }
                _ => flags.directives.push(line),
            }
        }
        Startup::Run(flags)
    }
}

fn version() -> String {
    format!("ember {}", env!("CARGO_PKG_VERSION"))
}

impl Live {
    /// Defaults, then the config file, then the flags.
    pub fn load(flags: &Flags) -> Result<Live, ConfigError> {
        let mut live = Live::new();
        let mut file_lines = 0;
        let mut saves = SaveLines::default();
        if let Some(path) = &flags.config_file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.clone(),
                source,
            })?;
            // Made absolute first: a `dir` line moves the working folder,
            // and CONFIG REWRITE must find the file again.
            live.config_file = Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()));
            live.apply_file_at(&text, 0, &mut saves)?;
            file_lines = text.lines().count();
        }
        // redis-server reads its flags as lines after the file's and an
        // empty one, and numbers them so in its errors.
        for (index, line) in flags.directives.iter().enumerate() {
            let fail = |reason| ConfigError::directive(file_lines + index + 2, line.text(), reason);
            let words = line
                .words()
                .ok_or_else(|| fail("Unbalanced quotes in configuration line".into()))?;
            live.apply_words(&words, 0, &mut saves)
                .map_err(|e| e.at(fail))?;
        }
        Ok(live)
    }

    /// Applies redis.conf text: `name value...` a line, `#` comments,
    /// double quotes (with `\` escapes) and single quotes.
    pub fn apply_file(&self, text: &str) -> Result<(), ConfigError> {
        self.apply_file_at(text, 0, &mut SaveLines::default())
    }

    /// [`Live::apply_file`] for a file `depth` includes deep, its `save`
    /// lines added to `saves`.
    fn apply_file_at(
        &self,
        text: &str,
        depth: usize,
        saves: &mut SaveLines,
    ) -> Result<(), ConfigError> {
        for (index, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fail = |reason: String| ConfigError::directive(index + 1, line.to_string(), reason);
            let words = split_config_line(line)
                .ok_or_else(|| fail("Unbalanced quotes in configuration line".into()))?;
            self.apply_words(&words, depth, saves)
                .map_err(|e| e.at(fail))?;
        }
        Ok(())
    }

    /// One config line's words, a file's or a flag's: `user` and
    /// `include` lines, `save` lines adding up, then the parameter's own
    /// rules (its number of values, then its value).
    fn apply_words(
        &self,
        words: &[String],
        depth: usize,
        saves: &mut SaveLines,
    ) -> Result<(), LineError> {
        let Some((name, values)) = words.split_first() else {
            return Err(BAD_DIRECTIVE.to_string().into());
        };
        let name = name.to_ascii_lowercase();
        if name == "user" && !values.is_empty() {
            self.add_user_line(values.to_vec());
            return Ok(());
        }
        // `include FILE`: its lines apply here, as Redis reads them (a
        // file including itself stops at the depth limit).
        if name == "include" && values.len() == 1 {
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(String::from("Too many nested includes").into());
            }
            let included = std::fs::read_to_string(&values[0])
                .map_err(|e| format!("Fatal error, can't open config file '{}': {e}", values[0]))?;
            return self
                .apply_file_at(&included, depth + 1, saves)
                .map_err(LineError::Included);
        }
        if name == "save" {
            let rules = saves.add(&values.join(" "));
            return Ok(self.set_directive_words(&name, &[rules])?);
        }
        Ok(self.set_directive_words(&name, values)?)
    }
}

/// Why a config line did not apply: its own reason, or a line of a file
/// it includes (reported as that file's line).
enum LineError {
    Reason(String),
    Included(ConfigError),
}

impl From<String> for LineError {
    fn from(reason: String) -> LineError {
        LineError::Reason(reason)
    }
}

impl LineError {
    /// The error to report, `fail` giving this line's.
    fn at(self, fail: impl FnOnce(String) -> ConfigError) -> ConfigError {
        match self {
            LineError::Reason(reason) => fail(reason),
            LineError::Included(inner) => inner,
        }
    }
}

/// The `save` lines read so far at start-up (the file's, its includes',
/// then the flags'): each adds its rules to the earlier ones' (the first
/// replaces the defaults), as Redis reads them and as CONFIG REWRITE
/// writes them, a rule a line; an empty one clears them.
#[derive(Default)]
struct SaveLines(Option<String>);

impl SaveLines {
    /// The rules in force once `rules` is read.
    fn add(&mut self, rules: &str) -> String {
        let rules = rules.trim();
        let value = match &self.0 {
            Some(earlier) if !earlier.is_empty() && !rules.is_empty() => {
                format!("{earlier} {rules}")
            }
            _ => rules.to_string(),
        };
        self.0 = Some(value.clone());
        value
    }
}

/// How deep `include` lines may nest.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Splits a config line into words as Redis's `sdssplitargs` does:
/// double quotes take the escapes `\n \r \t \b \a \xHH` (and `\c` for any
/// other c), single quotes only `\'`.
fn split_config_line(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            return Some(words);
        };
        let mut word = String::new();
        if first == '"' || first == '\'' {
            chars.next();
            loop {
                match chars.next()? {
                    c if c == first => break,
                    '\\' if first == '"' => word.push(unescape(&mut chars)?),
                    '\\' if chars.peek() == Some(&'\'') => word.push(chars.next()?),
                    c => word.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        words.push(word);
    }
}

/// The character after a backslash inside double quotes.
fn unescape(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<char> {
    Some(match chars.next()? {
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'b' => '\u{8}',
        'a' => '\u{7}',
        'x' => {
            let mut ahead = chars.clone();
            let hex: String = [ahead.next()?, ahead.next()?].iter().collect();
            match u8::from_str_radix(&hex, 16) {
                Ok(b) if hex.chars().all(|c| c.is_ascii_hexdigit()) => {
                    *chars = ahead;
                    char::from(b)
                }
                _ => 'x',
            }
        }
        c => c,
    })
}

/// `--help`: the usage, then every parameter from its row.
pub fn help() -> String {
    let mut out = format!(
        "ember {}: a Redis-compatible cache server with per-core shards\n\n\
         Usage: ember [FILE] [--config FILE] [--<parameter> <value>...]\n\n\
         FILE is a redis.conf (`name value` a line); the flags apply after it, in\n\
         order, and take any parameter below (`--save '' --appendonly no`), its\n\
         value every word up to the next `--` (the word right after a flag's\n\
         name is its value, whatever it starts with). CONFIG GET and CONFIG SET\n\
         take the same names.\n\nParameters:\n",
        env!("CARGO_PKG_VERSION")
    );
    for p in PARAMS {
        let names: Vec<&str> = p.names().collect();
        let set = match p.set {
            Set::Yes => "CONFIG SET changes it",
            Set::Immutable => "fixed at start-up",
            Set::StartUp => "fixed at start-up (CONFIG SET takes only the value it has)",
            Set::Protected => "CONFIG SET changes it where enable-protected-configs allows",
        };
        let default = match p.kind.default_text() {
            text if text.is_empty() => "\"\"".to_string(),
            text => text,
        };
        out += &format!(
            "  --{} <{}>\n      {}. Default {default}; {set}.\n",
            names.join(", --"),
            p.kind.shape(),
            p.doc
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split(' ').map(str::to_string).collect()
    }

    fn flags(line: &str) -> Flags {
        match Flags::parse(words(line)) {
            Startup::Run(flags) => flags,
            other => panic!("{other:?}"),
        }
    }

    fn directive(head: &str, values: &[&str]) -> Directive {
        Directive {
            head: head.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn a_command_line_takes_a_file_first_and_any_parameter_as_a_flag() {
        let f = flags("ember my.conf --port 7000 --save 900 1 --Appendonly no --shards=2 --bogus");
        assert_eq!(f.config_file, Some("my.conf".into()));
        assert_eq!(
            f.directives,
            vec![
                directive("port", &["7000"]),
                directive("save", &["900", "1"]),
                directive("Appendonly", &["no"]),
                directive("shards", &["2"]),
                directive("bogus", &[]),
            ]
        );
        assert_eq!(
            flags("ember --config a.conf --hz 5").config_file,
            Some("a.conf".into())
        );
        assert!(
            matches!(Flags::parse(words("ember --port 1 --help")), Startup::Print(h) if h.contains("--tcp-keepalive"))
        );
        assert!(
            matches!(Flags::parse(words("ember --version")), Startup::Print(v) if v.starts_with("ember "))
        );
        assert!(matches!(Flags::parse(words("ember -v")), Startup::Print(_)));
    }

    #[test]
    fn a_flag_takes_the_next_word_as_its_value_whatever_it_starts_with() {
        // As redis-server 7.0: a `--word` names a new flag only once the
        // one before has a value.
        let f = flags("ember --port --bla --loglevel verbose");
        assert_eq!(
            f.directives,
            vec![
                directive("port", &["--bla"]),
                directive("loglevel", &["verbose"])
            ]
        );
        // A bare `--save` before a flag or at the end is `save ""`.
        let f = flags("ember --save --loglevel verbose --save");
        assert_eq!(
            f.directives,
            vec![
                directive("save", &[""]),
                directive("loglevel", &["verbose"]),
                directive("save", &[""])
            ]
        );
        let f = flags("ember --proc-title-template --save --save");
        assert_eq!(
            f.directives[0],
            directive("proc-title-template", &["--save"])
        );
        // A name and its value in one argument, and words before any flag.
        let f = Flags::parse(
            [
                "ember",
                "a.conf",
                "loglevel",
                "verbose",
                "--maxmemory '700mb'",
                "--hz",
            ]
            .map(String::from),
        );
        let Startup::Run(f) = f else { panic!() };
        assert_eq!(
            f.directives,
            vec![
                directive("", &["loglevel", "verbose"]),
                directive("maxmemory '700mb'", &[]),
                directive("hz", &[])
            ]
        );
        assert_eq!(f.directives[1].words().unwrap(), vec!["maxmemory", "700mb"]);
        assert_eq!(f.directives[0].text(), "\"loglevel\" \"verbose\"");
    }

    #[test]
    fn directives_apply_after_the_file_and_fail_as_redis_reports_them() {
        let f = flags("ember --active-expire-storm-busy-perc 70 --save --hz 20");
        let live = Live::load(&f).unwrap();
        assert_eq!((live.active_expire_storm_busy_perc(), live.hz()), (70, 20));
        let err = |line: &str| Live::load(&flags(line)).err().unwrap().to_string();
        let e = err("ember --hz fast");
        assert!(
            e.contains(">>> 'hz \"fast\"'") && e.contains("at line 2"),
            "{e}"
        );
        assert!(
            e.contains("argument couldn't be parsed into an integer"),
            "{e}"
        );
        let e = err("ember --bogus x");
        assert!(
            e.contains("Bad directive or wrong number of arguments"),
            "{e}"
        );
        // A word after a flag is one of its values, as in redis-server.
        let e = err("ember --port 1 2");
        assert!(
            e.contains(">>> 'port \"1\" \"2\"'") && e.contains("\nwrong number of arguments"),
            "{e}"
        );
        let e = err("ember --hz 5 --port");
        assert!(
            e.contains("at line 3") && e.contains(">>> 'port'\nwrong number"),
            "{e}"
        );
        let e = err("ember --replicaof 127.0.0.1 abc");
        assert!(e.contains("Invalid master port"), "{e}");
        let e = err("ember --shutdown-on-sigint");
        assert!(
            e.contains("must be one of the following: default, save"),
            "{e}"
        );
        let e = err("ember --shards 2000");
        assert!(
            e.contains("argument must be between 0 and 1024 inclusive"),
            "{e}"
        );
        let e = err("ember --loglevel loud");
        assert!(
            e.contains("must be one of the following: debug, verbose"),
            "{e}"
        );
        let live = Live::load(&flags(
            "ember --shutdown-on-sigterm nosave force --bind 127.0.0.1 -::1",
        ))
        .unwrap();
        assert!(live
            .shutdown_on_sigterm()
            .has(crate::config::shutdown::ShutdownFlags::FORCE));
        assert_eq!(live.bind(), "127.0.0.1 -::1");
    }

    #[test]
    fn config_file_directives_and_errors() {
        let live = Live::new();
        live.apply_file(
            "# comment\nport 7000\nhz 100\nnotify-keyspace-events \"Ex\"\n\nmaxclients 50\n",
        )
        .unwrap();
        assert_eq!((live.port(), live.hz(), live.maxclients()), (7000, 100, 50));
        let events = live.get_matching(&[b"notify-keyspace-events"]);
        assert_eq!(events[0].1, "xE");
        let e = live
            .apply_file("port 1\nfoo bar\n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("at line 2") && e.contains(">>> 'foo bar'") && e.contains("Bad directive"),
            "{e}"
        );
        // A bare `save` clears the rules, as `save ""` does.
        live.apply_file("save 60 1\nsave\n").unwrap();
        assert_eq!(live.save_text(), "");
        // Each `save` line adds its rules, as CONFIG REWRITE writes them.
        live.apply_file("save 60 1\nsave 30 5\n").unwrap();
        assert_eq!(live.save_text(), "60 1 30 5");
        live.apply_file("save 60 1\nsave \"\"\nsave 10 2\n")
            .unwrap();
        assert_eq!(live.save_text(), "10 2");
        // `include` applies the other file's lines in place.
        let included =
            std::env::temp_dir().join(format!("ember-include-{}.conf", std::process::id()));
        std::fs::write(&included, "hz 42\n").unwrap();
        live.apply_file(&format!("hz 10\ninclude {}\n", included.display()))
            .unwrap();
        assert_eq!(live.hz(), 42);
        std::fs::write(&included, format!("include {}\n", included.display())).unwrap();
        let e = live
            .apply_file(&format!("include {}\n", included.display()))
            .unwrap_err();
        assert!(e.to_string().contains("Too many nested includes"), "{e}");
        let _ = std::fs::remove_file(&included);
        let e = live
            .apply_file("include /nonexistent/x.conf\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("can't open config file"), "{e}");
        let e = live.apply_file("hz abc").unwrap_err().to_string();
        assert!(e.contains("couldn't be parsed into an integer"), "{e}");
        // A known parameter without its value, as Redis words it.
        let e = live.apply_file("hz\n").unwrap_err().to_string();
        assert!(e.contains("\nwrong number of arguments"), "{e}");
        let e = live.apply_file("port 1 2\n").unwrap_err().to_string();
        assert!(e.contains("\nwrong number of arguments"), "{e}");
        let e = live.apply_file("save \"900 1\n").unwrap_err().to_string();
        assert!(e.contains("Unbalanced quotes"), "{e}");
    }

    #[test]
    fn a_file_gives_output_buffer_limits_a_class_a_line() {
        let live = Live::new();
        live.apply_file(
            "client-output-buffer-limit normal 1mb 0 0\nclient-output-buffer-limit slave 0 0 0\n",
        )
        .unwrap();
        let value = &live.get_matching(&[b"client-output-buffer-limit"])[0].1;
        assert_eq!(
            value,
            "normal 1048576 0 0 slave 0 0 0 pubsub 33554432 8388608 60"
        );
    }

    #[test]
    fn quotes_split_as_redis_does() {
        assert_eq!(
            split_config_line(r#"save "" x 'a b' "c\"d""#).unwrap(),
            vec!["save", "", "x", "a b", "c\"d"]
        );
        assert_eq!(split_config_line("a 'b"), None);
    }

    #[test]
    fn double_quotes_take_sdssplitargs_escapes() {
        assert_eq!(
            split_config_line(r#"appendfilename " file seq \n\n.aof ""#).unwrap(),
            vec!["appendfilename", " file seq \n\n.aof "]
        );
        assert_eq!(
            split_config_line(r#"x "a\tb\x41\xzz\\" 'it\'s'"#).unwrap(),
            vec!["x", "a\tbAxzz\\", "it's"]
        );
    }

    #[test]
    fn help_names_every_parameter() {
        let text = help();
        for p in PARAMS {
            for name in p.names() {
                assert!(text.contains(&format!("--{name}")), "{name}");
            }
        }
        assert!(text.contains("--proto-max-bulk-len") && text.contains("Default 512mb"));
    }
}
