//! Geohashes as Redis's GEO commands compute them: a point is a 52-bit
//! integer (26 bits of longitude and 26 of latitude, interleaved, longitude
//! in the odd bits) that a sorted set stores as the member's score, so a
//! geo set is an ordinary sorted set. Searches cover the query's shape
//! with the cell holding its centre and that cell's eight neighbours, at
//! the finest step whose cells are still wider than the shape; each cell
//! is one range of scores, whose members are then filtered by distance.
//!
//! The arithmetic follows Redis's order of floating-point operations step
//! by step (the same products and quotients, in the same order) so that
//! scores, decoded coordinates and distances are bit-for-bit Redis's:
//! clients compare GEOPOS output and scores exactly.

/// Latitudes Web Mercator (EPSG:3857) can represent, the range Redis
/// accepts and encodes within.
pub const LAT_MIN: f64 = -85.051_128_78;
pub const LAT_MAX: f64 = 85.051_128_78;
pub const LON_MIN: f64 = -180.0;
pub const LON_MAX: f64 = 180.0;

/// Bits per coordinate: 26 + 26 = 52, what a double holds exactly.
pub const STEP_MAX: u8 = 26;

/// The Earth's radius Redis's haversine distance uses, in metres.
pub const EARTH_RADIUS_M: f64 = 6_372_797.560_856;

/// Half the Earth's circumference in Web Mercator metres: the width of the
/// coarsest cell, which search steps halve from.
const MERCATOR_MAX_M: f64 = 20_037_726.37;

const DEG_TO_RAD: f64 = std::f64::consts::PI / 180.0;

fn deg_rad(deg: f64) -> f64 {
    deg * DEG_TO_RAD
}

fn rad_deg(rad: f64) -> f64 {
    rad / DEG_TO_RAD
}

/// An interval of one coordinate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

/// The WGS84 ranges Redis stores in.
const LON_RANGE: Range = Range {
    min: LON_MIN,
    max: LON_MAX,
};
const LAT_RANGE: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// A cell: `step` bits per coordinate, interleaved in the low `2 * step`
/// bits. A zero `step` (with zero bits) is "no cell".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Hash {
    pub bits: u64,
    pub step: u8,
}

impl Hash {
    fn is_none(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The cell's first score as a 52-bit geohash (Redis's alignment).
    fn score_min(&self) -> u64 {
        self.bits << (52 - 2 * self.step as u32)
    }

    /// The score just past the cell.
    fn score_end(&self) -> u64 {
        (self.bits + 1) << (52 - 2 * self.step as u32)
    }
}

/// The rectangle a cell covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub lon: Range,
    pub lat: Range,
}

/// Spreads the 32 bits of `v` to the even bit positions of a u64.
fn spread(v: u32) -> u64 {
    let mut x = v as u64;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gathers the even bits of `v` into a u32 (the inverse of [`spread`]).
fn gather(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((x | (x >> 16)) & 0x0000_0000_FFFF_FFFF) as u32
}

/// Latitude in the even bits, longitude in the odd.
fn interleave(lat: u32, lon: u32) -> u64 {
    spread(lat) | (spread(lon) << 1)
}

/// Whether a point is one Redis can index (its GEOADD limits).
pub fn valid(lon: f64, lat: f64) -> bool {
    (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat)
}

/// The cell of `step` bits holding (lon, lat) in the given ranges. None
/// outside the WGS84 limits or the ranges.
pub fn encode(lon_r: Range, lat_r: Range, lon: f64, lat: f64, step: u8) -> Option<Hash> {
    if !valid(lon, lat) || lat < lat_r.min || lat > lat_r.max || lon < lon_r.min || lon > lon_r.max
    {
        return None;
    }
    let cells = (1u64 << step) as f64;
    let lat_offset = (lat - lat_r.min) / (lat_r.max - lat_r.min) * cells;
    let lon_offset = (lon - lon_r.min) / (lon_r.max - lon_r.min) * cells;
    // The float-to-integer truncation C's implicit conversion makes: the
    // top edge (offset == cells) spills into the next bit, as in Redis.
    Some(Hash {
        bits: interleave(lat_offset as u32, lon_offset as u32),
        step,
    })
}

/// The area of a cell in the given ranges.
pub fn decode(lon_r: Range, lat_r: Range, hash: Hash) -> Option<Area> {
    if hash.is_none() {
        return None;
    }
    let lat_cell = gather(hash.bits);
    let lon_cell = gather(hash.bits >> 1);
    let cells = (1u64 << hash.step) as f64;
    let lat_scale = lat_r.max - lat_r.min;
    let lon_scale = lon_r.max - lon_r.min;
    // `+ 1` wraps in 32 bits as Redis's unsigned arithmetic does (only a
    // score that is no geohash reaches it).
    Some(Area {
        lat: Range {
            min: lat_r.min + (lat_cell as f64 / cells) * lat_scale,
            max: lat_r.min + (lat_cell.wrapping_add(1) as f64 / cells) * lat_scale,
        },
        lon: Range {
            min: lon_r.min + (lon_cell as f64 / cells) * lon_scale,
            max: lon_r.min + (lon_cell.wrapping_add(1) as f64 / cells) * lon_scale,
        },
    })
}

/// The score GEOADD stores for a point; None outside the limits.
pub fn score_of(lon: f64, lat: f64) -> Option<u64> {
    encode(LON_RANGE, LAT_RANGE, lon, lat, STEP_MAX).map(|h| h.score_min())
}

/// The point a score stands for: the centre of its cell, clamped to the
/// limits. Any score decodes (a sorted set's scores need not be geohashes).
pub fn point_of(score: f64) -> (f64, f64) {
    // Saturating, as x86's conversion of a negative or huge double is not
    // defined in C; such scores are no geohash anyway.
    let hash = Hash {
        bits: score as u64,
        step: STEP_MAX,
    };
    let area = decode(LON_RANGE, LAT_RANGE, hash).expect("step is not zero");
    let lon = ((area.lon.min + area.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((area.lat.min + area.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The 11-character standard geohash (latitude range -90..90) of the point
/// a score stands for, as GEOHASH prints it: 52 bits make ten characters
/// and a half; the eleventh is always `0`.
pub fn geohash_string(score: f64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let (lon, lat) = point_of(score);
    let standard = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode(LON_RANGE, standard, lon, lat, STEP_MAX).map_or(0, |h| h.bits);
    (0..11)
        .map(|i| {
            let index = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            ALPHABET[index as usize] as char
        })
        .collect()
}

/// Distance between two latitudes on one meridian, in metres.
fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// The haversine distance in metres between two points (degrees).
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let v = ((deg_rad(lon2) - deg_rad(lon1)) / 2.0).sin();
    // Points on one meridian: Redis skips the trigonometry.
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (deg_rad(lat1), deg_rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// What a search covers, in the query's unit (`to_m` metres each).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Extent {
    Radius(f64),
    Box { width: f64, height: f64 },
}

/// A search: a centre (degrees), an extent and its unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub lon: f64,
    pub lat: f64,
    pub extent: Extent,
    /// Metres per unit of the extent (1 for m, 1000 for km, ...).
    pub to_m: f64,
}

impl Shape {
    /// The point's distance from the centre in metres when it lies in the
    /// shape. A box is measured along the point's parallel and meridian.
    pub fn contains(&self, lon: f64, lat: f64) -> Option<f64> {
        match self.extent {
            Extent::Radius(r) => {
                let d = distance(self.lon, self.lat, lon, lat);
                (d <= r * self.to_m).then_some(d)
            }
            Extent::Box { width, height } => {
                let (width_m, height_m) = (width * self.to_m, height * self.to_m);
                if lat_distance(lat, self.lat) > height_m / 2.0 {
                    return None;
                }
                if distance(lon, lat, self.lon, lat) > width_m / 2.0 {
                    return None;
                }
                Some(distance(self.lon, self.lat, lon, lat))
            }
        }
    }

    /// The bounding box (min lon, min lat, max lon, max lat) in degrees.
    fn bounds(&self) -> [f64; 4] {
        let (half_h, half_w) = match self.extent {
            Extent::Radius(r) => (r, r),
            Extent::Box { width, height } => (height / 2.0, width / 2.0),
        };
        let (height, width) = (self.to_m * half_h, self.to_m * half_w);
        let lat_delta = rad_deg(height / EARTH_RADIUS_M);
        let lon_delta_top = rad_deg(width / EARTH_RADIUS_M / deg_rad(self.lat + lat_delta).cos());
        let lon_delta_bottom =
            rad_deg(width / EARTH_RADIUS_M / deg_rad(self.lat - lat_delta).cos());
        // A parallel is longest at the box's edge nearest the equator.
        let lon_delta = if self.lat < 0.0 {
            lon_delta_bottom
        } else {
            lon_delta_top
        };
        [
            self.lon - lon_delta,
            self.lat - lat_delta,
            self.lon + lon_delta,
            self.lat + lat_delta,
        ]
    }

    /// The radius of the circle around the shape, in metres.
    fn radius_m(&self) -> f64 {
        let r = match self.extent {
            Extent::Radius(r) => r,
            Extent::Box { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        };
        r * self.to_m
    }

    /// The score ranges `[min, end)` to scan, in Redis's order: the centre
    /// cell, then north, south, east, west, north-east, north-west,
    /// south-east, south-west, without the neighbours the shape cannot
    /// reach and without a cell equal to the one scanned just before it.
    pub fn score_ranges(&self) -> Vec<(u64, u64)> {
        let cells = self.cells();
        let mut ranges = Vec::with_capacity(9);
        let mut last: Option<usize> = None;
        for (i, cell) in cells.iter().enumerate() {
            if cell.is_none() {
                continue;
            }
            // Huge radii make neighbours coincide. Like Redis, this never
            // compares with the centre cell (its "last processed" index 0
            // reads as none).
            if let Some(l) = last.filter(|&l| l > 0) {
                if cells[l] == *cell {
                    continue;
                }
            }
            ranges.push((cell.score_min(), cell.score_end()));
            last = Some(i);
        }
        ranges
    }

    /// The centre cell and its eight neighbours (zeroed where useless).
    fn cells(&self) -> [Hash; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounds();
        let mut step = estimate_step(self.radius_m(), self.lat);
        let at = |step| {
            let hash = encode(LON_RANGE, LAT_RANGE, self.lon, self.lat, step)
                .unwrap_or(Hash { bits: 0, step });
            let area = decode(LON_RANGE, LAT_RANGE, hash).expect("step is not zero");
            (hash, neighbours(hash), area)
        };
        let (mut hash, mut n, mut area) = at(step);
        // A neighbour too narrow to reach the bounding box's edge: one
        // step coarser.
        let edge = |h: Hash| decode(LON_RANGE, LAT_RANGE, h).expect("step is not zero");
        let short = edge(n.north).lat.max < max_lat
            || edge(n.south).lat.min > min_lat
            || edge(n.east).lon.max < max_lon
            || edge(n.west).lon.min > min_lon;
        if step > 1 && short {
            step -= 1;
            (hash, n, area) = at(step);
        }
        // Neighbours beyond the box are dropped.
        if step >= 2 {
            let none = Hash::default();
            if area.lat.min < min_lat {
                (n.south, n.south_west, n.south_east) = (none, none, none);
            }
            if area.lat.max > max_lat {
                (n.north, n.north_east, n.north_west) = (none, none, none);
            }
            if area.lon.min < min_lon {
                (n.west, n.south_west, n.north_west) = (none, none, none);
            }
            if area.lon.max > max_lon {
                (n.east, n.south_east, n.north_east) = (none, none, none);
            }
        }
        [
            hash,
            n.north,
            n.south,
            n.east,
            n.west,
            n.north_east,
            n.north_west,
            n.south_east,
            n.south_west,
        ]
    }
}

/// The step whose cells are about the width of `range_m` at `lat`: halve
/// the Mercator width until it is below the range, back off two steps
/// (so the range fits in most cases), one or two more near the poles.
fn estimate_step(range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return STEP_MAX;
    }
    let (mut range, mut step) = (range_m, 1i32);
    while range < MERCATOR_MAX_M {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, STEP_MAX as i32) as u8
}

#[derive(Clone, Copy, Debug, Default)]
struct Neighbours {
    north: Hash,
    south: Hash,
    east: Hash,
    west: Hash,
    north_east: Hash,
    north_west: Hash,
    south_east: Hash,
    south_west: Hash,
}

const ODD_BITS: u64 = 0xaaaa_aaaa_aaaa_aaaa;
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// Moves a cell `d` (+1 or -1) cells along the coordinate in the bits of
/// `mask` (odd: longitude, east; even: latitude, north), wrapping around.
/// Adding one to a spread-out coordinate: fill the other coordinate's
/// positions with ones so the carry crosses them, then mask them off.
fn shift(hash: Hash, d: i8, mask: u64) -> Hash {
    let width = 64 - 2 * hash.step as u32;
    let moving = hash.bits & mask;
    let kept = hash.bits & !mask;
    let gaps = !mask >> width;
    let moved = if d > 0 {
        moving.wrapping_add(gaps + 1)
    } else {
        (moving | gaps).wrapping_sub(gaps + 1)
    } & (mask >> width);
    Hash {
        bits: moved | kept,
        step: hash.step,
    }
}

fn neighbours(hash: Hash) -> Neighbours {
    let east = |h| shift(h, 1, ODD_BITS);
    let west = |h| shift(h, -1, ODD_BITS);
    let north = |h| shift(h, 1, EVEN_BITS);
    let south = |h| shift(h, -1, EVEN_BITS);
    Neighbours {
        north: north(hash),
        south: south(hash),
        east: east(hash),
        west: west(hash),
        north_east: north(east(hash)),
        north_west: north(west(hash)),
        south_east: south(east(hash)),
        south_west: south(west(hash)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_round_trips() {
        for v in [0u32, 1, 0x3ff_ffff, 0xdead_beef, u32::MAX] {
            assert_eq!(gather(spread(v)), v);
            assert_eq!(gather(interleave(v, 7) >> 1), 7);
        }
    }

    /// Scores, positions and hashes redis-server 7.0.15 gives.
    #[test]
    fn scores_match_redis() {
        assert_eq!(score_of(13.361389, 38.115556), Some(3479099956230698));
        assert_eq!(score_of(15.087269, 37.502669), Some(3479447370796909));
        assert_eq!(score_of(-74.0131604, 40.7126674), Some(1791873972053020));
        assert_eq!(score_of(-73.7858139, 40.6428986), Some(1791895905559723));
        assert_eq!(score_of(181.0, 0.0), None);
        assert_eq!(score_of(0.0, 85.06), None);
        let (lon, lat) = point_of(3479099956230698.0);
        assert_eq!(format!("{lon:.17}"), "13.36138933897018433");
        assert_eq!(format!("{lat:.17}"), "38.11555639549629859");
        assert_eq!(geohash_string(3479099956230698.0), "sqc8b49rny0");
        let wiki = score_of(-5.6, 42.6).unwrap() as f64;
        assert_eq!(geohash_string(wiki), "ezs42e44yx0");
    }

    #[test]
    fn distances_match_redis() {
        let (a, b) = (point_of(3479099956230698.0), point_of(3479447370796909.0));
        assert_eq!(
            format!("{:.4}", distance(a.0, a.1, b.0, b.1)),
            "166274.1516"
        );
        assert_eq!(distance(a.0, a.1, a.0, a.1), 0.0);
    }

    #[test]
    fn neighbours_wrap_and_move_one_cell() {
        let h = Hash { bits: 0, step: 2 };
        let n = neighbours(h);
        // West of column 0 is column 3; south of row 0 is row 3.
        assert_eq!(gather(n.west.bits >> 1), 3);
        assert_eq!(gather(n.west.bits), 0);
        assert_eq!(gather(n.south.bits), 3);
        assert_eq!(gather(n.north_east.bits), 1);
        assert_eq!(gather(n.north_east.bits >> 1), 1);
    }

    #[test]
    fn steps_shrink_with_the_radius() {
        assert_eq!(estimate_step(0.0, 0.0), 26);
        assert!(estimate_step(1000.0, 0.0) > estimate_step(100_000.0, 0.0));
        assert_eq!(estimate_step(5e7, 0.0), 1);
        assert_eq!(estimate_step(1000.0, 70.0) + 1, estimate_step(1000.0, 10.0));
    }

    #[test]
    fn a_search_finds_the_points_in_its_cells() {
        let shape = Shape {
            lon: 15.0,
            lat: 37.0,
            extent: Extent::Radius(200.0),
            to_m: 1000.0,
        };
        let ranges = shape.score_ranges();
        for score in [3479099956230698u64, 3479447370796909] {
            assert!(ranges.iter().any(|&(lo, hi)| (lo..hi).contains(&score)));
        }
        let (lon, lat) = point_of(3479447370796909.0);
        let d = shape.contains(lon, lat).unwrap();
        assert_eq!(format!("{:.4}", d / 1000.0), "56.4413");
    }
}
