//! Function libraries as Redis 7.0 serializes them: one
//! `RDB_OPCODE_FUNCTION2` record (the opcode byte, then the library's code
//! as an RDB string) per library. The RDB file holds these records before
//! its databases; FUNCTION DUMP's payload is the records followed by the
//! footer a key's DUMP payload has (RDB version, CRC-64).

use super::reader::Reader;
use super::writer::put_string;
use super::{crc64, verify, RestoreError, RDB_VERSION_7_0};

/// A library record (Redis 7.0 GA on).
pub const OPCODE_FUNCTION2: u8 = 245;
/// The record of Redis 7.0's release candidates (name, engine and
/// description apart), which Redis 7.0 GA no longer reads either.
pub const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// Appends the record of a library whose code is `code`.
pub fn put_library(out: &mut Vec<u8>, code: &[u8]) {
    out.push(OPCODE_FUNCTION2);
    put_string(out, code);
}

/// FUNCTION DUMP: the payload of the libraries whose code is `codes`.
pub fn dump<'a>(codes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        put_library(&mut out, code);
    }
    // Function records need nothing newer than 7.0's format, so 7.0
    // restores the payload.
    out.extend_from_slice(&RDB_VERSION_7_0.to_le_bytes());
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Why FUNCTION RESTORE refuses a payload, in Redis 7.0.15's words (the
/// caller adds `ERR `).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FunctionsError {
    VersionOrChecksum,
    /// A record that is not a library (a key's DUMP payload, say).
    NotAFunction,
    PreGa,
    /// A record cut short.
    Truncated,
}

impl FunctionsError {
    pub fn message(self) -> &'static str {
        match self {
            FunctionsError::VersionOrChecksum => "DUMP payload version or checksum are wrong",
            FunctionsError::NotAFunction => "given type is not a function",
            FunctionsError::PreGa => "Pre-GA function format not supported",
            FunctionsError::Truncated => "Failed loading library payload",
        }
    }
}

/// FUNCTION RESTORE: the libraries' code in `payload`, in its order.
pub fn restore(payload: &[u8]) -> Result<Vec<Vec<u8>>, FunctionsError> {
    let body = verify(payload).map_err(|e| match e {
        RestoreError::VersionOrChecksum | RestoreError::BadData(_) => {
            FunctionsError::VersionOrChecksum
        }
    })?;
    let mut r = Reader::new(body);
    let mut codes = Vec::new();
    while r.remaining() > 0 {
        match r.u8().map_err(|_| FunctionsError::Truncated)? {
            OPCODE_FUNCTION2 => codes.push(read_library(&mut r)?),
            OPCODE_FUNCTION_PRE_GA => return Err(FunctionsError::PreGa),
            _ => return Err(FunctionsError::NotAFunction),
        }
    }
    Ok(codes)
}

/// The code of a library record whose opcode was just read.
pub fn read_library(r: &mut Reader<'_>) -> Result<Vec<u8>, FunctionsError> {
    r.string()
        .map(|code| code.into_owned())
        .map_err(|_| FunctionsError::Truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `FUNCTION DUMP` of redis-server 7.0.15 holding one library.
    const REDIS_DUMP: &[u8] = b"\xf5@F#!lua name=lib1\nredis.register_function('f1', function() return 1 end)\n\x00\x98\xfaC\x9b\xf0\xa7\xa5\xa2";
    /// Its `FUNCTION DUMP` with no library.
    const REDIS_EMPTY: &[u8] = b"\n\x00]\x9b\\@\x0f\x7f\xa2\xda";

    #[test]
    fn redis_payloads_restore_and_dump_back_byte_for_byte() {
        let code = b"#!lua name=lib1\nredis.register_function('f1', function() return 1 end)";
        assert_eq!(restore(REDIS_DUMP), Ok(vec![code.to_vec()]));
        assert_eq!(dump([&code[..]]), REDIS_DUMP);
        assert_eq!(restore(REDIS_EMPTY), Ok(vec![]));
        assert_eq!(dump([]), REDIS_EMPTY);
    }

    #[test]
    fn long_code_is_compressed_and_comes_back() {
        let code = format!("#!lua name=big\n{}", "-- padding\n".repeat(200));
        let payload = dump([code.as_bytes()]);
        assert!(payload.len() < code.len());
        assert_eq!(restore(&payload), Ok(vec![code.into_bytes()]));
    }

    #[test]
    fn bad_payloads_get_redis_errors() {
        let mut flipped = REDIS_DUMP.to_vec();
        *flipped.last_mut().unwrap() ^= 1;
        assert_eq!(restore(&flipped), Err(FunctionsError::VersionOrChecksum));
        assert_eq!(restore(b""), Err(FunctionsError::VersionOrChecksum));
        let key = super::super::dump(&crate::store::Value::string(bytes::Bytes::from("v")));
        assert_eq!(restore(&key), Err(FunctionsError::NotAFunction));
        // A record cut short, under a right footer.
        let mut cut = vec![OPCODE_FUNCTION2, 0x40, 0x46, b'#'];
        cut.extend_from_slice(&RDB_VERSION_7_0.to_le_bytes());
        let crc = crc64::crc64(0, &cut);
        cut.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore(&cut), Err(FunctionsError::Truncated));
        let mut pre_ga = vec![OPCODE_FUNCTION_PRE_GA];
        pre_ga.extend_from_slice(&RDB_VERSION_7_0.to_le_bytes());
        let crc = crc64::crc64(0, &pre_ga);
        pre_ga.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(restore(&pre_ga), Err(FunctionsError::PreGa));
    }
}
