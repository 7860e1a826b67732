//! Redis's command metadata: generated, do not edit.
//!
//! Written by `python3 scripts/gen_command_meta.py` from the COMMAND INFO
//! and COMMAND DOCS replies of redis-server 7.0.15 for every command of
//! ember's table (`src/cmd/table.rs`) and the subcommands its rows declare,
//! and from `scripts/command_meta_supplement.json` (Redis 7.4's
//! declarations) for the commands 7.0 lacks:
//! hexpire, hpexpire, hexpireat, hpexpireat, httl, hpttl, hexpiretime,
//! hpexpiretime, hpersist.
//! These are facts about Redis's interface, reproduced so that COMMAND INFO
//! and COMMAND DOCS answer as Redis does. Run the script again after adding
//! a command or subcommand to the table. The constructors are in `build.rs`.

use super::build::*;
use super::{BeginSearch, FindKeys, CommandMeta};

/// One row per command of the table, in the table's order. An array
/// static (not a slice of one), so the table's rows point into it.
pub static META: [CommandMeta; 247] = [
    cmd("get", 2, "readonly fast", "read string fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the value of a key", "1.0.0", "string", "O(1)")
        .args(&[key("key", 0)]),
    cmd("set", -3, "write denyoom", "write string slow", (1, 1, 1))
        .key_specs(&[
            spec("RW access update variable_flags", index(1), range(0, 1, 0)).notes("RW and ACCESS due to the optional `GET` argument"),
        ])
        .docs("Set the string value of a key", "1.0.0", "string", "O(1)")
        .history(&[
            ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
            ("6.0.0", "Added the `KEEPTTL` option."),
            ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
            ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
        ])
        .args(&[
            key("key", 0),
            string("value"),
            oneof("condition", &[pure_token("nx", "NX"), pure_token("xx", "XX")]).since("2.6.12").flags("optional"),
            pure_token("get", "GET").since("6.2.0").flags("optional"),
            oneof("expiration", &[
                integer("seconds").token("EX").since("2.6.12"),
                integer("milliseconds").token("PX").since("2.6.12"),
                unix_time("unix-time-seconds").token("EXAT").since("6.2.0"),
                unix_time("unix-time-milliseconds").token("PXAT").since("6.2.0"),
                pure_token("keepttl", "KEEPTTL").since("6.0.0"),
            ]).flags("optional"),
        ]),
    cmd("setnx", 3, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("OW insert", index(1), range(0, 1, 0))])
        .docs("Set the value of a key, only if the key does not exist", "1.0.0", "string", "O(1)")
        .args(&[key("key", 0), string("value")]),
    cmd("setex", 4, "write denyoom", "write string slow", (1, 1, 1))
        .key_specs(&[spec("OW update", index(1), range(0, 1, 0))])
        .docs("Set the value and expiration of a key", "2.0.0", "string", "O(1)")
        .args(&[key("key", 0), integer("seconds"), string("value")]),
    cmd("psetex", 4, "write denyoom", "write string slow", (1, 1, 1))
        .key_specs(&[spec("OW update", index(1), range(0, 1, 0))])
        .docs("Set the value and expiration in milliseconds of a key", "2.6.0", "string", "O(1)")
        .args(&[key("key", 0), integer("milliseconds"), string("value")]),
    cmd("getset", 3, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Set the string value of a key and return its old value", "1.0.0", "string", "O(1)")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`SET` with the `!GET` argument")
        .args(&[key("key", 0), string("value")]),
    cmd("getdel", 2, "write fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access delete", index(1), range(0, 1, 0))])
        .docs("Get the value of a key and delete the key", "6.2.0", "string", "O(1)")
        .args(&[key("key", 0)]),
    cmd("getex", -2, "write fast", "write string fast", (1, 1, 1))
        .key_specs(&[
            spec("RW access update", index(1), range(0, 1, 0)).notes("RW and UPDATE because it changes the TTL"),
        ])
        .docs("Get the value of a key and optionally set its expiration", "6.2.0", "string", "O(1)")
        .args(&[
            key("key", 0),
            oneof("expiration", &[
                integer("seconds").token("EX"),
                integer("milliseconds").token("PX"),
                unix_time("unix-time-seconds").token("EXAT"),
                unix_time("unix-time-milliseconds").token("PXAT"),
                pure_token("persist", "PERSIST"),
            ]).flags("optional"),
        ]),
    cmd("mget", -2, "readonly fast", "read string fast", (1, -1, 1))
        .tips(&["request_policy:multi_shard"])
        .key_specs(&[spec("RO access", index(1), range(-1, 1, 0))])
        .docs("Get the values of all the given keys", "1.0.0", "string", "O(N) where N is the number of keys to retrieve.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("mset", -3, "write denyoom", "write string slow", (1, -1, 2))
        .tips(&["request_policy:multi_shard", "response_policy:all_succeeded"])
        .key_specs(&[spec("OW update", index(1), range(-1, 2, 0))])
        .docs("Set multiple keys to multiple values", "1.0.1", "string", "O(N) where N is the number of keys to set.")
        .args(&[block("key_value", &[key("key", 0), string("value")]).flags("multiple")]),
    cmd("msetnx", -3, "write denyoom", "write string slow", (1, -1, 2))
        .tips(&["request_policy:multi_shard", "response_policy:agg_min"])
        .key_specs(&[spec("OW insert", index(1), range(-1, 2, 0))])
        .docs("Set multiple keys to multiple values, only if none of the keys exist", "1.0.1", "string", "O(N) where N is the number of keys to set.")
        .args(&[block("key_value", &[key("key", 0), string("value")]).flags("multiple")]),
    cmd("incr", 2, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Increment the integer value of a key by one", "1.0.0", "string", "O(1)")
        .args(&[key("key", 0)]),
    cmd("decr", 2, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Decrement the integer value of a key by one", "1.0.0", "string", "O(1)")
        .args(&[key("key", 0)]),
    cmd("incrby", 3, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Increment the integer value of a key by the given amount", "1.0.0", "string", "O(1)")
        .args(&[key("key", 0), integer("increment")]),
    cmd("decrby", 3, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Decrement the integer value of a key by the given number", "1.0.0", "string", "O(1)")
        .args(&[key("key", 0), integer("decrement")]),
    cmd("incrbyfloat", 3, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Increment the float value of a key by the given amount", "2.6.0", "string", "O(1)")
        .args(&[key("key", 0), double("increment")]),
    cmd("append", 3, "write denyoom fast", "write string fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Append a value to a key", "2.0.0", "string", "O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.")
        .args(&[key("key", 0), string("value")]),
    cmd("strlen", 2, "readonly fast", "read string fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Get the length of the value stored in a key", "2.2.0", "string", "O(1)")
        .args(&[key("key", 0)]),
    cmd("getrange", 4, "readonly", "read string slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get a substring of the string stored at a key", "2.4.0", "string", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
        .args(&[key("key", 0), integer("start"), integer("end")]),
    cmd("substr", 4, "readonly", "read string slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get a substring of the string stored at a key", "1.0.0", "string", "O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.")
        .doc_flags("deprecated")
        .deprecated("2.0.0", "`GETRANGE`")
        .args(&[key("key", 0), integer("start"), integer("end")]),
    cmd("setrange", 4, "write denyoom", "write string slow", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Overwrite part of a string at key starting at the specified offset", "2.2.0", "string", "O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.")
        .args(&[key("key", 0), integer("offset"), string("value")]),
    cmd("lcs", -3, "readonly", "read string slow", (1, 2, 1))
        .key_specs(&[spec("RO access", index(1), range(1, 1, 0))])
        .docs("Find longest common substring", "7.0.0", "string", "O(N*M) where N and M are the lengths of s1 and s2, respectively")
        .args(&[
            key("key1", 0),
            key("key2", 0),
            pure_token("len", "LEN").flags("optional"),
            pure_token("idx", "IDX").flags("optional"),
            integer("len").token("MINMATCHLEN").flags("optional"),
            pure_token("withmatchlen", "WITHMATCHLEN").flags("optional"),
        ]),
    cmd("setbit", 4, "write denyoom", "write bitmap slow", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Sets or clears the bit at offset in the string value stored at key", "2.2.0", "bitmap", "O(1)")
        .args(&[key("key", 0), integer("offset"), integer("value")]),
    cmd("getbit", 3, "readonly fast", "read bitmap fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the bit value at offset in the string value stored at key", "2.2.0", "bitmap", "O(1)")
        .args(&[key("key", 0), integer("offset")]),
    cmd("bitcount", -2, "readonly", "read bitmap slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Count set bits in a string", "2.6.0", "bitmap", "O(N)")
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .args(&[
            key("key", 0),
            block("index", &[
                integer("start"),
                integer("end"),
                oneof("index_unit", &[pure_token("byte", "BYTE"), pure_token("bit", "BIT")]).since("7.0.0").flags("optional"),
            ]).flags("optional"),
        ]),
    cmd("bitpos", -3, "readonly", "read bitmap slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Find first bit set or clear in a string", "2.8.7", "bitmap", "O(N)")
        .history(&[("7.0.0", "Added the `BYTE|BIT` option.")])
        .args(&[
            key("key", 0),
            integer("bit"),
            block("index", &[
                integer("start"),
                block("end_index", &[
                    integer("end"),
                    oneof("index_unit", &[pure_token("byte", "BYTE"), pure_token("bit", "BIT")]).since("7.0.0").flags("optional"),
                ]).flags("optional"),
            ]).flags("optional"),
        ]),
    cmd("bitop", -4, "write denyoom", "write bitmap slow", (2, -1, 1))
        .key_specs(&[
            spec("OW update", index(2), range(0, 1, 0)),
            spec("RO access", index(3), range(-1, 1, 0)),
        ])
        .docs("Perform bitwise operations between strings", "2.6.0", "bitmap", "O(N)")
        .args(&[string("operation"), key("destkey", 0), key("key", 1).flags("multiple")]),
    cmd("bitfield", -2, "write denyoom", "write bitmap slow", (1, 1, 1))
        .key_specs(&[
            spec("RW access update variable_flags", index(1), range(0, 1, 0)).notes("This command allows both access and modification of the key"),
        ])
        .docs("Perform arbitrary bitfield integer operations on strings", "3.2.0", "bitmap", "O(1) for each subcommand specified")
        .args(&[
            key("key", 0),
            oneof("operation", &[
                block("encoding_offset", &[string("encoding"), integer("offset")]).token("GET"),
                block("write", &[
                    oneof("wrap_sat_fail", &[
                        pure_token("wrap", "WRAP"),
                        pure_token("sat", "SAT"),
                        pure_token("fail", "FAIL"),
                    ]).token("OVERFLOW").flags("optional"),
                    oneof("write_operation", &[
                        block("encoding_offset_value", &[string("encoding"), integer("offset"), integer("value")]).token("SET"),
                        block("encoding_offset_increment", &[string("encoding"), integer("offset"), integer("increment")]).token("INCRBY"),
                    ]),
                ]),
            ]).flags("optional multiple"),
        ]),
    cmd("bitfield_ro", -2, "readonly fast", "read bitmap fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD", "6.0.0", "bitmap", "O(1) for each subcommand specified")
        .args(&[
            key("key", 0),
            block("encoding_offset", &[string("encoding"), integer("offset")]).token("GET").flags("optional multiple multiple_token"),
        ]),
    cmd("lpush", -3, "write denyoom fast", "write list fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Prepend one or multiple elements to a list", "1.0.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .args(&[key("key", 0), string("element").flags("multiple")]),
    cmd("rpush", -3, "write denyoom fast", "write list fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Append one or multiple elements to a list", "1.0.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("2.4.0", "Accepts multiple `element` arguments.")])
        .args(&[key("key", 0), string("element").flags("multiple")]),
    cmd("lpushx", -3, "write denyoom fast", "write list fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Prepend an element to a list, only if the list exists", "2.2.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .args(&[key("key", 0), string("element").flags("multiple")]),
    cmd("rpushx", -3, "write denyoom fast", "write list fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Append an element to a list, only if the list exists", "2.2.0", "list", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("4.0.0", "Accepts multiple `element` arguments.")])
        .args(&[key("key", 0), string("element").flags("multiple")]),
    cmd("lpop", -2, "write fast", "write list fast", (1, 1, 1))
        .key_specs(&[spec("RW access delete", index(1), range(0, 1, 0))])
        .docs("Remove and get the first elements in a list", "1.0.0", "list", "O(N) where N is the number of elements returned")
        .history(&[("6.2.0", "Added the `count` argument.")])
        .args(&[key("key", 0), integer("count").since("6.2.0").flags("optional")]),
    cmd("rpop", -2, "write fast", "write list fast", (1, 1, 1))
        .key_specs(&[spec("RW access delete", index(1), range(0, 1, 0))])
        .docs("Remove and get the last elements in a list", "1.0.0", "list", "O(N) where N is the number of elements returned")
        .history(&[("6.2.0", "Added the `count` argument.")])
        .args(&[key("key", 0), integer("count").since("6.2.0").flags("optional")]),
    cmd("llen", 2, "readonly fast", "read list fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Get the length of a list", "1.0.0", "list", "O(1)")
        .args(&[key("key", 0)]),
    cmd("lrange", 4, "readonly", "read list slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get a range of elements from a list", "1.0.0", "list", "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.")
        .args(&[key("key", 0), integer("start"), integer("stop")]),
    cmd("lindex", 3, "readonly", "read list slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get an element from a list by its index", "1.0.0", "list", "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).")
        .args(&[key("key", 0), integer("index")]),
    cmd("lset", 4, "write denyoom", "write list slow", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set the value of an element in a list by its index", "1.0.0", "list", "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).")
        .args(&[key("key", 0), integer("index"), string("element")]),
    cmd("linsert", 5, "write denyoom", "write list slow", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Insert an element before or after another element in a list", "2.2.0", "list", "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).")
        .args(&[
            key("key", 0),
            oneof("where", &[pure_token("before", "BEFORE"), pure_token("after", "AFTER")]),
            string("pivot"),
            string("element"),
        ]),
    cmd("lrem", 4, "write", "write list slow", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Remove elements from a list", "1.0.0", "list", "O(N+M) where N is the length of the list and M is the number of elements removed.")
        .args(&[key("key", 0), integer("count"), string("element")]),
    cmd("ltrim", 4, "write", "write list slow", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Trim a list to the specified range", "1.0.0", "list", "O(N) where N is the number of elements to be removed by the operation.")
        .args(&[key("key", 0), integer("start"), integer("stop")]),
    cmd("lpos", -3, "readonly", "read list slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return the index of matching elements on a list", "6.0.6", "list", "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.")
        .args(&[
            key("key", 0),
            string("element"),
            integer("rank").token("RANK").flags("optional"),
            integer("num-matches").token("COUNT").flags("optional"),
            integer("len").token("MAXLEN").flags("optional"),
        ]),
    cmd("lmove", 5, "write denyoom", "write list slow", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("RW insert", index(2), range(0, 1, 0)),
        ])
        .docs("Pop an element from a list, push it to another list and return it", "6.2.0", "list", "O(1)")
        .args(&[
            key("source", 0),
            key("destination", 1),
            oneof("wherefrom", &[pure_token("left", "LEFT"), pure_token("right", "RIGHT")]),
            oneof("whereto", &[pure_token("left", "LEFT"), pure_token("right", "RIGHT")]),
        ]),
    cmd("rpoplpush", 3, "write denyoom", "write list slow", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("RW insert", index(2), range(0, 1, 0)),
        ])
        .docs("Remove the last element in a list, prepend it to another list and return it", "1.2.0", "list", "O(1)")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments")
        .args(&[key("source", 0), key("destination", 1)]),
    cmd("lmpop", -4, "write movablekeys", "write list slow", (0, 0, 0))
        .key_specs(&[spec("RW access delete", index(1), keynum(0, 1, 1))])
        .docs("Pop elements from a list", "7.0.0", "list", "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            oneof("where", &[pure_token("left", "LEFT"), pure_token("right", "RIGHT")]),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("hset", -4, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set the string value of a hash field", "2.0.0", "hash", "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.")
        .history(&[("4.0.0", "Accepts multiple `field` and `value` arguments.")])
        .args(&[
            key("key", 0),
            block("field_value", &[string("field"), string("value")]).flags("multiple"),
        ]),
    cmd("hmset", -4, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set multiple hash fields to multiple values", "2.0.0", "hash", "O(N) where N is the number of fields being set.")
        .doc_flags("deprecated")
        .deprecated("4.0.0", "`HSET` with multiple field-value pairs")
        .args(&[
            key("key", 0),
            block("field_value", &[string("field"), string("value")]).flags("multiple"),
        ]),
    cmd("hsetnx", 4, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Set the value of a hash field, only if the field does not exist", "2.0.0", "hash", "O(1)")
        .args(&[key("key", 0), string("field"), string("value")]),
    cmd("hget", 3, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the value of a hash field", "2.0.0", "hash", "O(1)")
        .args(&[key("key", 0), string("field")]),
    cmd("hmget", -3, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the values of all the given hash fields", "2.0.0", "hash", "O(N) where N is the number of fields being requested.")
        .args(&[key("key", 0), string("field").flags("multiple")]),
    cmd("hdel", -3, "write fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Delete one or more hash fields", "2.0.0", "hash", "O(N) where N is the number of fields to be removed.")
        .history(&[("2.4.0", "Accepts multiple `field` arguments.")])
        .args(&[key("key", 0), string("field").flags("multiple")]),
    cmd("hlen", 2, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Get the number of fields in a hash", "2.0.0", "hash", "O(1)")
        .args(&[key("key", 0)]),
    cmd("hexists", 3, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Determine if a hash field exists", "2.0.0", "hash", "O(1)")
        .args(&[key("key", 0), string("field")]),
    cmd("hstrlen", 3, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Get the length of the value of a hash field", "3.2.0", "hash", "O(1)")
        .args(&[key("key", 0), string("field")]),
    cmd("hkeys", 2, "readonly", "read hash slow", (1, 1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get all the fields in a hash", "2.0.0", "hash", "O(N) where N is the size of the hash.")
        .args(&[key("key", 0)]),
    cmd("hvals", 2, "readonly", "read hash slow", (1, 1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get all the values in a hash", "2.0.0", "hash", "O(N) where N is the size of the hash.")
        .args(&[key("key", 0)]),
    cmd("hgetall", 2, "readonly", "read hash slow", (1, 1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get all the fields and values in a hash", "2.0.0", "hash", "O(N) where N is the size of the hash.")
        .args(&[key("key", 0)]),
    cmd("hincrby", 4, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Increment the integer value of a hash field by the given number", "2.0.0", "hash", "O(1)")
        .args(&[key("key", 0), string("field"), integer("increment")]),
    cmd("hincrbyfloat", 4, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Increment the float value of a hash field by the given amount", "2.6.0", "hash", "O(1)")
        .args(&[key("key", 0), string("field"), double("increment")]),
    cmd("hrandfield", -2, "readonly", "read hash slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get one or multiple random fields from a hash", "6.2.0", "hash", "O(N) where N is the number of fields returned")
        .args(&[
            key("key", 0),
            block("options", &[integer("count"), pure_token("withvalues", "WITHVALUES").flags("optional")]).flags("optional"),
        ]),
    cmd("hscan", -3, "readonly", "read hash slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Incrementally iterate hash fields and associated values", "2.8.0", "hash", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
        .args(&[
            key("key", 0),
            integer("cursor"),
            pattern("pattern").token("MATCH").flags("optional"),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("hexpire", -6, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set expiry for hash field using relative time to expire (seconds)", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            integer("seconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).flags("optional"),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hpexpire", -6, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set expiry for hash field using relative time to expire (milliseconds)", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            integer("milliseconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).flags("optional"),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hexpireat", -6, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set expiry for hash field using an absolute Unix timestamp (seconds)", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            unix_time("unix-time-seconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).flags("optional"),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hpexpireat", -6, "write denyoom fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set expiry for hash field using an absolute Unix timestamp (milliseconds)", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            unix_time("unix-time-milliseconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).flags("optional"),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("httl", -5, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the TTL in seconds of a hash field.", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hpttl", -5, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the TTL in milliseconds of a hash field.", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hexpiretime", -5, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the expiration time of a hash field as a Unix timestamp, in seconds.", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hpexpiretime", -5, "readonly fast", "read hash fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the expiration time of a hash field as a Unix timestamp, in msec.", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("hpersist", -5, "write fast", "write hash fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Removes the expiration time for each specified field", "7.4.0", "hash", "O(N) where N is the number of specified fields")
        .args(&[
            key("key", 0),
            block("fields", &[integer("numfields"), string("field").flags("multiple")]).token("FIELDS"),
        ]),
    cmd("sadd", -3, "write denyoom fast", "write set fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Add one or more members to a set", "1.0.0", "set", "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.")
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("srem", -3, "write fast", "write set fast", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Remove one or more members from a set", "1.0.0", "set", "O(N) where N is the number of members to be removed.")
        .history(&[("2.4.0", "Accepts multiple `member` arguments.")])
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("scard", 2, "readonly fast", "read set fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Get the number of members in a set", "1.0.0", "set", "O(1)")
        .args(&[key("key", 0)]),
    cmd("sismember", 3, "readonly fast", "read set fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Determine if a given value is a member of a set", "1.0.0", "set", "O(1)")
        .args(&[key("key", 0), string("member")]),
    cmd("smismember", -3, "readonly fast", "read set fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the membership associated with the given elements for a set", "6.2.0", "set", "O(N) where N is the number of elements being checked for membership")
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("smembers", 2, "readonly", "read set slow", (1, 1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get all the members in a set", "1.0.0", "set", "O(N) where N is the set cardinality.")
        .args(&[key("key", 0)]),
    cmd("spop", -2, "write fast", "write set fast", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RW access delete", index(1), range(0, 1, 0))])
        .docs("Remove and return one or multiple random members from a set", "1.0.0", "set", "Without the count argument O(1), otherwise O(N) where N is the value of the passed count.")
        .history(&[("3.2.0", "Added the `count` argument.")])
        .args(&[key("key", 0), integer("count").since("3.2.0").flags("optional")]),
    cmd("srandmember", -2, "readonly", "read set slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get one or multiple random members from a set", "1.0.0", "set", "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.")
        .history(&[("2.6.0", "Added the optional `count` argument.")])
        .args(&[key("key", 0), integer("count").since("2.6.0").flags("optional")]),
    cmd("smove", 4, "write fast", "write set fast", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("RW insert", index(2), range(0, 1, 0)),
        ])
        .docs("Move a member from one set to another", "1.0.0", "set", "O(1)")
        .args(&[key("source", 0), key("destination", 1), string("member")]),
    cmd("sort", -2, "write denyoom movablekeys", "write set sortedset list slow dangerous", (1, 1, 1))
        .key_specs(&[
            spec("RO access", index(1), range(0, 1, 0)),
            spec("RO access", BeginSearch::Unknown, FindKeys::Unknown).notes("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"),
            spec("OW update", BeginSearch::Unknown, FindKeys::Unknown).notes("For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"),
        ])
        .docs("Sort the elements in a list, set or sorted set", "1.0.0", "generic", "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).")
        .args(&[
            key("key", 0),
            pattern("pattern").key_spec(1).token("BY").flags("optional"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
            pattern("pattern").key_spec(1).token("GET").flags("optional multiple multiple_token"),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
            pure_token("sorting", "ALPHA").flags("optional"),
            key("destination", 2).token("STORE").flags("optional"),
        ]),
    cmd("sort_ro", -2, "readonly movablekeys", "read set sortedset list slow dangerous", (1, 1, 1))
        .key_specs(&[
            spec("RO access", index(1), range(0, 1, 0)),
            spec("RO access", BeginSearch::Unknown, FindKeys::Unknown).notes("For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"),
        ])
        .docs("Sort the elements in a list, set or sorted set. Read-only variant of SORT.", "7.0.0", "generic", "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).")
        .args(&[
            key("key", 0),
            pattern("pattern").key_spec(1).token("BY").flags("optional"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
            pattern("pattern").key_spec(1).token("GET").flags("optional multiple multiple_token"),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
            pure_token("sorting", "ALPHA").flags("optional"),
        ]),
    cmd("sinter", -2, "readonly", "read set slow", (1, -1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(-1, 1, 0))])
        .docs("Intersect multiple sets", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("sintercard", -3, "readonly movablekeys", "read set slow", (0, 0, 0))
        .key_specs(&[spec("RO access", index(1), keynum(0, 1, 1))])
        .docs("Intersect multiple sets and return the cardinality of the result", "7.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            integer("limit").token("LIMIT").flags("optional"),
        ]),
    cmd("sinterstore", -3, "write denyoom", "write set slow", (1, -1, 1))
        .key_specs(&[
            spec("RW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), range(-1, 1, 0)),
        ])
        .docs("Intersect multiple sets and store the resulting set in a key", "1.0.0", "set", "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.")
        .args(&[key("destination", 0), key("key", 1).flags("multiple")]),
    cmd("sunion", -2, "readonly", "read set slow", (1, -1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(-1, 1, 0))])
        .docs("Add multiple sets", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("sunionstore", -3, "write denyoom", "write set slow", (1, -1, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), range(-1, 1, 0)),
        ])
        .docs("Add multiple sets and store the resulting set in a key", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.")
        .args(&[key("destination", 0), key("key", 1).flags("multiple")]),
    cmd("sdiff", -2, "readonly", "read set slow", (1, -1, 1))
        .tips(&["nondeterministic_output_order"])
        .key_specs(&[spec("RO access", index(1), range(-1, 1, 0))])
        .docs("Subtract multiple sets", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("sdiffstore", -3, "write denyoom", "write set slow", (1, -1, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), range(-1, 1, 0)),
        ])
        .docs("Subtract multiple sets and store the resulting set in a key", "1.0.0", "set", "O(N) where N is the total number of elements in all given sets.")
        .args(&[key("destination", 0), key("key", 1).flags("multiple")]),
    cmd("sscan", -3, "readonly", "read set slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Incrementally iterate Set elements", "2.8.0", "set", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
        .args(&[
            key("key", 0),
            integer("cursor"),
            pattern("pattern").token("MATCH").flags("optional"),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("zadd", -4, "write denyoom fast", "write sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Add one or more members to a sorted set, or update its score if it already exists", "1.2.0", "sorted-set", "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        .history(&[
            ("2.4.0", "Accepts multiple elements."),
            ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."),
            ("6.2.0", "Added the `GT` and `LT` options."),
        ])
        .args(&[
            key("key", 0),
            oneof("condition", &[pure_token("nx", "NX"), pure_token("xx", "XX")]).since("3.0.2").flags("optional"),
            oneof("comparison", &[pure_token("gt", "GT"), pure_token("lt", "LT")]).since("6.2.0").flags("optional"),
            pure_token("change", "CH").since("3.0.2").flags("optional"),
            pure_token("increment", "INCR").since("3.0.2").flags("optional"),
            block("score_member", &[double("score"), string("member")]).flags("multiple"),
        ]),
    cmd("zincrby", 4, "write denyoom fast", "write sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Increment the score of a member in a sorted set", "1.2.0", "sorted-set", "O(log(N)) where N is the number of elements in the sorted set.")
        .args(&[key("key", 0), integer("increment"), string("member")]),
    cmd("zrem", -3, "write fast", "write sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Remove one or more members from a sorted set", "1.2.0", "sorted-set", "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.")
        .history(&[("2.4.0", "Accepts multiple elements.")])
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("zscore", 3, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the score associated with the given member in a sorted set", "1.2.0", "sorted-set", "O(1)")
        .args(&[key("key", 0), string("member")]),
    cmd("zmscore", -3, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the score associated with the given members in a sorted set", "6.2.0", "sorted-set", "O(N) where N is the number of members being requested.")
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("zcard", 2, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Get the number of members in a sorted set", "1.2.0", "sorted-set", "O(1)")
        .args(&[key("key", 0)]),
    cmd("zcount", 4, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Count the members in a sorted set with scores within the given values", "2.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.")
        .args(&[key("key", 0), double("min"), double("max")]),
    cmd("zlexcount", 4, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Count the number of members in a sorted set between a given lexicographical range", "2.8.9", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.")
        .args(&[key("key", 0), string("min"), string("max")]),
    cmd("zrank", 3, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Determine the index of a member in a sorted set", "2.0.0", "sorted-set", "O(log(N))")
        .args(&[key("key", 0), string("member")]),
    cmd("zrevrank", 3, "readonly fast", "read sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Determine the index of a member in a sorted set, with scores ordered from high to low", "2.0.0", "sorted-set", "O(log(N))")
        .args(&[key("key", 0), string("member")]),
    cmd("zrange", -4, "readonly", "read sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of members in a sorted set", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
        .history(&[("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options.")])
        .args(&[
            key("key", 0),
            string("start"),
            string("stop"),
            oneof("sortby", &[pure_token("byscore", "BYSCORE"), pure_token("bylex", "BYLEX")]).since("6.2.0").flags("optional"),
            pure_token("rev", "REV").since("6.2.0").flags("optional"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").since("6.2.0").flags("optional"),
            pure_token("withscores", "WITHSCORES").flags("optional"),
        ]),
    cmd("zrangestore", -5, "write denyoom", "write sortedset slow", (1, 2, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), range(0, 1, 0)),
        ])
        .docs("Store a range of members from sorted set into another key", "6.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.")
        .args(&[
            key("dst", 0),
            key("src", 1),
            string("min"),
            string("max"),
            oneof("sortby", &[pure_token("byscore", "BYSCORE"), pure_token("bylex", "BYLEX")]).flags("optional"),
            pure_token("rev", "REV").flags("optional"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
        ]),
    cmd("zrevrange", -4, "readonly", "read sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of members in a sorted set, by index, with scores ordered from high to low", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`ZRANGE` with the `REV` argument")
        .args(&[
            key("key", 0),
            integer("start"),
            integer("stop"),
            pure_token("withscores", "WITHSCORES").flags("optional"),
        ]),
    cmd("zrangebyscore", -4, "readonly", "read sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of members in a sorted set, by score", "1.0.5", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`ZRANGE` with the `BYSCORE` argument")
        .history(&[("2.0.0", "Added the `WITHSCORES` modifier.")])
        .args(&[
            key("key", 0),
            double("min"),
            double("max"),
            pure_token("withscores", "WITHSCORES").since("2.0.0").flags("optional"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
        ]),
    cmd("zrevrangebyscore", -4, "readonly", "read sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of members in a sorted set, by score, with scores ordered from high to low", "2.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments")
        .history(&[("2.1.6", "`min` and `max` can be exclusive.")])
        .args(&[
            key("key", 0),
            double("max"),
            double("min"),
            pure_token("withscores", "WITHSCORES").flags("optional"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
        ]),
    cmd("zrangebylex", -4, "readonly", "read sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of members in a sorted set, by lexicographical range", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`ZRANGE` with the `BYLEX` argument")
        .args(&[
            key("key", 0),
            string("min"),
            string("max"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
        ]),
    cmd("zrevrangebylex", -4, "readonly", "read sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of members in a sorted set, by lexicographical range, ordered from higher to lower strings.", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments")
        .args(&[
            key("key", 0),
            string("max"),
            string("min"),
            block("offset_count", &[integer("offset"), integer("count")]).token("LIMIT").flags("optional"),
        ]),
    cmd("zremrangebyscore", 4, "write", "write sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Remove all members in a sorted set within the given scores", "1.2.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .args(&[key("key", 0), double("min"), double("max")]),
    cmd("zremrangebyrank", 4, "write", "write sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Remove all members in a sorted set within the given indexes", "2.0.0", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .args(&[key("key", 0), integer("start"), integer("stop")]),
    cmd("zremrangebylex", 4, "write", "write sortedset slow", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Remove all members in a sorted set between the given lexicographical range", "2.8.9", "sorted-set", "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.")
        .args(&[key("key", 0), string("min"), string("max")]),
    cmd("zpopmin", -2, "write fast", "write sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RW access delete", index(1), range(0, 1, 0))])
        .docs("Remove and return members with the lowest scores in a sorted set", "5.0.0", "sorted-set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        .args(&[key("key", 0), integer("count").flags("optional")]),
    cmd("zpopmax", -2, "write fast", "write sortedset fast", (1, 1, 1))
        .key_specs(&[spec("RW access delete", index(1), range(0, 1, 0))])
        .docs("Remove and return members with the highest scores in a sorted set", "5.0.0", "sorted-set", "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.")
        .args(&[key("key", 0), integer("count").flags("optional")]),
    cmd("zmpop", -4, "write movablekeys", "write sortedset slow", (0, 0, 0))
        .key_specs(&[spec("RW access delete", index(1), keynum(0, 1, 1))])
        .docs("Remove and return members with scores in a sorted set", "7.0.0", "sorted-set", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            oneof("where", &[pure_token("min", "MIN"), pure_token("max", "MAX")]),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("zunion", -3, "readonly movablekeys", "read sortedset slow", (0, 0, 0))
        .key_specs(&[spec("RO access", index(1), keynum(0, 1, 1))])
        .docs("Add multiple sorted sets", "6.2.0", "sorted-set", "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            integer("weight").token("WEIGHTS").flags("optional multiple"),
            oneof("aggregate", &[pure_token("sum", "SUM"), pure_token("min", "MIN"), pure_token("max", "MAX")]).token("AGGREGATE").flags("optional"),
            pure_token("withscores", "WITHSCORES").flags("optional"),
        ]),
    cmd("zinter", -3, "readonly movablekeys", "read sortedset slow", (0, 0, 0))
        .key_specs(&[spec("RO access", index(1), keynum(0, 1, 1))])
        .docs("Intersect multiple sorted sets", "6.2.0", "sorted-set", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            integer("weight").token("WEIGHTS").flags("optional multiple"),
            oneof("aggregate", &[pure_token("sum", "SUM"), pure_token("min", "MIN"), pure_token("max", "MAX")]).token("AGGREGATE").flags("optional"),
            pure_token("withscores", "WITHSCORES").flags("optional"),
        ]),
    cmd("zdiff", -3, "readonly movablekeys", "read sortedset slow", (0, 0, 0))
        .key_specs(&[spec("RO access", index(1), keynum(0, 1, 1))])
        .docs("Subtract multiple sorted sets", "6.2.0", "sorted-set", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            pure_token("withscores", "WITHSCORES").flags("optional"),
        ]),
    cmd("zintercard", -3, "readonly movablekeys", "read sortedset slow", (0, 0, 0))
        .key_specs(&[spec("RO access", index(1), keynum(0, 1, 1))])
        .docs("Intersect multiple sorted sets and return the cardinality of the result", "7.0.0", "sorted-set", "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.")
        .args(&[
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            integer("limit").token("LIMIT").flags("optional"),
        ]),
    cmd("zunionstore", -4, "write denyoom movablekeys", "write sortedset slow", (1, 1, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), keynum(0, 1, 1)),
        ])
        .docs("Add multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "sorted-set", "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.")
        .args(&[
            key("destination", 0),
            integer("numkeys"),
            key("key", 1).flags("multiple"),
            integer("weight").token("WEIGHTS").flags("optional multiple"),
            oneof("aggregate", &[pure_token("sum", "SUM"), pure_token("min", "MIN"), pure_token("max", "MAX")]).token("AGGREGATE").flags("optional"),
        ]),
    cmd("zinterstore", -4, "write denyoom movablekeys", "write sortedset slow", (1, 1, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), keynum(0, 1, 1)),
        ])
        .docs("Intersect multiple sorted sets and store the resulting sorted set in a new key", "2.0.0", "sorted-set", "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.")
        .args(&[
            key("destination", 0),
            integer("numkeys"),
            key("key", 1).flags("multiple"),
            integer("weight").token("WEIGHTS").flags("optional multiple"),
            oneof("aggregate", &[pure_token("sum", "SUM"), pure_token("min", "MIN"), pure_token("max", "MAX")]).token("AGGREGATE").flags("optional"),
        ]),
    cmd("zdiffstore", -4, "write denyoom movablekeys", "write sortedset slow", (1, 1, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), keynum(0, 1, 1)),
        ])
        .docs("Subtract multiple sorted sets and store the resulting sorted set in a new key", "6.2.0", "sorted-set", "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.")
        .args(&[key("destination", 0), integer("numkeys"), key("key", 1).flags("multiple")]),
    cmd("xadd", -5, "write denyoom fast", "write stream fast", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[
            spec("RW update", index(1), range(0, 1, 0)).notes("UPDATE instead of INSERT because of the optional trimming feature"),
        ])
        .docs("Appends a new entry to a stream", "5.0.0", "stream", "O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.")
        .history(&[
            ("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."),
            ("7.0.0", "Added support for the `<ms>-*` explicit ID form."),
        ])
        .args(&[
            key("key", 0),
            pure_token("nomkstream", "NOMKSTREAM").since("6.2.0").flags("optional"),
            block("trim", &[
                oneof("strategy", &[pure_token("maxlen", "MAXLEN"), pure_token("minid", "MINID").since("6.2.0")]),
                oneof("operator", &[pure_token("equal", "="), pure_token("approximately", "~")]).flags("optional"),
                string("threshold"),
                integer("count").token("LIMIT").since("6.2.0").flags("optional"),
            ]).flags("optional"),
            oneof("id_or_auto", &[pure_token("auto_id", "*"), string("id")]),
            block("field_value", &[string("field"), string("value")]).flags("multiple"),
        ]),
    cmd("xtrim", -4, "write", "write stream slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Trims the stream to (approximately if '~' is passed) a certain size", "5.0.0", "stream", "O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.")
        .history(&[("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option.")])
        .args(&[
            key("key", 0),
            block("trim", &[
                oneof("strategy", &[pure_token("maxlen", "MAXLEN"), pure_token("minid", "MINID").since("6.2.0")]),
                oneof("operator", &[pure_token("equal", "="), pure_token("approximately", "~")]).flags("optional"),
                string("threshold"),
                integer("count").token("LIMIT").since("6.2.0").flags("optional"),
            ]),
        ]),
    cmd("xdel", -3, "write fast", "write stream fast", (1, 1, 1))
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Removes the specified entries from the stream. Returns the number of items actually deleted, that may be different from the number of IDs passed in case certain IDs do not exist.", "5.0.0", "stream", "O(1) for each single item to delete in the stream, regardless of the stream size.")
        .args(&[key("key", 0), string("id").flags("multiple")]),
    cmd("xlen", 2, "readonly fast", "read stream fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Return the number of entries in a stream", "5.0.0", "stream", "O(1)")
        .args(&[key("key", 0)]),
    cmd("xrange", -4, "readonly", "read stream slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of elements in a stream, with IDs matching the specified IDs interval", "5.0.0", "stream", "O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        .history(&[("6.2.0", "Added exclusive ranges.")])
        .args(&[
            key("key", 0),
            string("start"),
            string("end"),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("xrevrange", -4, "readonly", "read stream slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a range of elements in a stream, with IDs matching the specified IDs interval, in reverse order (from greater to smaller IDs) compared to XRANGE", "5.0.0", "stream", "O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).")
        .history(&[("6.2.0", "Added exclusive ranges.")])
        .args(&[
            key("key", 0),
            string("end"),
            string("start"),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("xsetid", -3, "write denyoom fast", "write stream fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("An internal command for replicating stream values", "5.0.0", "stream", "O(1)")
        .history(&[("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments.")])
        .args(&[
            key("key", 0),
            string("last-id"),
            integer("entries_added").token("ENTRIESADDED").since("7.0.0").flags("optional"),
            string("max_deleted_entry_id").token("MAXDELETEDID").since("7.0.0").flags("optional"),
        ]),
    cmd("xread", -4, "readonly blocking movablekeys", "read stream slow blocking", (0, 0, 0))
        .key_specs(&[spec("RO access", keyword("STREAMS", 1), range(-1, 1, 2))])
        .docs("Return never seen elements in multiple streams, with IDs greater than the ones reported by the caller for each stream. Can block.", "5.0.0", "stream", "For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.")
        .args(&[
            integer("count").token("COUNT").flags("optional"),
            integer("milliseconds").token("BLOCK").flags("optional"),
            block("streams", &[key("key", 0).flags("multiple"), string("id").flags("multiple")]).token("STREAMS"),
        ]),
    cmd("xreadgroup", -7, "write blocking movablekeys", "write stream slow blocking", (0, 0, 0))
        .key_specs(&[spec("RO access", keyword("STREAMS", 4), range(-1, 1, 2))])
        .docs("Return new entries from a stream using a consumer group, or access the history of the pending entries for a given consumer. Can block.", "5.0.0", "stream", "For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.")
        .args(&[
            block("group_consumer", &[string("group"), string("consumer")]).token("GROUP"),
            integer("count").token("COUNT").flags("optional"),
            integer("milliseconds").token("BLOCK").flags("optional"),
            pure_token("noack", "NOACK").flags("optional"),
            block("streams", &[key("key", 0).flags("multiple"), string("id").flags("multiple")]).token("STREAMS"),
        ]),
    cmd("xinfo", -2, "", "slow", (0, 0, 0))
        .docs("A container for stream introspection commands", "5.0.0", "stream", "Depends on subcommand.")
        .subcommands(&[
            cmd("xinfo|consumers", 4, "readonly", "read stream slow", (2, 2, 1))
                .tips(&["nondeterministic_output"])
                .key_specs(&[spec("RO access", index(2), range(0, 1, 0))])
                .docs("List the consumers in a consumer group", "5.0.0", "stream", "O(1)")
                .args(&[key("key", 0), string("groupname")]),
            cmd("xinfo|groups", 3, "readonly", "read stream slow", (2, 2, 1))
                .key_specs(&[spec("RO access", index(2), range(0, 1, 0))])
                .docs("List the consumer groups of a stream", "5.0.0", "stream", "O(1)")
                .history(&[("7.0.0", "Added the `entries-read` and `lag` fields")])
                .args(&[key("key", 0)]),
            cmd("xinfo|help", 2, "loading stale", "stream slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "stream", "O(1)"),
            cmd("xinfo|stream", -3, "readonly", "read stream slow", (2, 2, 1))
                .key_specs(&[spec("RO access", index(2), range(0, 1, 0))])
                .docs("Get information about a stream", "5.0.0", "stream", "O(1)")
                .history(&[
                    ("6.0.0", "Added the `FULL` modifier."),
                    ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"),
                ])
                .args(&[
                    key("key", 0),
                    block("full", &[integer("count").token("COUNT").flags("optional")]).token("FULL").flags("optional"),
                ]),
        ]),
    cmd("xgroup", -2, "", "slow", (0, 0, 0))
        .docs("A container for consumer groups commands", "5.0.0", "stream", "Depends on subcommand.")
        .subcommands(&[
            cmd("xgroup|create", -5, "write denyoom", "write stream slow", (2, 2, 1))
                .key_specs(&[spec("RW insert", index(2), range(0, 1, 0))])
                .docs("Create a consumer group.", "5.0.0", "stream", "O(1)")
                .history(&[("7.0.0", "Added the `entries_read` named argument.")])
                .args(&[
                    key("key", 0),
                    string("groupname"),
                    oneof("id", &[string("id"), pure_token("new_id", "$")]),
                    pure_token("mkstream", "MKSTREAM").flags("optional"),
                    integer("entries_read").token("ENTRIESREAD").flags("optional"),
                ]),
            cmd("xgroup|createconsumer", 5, "write denyoom", "write stream slow", (2, 2, 1))
                .key_specs(&[spec("RW insert", index(2), range(0, 1, 0))])
                .docs("Create a consumer in a consumer group.", "6.2.0", "stream", "O(1)")
                .args(&[key("key", 0), string("groupname"), string("consumername")]),
            cmd("xgroup|delconsumer", 5, "write", "write stream slow", (2, 2, 1))
                .key_specs(&[spec("RW delete", index(2), range(0, 1, 0))])
                .docs("Delete a consumer from a consumer group.", "5.0.0", "stream", "O(1)")
                .args(&[key("key", 0), string("groupname"), string("consumername")]),
            cmd("xgroup|destroy", 4, "write", "write stream slow", (2, 2, 1))
                .key_specs(&[spec("RW delete", index(2), range(0, 1, 0))])
                .docs("Destroy a consumer group.", "5.0.0", "stream", "O(N) where N is the number of entries in the group's pending entries list (PEL).")
                .args(&[key("key", 0), string("groupname")]),
            cmd("xgroup|help", 2, "loading stale", "stream slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "stream", "O(1)"),
            cmd("xgroup|setid", -5, "write", "write stream slow", (2, 2, 1))
                .key_specs(&[spec("RW update", index(2), range(0, 1, 0))])
                .docs("Set a consumer group to an arbitrary last delivered ID value.", "5.0.0", "stream", "O(1)")
                .history(&[("7.0.0", "Added the optional `entries_read` argument.")])
                .args(&[
                    key("key", 0),
                    string("groupname"),
                    oneof("id", &[string("id"), pure_token("new_id", "$")]),
                    integer("entries_read").token("ENTRIESREAD").flags("optional"),
                ]),
        ]),
    cmd("xack", -4, "write fast", "write stream fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Marks a pending message as correctly processed, effectively removing it from the pending entries list of the consumer group. Return value of the command is the number of messages successfully acknowledged, that is, the IDs we were actually able to resolve in the PEL.", "5.0.0", "stream", "O(1) for each message ID processed.")
        .args(&[key("key", 0), string("group"), string("id").flags("multiple")]),
    cmd("xpending", -3, "readonly", "read stream slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return information and entries from a stream consumer group pending entries list, that are messages fetched but never acknowledged.", "5.0.0", "stream", "O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.")
        .history(&[("6.2.0", "Added the `IDLE` option and exclusive range intervals.")])
        .args(&[
            key("key", 0),
            string("group"),
            block("filters", &[
                integer("min-idle-time").token("IDLE").since("6.2.0").flags("optional"),
                string("start"),
                string("end"),
                integer("count"),
                string("consumer").flags("optional"),
            ]).flags("optional"),
        ]),
    cmd("xclaim", -6, "write fast", "write stream fast", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Changes (or acquires) ownership of a message in a consumer group, as if the message was delivered to the specified consumer.", "5.0.0", "stream", "O(log N) with N being the number of messages in the PEL of the consumer group.")
        .args(&[
            key("key", 0),
            string("group"),
            string("consumer"),
            string("min-idle-time"),
            string("id").flags("multiple"),
            integer("ms").token("IDLE").flags("optional"),
            unix_time("unix-time-milliseconds").token("TIME").flags("optional"),
            integer("count").token("RETRYCOUNT").flags("optional"),
            pure_token("force", "FORCE").flags("optional"),
            pure_token("justid", "JUSTID").flags("optional"),
            string("id").token("LASTID").flags("optional"),
        ]),
    cmd("xautoclaim", -6, "write fast", "write stream fast", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RW delete", index(1), range(0, 1, 0))])
        .docs("Changes (or acquires) ownership of messages in a consumer group, as if the messages were delivered to the specified consumer.", "6.2.0", "stream", "O(1) if COUNT is small.")
        .history(&[
            ("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL"),
        ])
        .args(&[
            key("key", 0),
            string("group"),
            string("consumer"),
            string("min-idle-time"),
            string("start"),
            integer("count").token("COUNT").flags("optional"),
            pure_token("justid", "JUSTID").flags("optional"),
        ]),
    cmd("geoadd", -5, "write denyoom", "write geo slow", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0", "geo", "O(log(N)) for each item added, where N is the number of elements in the sorted set.")
        .history(&[("6.2.0", "Added the `CH`, `NX` and `XX` options.")])
        .args(&[
            key("key", 0),
            oneof("condition", &[pure_token("nx", "NX"), pure_token("xx", "XX")]).since("6.2.0").flags("optional"),
            pure_token("change", "CH").since("6.2.0").flags("optional"),
            block("longitude_latitude_member", &[double("longitude"), double("latitude"), string("member")]).flags("multiple"),
        ]),
    cmd("geodist", -4, "readonly", "read geo slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns the distance between two members of a geospatial index", "3.2.0", "geo", "O(log(N))")
        .args(&[
            key("key", 0),
            string("member1"),
            string("member2"),
            oneof("unit", &[
                pure_token("m", "M"),
                pure_token("km", "KM"),
                pure_token("ft", "FT"),
                pure_token("mi", "MI"),
            ]).flags("optional"),
        ]),
    cmd("geohash", -2, "readonly", "read geo slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns members of a geospatial index as standard geohash strings", "3.2.0", "geo", "O(log(N)) for each member requested, where N is the number of elements in the sorted set.")
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("geopos", -2, "readonly", "read geo slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Returns longitude and latitude of members of a geospatial index", "3.2.0", "geo", "O(N) where N is the number of members requested.")
        .args(&[key("key", 0), string("member").flags("multiple")]),
    cmd("georadius", -6, "write denyoom movablekeys", "write geo slow", (1, 1, 1))
        .key_specs(&[
            spec("RO access", index(1), range(0, 1, 0)),
            spec("OW update", keyword("STORE", 6), range(0, 1, 0)),
            spec("OW update", keyword("STOREDIST", 6), range(0, 1, 0)),
        ])
        .docs("Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "3.2.0", "geo", "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument")
        .history(&[
            ("6.2.0", "Added the `ANY` option for `COUNT`."),
            ("7.0.0", "Added support for uppercase unit names."),
        ])
        .args(&[
            key("key", 0),
            double("longitude"),
            double("latitude"),
            double("radius"),
            oneof("unit", &[
                pure_token("m", "M"),
                pure_token("km", "KM"),
                pure_token("ft", "FT"),
                pure_token("mi", "MI"),
            ]),
            pure_token("withcoord", "WITHCOORD").flags("optional"),
            pure_token("withdist", "WITHDIST").flags("optional"),
            pure_token("withhash", "WITHHASH").flags("optional"),
            block("count", &[
                integer("count").token("COUNT"),
                pure_token("any", "ANY").since("6.2.0").flags("optional"),
            ]).flags("optional"),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
            key("key", 1).token("STORE").flags("optional"),
            key("key", 2).token("STOREDIST").flags("optional"),
        ]),
    cmd("georadius_ro", -6, "readonly", "read geo slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("A read-only variant for GEORADIUS", "3.2.10", "geo", "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` argument")
        .history(&[("6.2.0", "Added the `ANY` option for `COUNT`.")])
        .args(&[
            key("key", 0),
            double("longitude"),
            double("latitude"),
            double("radius"),
            oneof("unit", &[
                pure_token("m", "M"),
                pure_token("km", "KM"),
                pure_token("ft", "FT"),
                pure_token("mi", "MI"),
            ]),
            pure_token("withcoord", "WITHCOORD").flags("optional"),
            pure_token("withdist", "WITHDIST").flags("optional"),
            pure_token("withhash", "WITHHASH").flags("optional"),
            block("count", &[
                integer("count").token("COUNT"),
                pure_token("any", "ANY").since("6.2.0").flags("optional"),
            ]).flags("optional"),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
        ]),
    cmd("georadiusbymember", -5, "write denyoom movablekeys", "write geo slow", (1, 1, 1))
        .key_specs(&[
            spec("RO access", index(1), range(0, 1, 0)),
            spec("OW update", keyword("STORE", 5), range(0, 1, 0)),
            spec("OW update", keyword("STOREDIST", 5), range(0, 1, 0)),
        ])
        .docs("Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "3.2.0", "geo", "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments")
        .history(&[("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            key("key", 0),
            string("member"),
            double("radius"),
            oneof("unit", &[
                pure_token("m", "M"),
                pure_token("km", "KM"),
                pure_token("ft", "FT"),
                pure_token("mi", "MI"),
            ]),
            pure_token("withcoord", "WITHCOORD").flags("optional"),
            pure_token("withdist", "WITHDIST").flags("optional"),
            pure_token("withhash", "WITHHASH").flags("optional"),
            block("count", &[integer("count").token("COUNT"), pure_token("any", "ANY").flags("optional")]).flags("optional"),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
            key("key", 1).token("STORE").flags("optional"),
            key("key", 2).token("STOREDIST").flags("optional"),
        ]),
    cmd("georadiusbymember_ro", -5, "readonly", "read geo slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("A read-only variant for GEORADIUSBYMEMBER", "3.2.10", "geo", "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments")
        .args(&[
            key("key", 0),
            string("member"),
            double("radius"),
            oneof("unit", &[
                pure_token("m", "M"),
                pure_token("km", "KM"),
                pure_token("ft", "FT"),
                pure_token("mi", "MI"),
            ]),
            pure_token("withcoord", "WITHCOORD").flags("optional"),
            pure_token("withdist", "WITHDIST").flags("optional"),
            pure_token("withhash", "WITHHASH").flags("optional"),
            block("count", &[integer("count").token("COUNT"), pure_token("any", "ANY").flags("optional")]).flags("optional"),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
        ]),
    cmd("geosearch", -7, "readonly", "read geo slow", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "6.2.0", "geo", "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape")
        .history(&[("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            key("key", 0),
            oneof("from", &[
                string("member").token("FROMMEMBER"),
                block("longitude_latitude", &[double("longitude"), double("latitude")]).token("FROMLONLAT"),
            ]),
            oneof("by", &[
                block("circle", &[
                    double("radius").token("BYRADIUS"),
                    oneof("unit", &[
                        pure_token("m", "M"),
                        pure_token("km", "KM"),
                        pure_token("ft", "FT"),
                        pure_token("mi", "MI"),
                    ]),
                ]),
                block("box", &[
                    double("width").token("BYBOX"),
                    double("height"),
                    oneof("unit", &[
                        pure_token("m", "M"),
                        pure_token("km", "KM"),
                        pure_token("ft", "FT"),
                        pure_token("mi", "MI"),
                    ]),
                ]),
            ]),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
            block("count", &[integer("count").token("COUNT"), pure_token("any", "ANY").flags("optional")]).flags("optional"),
            pure_token("withcoord", "WITHCOORD").flags("optional"),
            pure_token("withdist", "WITHDIST").flags("optional"),
            pure_token("withhash", "WITHHASH").flags("optional"),
        ]),
    cmd("geosearchstore", -8, "write denyoom", "write geo slow", (1, 2, 1))
        .key_specs(&[
            spec("OW update", index(1), range(0, 1, 0)),
            spec("RO access", index(2), range(0, 1, 0)),
        ])
        .docs("Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "6.2.0", "geo", "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape")
        .history(&[("7.0.0", "Added support for uppercase unit names.")])
        .args(&[
            key("destination", 0),
            key("source", 1),
            oneof("from", &[
                string("member").token("FROMMEMBER"),
                block("longitude_latitude", &[double("longitude"), double("latitude")]).token("FROMLONLAT"),
            ]),
            oneof("by", &[
                block("circle", &[
                    double("radius").token("BYRADIUS"),
                    oneof("unit", &[
                        pure_token("m", "M"),
                        pure_token("km", "KM"),
                        pure_token("ft", "FT"),
                        pure_token("mi", "MI"),
                    ]),
                ]),
                block("box", &[
                    double("width").token("BYBOX"),
                    double("height"),
                    oneof("unit", &[
                        pure_token("m", "M"),
                        pure_token("km", "KM"),
                        pure_token("ft", "FT"),
                        pure_token("mi", "MI"),
                    ]),
                ]),
            ]),
            oneof("order", &[pure_token("asc", "ASC"), pure_token("desc", "DESC")]).flags("optional"),
            block("count", &[integer("count").token("COUNT"), pure_token("any", "ANY").flags("optional")]).flags("optional"),
            pure_token("storedist", "STOREDIST").flags("optional"),
        ]),
    cmd("pfadd", -2, "write denyoom fast", "write hyperloglog fast", (1, 1, 1))
        .key_specs(&[spec("RW insert", index(1), range(0, 1, 0))])
        .docs("Adds the specified elements to the specified HyperLogLog.", "2.8.9", "hyperloglog", "O(1) to add every element.")
        .args(&[key("key", 0), string("element").flags("optional multiple")]),
    cmd("pfcount", -2, "readonly", "read hyperloglog slow", (1, -1, 1))
        .key_specs(&[
            spec("RW access", index(1), range(-1, 1, 0)).notes("RW because it may change the internal representation of the key, and propagate to replicas"),
        ])
        .docs("Return the approximated cardinality of the set(s) observed by the HyperLogLog at key(s).", "2.8.9", "hyperloglog", "O(1) with a very small average constant time when called with a single key. O(N) with N being the number of keys, and much bigger constant times, when called with multiple keys.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("pfmerge", -2, "write denyoom", "write hyperloglog slow", (1, -1, 1))
        .key_specs(&[
            spec("RW access insert", index(1), range(0, 1, 0)),
            spec("RO access", index(2), range(-1, 1, 0)),
        ])
        .docs("Merge N different HyperLogLogs into a single one.", "2.8.9", "hyperloglog", "O(N) to merge N HyperLogLogs, but with high constant times.")
        .args(&[key("destkey", 0), key("sourcekey", 1).flags("multiple")]),
    cmd("pfdebug", 3, "write denyoom admin", "write hyperloglog admin slow dangerous", (2, 2, 1))
        .key_specs(&[spec("RW access", index(2), range(0, 1, 0))])
        .docs("Internal commands for debugging HyperLogLog values", "2.8.9", "hyperloglog", "N/A")
        .doc_flags("syscmd")
        .args(&[string("subcommand"), key("key", 0)]),
    cmd("pfselftest", 1, "admin", "hyperloglog admin slow dangerous", (0, 0, 0))
        .docs("An internal command for testing HyperLogLog values", "2.8.9", "hyperloglog", "N/A")
        .doc_flags("syscmd"),
    cmd("blpop", -3, "write noscript blocking", "write list slow blocking", (1, -2, 1))
        .key_specs(&[spec("RW access delete", index(1), range(-2, 1, 0))])
        .docs("Remove and get the first element in a list, or block until one is available", "2.0.0", "list", "O(N) where N is the number of provided keys.")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[key("key", 0).flags("multiple"), double("timeout")]),
    cmd("brpop", -3, "write noscript blocking", "write list slow blocking", (1, -2, 1))
        .key_specs(&[spec("RW access delete", index(1), range(-2, 1, 0))])
        .docs("Remove and get the last element in a list, or block until one is available", "2.0.0", "list", "O(N) where N is the number of provided keys.")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[key("key", 0).flags("multiple"), double("timeout")]),
    cmd("blmove", 6, "write denyoom noscript blocking", "write list slow blocking", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("RW insert", index(2), range(0, 1, 0)),
        ])
        .docs("Pop an element from a list, push it to another list and return it; or block until one is available", "6.2.0", "list", "O(1)")
        .args(&[
            key("source", 0),
            key("destination", 1),
            oneof("wherefrom", &[pure_token("left", "LEFT"), pure_token("right", "RIGHT")]),
            oneof("whereto", &[pure_token("left", "LEFT"), pure_token("right", "RIGHT")]),
            double("timeout"),
        ]),
    cmd("brpoplpush", 4, "write denyoom noscript blocking", "write list slow blocking", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("RW insert", index(2), range(0, 1, 0)),
        ])
        .docs("Pop an element from a list, push it to another list and return it; or block until one is available", "2.2.0", "list", "O(1)")
        .doc_flags("deprecated")
        .deprecated("6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[key("source", 0), key("destination", 1), double("timeout")]),
    cmd("blmpop", -5, "write blocking movablekeys", "write list slow blocking", (0, 0, 0))
        .key_specs(&[spec("RW access delete", index(2), keynum(0, 1, 1))])
        .docs("Pop elements from a list, or block until one is available", "7.0.0", "list", "O(N+M) where N is the number of provided keys and M is the number of elements returned.")
        .args(&[
            double("timeout"),
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            oneof("where", &[pure_token("left", "LEFT"), pure_token("right", "RIGHT")]),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("bzpopmin", -3, "write noscript blocking fast", "write sortedset fast blocking", (1, -2, 1))
        .key_specs(&[spec("RW access delete", index(1), range(-2, 1, 0))])
        .docs("Remove and return the member with the lowest score from one or more sorted sets, or block until one is available", "5.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[key("key", 0).flags("multiple"), double("timeout")]),
    cmd("bzpopmax", -3, "write noscript blocking fast", "write sortedset fast blocking", (1, -2, 1))
        .key_specs(&[spec("RW access delete", index(1), range(-2, 1, 0))])
        .docs("Remove and return the member with the highest score from one or more sorted sets, or block until one is available", "5.0.0", "sorted-set", "O(log(N)) with N being the number of elements in the sorted set.")
        .history(&[("6.0.0", "`timeout` is interpreted as a double instead of an integer.")])
        .args(&[key("key", 0).flags("multiple"), double("timeout")]),
    cmd("bzmpop", -5, "write blocking movablekeys", "write sortedset slow blocking", (0, 0, 0))
        .key_specs(&[spec("RW access delete", index(2), keynum(0, 1, 1))])
        .docs("Remove and return members with scores in a sorted set or block until one is available", "7.0.0", "sorted-set", "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.")
        .args(&[
            double("timeout"),
            integer("numkeys"),
            key("key", 0).flags("multiple"),
            oneof("where", &[pure_token("min", "MIN"), pure_token("max", "MAX")]),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("zrandmember", -2, "readonly", "read sortedset slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get one or multiple random elements from a sorted set", "6.2.0", "sorted-set", "O(N) where N is the number of elements returned")
        .args(&[
            key("key", 0),
            block("options", &[integer("count"), pure_token("withscores", "WITHSCORES").flags("optional")]).flags("optional"),
        ]),
    cmd("zscan", -3, "readonly", "read sortedset slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Incrementally iterate sorted sets elements and associated scores", "2.8.0", "sorted-set", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..")
        .args(&[
            key("key", 0),
            integer("cursor"),
            pattern("pattern").token("MATCH").flags("optional"),
            integer("count").token("COUNT").flags("optional"),
        ]),
    cmd("del", -2, "write", "keyspace write slow", (1, -1, 1))
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .key_specs(&[spec("RM delete", index(1), range(-1, 1, 0))])
        .docs("Delete a key", "1.0.0", "generic", "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("unlink", -2, "write fast", "keyspace write fast", (1, -1, 1))
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .key_specs(&[spec("RM delete", index(1), range(-1, 1, 0))])
        .docs("Delete a key asynchronously in another thread. Otherwise it is just as DEL, but non blocking.", "4.0.0", "generic", "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("exists", -2, "readonly fast", "keyspace read fast", (1, -1, 1))
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .key_specs(&[spec("RO", index(1), range(-1, 1, 0))])
        .docs("Determine if a key exists", "1.0.0", "generic", "O(N) where N is the number of keys to check.")
        .history(&[("3.0.3", "Accepts multiple `key` arguments.")])
        .args(&[key("key", 0).flags("multiple")]),
    cmd("touch", -2, "readonly fast", "keyspace read fast", (1, -1, 1))
        .tips(&["request_policy:multi_shard", "response_policy:agg_sum"])
        .key_specs(&[spec("RO", index(1), range(-1, 1, 0))])
        .docs("Alters the last access time of a key(s). Returns the number of existing keys specified.", "3.2.1", "generic", "O(N) where N is the number of keys that will be touched.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("type", 2, "readonly fast", "keyspace read fast", (1, 1, 1))
        .key_specs(&[spec("RO", index(1), range(0, 1, 0))])
        .docs("Determine the type stored at key", "1.0.0", "generic", "O(1)")
        .args(&[key("key", 0)]),
    cmd("rename", 3, "write", "keyspace write slow", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("OW update", index(2), range(0, 1, 0)),
        ])
        .docs("Rename a key", "1.0.0", "generic", "O(1)")
        .args(&[key("key", 0), key("newkey", 1)]),
    cmd("renamenx", 3, "write fast", "keyspace write fast", (1, 2, 1))
        .key_specs(&[
            spec("RW access delete", index(1), range(0, 1, 0)),
            spec("OW insert", index(2), range(0, 1, 0)),
        ])
        .docs("Rename a key, only if the new key does not exist", "1.0.0", "generic", "O(1)")
        .history(&[
            ("3.2.0", "The command no longer returns an error when source and destination names are the same."),
        ])
        .args(&[key("key", 0), key("newkey", 1)]),
    cmd("copy", -3, "write denyoom", "keyspace write slow", (1, 2, 1))
        .key_specs(&[
            spec("RO access", index(1), range(0, 1, 0)),
            spec("OW update", index(2), range(0, 1, 0)),
        ])
        .docs("Copy a key", "6.2.0", "generic", "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.")
        .args(&[
            key("source", 0),
            key("destination", 1),
            integer("destination-db").token("DB").flags("optional"),
            pure_token("replace", "REPLACE").flags("optional"),
        ]),
    cmd("move", 3, "write fast", "keyspace write fast", (1, 1, 1))
        .key_specs(&[spec("RW access update", index(1), range(0, 1, 0))])
        .docs("Move a key to another database", "1.0.0", "generic", "O(1)")
        .args(&[key("key", 0), integer("db")]),
    cmd("object", -2, "", "slow", (0, 0, 0))
        .docs("A container for object introspection commands", "2.2.3", "generic", "Depends on subcommand.")
        .subcommands(&[
            cmd("object|encoding", 3, "readonly", "keyspace read slow", (2, 2, 1))
                .tips(&["nondeterministic_output"])
                .key_specs(&[spec("RO", index(2), range(0, 1, 0))])
                .docs("Inspect the internal encoding of a Redis object", "2.2.3", "generic", "O(1)")
                .args(&[key("key", 0)]),
            cmd("object|freq", 3, "readonly", "keyspace read slow", (2, 2, 1))
                .tips(&["nondeterministic_output"])
                .key_specs(&[spec("RO", index(2), range(0, 1, 0))])
                .docs("Get the logarithmic access frequency counter of a Redis object", "4.0.0", "generic", "O(1)")
                .args(&[key("key", 0)]),
            cmd("object|help", 2, "loading stale", "keyspace slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "6.2.0", "generic", "O(1)"),
            cmd("object|idletime", 3, "readonly", "keyspace read slow", (2, 2, 1))
                .tips(&["nondeterministic_output"])
                .key_specs(&[spec("RO", index(2), range(0, 1, 0))])
                .docs("Get the time since a Redis object was last accessed", "2.2.3", "generic", "O(1)")
                .args(&[key("key", 0)]),
            cmd("object|refcount", 3, "readonly", "keyspace read slow", (2, 2, 1))
                .tips(&["nondeterministic_output"])
                .key_specs(&[spec("RO", index(2), range(0, 1, 0))])
                .docs("Get the number of references to the value of the key", "2.2.3", "generic", "O(1)")
                .args(&[key("key", 0)]),
        ]),
    cmd("dump", 2, "readonly", "keyspace read slow", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Return a serialized version of the value stored at the specified key.", "2.6.0", "generic", "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).")
        .args(&[key("key", 0)]),
    cmd("restore", -4, "write denyoom", "keyspace write slow dangerous", (1, 1, 1))
        .key_specs(&[spec("OW update", index(1), range(0, 1, 0))])
        .docs("Create a key using the provided serialized value, previously obtained using DUMP.", "2.6.0", "generic", "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).")
        .history(&[
            ("3.0.0", "Added the `REPLACE` modifier."),
            ("5.0.0", "Added the `ABSTTL` modifier."),
            ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
        ])
        .args(&[
            key("key", 0),
            integer("ttl"),
            string("serialized-value"),
            pure_token("replace", "REPLACE").since("3.0.0").flags("optional"),
            pure_token("absttl", "ABSTTL").since("5.0.0").flags("optional"),
            integer("seconds").token("IDLETIME").since("5.0.0").flags("optional"),
            integer("frequency").token("FREQ").since("5.0.0").flags("optional"),
        ]),
    cmd("migrate", -6, "write movablekeys", "keyspace write slow dangerous", (3, 3, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[
            spec("RW access delete", index(3), range(0, 1, 0)),
            spec("RW access delete incomplete", keyword("KEYS", -2), range(-1, 1, 0)),
        ])
        .docs("Atomically transfer a key from a Redis instance to another one.", "2.6.0", "generic", "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.")
        .history(&[
            ("3.0.0", "Added the `COPY` and `REPLACE` options."),
            ("3.0.6", "Added the `KEYS` option."),
            ("4.0.7", "Added the `AUTH` option."),
            ("6.0.0", "Added the `AUTH2` option."),
        ])
        .args(&[
            string("host"),
            integer("port"),
            oneof("key_or_empty_string", &[key("key", 0), pure_token("empty_string", "")]),
            integer("destination-db"),
            integer("timeout"),
            pure_token("copy", "COPY").since("3.0.0").flags("optional"),
            pure_token("replace", "REPLACE").since("3.0.0").flags("optional"),
            oneof("authentication", &[
                string("password").token("AUTH").since("4.0.7").flags("optional"),
                block("username_password", &[string("username"), string("password")]).token("AUTH2").since("6.0.0").flags("optional"),
            ]).flags("optional"),
            key("key", 1).token("KEYS").since("3.0.6").flags("optional multiple"),
        ]),
    cmd("memory", -2, "", "slow", (0, 0, 0))
        .docs("A container for memory diagnostics commands", "4.0.0", "server", "Depends on subcommand.")
        .subcommands(&[
            cmd("memory|doctor", 2, "", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
                .docs("Outputs memory problems report", "4.0.0", "server", "O(1)"),
            cmd("memory|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "4.0.0", "server", "O(1)"),
            cmd("memory|malloc-stats", 2, "", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
                .docs("Show allocator internal stats", "4.0.0", "server", "Depends on how much memory is allocated, could be slow"),
            cmd("memory|purge", 2, "", "slow", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                .docs("Ask the allocator to release memory", "4.0.0", "server", "Depends on how much memory is allocated, could be slow"),
            cmd("memory|stats", 2, "", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
                .docs("Show memory usage details", "4.0.0", "server", "O(1)"),
            cmd("memory|usage", -3, "readonly", "read slow", (2, 2, 1))
                .key_specs(&[spec("RO", index(2), range(0, 1, 0))])
                .docs("Estimate the memory usage of a key", "4.0.0", "server", "O(N) where N is the number of samples.")
                .args(&[key("key", 0), integer("count").token("SAMPLES").flags("optional")]),
        ]),
    cmd("keys", 2, "readonly", "keyspace read slow dangerous", (0, 0, 0))
        .tips(&["request_policy:all_shards", "nondeterministic_output_order"])
        .docs("Find all keys matching the given pattern", "1.0.0", "generic", "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.")
        .args(&[pattern("pattern")]),
    cmd("dbsize", 1, "readonly fast", "keyspace read fast", (0, 0, 0))
        .tips(&["request_policy:all_shards", "response_policy:agg_sum"])
        .docs("Return the number of keys in the selected database", "1.0.0", "server", "O(1)"),
    cmd("flushdb", -1, "write", "keyspace write slow dangerous", (0, 0, 0))
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .docs("Remove all keys from the current database", "1.0.0", "server", "O(N) where N is the number of keys in the selected database")
        .history(&[
            ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
            ("6.2.0", "Added the `SYNC` flushing mode modifier."),
        ])
        .args(&[
            oneof("async", &[
                pure_token("async", "ASYNC").since("4.0.0"),
                pure_token("sync", "SYNC").since("6.2.0"),
            ]).flags("optional"),
        ]),
    cmd("flushall", -1, "write", "keyspace write slow dangerous", (0, 0, 0))
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .docs("Remove all keys from all databases", "1.0.0", "server", "O(N) where N is the total number of keys in all databases")
        .history(&[
            ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
            ("6.2.0", "Added the `SYNC` flushing mode modifier."),
        ])
        .args(&[
            oneof("async", &[
                pure_token("async", "ASYNC").since("4.0.0"),
                pure_token("sync", "SYNC").since("6.2.0"),
            ]).flags("optional"),
        ]),
    cmd("swapdb", 3, "write fast", "keyspace write fast dangerous", (0, 0, 0))
        .docs("Swaps two Redis databases", "4.0.0", "server", "O(N) where N is the count of clients watching or blocking on keys from both databases.")
        .args(&[integer("index1"), integer("index2")]),
    cmd("randomkey", 1, "readonly", "keyspace read slow", (0, 0, 0))
        .tips(&["request_policy:all_shards", "nondeterministic_output"])
        .docs("Return a random key from the keyspace", "1.0.0", "generic", "O(1)"),
    cmd("scan", -2, "readonly", "keyspace read slow", (0, 0, 0))
        .tips(&["nondeterministic_output", "request_policy:special"])
        .docs("Incrementally iterate the keys space", "2.8.0", "generic", "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.")
        .history(&[("6.0.0", "Added the `TYPE` subcommand.")])
        .args(&[
            integer("cursor"),
            pattern("pattern").token("MATCH").flags("optional"),
            integer("count").token("COUNT").flags("optional"),
            string("type").token("TYPE").since("6.0.0").flags("optional"),
        ]),
    cmd("expire", -3, "write fast", "keyspace write fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set a key's time to live in seconds", "1.0.0", "generic", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            key("key", 0),
            integer("seconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).since("7.0.0").flags("optional"),
        ]),
    cmd("pexpire", -3, "write fast", "keyspace write fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set a key's time to live in milliseconds", "2.6.0", "generic", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            key("key", 0),
            integer("milliseconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).since("7.0.0").flags("optional"),
        ]),
    cmd("expireat", -3, "write fast", "keyspace write fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set the expiration for a key as a UNIX timestamp", "1.2.0", "generic", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            key("key", 0),
            unix_time("unix-time-seconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).since("7.0.0").flags("optional"),
        ]),
    cmd("pexpireat", -3, "write fast", "keyspace write fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Set the expiration for a key as a UNIX timestamp specified in milliseconds", "2.6.0", "generic", "O(1)")
        .history(&[("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`.")])
        .args(&[
            key("key", 0),
            unix_time("unix-time-milliseconds"),
            oneof("condition", &[
                pure_token("nx", "NX"),
                pure_token("xx", "XX"),
                pure_token("gt", "GT"),
                pure_token("lt", "LT"),
            ]).since("7.0.0").flags("optional"),
        ]),
    cmd("ttl", 2, "readonly fast", "keyspace read fast", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the time to live for a key in seconds", "1.0.0", "generic", "O(1)")
        .history(&[("2.8.0", "Added the -2 reply.")])
        .args(&[key("key", 0)]),
    cmd("pttl", 2, "readonly fast", "keyspace read fast", (1, 1, 1))
        .tips(&["nondeterministic_output"])
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the time to live for a key in milliseconds", "2.6.0", "generic", "O(1)")
        .history(&[("2.8.0", "Added the -2 reply.")])
        .args(&[key("key", 0)]),
    cmd("expiretime", 2, "readonly fast", "keyspace read fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the expiration Unix timestamp for a key", "7.0.0", "generic", "O(1)")
        .args(&[key("key", 0)]),
    cmd("pexpiretime", 2, "readonly fast", "keyspace read fast", (1, 1, 1))
        .key_specs(&[spec("RO access", index(1), range(0, 1, 0))])
        .docs("Get the expiration Unix timestamp for a key in milliseconds", "7.0.0", "generic", "O(1)")
        .args(&[key("key", 0)]),
    cmd("persist", 2, "write fast", "keyspace write fast", (1, 1, 1))
        .key_specs(&[spec("RW update", index(1), range(0, 1, 0))])
        .docs("Remove the expiration from a key", "2.2.0", "generic", "O(1)")
        .args(&[key("key", 0)]),
    cmd("ping", -1, "fast", "fast connection", (0, 0, 0))
        .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
        .docs("Ping the server", "1.0.0", "connection", "O(1)")
        .args(&[string("message").flags("optional")]),
    cmd("echo", 2, "loading stale fast", "fast connection", (0, 0, 0))
        .docs("Echo the given string", "1.0.0", "connection", "O(1)")
        .args(&[string("message")]),
    cmd("quit", -1, "noscript loading stale fast no_auth allow_busy", "fast connection", (0, 0, 0))
        .docs("Close the connection", "1.0.0", "connection", "O(1)"),
    cmd("hello", -1, "noscript loading stale fast no_auth allow_busy", "fast connection", (0, 0, 0))
        .docs("Handshake with Redis", "6.0.0", "connection", "O(1)")
        .history(&[
            ("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context."),
        ])
        .args(&[
            block("arguments", &[
                integer("protover"),
                block("username_password", &[string("username"), string("password")]).token("AUTH").flags("optional"),
                string("clientname").token("SETNAME").flags("optional"),
            ]).flags("optional"),
        ]),
    cmd("auth", -2, "noscript loading stale fast no_auth allow_busy", "fast connection", (0, 0, 0))
        .docs("Authenticate to the server", "1.0.0", "connection", "O(N) where N is the number of passwords defined for the user")
        .history(&[("6.0.0", "Added ACL style (username and password).")])
        .args(&[string("username").since("6.0.0").flags("optional"), string("password")]),
    cmd("select", 2, "loading stale fast", "fast connection", (0, 0, 0))
        .docs("Change the selected database for the current connection", "1.0.0", "connection", "O(1)")
        .args(&[integer("index")]),
    cmd("reset", 1, "noscript loading stale fast no_auth allow_busy", "fast connection", (0, 0, 0))
        .docs("Reset the connection", "6.2.0", "connection", "O(1)"),
    cmd("monitor", 1, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
        .docs("Listen for all requests received by the server in real time", "1.0.0", "server", ""),
    cmd("client", -2, "", "slow", (0, 0, 0))
        .docs("A container for client connection commands", "2.4.0", "connection", "Depends on subcommand.")
        .subcommands(&[
            cmd("client|caching", 3, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Instruct the server about tracking or not keys in the next request", "6.0.0", "connection", "O(1)")
                .args(&[oneof("mode", &[pure_token("yes", "YES"), pure_token("no", "NO")])]),
            cmd("client|getname", 2, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Get the current connection name", "2.6.9", "connection", "O(1)"),
            cmd("client|getredir", 2, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Get tracking notifications redirection client ID if any", "6.0.0", "connection", "O(1)"),
            cmd("client|help", 2, "loading stale", "slow connection", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "connection", "O(1)"),
            cmd("client|id", 2, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Returns the client ID for the current connection", "5.0.0", "connection", "O(1)"),
            cmd("client|info", 2, "noscript loading stale", "slow connection", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Returns information about the current client connection.", "6.2.0", "connection", "O(1)"),
            cmd("client|kill", -3, "admin noscript loading stale", "admin slow dangerous connection", (0, 0, 0))
                .docs("Kill the connection of a client", "2.4.0", "connection", "O(N) where N is the number of client connections")
                .history(&[
                    ("2.8.12", "Added new filter format."),
                    ("2.8.12", "`ID` option."),
                    ("3.2.0", "Added `master` type in for `TYPE` option."),
                    ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."),
                    ("6.2.0", "`LADDR` option."),
                ])
                .args(&[
                    oneof("filter", &[
                        string("ip:port").deprecated_since("2.8.12"),
                        oneof("new-format", &[
                            integer("client-id").token("ID").since("2.8.12").flags("optional"),
                            oneof("normal_master_slave_pubsub", &[
                                pure_token("normal", "NORMAL"),
                                pure_token("master", "MASTER").since("3.2.0"),
                                pure_token("slave", "SLAVE"),
                                pure_token("replica", "REPLICA").since("5.0.0"),
                                pure_token("pubsub", "PUBSUB"),
                            ]).token("TYPE").since("2.8.12").flags("optional"),
                            string("username").token("USER").flags("optional"),
                            string("ip:port").token("ADDR").flags("optional"),
                            string("ip:port").token("LADDR").since("6.2.0").flags("optional"),
                            string("yes/no").token("SKIPME").flags("optional"),
                        ]).flags("multiple"),
                    ]),
                ]),
            cmd("client|list", -2, "admin noscript loading stale", "admin slow dangerous connection", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Get the list of client connections", "2.4.0", "connection", "O(N) where N is the number of client connections")
                .history(&[
                    ("2.8.12", "Added unique client `id` field."),
                    ("5.0.0", "Added optional `TYPE` filter."),
                    ("6.0.0", "Added `user` field."),
                    ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."),
                    ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."),
                    ("7.0.3", "Added `ssub` field."),
                ])
                .args(&[
                    oneof("normal_master_replica_pubsub", &[
                        pure_token("normal", "NORMAL"),
                        pure_token("master", "MASTER"),
                        pure_token("replica", "REPLICA"),
                        pure_token("pubsub", "PUBSUB"),
                    ]).token("TYPE").since("5.0.0").flags("optional"),
                    block("id", &[integer("client-id").flags("multiple")]).token("ID").since("6.2.0").flags("optional"),
                ]),
            cmd("client|no-evict", 3, "admin noscript loading stale", "admin slow dangerous connection", (0, 0, 0))
                .docs("Set client eviction mode for the current connection", "7.0.0", "connection", "O(1)")
                .args(&[oneof("enabled", &[pure_token("on", "ON"), pure_token("off", "OFF")])]),
            cmd("client|pause", -3, "admin noscript loading stale", "admin slow dangerous connection", (0, 0, 0))
                .docs("Stop processing commands from clients for some time", "2.9.50", "connection", "O(1)")
                .history(&[("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option.")])
                .args(&[
                    integer("timeout"),
                    oneof("mode", &[pure_token("write", "WRITE"), pure_token("all", "ALL")]).since("6.2.0").flags("optional"),
                ]),
            cmd("client|reply", 3, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Instruct the server whether to reply to commands", "3.2.0", "connection", "O(1)")
                .args(&[
                    oneof("on_off_skip", &[
                        pure_token("on", "ON"),
                        pure_token("off", "OFF"),
                        pure_token("skip", "SKIP"),
                    ]),
                ]),
            cmd("client|setname", 3, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Set the current connection name", "2.6.9", "connection", "O(1)")
                .args(&[string("connection-name")]),
            cmd("client|tracking", -3, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Enable or disable server assisted client side caching support", "6.0.0", "connection", "O(1). Some options may introduce additional complexity.")
                .args(&[
                    oneof("status", &[pure_token("on", "ON"), pure_token("off", "OFF")]),
                    integer("client-id").token("REDIRECT").flags("optional"),
                    string("prefix").token("PREFIX").flags("optional multiple multiple_token"),
                    pure_token("bcast", "BCAST").flags("optional"),
                    pure_token("optin", "OPTIN").flags("optional"),
                    pure_token("optout", "OPTOUT").flags("optional"),
                    pure_token("noloop", "NOLOOP").flags("optional"),
                ]),
            cmd("client|trackinginfo", 2, "noscript loading stale", "slow connection", (0, 0, 0))
                .docs("Return information about server assisted client side caching for the current connection", "6.2.0", "connection", "O(1)"),
            cmd("client|unblock", -3, "admin noscript loading stale", "admin slow dangerous connection", (0, 0, 0))
                .docs("Unblock a client blocked in a blocking command from a different connection", "5.0.0", "connection", "O(log N) where N is the number of client connections")
                .args(&[
                    integer("client-id"),
                    oneof("timeout_error", &[pure_token("timeout", "TIMEOUT"), pure_token("error", "ERROR")]).flags("optional"),
                ]),
            cmd("client|unpause", 2, "admin noscript loading stale", "admin slow dangerous connection", (0, 0, 0))
                .docs("Resume processing of clients that were paused", "6.2.0", "connection", "O(N) Where N is the number of paused clients"),
        ]),
    cmd("subscribe", -2, "pubsub noscript loading stale", "pubsub slow", (0, 0, 0))
        .docs("Listen for messages published to the given channels", "2.0.0", "pubsub", "O(N) where N is the number of channels to subscribe to.")
        .args(&[string("channel").flags("multiple")]),
    cmd("unsubscribe", -1, "pubsub noscript loading stale", "pubsub slow", (0, 0, 0))
        .docs("Stop listening for messages posted to the given channels", "2.0.0", "pubsub", "O(N) where N is the number of clients already subscribed to a channel.")
        .args(&[string("channel").flags("optional multiple")]),
    cmd("psubscribe", -2, "pubsub noscript loading stale", "pubsub slow", (0, 0, 0))
        .docs("Listen for messages published to channels matching the given patterns", "2.0.0", "pubsub", "O(N) where N is the number of patterns the client is already subscribed to.")
        .args(&[block("pattern", &[pattern("pattern")]).flags("multiple")]),
    cmd("punsubscribe", -1, "pubsub noscript loading stale", "pubsub slow", (0, 0, 0))
        .docs("Stop listening for messages posted to channels matching the given patterns", "2.0.0", "pubsub", "O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).")
        .args(&[pattern("pattern").flags("optional multiple")]),
    cmd("publish", 3, "pubsub loading stale fast", "pubsub fast", (0, 0, 0))
        .docs("Post a message to a channel", "2.0.0", "pubsub", "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).")
        .args(&[string("channel"), string("message")]),
    cmd("ssubscribe", -2, "pubsub noscript loading stale", "pubsub slow", (1, -1, 1))
        .key_specs(&[spec("not_key", index(1), range(-1, 1, 0))])
        .docs("Listen for messages published to the given shard channels", "7.0.0", "pubsub", "O(N) where N is the number of shard channels to subscribe to.")
        .args(&[string("shardchannel").flags("multiple")]),
    cmd("sunsubscribe", -1, "pubsub noscript loading stale", "pubsub slow", (1, -1, 1))
        .key_specs(&[spec("not_key", index(1), range(-1, 1, 0))])
        .docs("Stop listening for messages posted to the given shard channels", "7.0.0", "pubsub", "O(N) where N is the number of clients already subscribed to a shard channel.")
        .args(&[string("shardchannel").flags("optional multiple")]),
    cmd("spublish", 3, "pubsub loading stale fast", "pubsub fast", (1, 1, 1))
        .key_specs(&[spec("not_key", index(1), range(0, 1, 0))])
        .docs("Post a message to a shard channel", "7.0.0", "pubsub", "O(N) where N is the number of clients subscribed to the receiving shard channel.")
        .args(&[string("shardchannel"), string("message")]),
    cmd("pubsub", -2, "", "slow", (0, 0, 0))
        .docs("A container for Pub/Sub commands", "2.8.0", "pubsub", "Depends on subcommand.")
        .subcommands(&[
            cmd("pubsub|channels", -2, "pubsub loading stale", "pubsub slow", (0, 0, 0))
                .docs("List active channels", "2.8.0", "pubsub", "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)")
                .args(&[pattern("pattern").flags("optional")]),
            cmd("pubsub|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "6.2.0", "pubsub", "O(1)"),
            cmd("pubsub|numpat", 2, "pubsub loading stale", "pubsub slow", (0, 0, 0))
                .docs("Get the count of unique patterns pattern subscriptions", "2.8.0", "pubsub", "O(1)"),
            cmd("pubsub|numsub", -2, "pubsub loading stale", "pubsub slow", (0, 0, 0))
                .docs("Get the count of subscribers for channels", "2.8.0", "pubsub", "O(N) for the NUMSUB subcommand, where N is the number of requested channels")
                .args(&[string("channel").flags("optional multiple")]),
        ]),
    cmd("multi", 1, "noscript loading stale fast allow_busy", "fast transaction", (0, 0, 0))
        .docs("Mark the start of a transaction block", "1.2.0", "transactions", "O(1)"),
    cmd("exec", 1, "noscript loading stale skip_slowlog", "slow transaction", (0, 0, 0))
        .docs("Execute all commands issued after MULTI", "1.2.0", "transactions", "Depends on commands in the transaction"),
    cmd("discard", 1, "noscript loading stale fast allow_busy", "fast transaction", (0, 0, 0))
        .docs("Discard all commands issued after MULTI", "2.0.0", "transactions", "O(N), when N is the number of queued commands"),
    cmd("watch", -2, "noscript loading stale fast allow_busy", "fast transaction", (1, -1, 1))
        .key_specs(&[spec("RO", index(1), range(-1, 1, 0))])
        .docs("Watch the given keys to determine execution of the MULTI/EXEC block", "2.2.0", "transactions", "O(1) for every key.")
        .args(&[key("key", 0).flags("multiple")]),
    cmd("unwatch", 1, "noscript loading stale fast allow_busy", "fast transaction", (0, 0, 0))
        .docs("Forget about all watched keys", "2.2.0", "transactions", "O(1)"),
    cmd("command", -1, "loading stale", "slow connection", (0, 0, 0))
        .tips(&["nondeterministic_output_order"])
        .docs("Get array of Redis command details", "2.8.13", "server", "O(N) where N is the total number of Redis commands")
        .subcommands(&[
            cmd("command|count", 2, "loading stale", "slow connection", (0, 0, 0))
                .docs("Get total number of Redis commands", "2.8.13", "server", "O(1)"),
            cmd("command|docs", -2, "loading stale", "slow connection", (0, 0, 0))
                .tips(&["nondeterministic_output_order"])
                .docs("Get array of specific Redis command documentation", "7.0.0", "server", "O(N) where N is the number of commands to look up")
                .args(&[string("command-name").flags("optional multiple")]),
            cmd("command|getkeys", -4, "loading stale", "slow connection", (0, 0, 0))
                .docs("Extract keys given a full Redis command", "2.8.13", "server", "O(N) where N is the number of arguments to the command"),
            cmd("command|getkeysandflags", -4, "loading stale", "slow connection", (0, 0, 0))
                .docs("Extract keys and access flags given a full Redis command", "7.0.0", "server", "O(N) where N is the number of arguments to the command"),
            cmd("command|help", 2, "loading stale", "slow connection", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "server", "O(1)"),
            cmd("command|info", -2, "loading stale", "slow connection", (0, 0, 0))
                .tips(&["nondeterministic_output_order"])
                .docs("Get array of specific Redis command details, or all when no argument is given.", "2.8.13", "server", "O(N) where N is the number of commands to look up")
                .history(&[
                    ("7.0.0", "Allowed to be called with no argument to get info on all commands."),
                ])
                .args(&[string("command-name").flags("optional multiple")]),
            cmd("command|list", -2, "loading stale", "slow connection", (0, 0, 0))
                .tips(&["nondeterministic_output_order"])
                .docs("Get an array of Redis command names", "7.0.0", "server", "O(N) where N is the total number of Redis commands")
                .args(&[
                    oneof("filterby", &[
                        string("module-name").token("MODULE"),
                        string("category").token("ACLCAT"),
                        pattern("pattern").token("PATTERN"),
                    ]).token("FILTERBY").flags("optional"),
                ]),
        ]),
    cmd("info", -1, "loading stale", "slow dangerous", (0, 0, 0))
        .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
        .docs("Get information and statistics about the server", "1.0.0", "server", "O(1)")
        .history(&[("7.0.0", "Added support for taking multiple section arguments.")])
        .args(&[string("section").flags("optional multiple")]),
    cmd("config", -2, "", "slow", (0, 0, 0))
        .docs("A container for server configuration commands", "2.0.0", "server", "Depends on subcommand.")
        .subcommands(&[
            cmd("config|get", -3, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Get the values of configuration parameters", "2.0.0", "server", "O(N) when N is the number of configuration parameters provided")
                .history(&[
                    ("7.0.0", "Added the ability to pass multiple pattern parameters in one call"),
                ])
                .args(&[block("parameter", &[string("parameter")]).flags("multiple")]),
            cmd("config|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "server", "O(1)"),
            cmd("config|resetstat", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Reset the stats returned by INFO", "2.0.0", "server", "O(1)"),
            cmd("config|rewrite", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Rewrite the configuration file with the in memory configuration", "2.8.0", "server", "O(1)"),
            cmd("config|set", -4, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .docs("Set configuration parameters to the given values", "2.0.0", "server", "O(N) when N is the number of configuration parameters provided")
                .history(&[("7.0.0", "Added the ability to set multiple parameters in one call.")])
                .args(&[
                    block("parameter_value", &[string("parameter"), string("value")]).flags("multiple"),
                ]),
        ]),
    cmd("time", 1, "loading stale fast", "fast", (0, 0, 0))
        .tips(&["nondeterministic_output"])
        .docs("Return the current server time", "2.6.0", "server", "O(1)"),
    cmd("module", -2, "", "slow", (0, 0, 0))
        .docs("A container for module commands", "4.0.0", "server", "Depends on subcommand.")
        .subcommands(&[
            cmd("module|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "server", "O(1)"),
            cmd("module|list", 2, "admin noscript", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output_order"])
                .docs("List all modules loaded by the server", "4.0.0", "server", "O(N) where N is the number of loaded modules."),
            cmd("module|load", -3, "admin noscript no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Load a module", "4.0.0", "server", "O(1)")
                .args(&[string("path"), string("arg").flags("optional multiple")]),
            cmd("module|loadex", -3, "admin noscript no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Load a module with extended parameters", "7.0.0", "server", "O(1)")
                .args(&[
                    string("path"),
                    block("configs", &[string("name"), string("value")]).token("CONFIG").flags("optional multiple multiple_token"),
                    block("args", &[string("arg")]).token("ARGS").flags("optional multiple"),
                ]),
            cmd("module|unload", 3, "admin noscript no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Unload a module", "4.0.0", "server", "O(1)")
                .args(&[string("name")]),
        ]),
    cmd("lolwut", -1, "readonly fast", "read fast", (0, 0, 0))
        .docs("Display some computer art and the Redis version", "5.0.0", "server", "")
        .args(&[integer("version").token("VERSION").flags("optional")]),
    cmd("eval", -3, "noscript stale skip_monitor no_mandatory_keys movablekeys", "slow scripting", (0, 0, 0))
        .key_specs(&[
            spec("RW access update", index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"),
        ])
        .docs("Execute a Lua script server side", "2.6.0", "scripting", "Depends on the script that is executed.")
        .args(&[
            string("script"),
            integer("numkeys"),
            key("key", 0).flags("optional multiple"),
            string("arg").flags("optional multiple"),
        ]),
    cmd("evalsha", -3, "noscript stale skip_monitor no_mandatory_keys movablekeys", "slow scripting", (0, 0, 0))
        .key_specs(&[spec("RW access update", index(2), keynum(0, 1, 1))])
        .docs("Execute a Lua script server side", "2.6.0", "scripting", "Depends on the script that is executed.")
        .args(&[
            string("sha1"),
            integer("numkeys"),
            key("key", 0).flags("optional multiple"),
            string("arg").flags("optional multiple"),
        ]),
    cmd("eval_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", "slow scripting", (0, 0, 0))
        .key_specs(&[
            spec("RO access", index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"),
        ])
        .docs("Execute a read-only Lua script server side", "7.0.0", "scripting", "Depends on the script that is executed.")
        .args(&[
            string("script"),
            integer("numkeys"),
            key("key", 0).flags("optional multiple"),
            string("arg").flags("optional multiple"),
        ]),
    cmd("evalsha_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", "slow scripting", (0, 0, 0))
        .key_specs(&[spec("RO access", index(2), keynum(0, 1, 1))])
        .docs("Execute a read-only Lua script server side", "7.0.0", "scripting", "Depends on the script that is executed.")
        .args(&[
            string("sha1"),
            integer("numkeys"),
            key("key", 0).flags("optional multiple"),
            string("arg").flags("optional multiple"),
        ]),
    cmd("fcall", -3, "noscript stale skip_monitor no_mandatory_keys movablekeys", "slow scripting", (0, 0, 0))
        .key_specs(&[
            spec("RW access update", index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"),
        ])
        .docs("Invoke a function", "7.0.0", "scripting", "Depends on the function that is executed.")
        .args(&[
            string("function"),
            integer("numkeys"),
            key("key", 0).flags("optional multiple"),
            string("arg").flags("optional multiple"),
        ]),
    cmd("fcall_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys movablekeys", "slow scripting", (0, 0, 0))
        .key_specs(&[
            spec("RO access", index(2), keynum(0, 1, 1)).notes("We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"),
        ])
        .docs("Invoke a read-only function", "7.0.0", "scripting", "Depends on the function that is executed.")
        .args(&[
            string("function"),
            integer("numkeys"),
            key("key", 0).flags("optional multiple"),
            string("arg").flags("optional multiple"),
        ]),
    cmd("function", -2, "", "slow", (0, 0, 0))
        .docs("A container for function commands", "7.0.0", "scripting", "Depends on subcommand.")
        .subcommands(&[
            cmd("function|delete", 3, "write noscript", "write slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                .docs("Delete a function by name", "7.0.0", "scripting", "O(1)")
                .args(&[string("library-name")]),
            cmd("function|dump", 2, "noscript", "slow scripting", (0, 0, 0))
                .docs("Dump all functions into a serialized binary payload", "7.0.0", "scripting", "O(N) where N is the number of functions"),
            cmd("function|flush", -2, "write noscript", "write slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                .docs("Deleting all functions", "7.0.0", "scripting", "O(N) where N is the number of functions deleted")
                .args(&[
                    oneof("async", &[pure_token("async", "ASYNC"), pure_token("sync", "SYNC")]).flags("optional"),
                ]),
            cmd("function|help", 2, "loading stale", "slow scripting", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "7.0.0", "scripting", "O(1)"),
            cmd("function|kill", 2, "noscript allow_busy", "slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:one_succeeded"])
                .docs("Kill the function currently in execution.", "7.0.0", "scripting", "O(1)"),
            cmd("function|list", -2, "noscript", "slow scripting", (0, 0, 0))
                .tips(&["nondeterministic_output_order"])
                .docs("List information about all the functions", "7.0.0", "scripting", "O(N) where N is the number of functions")
                .args(&[
                    string("library-name-pattern").token("LIBRARYNAME").flags("optional"),
                    pure_token("withcode", "WITHCODE").flags("optional"),
                ]),
            cmd("function|load", -3, "write denyoom noscript", "write slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                .docs("Create a function with the given arguments (name, code, description)", "7.0.0", "scripting", "O(1) (considering compilation time is redundant)")
                .args(&[pure_token("replace", "REPLACE").flags("optional"), string("function-code")]),
            cmd("function|restore", -3, "write denyoom noscript", "write slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:all_succeeded"])
                .docs("Restore all the functions on the given payload", "7.0.0", "scripting", "O(N) where N is the number of functions on the payload")
                .args(&[
                    string("serialized-value"),
                    oneof("policy", &[
                        pure_token("flush", "FLUSH"),
                        pure_token("append", "APPEND"),
                        pure_token("replace", "REPLACE"),
                    ]).flags("optional"),
                ]),
            cmd("function|stats", 2, "noscript allow_busy", "slow scripting", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_shards", "response_policy:special"])
                .docs("Return information about the function currently running (name, description, duration)", "7.0.0", "scripting", "O(1)"),
        ]),
    cmd("script", -2, "", "slow", (0, 0, 0))
        .docs("A container for Lua scripts management commands", "2.6.0", "scripting", "Depends on subcommand.")
        .subcommands(&[
            cmd("script|debug", 3, "noscript", "slow scripting", (0, 0, 0))
                .docs("Set the debug mode for executed scripts.", "3.2.0", "scripting", "O(1)")
                .args(&[
                    oneof("mode", &[
                        pure_token("yes", "YES"),
                        pure_token("sync", "SYNC"),
                        pure_token("no", "NO"),
                    ]),
                ]),
            cmd("script|exists", -3, "noscript", "slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:agg_logical_and"])
                .docs("Check existence of scripts in the script cache.", "2.6.0", "scripting", "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).")
                .args(&[string("sha1").flags("multiple")]),
            cmd("script|flush", -2, "noscript", "slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .docs("Remove all the scripts from the script cache.", "2.6.0", "scripting", "O(N) with N being the number of scripts in cache")
                .history(&[("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers.")])
                .args(&[
                    oneof("async", &[pure_token("async", "ASYNC"), pure_token("sync", "SYNC")]).since("6.2.0").flags("optional"),
                ]),
            cmd("script|help", 2, "loading stale", "slow scripting", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "scripting", "O(1)"),
            cmd("script|kill", 2, "noscript allow_busy", "slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_shards", "response_policy:one_succeeded"])
                .docs("Kill the script currently in execution.", "2.6.0", "scripting", "O(1)"),
            cmd("script|load", 3, "noscript stale", "slow scripting", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .docs("Load the specified Lua script into the script cache.", "2.6.0", "scripting", "O(N) with N being the length in bytes of the script body.")
                .args(&[string("script")]),
        ]),
    cmd("debug", -2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
        .docs("A container for debugging commands", "1.0.0", "server", "Depends on subcommand.")
        .doc_flags("syscmd"),
    cmd("latency", -2, "", "slow", (0, 0, 0))
        .docs("A container for latency diagnostics commands", "2.8.13", "server", "Depends on subcommand.")
        .subcommands(&[
            cmd("latency|doctor", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
                .docs("Return a human readable latency analysis report.", "2.8.13", "server", "O(1)"),
            cmd("latency|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands.", "2.8.13", "server", "O(1)"),
            cmd("latency|history", 3, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
                .docs("Return timestamp-latency samples for the event.", "2.8.13", "server", "O(1)")
                .args(&[string("event")]),
            cmd("latency|latest", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output", "request_policy:all_nodes", "response_policy:special"])
                .docs("Return the latest latency samples for all events.", "2.8.13", "server", "O(1)"),
            cmd("latency|reset", -2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .docs("Reset latency data for one or more events.", "2.8.13", "server", "O(1)")
                .args(&[string("event").flags("optional multiple")]),
        ]),
    cmd("slowlog", -2, "", "slow", (0, 0, 0))
        .docs("A container for slow log commands", "2.2.12", "server", "Depends on subcommand.")
        .subcommands(&[
            cmd("slowlog|get", -2, "admin loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "nondeterministic_output"])
                .docs("Get the slow log's entries", "2.2.12", "server", "O(N) where N is the number of entries returned")
                .history(&[("4.0.0", "Added client IP address, port and name to the reply.")])
                .args(&[integer("count").flags("optional")]),
            cmd("slowlog|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "6.2.0", "server", "O(1)"),
            cmd("slowlog|len", 2, "admin loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "response_policy:agg_sum", "nondeterministic_output"])
                .docs("Get the slow log's length", "2.2.12", "server", "O(1)"),
            cmd("slowlog|reset", 2, "admin loading stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["request_policy:all_nodes", "response_policy:all_succeeded"])
                .docs("Clear all entries from the slow log", "2.2.12", "server", "O(N) where N is the number of entries in the slowlog"),
        ]),
    cmd("shutdown", -1, "admin noscript loading stale no_multi allow_busy", "admin slow dangerous", (0, 0, 0))
        .docs("Synchronously save the dataset to disk and then shut down the server", "1.0.0", "server", "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)")
        .history(&[("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers.")])
        .args(&[
            oneof("nosave_save", &[pure_token("nosave", "NOSAVE"), pure_token("save", "SAVE")]).flags("optional"),
            pure_token("now", "NOW").since("7.0.0").flags("optional"),
            pure_token("force", "FORCE").since("7.0.0").flags("optional"),
            pure_token("abort", "ABORT").since("7.0.0").flags("optional"),
        ]),
    cmd("lastsave", 1, "loading stale fast", "admin fast dangerous", (0, 0, 0))
        .tips(&["nondeterministic_output"])
        .docs("Get the UNIX time stamp of the last successful save to disk", "1.0.0", "server", "O(1)"),
    cmd("save", 1, "admin noscript no_async_loading no_multi", "admin slow dangerous", (0, 0, 0))
        .docs("Synchronously save the dataset to disk", "1.0.0", "server", "O(N) where N is the total number of keys in all databases"),
    cmd("bgsave", -1, "admin noscript no_async_loading", "admin slow dangerous", (0, 0, 0))
        .docs("Asynchronously save the dataset to disk", "1.0.0", "server", "O(1)")
        .history(&[("3.2.2", "Added the `SCHEDULE` option.")])
        .args(&[pure_token("schedule", "SCHEDULE").since("3.2.2").flags("optional")]),
    cmd("bgrewriteaof", 1, "admin noscript no_async_loading", "admin slow dangerous", (0, 0, 0))
        .docs("Asynchronously rewrite the append-only file", "1.0.0", "server", "O(1)"),
    cmd("readonly", 1, "loading stale fast", "fast connection", (0, 0, 0))
        .docs("Enables read queries for a connection to a cluster replica node", "3.0.0", "cluster", "O(1)"),
    cmd("readwrite", 1, "loading stale fast", "fast connection", (0, 0, 0))
        .docs("Disables read queries for a connection to a cluster replica node", "3.0.0", "cluster", "O(1)"),
    cmd("cluster", -2, "", "slow", (0, 0, 0))
        .docs("A container for cluster commands", "3.0.0", "cluster", "Depends on subcommand.")
        .subcommands(&[
            cmd("cluster|addslots", -3, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Assign new hash slots to receiving node", "3.0.0", "cluster", "O(N) where N is the total number of hash slot arguments")
                .args(&[integer("slot").flags("multiple")]),
            cmd("cluster|addslotsrange", -4, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Assign new hash slots to receiving node", "7.0.0", "cluster", "O(N) where N is the total number of the slots between the start slot and end slot arguments.")
                .args(&[
                    block("start-slot_end-slot", &[integer("start-slot"), integer("end-slot")]).flags("multiple"),
                ]),
            cmd("cluster|bumpepoch", 2, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Advance the cluster config epoch", "3.0.0", "cluster", "O(1)"),
            cmd("cluster|count-failure-reports", 3, "admin stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Return the number of failure reports active for a given node", "3.0.0", "cluster", "O(N) where N is the number of failure reports")
                .args(&[string("node-id")]),
            cmd("cluster|countkeysinslot", 3, "stale", "slow", (0, 0, 0))
                .docs("Return the number of local keys in the specified hash slot", "3.0.0", "cluster", "O(1)")
                .args(&[integer("slot")]),
            cmd("cluster|delslots", -3, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Set hash slots as unbound in receiving node", "3.0.0", "cluster", "O(N) where N is the total number of hash slot arguments")
                .args(&[integer("slot").flags("multiple")]),
            cmd("cluster|delslotsrange", -4, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Set hash slots as unbound in receiving node", "7.0.0", "cluster", "O(N) where N is the total number of the slots between the start slot and end slot arguments.")
                .args(&[
                    block("start-slot_end-slot", &[integer("start-slot"), integer("end-slot")]).flags("multiple"),
                ]),
            cmd("cluster|failover", -2, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Forces a replica to perform a manual failover of its master.", "3.0.0", "cluster", "O(1)")
                .args(&[
                    oneof("options", &[pure_token("force", "FORCE"), pure_token("takeover", "TAKEOVER")]).flags("optional"),
                ]),
            cmd("cluster|flushslots", 2, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Delete a node's own slots information", "3.0.0", "cluster", "O(1)"),
            cmd("cluster|forget", 3, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Remove a node from the nodes table", "3.0.0", "cluster", "O(1)")
                .args(&[string("node-id")]),
            cmd("cluster|getkeysinslot", 4, "stale", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Return local key names in the specified hash slot", "3.0.0", "cluster", "O(log(N)) where N is the number of requested keys")
                .args(&[integer("slot"), integer("count")]),
            cmd("cluster|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "5.0.0", "cluster", "O(1)"),
            cmd("cluster|info", 2, "stale", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Provides info about Redis Cluster node state", "3.0.0", "cluster", "O(1)"),
            cmd("cluster|keyslot", 3, "stale", "slow", (0, 0, 0))
                .docs("Returns the hash slot of the specified key", "3.0.0", "cluster", "O(N) where N is the number of bytes in the key")
                .args(&[string("key")]),
            cmd("cluster|links", 2, "stale", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0", "cluster", "O(N) where N is the total number of Cluster nodes"),
            cmd("cluster|meet", -4, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Force a node cluster to handshake with another node", "3.0.0", "cluster", "O(1)")
                .history(&[("4.0.0", "Added the optional `cluster_bus_port` argument.")])
                .args(&[
                    string("ip"),
                    integer("port"),
                    integer("cluster_bus_port").since("4.0.0").flags("optional"),
                ]),
            cmd("cluster|myid", 2, "stale", "slow", (0, 0, 0))
                .docs("Return the node id", "3.0.0", "cluster", "O(1)"),
            cmd("cluster|nodes", 2, "stale", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Get Cluster config for the node", "3.0.0", "cluster", "O(N) where N is the total number of Cluster nodes"),
            cmd("cluster|replicas", 3, "admin stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("List replica nodes of the specified master node", "5.0.0", "cluster", "O(1)")
                .args(&[string("node-id")]),
            cmd("cluster|replicate", 3, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Reconfigure a node as a replica of the specified master node", "3.0.0", "cluster", "O(1)")
                .args(&[string("node-id")]),
            cmd("cluster|reset", -2, "admin noscript stale", "admin slow dangerous", (0, 0, 0))
                .docs("Reset a Redis Cluster node", "3.0.0", "cluster", "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.")
                .args(&[
                    oneof("hard_soft", &[pure_token("hard", "HARD"), pure_token("soft", "SOFT")]).flags("optional"),
                ]),
            cmd("cluster|saveconfig", 2, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Forces the node to save cluster state on disk", "3.0.0", "cluster", "O(1)"),
            cmd("cluster|set-config-epoch", 3, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Set the configuration epoch in a new node", "3.0.0", "cluster", "O(1)")
                .args(&[integer("config-epoch")]),
            cmd("cluster|setslot", -4, "admin stale no_async_loading", "admin slow dangerous", (0, 0, 0))
                .docs("Bind a hash slot to a specific node", "3.0.0", "cluster", "O(1)")
                .args(&[
                    integer("slot"),
                    oneof("subcommand", &[
                        string("node-id").token("IMPORTING"),
                        string("node-id").token("MIGRATING"),
                        string("node-id").token("NODE"),
                        pure_token("stable", "STABLE"),
                    ]),
                ]),
            cmd("cluster|shards", 2, "stale", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Get array of cluster slots to node mappings", "7.0.0", "cluster", "O(N) where N is the total number of cluster nodes"),
            cmd("cluster|slaves", 3, "admin stale", "admin slow dangerous", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("List replica nodes of the specified master node", "3.0.0", "cluster", "O(1)")
                .doc_flags("deprecated")
                .deprecated("5.0.0", "`CLUSTER REPLICAS`")
                .args(&[string("node-id")]),
            cmd("cluster|slots", 2, "stale", "slow", (0, 0, 0))
                .tips(&["nondeterministic_output"])
                .docs("Get array of Cluster slot to node mappings", "3.0.0", "cluster", "O(N) where N is the total number of Cluster nodes")
                .doc_flags("deprecated")
                .deprecated("7.0.0", "`CLUSTER SHARDS`")
                .history(&[
                    ("4.0.0", "Added node IDs."),
                    ("7.0.0", "Added additional networking metadata field."),
                ]),
        ]),
    cmd("replconf", -1, "admin noscript loading stale allow_busy", "admin slow dangerous", (0, 0, 0))
        .docs("An internal command for configuring the replication stream", "3.0.0", "server", "O(1)")
        .doc_flags("syscmd"),
    cmd("psync", -3, "admin noscript no_async_loading no_multi", "admin slow dangerous", (0, 0, 0))
        .docs("Internal command used for replication", "2.8.0", "server", "")
        .args(&[string("replicationid"), integer("offset")]),
    cmd("sync", 1, "admin noscript no_async_loading no_multi", "admin slow dangerous", (0, 0, 0))
        .docs("Internal command used for replication", "1.0.0", "server", ""),
    cmd("replicaof", 3, "admin noscript stale no_async_loading", "admin slow dangerous", (0, 0, 0))
        .docs("Make the server a replica of another instance, or promote it as master.", "5.0.0", "server", "O(1)")
        .args(&[
            oneof("args", &[
                block("host-port", &[string("host"), integer("port")]),
                block("no-one", &[pure_token("no", "NO"), pure_token("one", "ONE")]),
            ]),
        ]),
    cmd("slaveof", 3, "admin noscript stale no_async_loading", "admin slow dangerous", (0, 0, 0))
        .docs("Make the server a replica of another instance, or promote it as master.", "1.0.0", "server", "O(1)")
        .doc_flags("deprecated")
        .deprecated("5.0.0", "`REPLICAOF`")
        .args(&[
            oneof("args", &[
                block("host-port", &[string("host"), integer("port")]),
                block("no-one", &[pure_token("no", "NO"), pure_token("one", "ONE")]),
            ]),
        ]),
    cmd("role", 1, "noscript loading stale fast", "admin fast dangerous", (0, 0, 0))
        .docs("Return the role of the instance in the context of replication", "2.8.12", "server", "O(1)"),
    cmd("wait", 3, "noscript", "slow connection", (0, 0, 0))
        .tips(&["request_policy:all_shards", "response_policy:agg_min"])
        .docs("Wait for the synchronous replication of all the write commands sent in the context of the current connection", "3.0.0", "generic", "O(1)")
        .args(&[integer("numreplicas"), integer("timeout")]),
    cmd("failover", -1, "admin noscript stale", "admin slow dangerous", (0, 0, 0))
        .docs("Start a coordinated failover between this server and one of its replicas.", "6.2.0", "server", "O(1)")
        .args(&[
            block("target", &[string("host"), integer("port"), pure_token("force", "FORCE").flags("optional")]).token("TO").flags("optional"),
            pure_token("abort", "ABORT").flags("optional"),
            integer("milliseconds").token("TIMEOUT").flags("optional"),
        ]),
    cmd("acl", -2, "", "slow", (0, 0, 0))
        .docs("A container for Access List Control commands ", "6.0.0", "server", "Depends on subcommand.")
        .subcommands(&[
            cmd("acl|cat", -2, "noscript loading stale", "slow", (0, 0, 0))
                .docs("List the ACL categories or the commands inside a category", "6.0.0", "server", "O(1) since the categories and commands are a fixed set.")
                .args(&[string("categoryname").flags("optional")]),
            cmd("acl|deluser", -3, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Remove the specified ACL users and the associated rules", "6.0.0", "server", "O(1) amortized time considering the typical user.")
                .args(&[string("username").flags("multiple")]),
            cmd("acl|dryrun", -4, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Returns whether the user can execute the given command without executing the command.", "7.0.0", "server", "O(1).")
                .args(&[
                    string("username"),
                    string("command"),
                    string("arg").flags("optional multiple"),
                ]),
            cmd("acl|genpass", -2, "noscript loading stale", "slow", (0, 0, 0))
                .docs("Generate a pseudorandom secure password to use for ACL users", "6.0.0", "server", "O(1)")
                .args(&[integer("bits").flags("optional")]),
            cmd("acl|getuser", 3, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Get the rules for a specific ACL user", "6.0.0", "server", "O(N). Where N is the number of password, command and pattern rules that the user has.")
                .history(&[
                    ("6.2.0", "Added Pub/Sub channel patterns."),
                    ("7.0.0", "Added selectors and changed the format of key and channel patterns from a list to their rule representation."),
                ])
                .args(&[string("username")]),
            cmd("acl|help", 2, "loading stale", "slow", (0, 0, 0))
                .docs("Show helpful text about the different subcommands", "6.0.0", "server", "O(1)"),
            cmd("acl|list", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("List the current ACL rules in ACL config file format", "6.0.0", "server", "O(N). Where N is the number of configured users."),
            cmd("acl|load", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Reload the ACLs from the configured ACL file", "6.0.0", "server", "O(N). Where N is the number of configured users."),
            cmd("acl|log", -2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("List latest events denied because of ACLs in place", "6.0.0", "server", "O(N) with N being the number of entries shown.")
                .args(&[
                    oneof("operation", &[integer("count"), pure_token("reset", "RESET")]).flags("optional"),
                ]),
            cmd("acl|save", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Save the current ACL rules in the configured ACL file", "6.0.0", "server", "O(N). Where N is the number of configured users."),
            cmd("acl|setuser", -3, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("Modify or create the rules for a specific ACL user", "6.0.0", "server", "O(N). Where N is the number of rules provided.")
                .history(&[
                    ("6.2.0", "Added Pub/Sub channel patterns."),
                    ("7.0.0", "Added selectors and key based permissions."),
                ])
                .args(&[string("username"), string("rule").flags("optional multiple")]),
            cmd("acl|users", 2, "admin noscript loading stale", "admin slow dangerous", (0, 0, 0))
                .docs("List the username of all the configured ACL rules", "6.0.0", "server", "O(N). Where N is the number of configured users."),
            cmd("acl|whoami", 2, "noscript loading stale", "slow", (0, 0, 0))
                .docs("Return the name of the user associated to the current connection", "6.0.0", "server", "O(1)"),
        ]),
];
