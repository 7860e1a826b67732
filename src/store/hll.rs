//! HyperLogLog in Redis's own string format, byte for byte, so an HLL
//! written by redis-server (GET, then SET here) counts the same in ember
//! and back, and the same PFADDs leave the same bytes in both.
//!
//! The format (a fact of Redis's, not its code):
//!
//! ```text
//!   +------+---+-----+----------+------------------------------+
//!   | HYLL | E | N/U | Cardin.  | registers                    |
//!   +------+---+-----+----------+------------------------------+
//!    4      1   3     8 (LE)     dense: 16384 x 6 bits, LSB first
//!                                sparse: opcodes, below
//! ```
//!
//! `E` is 0 (dense) or 1 (sparse). The cardinality is a cache: the top bit
//! of its last byte set means stale. Sparse opcodes cover runs of
//! registers: ZERO `00xxxxxx` (1..64 zeros), XZERO `01xxxxxx yyyyyyyy`
//! (1..16384 zeros), VAL `1vvvvvxx` (1..4 registers of value 1..32). A
//! sparse HLL becomes dense when a value over 32 arrives or when it would
//! grow past `hll-sparse-max-bytes`.
//!
//! An element hashes with MurmurHash64A (seed `0xadc83b19`): the low 14
//! bits pick the register, the position of the first 1 bit in the other
//! 50 (plus one, at most 51) is the value it offers. The estimate is
//! Ertl's improved estimator over the register histogram, as Redis 7.0
//! computes it, so the counts are Redis's.

/// Header bytes before the registers.
pub const HDR: usize = 16;
/// Registers: 2^14.
pub const REGISTERS: usize = 1 << P;
/// A dense HLL's exact length.
pub const DENSE_SIZE: usize = HDR + (REGISTERS * BITS).div_ceil(8);
/// `hll-sparse-max-bytes`'s default, and what PFSELFTEST uses.
pub const SPARSE_MAX_DEFAULT: usize = 3000;

const P: usize = 14;
/// Hash bits left after the register index.
const Q: usize = 64 - P;
const BITS: usize = 6;
const REGISTER_MAX: u8 = (1 << BITS) - 1;
const SEED: u64 = 0xadc8_3b19;
/// The byte of the header holding the cache's stale bit.
const CARD_TOP: usize = 15;
const STALE: u8 = 0x80;

const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;
const XZERO_MAX_LEN: usize = 16384;

/// The two stored encodings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Dense,
    Sparse,
}

impl Encoding {
    /// PFDEBUG ENCODING's name.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Dense => "dense",
            Encoding::Sparse => "sparse",
        }
    }
}

/// The registers do not add up (Redis's `INVALIDOBJ`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt;

/// The encoding of `s` if it is an HLL at all: the magic, a known
/// encoding, and a dense one of the exact size (else Redis answers
/// WRONGTYPE). Sparse opcodes are checked only as they are read.
pub fn check(s: &[u8]) -> Option<Encoding> {
    if s.len() < HDR || &s[..4] != b"HYLL" {
        return None;
    }
    match s[4] {
        0 if s.len() == DENSE_SIZE => Some(Encoding::Dense),
        1 => Some(Encoding::Sparse),
        _ => None,
    }
}

/// An empty HLL as PFADD creates it: sparse, all 16384 registers in one
/// XZERO, a valid cached cardinality of 0.
pub fn new_sparse() -> Vec<u8> {
    let mut s = Vec::with_capacity(HDR + 2 + 3);
    s.extend_from_slice(b"HYLL");
    s.extend_from_slice(&[1, 0, 0, 0]);
    s.extend_from_slice(&[0; 8]);
    let mut op = [0; 2];
    xzero_set(&mut op, REGISTERS.min(XZERO_MAX_LEN));
    s.extend_from_slice(&op);
    s
}

/// The cached cardinality, if it is valid.
pub fn cached(s: &[u8]) -> Option<u64> {
    if s[CARD_TOP] & STALE != 0 {
        return None;
    }
    let mut card = [0; 8];
    card.copy_from_slice(&s[8..16]);
    Some(u64::from_le_bytes(card))
}

pub fn set_cached(s: &mut [u8], card: u64) {
    s[8..16].copy_from_slice(&card.to_le_bytes());
}

pub fn invalidate(s: &mut [u8]) {
    s[CARD_TOP] |= STALE;
}

/// MurmurHash64A, reading 8-byte blocks little-endian, as Redis does.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut blocks = data.chunks_exact(8);
    for block in &mut blocks {
        let mut k = u64::from_le_bytes(block.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element falls in and the value it offers there.
pub fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = (hash as usize) & (REGISTERS - 1);
    // A stop bit past the Q bits keeps the count at most Q + 1.
    let rest = (hash >> P) | (1 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

// ---- Dense registers --------------------------------------------------

/// Register `i` of the dense register bytes `regs`.
pub fn dense_get(regs: &[u8], i: usize) -> u8 {
    let bit = i * BITS;
    let (byte, shift) = (bit / 8, bit % 8);
    let lo = u16::from(regs[byte]);
    let hi = u16::from(regs.get(byte + 1).copied().unwrap_or(0));
    (((lo | hi << 8) >> shift) as u8) & REGISTER_MAX
}

pub fn dense_set(regs: &mut [u8], i: usize, value: u8) {
    let bit = i * BITS;
    let (byte, shift) = (bit / 8, bit % 8);
    let v = u16::from(value & REGISTER_MAX) << shift;
    let mask = u16::from(REGISTER_MAX) << shift;
    regs[byte] = (regs[byte] & !(mask as u8)) | v as u8;
    if let Some(next) = regs.get_mut(byte + 1) {
        *next = (*next & !((mask >> 8) as u8)) | (v >> 8) as u8;
    }
}

/// Raises register `i` to `value`; whether it changed.
fn dense_raise(regs: &mut [u8], i: usize, value: u8) -> bool {
    if dense_get(regs, i) >= value {
        return false;
    }
    dense_set(regs, i, value);
    true
}

// ---- Sparse opcodes ---------------------------------------------------

fn is_zero(b: u8) -> bool {
    b & 0xc0 == 0
}

fn is_xzero(b: u8) -> bool {
    b & 0xc0 == 0x40
}

fn is_val(b: u8) -> bool {
    b & 0x80 != 0
}

fn zero_len(b: u8) -> usize {
    usize::from(b & 0x3f) + 1
}

/// An XZERO's run; its second byte read past the end is 0, as Redis reads
/// the terminator there.
fn xzero_len(s: &[u8], p: usize) -> usize {
    (usize::from(s[p] & 0x3f) << 8 | usize::from(s.get(p + 1).copied().unwrap_or(0))) + 1
}

fn val_value(b: u8) -> u8 {
    ((b >> 2) & 0x1f) + 1
}

fn val_len(b: u8) -> usize {
    usize::from(b & 0x3) + 1
}

fn val_op(value: u8, len: usize) -> u8 {
    0x80 | (value - 1) << 2 | (len - 1) as u8
}

fn xzero_set(op: &mut [u8], len: usize) {
    let l = len - 1;
    op[0] = (l >> 8) as u8 | 0x40;
    op[1] = l as u8;
}

/// One run of a sparse HLL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    Zero(usize),
    XZero(usize),
    Val(u8, usize),
}

impl Run {
    fn at(s: &[u8], p: usize) -> Run {
        let b = s[p];
        if is_zero(b) {
            Run::Zero(zero_len(b))
        } else if is_xzero(b) {
            Run::XZero(xzero_len(s, p))
        } else {
            Run::Val(val_value(b), val_len(b))
        }
    }

    fn span(self) -> usize {
        match self {
            Run::Zero(n) | Run::XZero(n) | Run::Val(_, n) => n,
        }
    }

    fn op_len(self) -> usize {
        match self {
            Run::XZero(_) => 2,
            _ => 1,
        }
    }
}

/// The runs of the sparse opcodes `ops` (from the header's end).
fn runs(ops: &[u8]) -> impl Iterator<Item = Run> + '_ {
    let mut p = 0;
    std::iter::from_fn(move || {
        if p >= ops.len() {
            return None;
        }
        let run = Run::at(ops, p);
        p += run.op_len();
        Some(run)
    })
}

/// Appends a zero run of `len` (>= 1) to `seq`: ZERO up to 64, else XZERO.
fn push_zeros(seq: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        let mut op = [0; 2];
        xzero_set(&mut op, len);
        seq.extend_from_slice(&op);
    } else {
        seq.push((len - 1) as u8);
    }
}

/// Raises register `index` of the sparse HLL `s` to `count`, splitting the
/// run that covers it in place, or making `s` dense when the value does
/// not fit a VAL or the result would pass `sparse_max` bytes. Whether a
/// register changed.
fn sparse_raise(
    s: &mut Vec<u8>,
    index: usize,
    count: u8,
    sparse_max: usize,
) -> Result<bool, Corrupt> {
    if count > VAL_MAX_VALUE {
        return promote_and_raise(s, index, count);
    }
    // 1. Find the opcode covering `index`.
    let (mut p, mut first, mut span) = (HDR, 0, 0);
    let mut prev = None;
    let mut run = Run::Zero(0);
    while p < s.len() {
        run = Run::at(s, p);
        span = run.span();
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += run.op_len();
        first += span;
    }
    if span == 0 || p >= s.len() {
        return Err(Corrupt);
    }
    // 2. The trivial cases, rewritten in place.
    let rewritten = match run {
        Run::Val(old, _) if old >= count => return Ok(false),
        Run::Val(_, 1) | Run::Zero(1) => {
            s[p] = val_op(count, 1);
            true
        }
        _ => false,
    };
    if !rewritten {
        // 3. The general case: split the run into up to three.
        let last = first + span - 1;
        let mut seq = Vec::with_capacity(5);
        match run {
            Run::Val(old, _) => {
                if index != first {
                    seq.push(val_op(old, index - first));
                }
                seq.push(val_op(count, 1));
                if index != last {
                    seq.push(val_op(old, last - index));
                }
            }
            _ => {
                if index != first {
                    push_zeros(&mut seq, index - first);
                }
                seq.push(val_op(count, 1));
                if index != last {
                    push_zeros(&mut seq, last - index);
                }
            }
        }
        let old_len = run.op_len();
        let new_len = (s.len() + seq.len()).saturating_sub(old_len);
        if seq.len() > old_len && new_len > sparse_max {
            return promote_and_raise(s, index, count);
        }
        let tail = (p + old_len).min(s.len());
        s.splice(p..tail, seq);
        // A truncated XZERO at the very end: Redis's length arithmetic
        // cuts what was written past its old end.
        s.truncate(new_len);
    }
    // 4. Merge adjacent VALs of one value, scanning five opcodes from the
    // one before the change.
    let mut p = prev.unwrap_or(HDR);
    let mut scan = 5;
    while p < s.len() && scan > 0 {
        scan -= 1;
        let b = s[p];
        if is_xzero(b) {
            p += 2;
            continue;
        }
        if is_zero(b) {
            p += 1;
            continue;
        }
        if let Some(&next) = s.get(p + 1) {
            if is_val(next) && val_value(b) == val_value(next) {
                let len = val_len(b) + val_len(next);
                if len <= VAL_MAX_LEN {
                    s[p + 1] = val_op(val_value(b), len);
                    s.remove(p);
                    // Try the merged run with the one after it.
                    continue;
                }
            }
        }
        p += 1;
    }
    invalidate(s);
    Ok(true)
}

fn promote_and_raise(s: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    to_dense(s)?;
    // A register over the sparse range, or a split that needed room: it
    // changes.
    Ok(dense_raise(&mut s[HDR..], index, count))
}

/// Makes a sparse HLL dense, keeping its header (magic, unused bytes, the
/// cached cardinality); whether it converted (false: it was dense).
pub fn to_dense(s: &mut Vec<u8>) -> Result<bool, Corrupt> {
    if s[4] == 0 {
        return Ok(false);
    }
    let mut dense = vec![0; DENSE_SIZE];
    dense[..HDR].copy_from_slice(&s[..HDR]);
    dense[4] = 0;
    let regs = &mut dense[HDR..];
    sparse_values(&s[HDR..], |i, v| dense_set(regs, i, v))?;
    *s = dense;
    Ok(true)
}

/// Walks a sparse body, calling `set(register, value)` for every register
/// a VAL run sets; corrupt unless the runs cover exactly the 16384
/// registers (a VAL run past the last one is corrupt even if the runs
/// before it added up: redis-server refuses it too).
fn sparse_values(body: &[u8], mut set: impl FnMut(usize, u8)) -> Result<(), Corrupt> {
    let mut idx = 0;
    for run in runs(body) {
        match run {
            Run::Zero(n) | Run::XZero(n) => idx += n,
            Run::Val(v, n) => {
                if idx + n > REGISTERS {
                    return Err(Corrupt);
                }
                for i in idx..idx + n {
                    set(i, v);
                }
                idx += n;
            }
        }
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    Ok(())
}

/// PFADD of one element to the HLL `s` (checked with [`check`]): whether
/// a register changed.
pub fn add(s: &mut Vec<u8>, element: &[u8], sparse_max: usize) -> Result<bool, Corrupt> {
    let (index, count) = pattern(element);
    match s[4] {
        0 => Ok(dense_raise(&mut s[HDR..], index, count)),
        1 => sparse_raise(s, index, count, sparse_max),
        _ => Err(Corrupt),
    }
}

/// Raises register `index` of `s` to `value` (PFMERGE's destination).
pub fn raise(s: &mut Vec<u8>, index: usize, value: u8, sparse_max: usize) -> Result<bool, Corrupt> {
    match s[4] {
        0 => Ok(dense_raise(&mut s[HDR..], index, value)),
        _ => sparse_raise(s, index, value, sparse_max),
    }
}

/// Takes each register of the HLL `s` into `max` where it is larger.
pub fn merge_into(max: &mut [u8; REGISTERS], s: &[u8]) -> Result<(), Corrupt> {
    if s[4] == 0 {
        let regs = &s[HDR..];
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense_get(regs, i));
        }
        return Ok(());
    }
    sparse_values(&s[HDR..], |i, v| max[i] = max[i].max(v))
}

// ---- The estimate -----------------------------------------------------

/// How many registers hold each value (64 slots: a dense register holds
/// up to 63 though the hash gives at most 51).
type Histogram = [u32; 64];

/// The estimated cardinality of the HLL `s` (the sparse form must cover
/// exactly 16384 registers).
pub fn count(s: &[u8]) -> Result<u64, Corrupt> {
    let mut histo: Histogram = [0; 64];
    if s[4] == 0 {
        let regs = &s[HDR..];
        for i in 0..REGISTERS {
            histo[usize::from(dense_get(regs, i))] += 1;
        }
    } else {
        let mut idx = 0;
        for run in runs(&s[HDR..]) {
            let (value, n) = match run {
                Run::Zero(n) | Run::XZero(n) => (0, n),
                Run::Val(v, n) => (usize::from(v), n),
            };
            idx += n;
            histo[value] = histo[value].wrapping_add(n as u32);
        }
        if idx != REGISTERS {
            return Err(Corrupt);
        }
    }
    Ok(estimate(&histo))
}

/// The estimated cardinality of raw registers (PFCOUNT of several keys).
pub fn count_registers(regs: &[u8; REGISTERS]) -> u64 {
    let mut histo: Histogram = [0; 64];
    for &r in regs {
        histo[usize::from(r & 63)] += 1;
    }
    estimate(&histo)
}

/// Ertl's estimator ("New cardinality estimation algorithms for
/// HyperLogLog sketches", arXiv:1702.01284), in Redis 7.0's order of
/// operations so the doubles, and so the rounded counts, are Redis's.
fn estimate(histo: &Histogram) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histo[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(histo[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histo[0]) / m);
    // 1 / (2 ln 2), the estimator's constant for m -> infinity.
    const ALPHA_INF: f64 = 0.721_347_520_444_481_7;
    (ALPHA_INF * m * m / z).round() as u64
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

// ---- Debugging --------------------------------------------------------

/// PFDEBUG DECODE: the sparse opcodes as `z:N`, `Z:N`, `v:V,N`.
pub fn decode(s: &[u8]) -> String {
    let words: Vec<String> = runs(&s[HDR..])
        .map(|run| match run {
            Run::Zero(n) => format!("z:{n}"),
            Run::XZero(n) => format!("Z:{n}"),
            Run::Val(v, n) => format!("v:{v},{n}"),
        })
        .collect();
    words.join(" ")
}

/// PFSELFTEST: dense registers read back what was written; a sparse and a
/// dense HLL fed the same `elements` distinct elements agree, the sparse
/// one stays sparse while small, and the estimate stays within six
/// standard errors at every power of ten (cardinality 10 within 1).
/// Redis's own checks and error texts (after `TESTFAILED`).
pub fn selftest(elements: u64, seed: u64) -> Result<(), String> {
    let mut regs = vec![0u8; DENSE_SIZE - HDR];
    let mut rng = seed | 1;
    let mut next = || {
        // xorshift64: any spread of values does.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..100 {
        let values: Vec<u8> = (0..REGISTERS)
            .map(|_| next() as u8 & REGISTER_MAX)
            .collect();
        for (i, &v) in values.iter().enumerate() {
            dense_set(&mut regs, i, v);
        }
        if let Some(i) = (0..REGISTERS).find(|&i| dense_get(&regs, i) != values[i]) {
            return Err(format!("TESTFAILED Register error at {i}"));
        }
    }
    let mut dense = new_sparse();
    to_dense(&mut dense).expect("a new HLL converts");
    let mut sparse = new_sparse();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint: u64 = 1;
    let base = next();
    for j in 1..=elements {
        let element = (j ^ base).to_le_bytes();
        add(&mut dense, &element, SPARSE_MAX_DEFAULT).expect("valid");
        add(&mut sparse, &element, SPARSE_MAX_DEFAULT).expect("valid");
        if j != checkpoint {
            continue;
        }
        if (j as usize) < SPARSE_MAX_DEFAULT / 2 && sparse[4] != 1 {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let card = count(&dense).expect("valid");
        if count(&sparse) != Ok(card) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let abserr = checkpoint.abs_diff(card);
        let maxerr = if j == 10 {
            1
        } else {
            (relerr * 6.0 * checkpoint as f64).ceil() as u64
        };
        if abserr > maxerr {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{abserr}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filled(n: usize, sparse_max: usize) -> Vec<u8> {
        let mut s = new_sparse();
        for i in 0..n {
            add(&mut s, format!("e{i}").as_bytes(), sparse_max).unwrap();
        }
        s
    }

    #[test]
    fn murmur_matches_known_values() {
        // MurmurHash64A of the empty string with seed 0 is 0.
        assert_eq!(murmur64a(b"", 0), 0);
        // Tail bytes and whole blocks both take part.
        assert_ne!(murmur64a(b"abcdefgh", SEED), murmur64a(b"abcdefgi", SEED));
        assert_ne!(murmur64a(b"abc", SEED), murmur64a(b"abd", SEED));
    }

    #[test]
    fn a_new_hll_is_one_xzero_with_a_valid_zero_cache() {
        let s = new_sparse();
        assert_eq!(s, b"HYLL\x01\0\0\0\0\0\0\0\0\0\0\0\x7f\xff");
        assert_eq!(check(&s), Some(Encoding::Sparse));
        assert_eq!(cached(&s), Some(0));
        assert_eq!(count(&s), Ok(0));
        assert_eq!(decode(&s), "Z:16384");
    }

    #[test]
    fn check_wants_the_magic_an_encoding_and_the_dense_size() {
        assert_eq!(check(b"HYLL\x01"), None);
        assert_eq!(check(b"HYLX\x01\0\0\0\0\0\0\0\0\0\0\0"), None);
        assert_eq!(check(b"HYLL\x02\0\0\0\0\0\0\0\0\0\0\0"), None);
        assert_eq!(check(b"HYLL\x00\0\0\0\0\0\0\0\0\0\0\0\x7f\xff"), None);
        let mut s = new_sparse();
        to_dense(&mut s).unwrap();
        assert_eq!(s.len(), DENSE_SIZE);
        assert_eq!(check(&s), Some(Encoding::Dense));
    }

    #[test]
    fn dense_registers_read_back_including_the_last() {
        let mut regs = vec![0u8; DENSE_SIZE - HDR];
        for i in 0..REGISTERS {
            dense_set(&mut regs, i, (i % 64) as u8);
        }
        for i in 0..REGISTERS {
            assert_eq!(dense_get(&regs, i), (i % 64) as u8, "{i}");
        }
    }

    #[test]
    fn sparse_and_dense_count_alike_and_decode_covers_every_register() {
        for n in [0, 1, 2, 5, 50, 300, 1000] {
            let sparse = filled(n, SPARSE_MAX_DEFAULT);
            let mut dense = sparse.clone();
            to_dense(&mut dense).unwrap();
            assert_eq!(count(&sparse), count(&dense), "{n}");
            let covered: usize = runs(&sparse[HDR..]).map(Run::span).sum();
            assert_eq!(covered, REGISTERS);
            let mut max = [0; REGISTERS];
            merge_into(&mut max, &sparse).unwrap();
            assert_eq!(count_registers(&max), count(&dense).unwrap());
        }
    }

    #[test]
    fn sparse_promotes_past_its_byte_limit() {
        let s = filled(100, 200);
        assert_eq!(check(&s), Some(Encoding::Dense));
        let s = filled(100, SPARSE_MAX_DEFAULT);
        assert_eq!(check(&s), Some(Encoding::Sparse));
        assert!(s.len() <= SPARSE_MAX_DEFAULT);
    }

    #[test]
    fn counts_are_within_the_error() {
        for n in [10usize, 1000, 20000] {
            let card = count(&filled(n, SPARSE_MAX_DEFAULT)).unwrap() as f64;
            assert!((card - n as f64).abs() <= n as f64 * 0.05, "{n}: {card}");
        }
    }

    #[test]
    fn corrupt_sparse_hlls_are_errors_not_panics() {
        let mut s = filled(20, SPARSE_MAX_DEFAULT);
        s.extend_from_slice(b"hello");
        assert_eq!(count(&s), Err(Corrupt));
        let mut max = [0; REGISTERS];
        assert_eq!(merge_into(&mut max, &s), Err(Corrupt));
        assert_eq!(to_dense(&mut s.clone()), Err(Corrupt));
        // Every byte value at every position: never a panic.
        let base = filled(30, SPARSE_MAX_DEFAULT);
        for pos in HDR..base.len() {
            for b in [0x00, 0x3f, 0x40, 0x7f, 0x80, 0xff] {
                let mut s = base.clone();
                s[pos] = b;
                let _ = count(&s);
                let _ = add(&mut s, b"x", SPARSE_MAX_DEFAULT);
                let _ = add(&mut s, b"y", SPARSE_MAX_DEFAULT);
            }
        }
        // Runs past the last register, after runs that add up.
        let mut s = new_sparse();
        s.push(val_op(1, 1));
        assert_eq!(count(&s), Err(Corrupt));
        assert_eq!(merge_into(&mut max, &s), Err(Corrupt));
        assert_eq!(to_dense(&mut s.clone()), Err(Corrupt));
        // A truncated XZERO at the end.
        let mut s = new_sparse();
        s.pop();
        let _ = count(&s);
        let _ = add(&mut s, b"z", SPARSE_MAX_DEFAULT);
    }

    #[test]
    fn the_cache_bit_is_the_top_of_byte_15() {
        let mut s = filled(3, SPARSE_MAX_DEFAULT);
        assert_eq!(cached(&s), None);
        assert_eq!(s[15], 0x80);
        set_cached(&mut s, 3);
        assert_eq!(cached(&s), Some(3));
    }

    #[test]
    fn selftest_passes() {
        selftest(100_000, 42).unwrap();
    }
}
