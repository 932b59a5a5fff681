//! Fast CSV writing for the result files: integers (as `itoa` writes them) and fixed-decimal
//! floats (from one floating-point product where that cannot round differently, else from the
//! value's exact binary fraction) written four digits at a time,
//! shortest floats through `core::fmt`, into one 256 KiB buffer flushed to the file as it fills. Every field is byte for byte what the `csv` crate writes for
//! the serde row types of [`super::rows`] (which stay the readers' types and the tests'
//! reference): `format!("{v:.N}")` for the fixed decimals, `format!("{v}")` for the shortest
//! ones, quoting as `csv`'s `QuoteStyle::Necessary` does. Where the fast path cannot be exact
//! (non-finite values, ties, values past `2^53`) it falls back to the standard formatting.
use std::io::Write;

/// The buffer's size: rows are appended to it and it is written out once this full (less
/// the room of a row). Small enough to stay in cache as the kernel copies it out: with 4 MiB
/// buffers synthgen_1m's sys time ranged 0.1-0.8 s a run and its wall 0.95-1.65 s, with
/// 256 KiB 0.1-0.3 s and 0.97-1.22 s (6 runs each, alternated).
pub const BUFFER: usize = 256 << 10;

/// One CSV file being written: rows of fields appended to a buffer, written to `out` as it
/// fills and by [`CsvOut::finish`].
pub struct CsvOut<W: Write> {
    buf: Vec<u8>,
    out: W,
    row_start: bool,
    /// Rows are kept in the buffer, never written out ([`CsvOut::new_small`]).
    keeps: bool,
}

impl<W: Write> CsvOut<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Self {
        Self {
            buf: Vec::with_capacity(BUFFER),
            out,
            row_start: true,
            keeps: false,
        }
    }

    /// A writer that keeps its rows buffered, however many, for them to be taken
    /// ([`Self::take_buffered`]) rather than written to `out`.
    pub fn new_small(out: W) -> Self {
        Self {
            buf: Vec::with_capacity(1 << 10),
            out,
            row_start: true,
            keeps: true,
        }
    }

    /// The bytes buffered (whole rows once a row has ended).
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    /// Takes the bytes buffered (at their length; the buffer is kept for the next rows).
    pub fn take_buffered(&mut self) -> Vec<u8> {
        let bytes = self.buf.to_vec();
        self.buf.clear();
        bytes
    }

    /// Appends whole rows rendered by another writer, writing the buffer out once it is
    /// nearly full.
    pub fn rows(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.buf.extend_from_slice(bytes);
        self.flush_full()
    }

    /// Writes what is buffered and hands `out` back, flushed.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()?;
        Ok(self.out)
    }

    fn sep(&mut self) {
        if !self.row_start {
            self.buf.push(b',');
        }
        self.row_start = false;
    }

    /// Ends the row (a `\n`), writing the buffer out once it is nearly full.
    pub fn end_row(&mut self) -> std::io::Result<()> {
        self.buf.push(b'\n');
        self.row_start = true;
        self.flush_full()
    }

    fn flush_full(&mut self) -> std::io::Result<()> {
        if !self.keeps && self.buf.len() >= BUFFER - (64 << 10) {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// An empty field (`None`).
    pub fn empty(&mut self) {
        self.sep();
    }

    /// A field rendered before (by [`render_field`]), as its bytes.
    pub fn rendered(&mut self, field: &[u8]) {
        self.sep();
        self.buf.extend_from_slice(field);
    }

    /// An unsigned integer.
    pub fn uint(&mut self, value: u64) {
        self.sep();
        push_uint(&mut self.buf, value);
    }

    /// An unsigned integer, or an empty field.
    pub fn opt_uint(&mut self, value: Option<u32>) {
        match value {
            Some(v) => self.uint(u64::from(v)),
            None => self.empty(),
        }
    }

    /// A text field, quoted (its quotes doubled) when it holds a comma, a quote, `\r` or `\n`.
    pub fn text(&mut self, value: &str) {
        self.sep();
        push_text(&mut self.buf, value.as_bytes());
    }

    /// A text field, or an empty field.
    pub fn opt_text(&mut self, value: Option<&str>) {
        match value {
            Some(v) => self.text(v),
            None => self.empty(),
        }
    }

    /// `value` with `decimals` decimals, as `format!("{value:.N}")` writes it.
    pub fn fixed(&mut self, value: f64, decimals: u32) {
        self.sep();
        push_fixed(&mut self.buf, value, decimals);
    }

    /// A fixed-decimal field, or an empty field.
    pub fn opt_fixed(&mut self, value: Option<f64>, decimals: u32) {
        match value {
            Some(v) => self.fixed(v, decimals),
            None => self.empty(),
        }
    }

    /// `value` as `format!("{value}")` writes it (the shortest digits that read back as it, no
    /// exponent).
    pub fn display(&mut self, value: f64) {
        self.sep();
        push_display(&mut self.buf, value);
    }
}

/// The bytes `field` writes as one field, for a value repeated on every row
/// ([`CsvOut::rendered`]).
pub fn render_field(field: impl FnOnce(&mut CsvOut<std::io::Sink>)) -> Vec<u8> {
    let mut out = CsvOut::new_small(std::io::sink());
    field(&mut out);
    out.take_buffered()
}

fn push_text(buf: &mut Vec<u8>, bytes: &[u8]) {
    if !bytes
        .iter()
        .any(|b| matches!(b, b',' | b'"' | b'\r' | b'\n'))
    {
        buf.extend_from_slice(bytes);
        return;
    }
    buf.push(b'"');
    for &b in bytes {
        if b == b'"' {
            buf.push(b'"');
        }
        buf.push(b);
    }
    buf.push(b'"');
}

/// Appends `format!("{value:.decimals$}")`.
pub fn push_fixed(buf: &mut Vec<u8>, value: f64, decimals: u32) {
    if value.is_finite()
        && let Some(q) =
            quick_round(value.abs(), decimals).or_else(|| scaled_round(value.abs(), decimals))
    {
        if value.is_sign_negative() {
            buf.push(b'-');
        }
        push_scaled(buf, q, decimals);
        return;
    }
    let _ = write!(buf, "{value:.prec$}", prec = decimals as usize);
}

/// [`scaled_round`] from one floating-point product, for `0 <= value` whose scaled value is
/// below `2^52`: the product is the exact one correctly rounded, and rounding is monotonic with
/// every half (`n + 0.5`) representable, so the product can reach a half but never cross one.
/// Where it lands on a half the exact value may be either side (or a tie): `None`, for
/// [`scaled_round`] to decide.
fn quick_round(value: f64, decimals: u32) -> Option<u64> {
    let scale = *POW10_F64.get(decimals as usize)?;
    let x = value * scale;
    // `value` is finite (the caller's check), so `x` is a number (past the limit if infinite).
    if x >= 4.0e15 || x - x.trunc() == 0.5 {
        return None;
    }
    Some(x.round() as u64)
}

const POW10_F64: [f64; 10] = [1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// `value * 10^decimals` rounded to the nearest integer, computed exactly from the value's
/// binary fraction, for `0 <= value < 2^53` when that is no exact tie (whose rounding is left to
/// `core::fmt`, as are huge and non-finite values): then its digits are those `core::fmt`
/// writes.
fn scaled_round(value: f64, decimals: u32) -> Option<u64> {
    if value.is_sign_negative()
        || value.is_nan()
        || value >= 9_007_199_254_740_992.0
        || decimals > 9
    {
        return None;
    }
    let bits = value.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = bits & ((1 << 52) - 1);
    // value = mantissa * 2^exp exactly.
    let (mantissa, exp) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    let scaled = u128::from(mantissa) * u128::from(10u64.pow(decimals));
    if exp >= 0 {
        return u64::try_from(scaled << exp).ok();
    }
    let shift = exp.unsigned_abs();
    if shift >= 127 {
        // scaled < 2^83: below a quarter.
        return Some(0);
    }
    let q = scaled >> shift;
    let r = scaled & ((1u128 << shift) - 1);
    let q = match r.cmp(&(1u128 << (shift - 1))) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => return None,
    };
    u64::try_from(q).ok()
}

/// Room for the longest number written: 20 digits, a point and 9 decimals.
const NUMBER_ROOM: usize = 32;

/// Appends `scaled / 10^decimals` with `decimals` (at most 9) decimals (at least one digit
/// before the point). The number is written backwards into a stack buffer and copied in once.
fn push_scaled(buf: &mut Vec<u8>, scaled: u64, decimals: u32) {
    let mut room = [0u8; NUMBER_ROOM];
    let mut end = NUMBER_ROOM;
    let mut int = scaled;
    if decimals > 0 {
        let d = decimals as usize;
        // Constant divisors (the files use 3 and 4 decimals) become multiplications; a division
        // by a loaded power of ten was a sixth of writing a number.
        let frac;
        (int, frac) = match decimals {
            3 => (scaled / 1_000, scaled % 1_000),
            4 => (scaled / 10_000, scaled % 10_000),
            _ => (scaled / POW10[d], scaled % POW10[d]),
        };
        write_digits(&mut room[end - d..end], frac);
        end -= d + 1;
        room[end] = b'.';
    }
    let start = digits_before(&mut room, end, int);
    buf.extend_from_slice(&room[start..]);
}

/// Appends `value` in decimal, as `itoa` and `format!("{value}")` write it.
pub fn push_uint(buf: &mut Vec<u8>, value: u64) {
    let mut room = [0u8; NUMBER_ROOM];
    let start = digits_before(&mut room, NUMBER_ROOM, value);
    buf.extend_from_slice(&room[start..]);
}

/// Writes `value`'s digits into `room`, ending just before `end`, four at a time; where they
/// start.
fn digits_before(room: &mut [u8; NUMBER_ROOM], mut end: usize, mut value: u64) -> usize {
    while value >= 10_000 {
        let four = (value % 10_000) as usize;
        value /= 10_000;
        let (high, low) = (four / 100 * 2, four % 100 * 2);
        room[end - 4..end - 2].copy_from_slice(&PAIRS[high..high + 2]);
        room[end - 2..end].copy_from_slice(&PAIRS[low..low + 2]);
        end -= 4;
    }
    let mut value = value as usize;
    if value >= 100 {
        let low = value % 100 * 2;
        value /= 100;
        room[end - 2..end].copy_from_slice(&PAIRS[low..low + 2]);
        end -= 2;
    }
    if value >= 10 {
        room[end - 2..end].copy_from_slice(&PAIRS[value * 2..value * 2 + 2]);
        end - 2
    } else {
        room[end - 1] = b'0' + value as u8;
        end - 1
    }
}

const POW10: [u64; 10] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// "00" to "99".
const PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Writes `value` into all of `out`, right-aligned, zero-padded on the left (`value` has at
/// most `out.len()` digits).
fn write_digits(out: &mut [u8], mut value: u64) {
    let mut i = out.len();
    while i >= 2 {
        let pair = (value % 100) as usize * 2;
        value /= 100;
        i -= 2;
        out[i..i + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if i == 1 {
        out[0] = b'0' + (value % 10) as u8;
    }
}

/// Appends `format!("{value}")`. This stays `core::fmt`'s: `ryu` finds the same shortest
/// digits except at exact ties between two of them, which it rounds to even and `core::fmt`
/// up (`2057908491025418.25` is `...418.2` to one, `...418.3` to the other).
pub fn push_display(buf: &mut Vec<u8>, value: f64) {
    let _ = write!(buf, "{value}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixed(v: f64, d: u32) -> String {
        let mut buf = Vec::new();
        push_fixed(&mut buf, v, d);
        String::from_utf8(buf).unwrap()
    }

    fn display(v: f64) -> String {
        let mut buf = Vec::new();
        push_display(&mut buf, v);
        String::from_utf8(buf).unwrap()
    }

    const EDGES: [f64; 30] = [
        0.0,
        -0.0,
        0.0005,
        0.0015,
        0.0625,
        1.0625,
        2.5e-4,
        1e-300,
        5e-324,
        0.1,
        0.2,
        0.3,
        1234.5675,
        999.9995,
        999.9996,
        4503599627370495.5,
        9007199254740991.0,
        9007199254740992.0,
        1e15,
        1e16,
        1e20,
        1e21,
        -1.5,
        -0.0004,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        f64::MAX,
        f64::MIN_POSITIVE,
        -f64::MAX,
    ];

    fn uint(v: u64) -> String {
        let mut buf = b"x".to_vec();
        push_uint(&mut buf, v);
        String::from_utf8(buf[1..].to_vec()).unwrap()
    }

    /// Integers as `itoa` writes them, at every digit count's edges and at random.
    #[test]
    fn uints_match_itoa() {
        let mut edges = vec![0, 1, 9, 99, u64::MAX, u64::MAX - 1];
        for p in 1..20 {
            let t = 10u64.pow(p);
            edges.extend([t - 1, t, t + 1]);
        }
        for v in edges {
            assert_eq!(uint(v), itoa::Buffer::new().format(v), "{v}");
        }
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for i in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = x >> (i % 64);
            assert_eq!(uint(v), itoa::Buffer::new().format(v), "{v}");
        }
    }

    /// Scaled values at the edges of their digit counts, with every count of decimals.
    #[test]
    fn scaled_edges_match_core_fmt() {
        for d in 0..=9u32 {
            for p in 0..20 {
                let t = 10u64.pow(p);
                for q in [t - 1, t, t + 1, t.saturating_mul(7)] {
                    let mut buf = Vec::new();
                    push_scaled(&mut buf, q, d);
                    let pow = 10u128.pow(d);
                    let want = if d == 0 {
                        q.to_string()
                    } else {
                        let (i, f) = (u128::from(q) / pow, u128::from(q) % pow);
                        format!("{i}.{f:0w$}", w = d as usize)
                    };
                    assert_eq!(String::from_utf8(buf).unwrap(), want, "{q} {d}");
                }
            }
        }
    }

    #[test]
    fn edges_match_core_fmt() {
        for v in EDGES {
            for d in 0..=5 {
                assert_eq!(
                    fixed(v, d),
                    format!("{v:.prec$}", prec = d as usize),
                    "{v:e}"
                );
            }
            assert_eq!(display(v), format!("{v}"), "{v:e}");
        }
    }

    #[test]
    fn many_values_match_core_fmt() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for i in 0..300_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let unit = (x >> 11) as f64 / (1u64 << 53) as f64;
            let v = match i % 5 {
                0 => unit * 1e7,
                1 => (unit * 1e6).round() / 1e3 + (i % 7) as f64 * 5e-4,
                2 => unit * 10f64.powi((i % 40) as i32 - 20),
                3 => -unit * 10f64.powi((i % 30) as i32 - 10),
                _ => f64::from_bits(x),
            };
            assert_eq!(fixed(v, 3), format!("{v:.3}"), "{v:e}");
            assert_eq!(fixed(v, 4), format!("{v:.4}"), "{v:e}");
            assert_eq!(display(v), format!("{v}"), "{v:e}");
        }
    }

    /// Values a few units in the last place either side of a half of the last decimal, where
    /// the one-product rounding ([`quick_round`]) must step aside for the exact one.
    #[test]
    fn near_halves_match_core_fmt() {
        let mut x: u64 = 0x1234_5678_9abc_def1;
        for i in 0..100_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = 1 + i % 6;
            let k = (x >> 20) % 10u64.pow(14 - d);
            let mut v = (k as f64 + 0.5) / 10f64.powi(d as i32);
            for _ in 0..4 {
                v = v.next_down();
            }
            for _ in 0..9 {
                assert_eq!(
                    fixed(v, d),
                    format!("{v:.prec$}", prec = d as usize),
                    "{v:e} {d}"
                );
                v = v.next_up();
            }
        }
    }

    /// Rows rendered into a keeping writer and appended whole give the bytes written
    /// directly, however many rows it keeps (past the buffer's size, where a writer writes out).
    #[test]
    fn rendered_rows_append_as_written() {
        let mut direct = CsvOut::new(Vec::new());
        let mut via = CsvOut::new(Vec::new());
        let mut scratch = CsvOut::new_small(Vec::new());
        for round in 0..3u64 {
            let rows = if round == 1 { 400_000 } else { 5 };
            for i in 0..rows {
                for out in [&mut direct, &mut scratch] {
                    out.uint(i);
                    out.text("a,b");
                    out.fixed(i as f64 / 7.0, 3);
                    out.end_row().unwrap();
                }
            }
            via.rows(&scratch.take_buffered()).unwrap();
        }
        assert!(scratch.buffered().is_empty());
        assert!(
            scratch.finish().unwrap().is_empty(),
            "a keeping writer writes nothing out"
        );
        assert_eq!(via.finish().unwrap(), direct.finish().unwrap());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        #[test]
        fn any_bits_match_core_fmt(bits in any::<u64>(), d in 0u32..=6) {
            let v = f64::from_bits(bits);
            prop_assert_eq!(fixed(v, d), format!("{v:.prec$}", prec = d as usize));
            prop_assert_eq!(display(v), format!("{v}"));
        }

        #[test]
        fn any_float_matches_core_fmt(v in any::<f64>(), d in 0u32..=6) {
            prop_assert_eq!(fixed(v, d), format!("{v:.prec$}", prec = d as usize));
            prop_assert_eq!(display(v), format!("{v}"));
        }

        #[test]
        fn times_match_core_fmt(ms in 0u64..10_000_000_000_000, frac in 0u32..8, neg in any::<bool>()) {
            // Times near multiples of a millisecond and half-milliseconds: the ties.
            let v = ms as f64 / 1e3 + f64::from(frac) * 1.25e-4;
            let v = if neg { -v } else { v };
            prop_assert_eq!(fixed(v, 3), format!("{v:.3}"));
            prop_assert_eq!(fixed(v, 4), format!("{v:.4}"));
            prop_assert_eq!(display(v), format!("{v}"));
        }

        #[test]
        fn text_quotes_as_csv_does(s in "[a-z,\" \r\n\t#']{0,12}") {
            let mut ours = CsvOut::new(Vec::new());
            ours.text(&s);
            ours.uint(7);
            ours.end_row().unwrap();
            let ours = ours.finish().unwrap();
            let mut theirs = csv::WriterBuilder::new().has_headers(false).from_writer(Vec::new());
            theirs.write_record([s.as_str(), "7"]).unwrap();
            prop_assert_eq!(ours, theirs.into_inner().unwrap());
        }
    }
}
