//! List commands that edit or search a list in place: LSET, LINSERT, LREM,
//! LTRIM, LPOS.

use std::collections::VecDeque;

use bytes::Bytes;

use super::args::{err, int_arg, Args, Reply};
use super::list::{as_list, as_list_mut, list_range};
use super::Ctx;
use crate::resp::Frame;
use crate::store::notify::LIST;
use crate::util::num::parse_i64;

/// The position `index` names in a list of `len` (negative from the end).
fn position(index: i64, len: usize) -> Option<usize> {
    let position = if index < 0 {
        index.checked_add(len as i64)?
    } else {
        index
    };
    usize::try_from(position).ok().filter(|&p| p < len)
}

/// LSET key index element. Redis looks the key up before it reads the index.
pub fn lset(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Err(err::frame(err::NO_SUCH_KEY));
    };
    let list = as_list_mut(entry)?;
    let index = int_arg(&argv[2])?;
    let slot = position(index, list.len())
        .and_then(|p| list.get_mut(p))
        .ok_or_else(|| err::frame("ERR index out of range"))?;
    *slot = Bytes::copy_from_slice(&argv[3]);
    ks.notify(LIST, "lset", key);
    Ok(Frame::OK)
}

/// LINSERT key BEFORE|AFTER pivot element: the new length, 0 for a missing
/// key, -1 when the pivot is not in the list.
pub fn linsert(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let after = match argv[2].as_ref() {
        w if w.eq_ignore_ascii_case(b"after") => true,
        w if w.eq_ignore_ascii_case(b"before") => false,
        _ => return Err(err::syntax()),
    };
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    let list = as_list_mut(entry)?;
    let Some(pivot) = list.iter().position(|e| *e == argv[3]) else {
        return Ok(Frame::Integer(-1));
    };
    list.insert(pivot + after as usize, Bytes::copy_from_slice(&argv[4]));
    let len = list.len() as i64;
    ks.notify(LIST, "linsert", key);
    Ok(Frame::Integer(len))
}

/// Removes elements equal to `element`: the first `count` from the head
/// when count > 0, the last -count from the tail when count < 0, all when 0.
/// Returns how many were removed.
fn remove_matching(list: &mut VecDeque<Bytes>, element: &[u8], count: i64) -> usize {
    let limit = match count.unsigned_abs() {
        0 => usize::MAX,
        n => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let matches: Vec<usize> = if count < 0 {
        let mut from_tail: Vec<usize> = (0..list.len())
            .rev()
            .filter(|&i| list[i] == element)
            .take(limit)
            .collect();
        from_tail.reverse();
        from_tail
    } else {
        (0..list.len())
            .filter(|&i| list[i] == element)
            .take(limit)
            .collect()
    };
    if matches.is_empty() {
        return 0;
    }
    let mut next = matches.iter().peekable();
    let mut index = 0;
    list.retain(|_| {
        let drop = next.next_if(|&&m| m == index).is_some();
        index += 1;
        !drop
    });
    matches.len()
}

/// LREM key count element: how many elements were removed.
pub fn lrem(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let count = int_arg(&argv[2])?;
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::Integer(0));
    };
    let list = as_list_mut(entry)?;
    let removed = remove_matching(list, &argv[3], count);
    let emptied = list.is_empty();
    ks.after_removal(key, LIST, "lrem", removed > 0, emptied);
    Ok(Frame::Integer(removed as i64))
}

/// LTRIM key start stop. Redis fires `ltrim` whenever the key exists, even
/// if nothing was cut, then `del` if the list is now empty.
pub fn ltrim(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let start = int_arg(&argv[2])?;
    let stop = int_arg(&argv[3])?;
    let key = &argv[1];
    let mut ks = ctx.ks();
    let Some(entry) = ks.get(key) else {
        return Ok(Frame::OK);
    };
    let list = as_list_mut(entry)?;
    match list_range(start, stop, list.len()) {
        Some((first, last)) => {
            list.truncate(last + 1);
            list.drain(..first);
        }
        None => list.clear(),
    }
    let emptied = list.is_empty();
    ks.after_removal(key, LIST, "ltrim", true, emptied);
    Ok(Frame::OK)
}

/// LPOS's options.
#[derive(Debug, PartialEq)]
struct LposOptions {
    /// Which match is the first reported: 1 the first from the head, -1 the
    /// first from the tail, ...
    rank: i64,
    /// How many matches to report (0: all); None without COUNT, which
    /// answers one integer instead of an array.
    count: Option<u64>,
    /// How many elements to look at (0: all).
    maxlen: u64,
}

const RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";

/// Reads an option's value that must be >= 0; like Redis, a non-number
/// gets the same error as a negative one.
fn non_negative(arg: &[u8], error: &str) -> Result<u64, Frame> {
    parse_i64(arg)
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| err::frame(error))
}

/// Parses LPOS's RANK / COUNT / MAXLEN (after key and element) in argument order; each error is reported
/// as soon as its option is read, as Redis does.
fn lpos_options(argv: &[Bytes]) -> Result<LposOptions, Frame> {
    let mut opts = LposOptions {
        rank: 1,
        count: None,
        maxlen: 0,
    };
    let mut args = Args::new(&argv[2..]);
    while !args.is_empty() {
        let option = args.next_keyword()?;
        if args.is_empty() {
            return Err(err::syntax());
        }
        let value = args.next_bytes()?;
        if option.is("rank") {
            opts.rank = int_arg(value)?;
            if opts.rank == 0 {
                return Err(err::frame(RANK_ZERO));
            }
        } else if option.is("count") {
            opts.count = Some(non_negative(value, "ERR COUNT can't be negative")?);
        } else if option.is("maxlen") {
            opts.maxlen = non_negative(value, "ERR MAXLEN can't be negative")?;
        } else {
            return Err(err::syntax());
        }
    }
    Ok(opts)
}

/// The head-based positions of `element` in `list` that LPOS reports.
fn find_positions(list: &VecDeque<Bytes>, element: &[u8], opts: &LposOptions) -> Vec<usize> {
    let from_tail = opts.rank < 0;
    // i64::MIN stays negative when negated; Redis 7.0 then reports from the
    // first match on (every match count is >= it), and so does this.
    let rank = if from_tail {
        opts.rank.wrapping_neg()
    } else {
        opts.rank
    };
    let wanted = match opts.count {
        None => 1,
        Some(0) => usize::MAX,
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
    };
    let scanned = match opts.maxlen {
        0 => list.len(),
        n => usize::try_from(n).unwrap_or(usize::MAX).min(list.len()),
    };
    let order: Box<dyn Iterator<Item = usize>> = if from_tail {
        Box::new((list.len() - scanned..list.len()).rev())
    } else {
        Box::new(0..scanned)
    };
    let mut matches = 0i64;
    order
        .filter(|&i| list[i] == element)
        .filter(|_| {
            matches += 1;
            matches >= rank
        })
        .take(wanted)
        .collect()
}

/// LPOS key element [RANK rank] [COUNT num] [MAXLEN len].
pub fn lpos(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let opts = lpos_options(argv)?;
    let mut ks = ctx.ks();
    let positions = match ks.read(&argv[1]) {
        Some(entry) => find_positions(as_list(entry)?, &argv[2], &opts),
        None => Vec::new(),
    };
    let mut positions = positions.into_iter().map(|p| Frame::Integer(p as i64));
    Ok(match opts.count {
        Some(_) => Frame::Array(positions.collect()),
        None => positions.next().unwrap_or(Frame::Null),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> VecDeque<Bytes> {
        items
            .iter()
            .map(|s| Bytes::copy_from_slice(s.as_bytes()))
            .collect()
    }

    #[test]
    fn positions_count_from_either_end() {
        assert_eq!(position(0, 3), Some(0));
        assert_eq!(position(-1, 3), Some(2));
        assert_eq!(position(-3, 3), Some(0));
        assert_eq!(position(-4, 3), None);
        assert_eq!(position(3, 3), None);
        assert_eq!(position(i64::MIN, 3), None);
    }

    #[test]
    fn remove_matching_honours_count_and_direction() {
        let mut l = list(&["a", "b", "a", "c", "a"]);
        assert_eq!(remove_matching(&mut l, b"a", 2), 2);
        assert_eq!(l, list(&["b", "c", "a"]));
        let mut l = list(&["a", "b", "a", "c", "a"]);
        assert_eq!(remove_matching(&mut l, b"a", -2), 2);
        assert_eq!(l, list(&["a", "b", "c"]));
        let mut l = list(&["a", "b", "a"]);
        assert_eq!(remove_matching(&mut l, b"a", 0), 2);
        assert_eq!(l, list(&["b"]));
        assert_eq!(remove_matching(&mut l, b"z", 0), 0);
        let mut l = list(&["a", "a"]);
        assert_eq!(remove_matching(&mut l, b"a", i64::MIN), 2);
        assert!(l.is_empty());
    }

    fn opts(rank: i64, count: Option<u64>, maxlen: u64) -> LposOptions {
        LposOptions {
            rank,
            count,
            maxlen,
        }
    }

    #[test]
    fn find_positions_follows_rank_count_maxlen() {
        let l = list(&["a", "b", "c", "a", "b", "c", "a"]);
        assert_eq!(find_positions(&l, b"a", &opts(1, None, 0)), vec![0]);
        assert_eq!(find_positions(&l, b"a", &opts(2, None, 0)), vec![3]);
        assert_eq!(
            find_positions(&l, b"a", &opts(4, None, 0)),
            Vec::<usize>::new()
        );
        assert_eq!(
            find_positions(&l, b"a", &opts(1, Some(0), 0)),
            vec![0, 3, 6]
        );
        assert_eq!(find_positions(&l, b"a", &opts(-1, Some(2), 0)), vec![6, 3]);
        assert_eq!(find_positions(&l, b"a", &opts(2, Some(0), 0)), vec![3, 6]);
        assert_eq!(find_positions(&l, b"a", &opts(1, Some(0), 3)), vec![0]);
        assert_eq!(find_positions(&l, b"a", &opts(-1, Some(0), 3)), vec![6]);
        assert_eq!(find_positions(&l, b"a", &opts(i64::MIN, None, 0)), vec![6]);
    }

    fn parse(words: &[&str]) -> Result<LposOptions, Frame> {
        let argv: Vec<Bytes> = std::iter::once(&"lpos")
            .chain(words)
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        lpos_options(&argv)
    }

    #[test]
    fn lpos_options_report_errors_in_argument_order() {
        assert_eq!(parse(&["k", "e"]), Ok(opts(1, None, 0)));
        assert_eq!(
            parse(&["k", "e", "rank", "-2", "COUNT", "0", "maxlen", "9"]),
            Ok(opts(-2, Some(0), 9))
        );
        assert_eq!(
            parse(&["k", "e", "rank", "0", "count", "-1"]),
            Err(err::frame(RANK_ZERO))
        );
        assert_eq!(
            parse(&["k", "e", "count", "x", "rank", "0"]),
            Err(err::frame("ERR COUNT can't be negative"))
        );
        assert_eq!(parse(&["k", "e", "rank"]), Err(err::syntax()));
        assert_eq!(parse(&["k", "e", "foo", "1"]), Err(err::syntax()));
        assert_eq!(parse(&["k", "e", "rank", "x"]), Err(err::not_integer()));
    }
}
