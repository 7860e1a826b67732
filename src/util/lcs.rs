/// Result of LCS: the common subsequence and matched ranges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lcs {
    pub sequence: Vec<u8>,
    /// Matching ranges, latest first as Redis lists them: ((a_start, a_end), (b_start, b_end)), inclusive.
    pub matches: Vec<((usize, usize), (usize, usize))>,
}

pub fn lcs(a: &[u8], b: &[u8]) -> Lcs {
    let _ = (a, b);
    todo!()
}
