//! The RDB primitives read from untrusted bytes: lengths, strings (plain,
//! integer-encoded or LZF-compressed), doubles and timestamps.
//!
//! Every read checks the bytes left first, and a length read from the
//! input is compared with what is left before anything is allocated for
//! it, so a hostile payload can cost at most what it actually contains
//! (times LZF's bounded expansion, `lzf::MAX_EXPANSION`).

use std::borrow::Cow;

use super::{lzf, BadData};

/// A length's first byte: the top two bits say how the rest is stored.
const LEN_6BIT: u8 = 0;
const LEN_14BIT: u8 = 1;
const LEN_32BIT: u8 = 0x80;
const LEN_64BIT: u8 = 0x81;
const LEN_ENCODED: u8 = 3;

/// Special string encodings (the low six bits after `11`).
pub const ENC_INT8: u8 = 0;
pub const ENC_INT16: u8 = 1;
pub const ENC_INT32: u8 = 2;
pub const ENC_LZF: u8 = 3;

/// A length field: a number, or the tag of a specially encoded string.
enum Len {
    Plain(u64),
    Encoded(u8),
}

/// A cursor over a payload.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub fn u8(&mut self) -> Result<u8, BadData> {
        Ok(self.take(1)?[0])
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], BadData> {
        if n > self.remaining() {
            return Err(BadData("truncated"));
        }
        let bytes = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], BadData> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn len_field(&mut self) -> Result<Len, BadData> {
        let first = self.u8()?;
        Ok(match first >> 6 {
            LEN_6BIT => Len::Plain(u64::from(first & 0x3f)),
            LEN_14BIT => Len::Plain(u64::from(first & 0x3f) << 8 | u64::from(self.u8()?)),
            LEN_ENCODED => Len::Encoded(first & 0x3f),
            _ => match first {
                LEN_32BIT => Len::Plain(u64::from(u32::from_be_bytes(self.array()?))),
                LEN_64BIT => Len::Plain(u64::from_be_bytes(self.array()?)),
                _ => return Err(BadData("unknown length encoding")),
            },
        })
    }

    /// A plain length (a number that is not a string's tag).
    pub fn length(&mut self) -> Result<u64, BadData> {
        match self.len_field()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(_) => Err(BadData("encoded length where a number belongs")),
        }
    }

    /// How many items follow, each taking at least `min_bytes` bytes: so a
    /// count larger than the input could hold is refused here, and the
    /// caller may reserve room for it.
    pub fn count(&mut self, min_bytes: usize) -> Result<usize, BadData> {
        let n = self.length()?;
        let most = self.remaining() / min_bytes.max(1);
        match usize::try_from(n) {
            Ok(n) if n <= most => Ok(n),
            _ => Err(BadData("more items than bytes left")),
        }
    }

    /// A string: borrowed when stored plainly, else its integer's text or
    /// its decompressed bytes.
    pub fn string(&mut self) -> Result<Cow<'a, [u8]>, BadData> {
        match self.len_field()? {
            Len::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| BadData("truncated"))?;
                Ok(Cow::Borrowed(self.take(n)?))
            }
            Len::Encoded(ENC_INT8) => Ok(int_text(i64::from(self.u8()? as i8))),
            Len::Encoded(ENC_INT16) => Ok(int_text(i64::from(i16::from_le_bytes(self.array()?)))),
            Len::Encoded(ENC_INT32) => Ok(int_text(i64::from(i32::from_le_bytes(self.array()?)))),
            Len::Encoded(ENC_LZF) => {
                let packed_len = self.length()?;
                let len = self.length()?;
                let packed_len = usize::try_from(packed_len).map_err(|_| BadData("truncated"))?;
                let len = usize::try_from(len).map_err(|_| BadData("bad LZF length"))?;
                let packed = self.take(packed_len)?;
                lzf::decompress(packed, len)
                    .map(Cow::Owned)
                    .ok_or(BadData("bad LZF data"))
            }
            Len::Encoded(_) => Err(BadData("unknown string encoding")),
        }
    }

    /// A double as 8 little-endian bytes (`ZSET_2`); NaN is refused.
    pub fn binary_double(&mut self) -> Result<f64, BadData> {
        let v = f64::from_le_bytes(self.array()?);
        if v.is_nan() {
            return Err(BadData("NaN score"));
        }
        Ok(v)
    }

    /// A double as text behind a one-byte length (the old `ZSET`): 253 is
    /// NaN (refused), 254 +inf, 255 -inf.
    pub fn text_double(&mut self) -> Result<f64, BadData> {
        match self.u8()? {
            253 => Err(BadData("NaN score")),
            254 => Ok(f64::INFINITY),
            255 => Ok(f64::NEG_INFINITY),
            n => {
                let text = self.take(usize::from(n))?;
                parse_score(text).ok_or(BadData("bad score text"))
            }
        }
    }

    /// A Unix-milliseconds time as 8 little-endian bytes.
    pub fn millis(&mut self) -> Result<u64, BadData> {
        Ok(u64::from_le_bytes(self.array()?))
    }
}

fn int_text(v: i64) -> Cow<'static, [u8]> {
    let mut out = Vec::with_capacity(20);
    crate::util::num::format_i64(v, &mut out);
    Cow::Owned(out)
}

/// A score written as text (`strtod` in Redis): any decimal or exponent
/// form and `inf`; NaN is refused.
pub fn parse_score(text: &[u8]) -> Option<f64> {
    let v: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    (!v.is_nan()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_in_every_width() {
        let mut r =
            Reader::new(b"\x05\x41\x02\x80\x00\x01\x00\x00\x81\x00\x00\x00\x01\x00\x00\x00\x00");
        assert_eq!(r.length(), Ok(5));
        assert_eq!(r.length(), Ok(0x102));
        assert_eq!(r.length(), Ok(0x10000));
        assert_eq!(r.length(), Ok(1 << 32));
        assert_eq!(r.remaining(), 0);
        assert!(Reader::new(b"\x82").length().is_err(), "no such width");
        assert!(Reader::new(b"\x80\x00").length().is_err(), "cut");
    }

    #[test]
    fn strings_plain_integer_and_compressed() {
        let mut r = Reader::new(b"\x03abc\xc0\xfb\xc1\x39\x30\xc2\x00\x00\x00\x80");
        assert_eq!(&*r.string().unwrap(), b"abc");
        assert_eq!(&*r.string().unwrap(), b"-5");
        assert_eq!(&*r.string().unwrap(), b"12345");
        assert_eq!(&*r.string().unwrap(), b"-2147483648");
        let mut lzf = Reader::new(b"\xc3\x09\x40\x64\x01aa\xe0\x57\x00\x01aa");
        assert_eq!(&*lzf.string().unwrap(), &[b'a'; 100][..]);
        assert!(Reader::new(b"\x05abc").string().is_err(), "cut");
        assert!(Reader::new(b"\xc4").string().is_err(), "no such encoding");
        assert!(
            Reader::new(b"\xc3\x01\x81\xff\xff\xff\xff\xff\xff\xff\xff\x00")
                .string()
                .is_err(),
            "an impossible decompressed length allocates nothing"
        );
    }

    #[test]
    fn counts_cannot_exceed_the_input() {
        assert_eq!(Reader::new(b"\x02ab").count(1), Ok(2));
        assert!(Reader::new(b"\x03ab").count(1).is_err());
        assert!(Reader::new(b"\x02ab").count(2).is_err());
        assert!(Reader::new(b"\x81\xff\xff\xff\xff\xff\xff\xff\xff")
            .count(1)
            .is_err());
    }

    #[test]
    fn doubles() {
        let mut r = Reader::new(b"\x031.5\xfe\xff\x04-0.0");
        assert_eq!(r.text_double(), Ok(1.5));
        assert_eq!(r.text_double(), Ok(f64::INFINITY));
        assert_eq!(r.text_double(), Ok(f64::NEG_INFINITY));
        assert_eq!(r.text_double(), Ok(0.0));
        assert!(Reader::new(b"\xfd").text_double().is_err());
        assert!(Reader::new(&f64::NAN.to_le_bytes())
            .binary_double()
            .is_err());
        assert_eq!(Reader::new(&2.5f64.to_le_bytes()).binary_double(), Ok(2.5));
    }
}
