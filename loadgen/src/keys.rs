//! Key patterns (memtier's `--key-pattern`): R random, S sequential,
//! G gaussian, Z zipf, P parallel (each connection walks its own slice).

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One of memtier's key patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Random,
    Sequential,
    Gaussian,
    Zipf,
    Parallel,
}

impl Pattern {
    pub fn parse(s: &str) -> Result<Pattern, String> {
        match s.trim() {
            "R" | "r" => Ok(Pattern::Random),
            "S" | "s" => Ok(Pattern::Sequential),
            "G" | "g" => Ok(Pattern::Gaussian),
            "Z" | "z" => Ok(Pattern::Zipf),
            "P" | "p" => Ok(Pattern::Parallel),
            o => Err(format!("unknown key pattern {o:?} (use R, S, G, Z or P)")),
        }
    }

    /// Parses `SET:GET` (e.g. `R:R`, `S:G`) or a single letter for both.
    pub fn parse_pair(s: &str) -> Result<(Pattern, Pattern), String> {
        match s.split_once(':') {
            Some((a, b)) => Ok((Pattern::parse(a)?, Pattern::parse(b)?)),
            None => {
                let p = Pattern::parse(s)?;
                Ok((p, p))
            }
        }
    }
}

/// Shape parameters shared by all generators of a run.
#[derive(Clone, Debug)]
pub struct KeySpace {
    pub min: u64,
    pub max: u64,
    /// Gaussian standard deviation (default: range / 6).
    pub stddev: Option<f64>,
    /// Gaussian median (default: middle of the range).
    pub median: Option<f64>,
    /// Zipf exponent.
    pub zipf_exp: f64,
}

impl KeySpace {
    pub fn range(&self) -> u64 {
        self.max - self.min + 1
    }
}

/// Uniform float in [0, 1).
#[inline]
pub fn unit_f64(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Uniform integer in [0, n).
#[inline]
pub fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// Zipf sampler over ranks 1..=n by rejection-inversion (Hörmann & Derflinger).
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    cut: f64,
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Zipf {
        let s = if s <= 0.0 { 1e-9 } else { s };
        let mut z = Zipf {
            n: n as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            cut: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(z.n + 0.5);
        z.cut = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }

    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }

    /// A rank in 1..=n (1 is the most popular).
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        loop {
            let u = self.h_n + unit_f64(rng) * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.cut || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// ln(1+x)/x, accurate near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (exp(x)-1)/x, accurate near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x * (1.0 / 3.0) * (1.0 + 0.25 * x))
    }
}

/// Produces key numbers for one connection.
#[derive(Clone, Debug)]
pub struct KeyGen {
    pattern: Pattern,
    min: u64,
    range: u64,
    /// Slice of the range walked by `S` (start offset) and `P` (own slice).
    slice_start: u64,
    slice_len: u64,
    next: u64,
    mean: f64,
    stddev: f64,
    zipf: Option<Zipf>,
    spare_gauss: Option<f64>,
}

impl KeyGen {
    /// `conn` is this connection's index among `conns` connections in the run.
    pub fn new(pattern: Pattern, ks: &KeySpace, conn: u64, conns: u64) -> KeyGen {
        let range = ks.range();
        let conns = conns.max(1);
        let slice_len = (range / conns).max(1);
        let slice_start = (conn * slice_len).min(range - 1);
        let slice_len = slice_len.min(range - slice_start);
        let slice_len = if conn + 1 == conns {
            range - slice_start
        } else {
            slice_len
        };
        KeyGen {
            pattern,
            min: ks.min,
            range,
            slice_start,
            slice_len,
            next: 0,
            mean: ks
                .median
                .unwrap_or((range as f64 - 1.0) / 2.0 + ks.min as f64),
            stddev: ks.stddev.unwrap_or(range as f64 / 6.0),
            zipf: (pattern == Pattern::Zipf).then(|| Zipf::new(range, ks.zipf_exp)),
            spare_gauss: None,
        }
    }

    fn gauss(&mut self, rng: &mut Xoshiro256PlusPlus) -> f64 {
        if let Some(g) = self.spare_gauss.take() {
            return g;
        }
        // Box-Muller.
        let u1 = unit_f64(rng).max(f64::MIN_POSITIVE);
        let u2 = unit_f64(rng);
        let r = (-2.0 * u1.ln()).sqrt();
        let th = std::f64::consts::TAU * u2;
        self.spare_gauss = Some(r * th.sin());
        r * th.cos()
    }

    /// The next key number.
    #[inline]
    pub fn next_key(&mut self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self.pattern {
            Pattern::Random => self.min + below(rng, self.range),
            Pattern::Sequential => {
                let k = self.min + (self.slice_start + self.next) % self.range;
                self.next += 1;
                k
            }
            Pattern::Parallel => {
                let k = self.min + self.slice_start + self.next % self.slice_len;
                self.next += 1;
                k
            }
            Pattern::Gaussian => {
                let g = self.gauss(rng) * self.stddev + self.mean;
                let lo = self.min as f64;
                let hi = (self.min + self.range - 1) as f64;
                g.round().clamp(lo, hi) as u64
            }
            Pattern::Zipf => {
                let z = self.zipf.as_ref().expect("zipf sampler");
                self.min + z.sample(rng) - 1
            }
        }
    }
}

/// A seeded generator.
pub fn rng(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ks(min: u64, max: u64) -> KeySpace {
        KeySpace {
            min,
            max,
            stddev: None,
            median: None,
            zipf_exp: 1.0,
        }
    }

    #[test]
    fn all_patterns_stay_in_range() {
        for p in ["R", "S", "G", "Z", "P"] {
            let p = Pattern::parse(p).unwrap();
            let space = ks(10, 109);
            let mut r = rng(1);
            for conn in 0..3 {
                let mut g = KeyGen::new(p, &space, conn, 3);
                for _ in 0..10_000 {
                    let k = g.next_key(&mut r);
                    assert!((10..=109).contains(&k), "{p:?} gave {k}");
                }
            }
        }
    }

    #[test]
    fn parallel_slices_cover_range() {
        let space = ks(0, 99);
        let mut seen = [false; 100];
        let mut r = rng(1);
        for conn in 0..7 {
            let mut g = KeyGen::new(Pattern::Parallel, &space, conn, 7);
            for _ in 0..20 {
                seen[g.next_key(&mut r) as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn zipf_prefers_low_ranks() {
        let z = Zipf::new(1000, 1.0);
        let mut r = rng(7);
        let mut first = 0;
        let n = 100_000;
        for _ in 0..n {
            let k = z.sample(&mut r);
            assert!((1..=1000).contains(&k));
            if k == 1 {
                first += 1;
            }
        }
        // P(1) = 1/H(1000) ~= 0.134
        let p = first as f64 / n as f64;
        assert!((0.11..0.16).contains(&p), "p(1) = {p}");
    }

    #[test]
    fn gaussian_centers() {
        let space = ks(0, 9999);
        let mut g = KeyGen::new(Pattern::Gaussian, &space, 0, 1);
        let mut r = rng(3);
        let mean: f64 = (0..20_000).map(|_| g.next_key(&mut r) as f64).sum::<f64>() / 20_000.0;
        assert!((4700.0..5300.0).contains(&mean), "mean {mean}");
    }

    #[test]
    fn pair_parsing() {
        assert_eq!(
            Pattern::parse_pair("S:R").unwrap(),
            (Pattern::Sequential, Pattern::Random)
        );
        assert_eq!(
            Pattern::parse_pair("Z").unwrap(),
            (Pattern::Zipf, Pattern::Zipf)
        );
        assert!(Pattern::parse_pair("Q").is_err());
    }
}
