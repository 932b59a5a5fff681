//! `YYYY-MM-DD HH:MM:SS` wall-clock times (Philly, Helios) as seconds, without a date crate.
//!
//! The traces write local times without a zone; only differences matter to a replay, so the
//! times are read as if they were UTC (a daylight-saving jump inside a trace is not corrected).

/// Seconds since 1970-01-01 00:00:00 of `text` (`YYYY-MM-DD HH:MM:SS`, or with a `T`), or
/// `None` when it is not such a time.
pub(crate) fn parse_datetime(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    if bytes.len() != 19 || !matches!(bytes[10], b' ' | b'T') {
        return None;
    }
    let separators_ok = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')]
        .iter()
        .all(|&(at, sep)| bytes[at] == sep);
    if !separators_ok {
        return None;
    }
    let year = digits(&bytes[0..4])?;
    let month = digits(&bytes[5..7])?;
    let day = digits(&bytes[8..10])?;
    let hour = digits(&bytes[11..13])?;
    let minute = digits(&bytes[14..16])?;
    let second = digits(&bytes[17..19])?;
    let valid = (1..=12).contains(&month)
        && (1..=days_in_month(year, month)).contains(&day)
        && hour < 24
        && minute < 60
        && second <= 60;
    if !valid {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3600 + minute * 60 + second) as f64)
}

/// The value of a run of ASCII digits.
fn digits(bytes: &[u8]) -> Option<i64> {
    bytes.iter().try_fold(0_i64, |acc, &b| {
        b.is_ascii_digit().then(|| acc * 10 + i64::from(b - b'0'))
    })
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = (month + 9) % 12;
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_epoch_seconds() {
        // `date -u -d '2017-10-09 07:01:55' +%s` gives 1507532515.
        assert_eq!(parse_datetime("2017-10-09 07:01:55"), Some(1_507_532_515.0));
        assert_eq!(parse_datetime("1970-01-01 00:00:00"), Some(0.0));
        assert_eq!(parse_datetime("2020-02-29T23:59:59"), Some(1_583_020_799.0));
    }

    #[test]
    fn rejects_malformed_times() {
        for bad in [
            "",
            "2017-10-09",
            "2017-13-09 07:01:55",
            "2019-02-29 00:00:00",
            "2017-10-09 24:00:00",
            "2017/10/09 07:01:55",
            "2017-10-09 07:01:5x",
            "२०१७-10-09 07:01:55",
        ] {
            assert_eq!(parse_datetime(bad), None, "{bad}");
        }
    }
}
