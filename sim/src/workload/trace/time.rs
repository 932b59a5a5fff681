//! `YYYY-MM-DD HH:MM:SS` wall-clock times (Philly, Helios, Slurm) and RFC 3339 times
//! (Kubernetes) as seconds, without a date crate.
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

/// Seconds since 1970-01-01 00:00:00 UTC of an RFC 3339 time as Kubernetes writes it
/// (`2024-03-01T10:00:00Z`, with optional fractional seconds and a `Z` or `+HH:MM`/`-HH:MM`
/// offset), or `None` when it is not such a time. A time without a zone is read as UTC.
pub(crate) fn parse_rfc3339(text: &str) -> Option<f64> {
    let (stamp, rest) = (text.get(..19)?, text.get(19..)?);
    let mut seconds = parse_datetime(stamp)?;
    let rest = match rest.strip_prefix('.') {
        Some(fraction) => {
            let digits_end = fraction
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(fraction.len());
            if digits_end == 0 || digits_end > 9 {
                return None;
            }
            seconds += format!("0.{}", &fraction[..digits_end])
                .parse::<f64>()
                .ok()?;
            &fraction[digits_end..]
        }
        None => rest,
    };
    let offset_s = match rest.as_bytes() {
        [] | [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = digits(&[*h1, *h2])?;
            let minutes = digits(&[*m1, *m2])?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'+' { offset } else { -offset }
        }
        _ => return None,
    };
    // 10:00+02:00 is 08:00 UTC.
    Some(seconds - offset_s as f64)
}

/// Seconds of a Slurm elapsed time, `[D-][HH:]MM:SS[.fff]` (`1-02:03:04`, `02:03:04`, `03:04`),
/// or `None` when it is not one.
pub(crate) fn parse_elapsed(text: &str) -> Option<f64> {
    let (days, clock) = match text.split_once('-') {
        Some((days, clock)) if !days.is_empty() && days.len() <= 6 => {
            (digits(days.as_bytes())?, clock)
        }
        Some(_) => return None,
        None => (0, text),
    };
    let (clock, fraction) = match clock.split_once('.') {
        Some((clock, fraction)) if (1..=9).contains(&fraction.len()) => {
            digits(fraction.as_bytes())?;
            (clock, format!("0.{fraction}").parse::<f64>().ok()?)
        }
        Some(_) => return None,
        None => (clock, 0.0),
    };
    let parts: Vec<&str> = clock.split(':').collect();
    let two_digits = |part: &str| (part.len() == 2).then(|| digits(part.as_bytes())).flatten();
    let (hours, minutes, seconds) = match parts.as_slice() {
        [h, m, s] => (two_digits(h)?, two_digits(m)?, two_digits(s)?),
        [m, s] if days == 0 => (0, two_digits(m)?, two_digits(s)?),
        _ => return None,
    };
    if hours > 23 || minutes > 59 || seconds > 59 {
        return None;
    }
    Some((days * 86_400 + hours * 3600 + minutes * 60 + seconds) as f64 + fraction)
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

/// The proleptic Gregorian date (year, month, day) `days` after 1970-01-01: the inverse of
/// `days_from_civil` (H. Hinnant's `civil_from_days`), for dates colo prints.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_from_days_inverts_days_from_civil() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        // 2024-02-29, a leap day: 19,782 days after the epoch.
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn known_epoch_seconds() {
        // `date -u -d '2017-10-09 07:01:55' +%s` gives 1507532515.
        assert_eq!(parse_datetime("2017-10-09 07:01:55"), Some(1_507_532_515.0));
        assert_eq!(parse_datetime("1970-01-01 00:00:00"), Some(0.0));
        assert_eq!(parse_datetime("2020-02-29T23:59:59"), Some(1_583_020_799.0));
    }

    #[test]
    fn rfc3339_zones_and_fractions() {
        // 2017-10-09 07:01:55 UTC is 1507532515 (above).
        assert_eq!(parse_rfc3339("2017-10-09T07:01:55Z"), Some(1_507_532_515.0));
        assert_eq!(parse_rfc3339("2017-10-09T07:01:55"), Some(1_507_532_515.0));
        assert_eq!(
            parse_rfc3339("2017-10-09T09:31:55+02:30"),
            Some(1_507_532_515.0)
        );
        assert_eq!(
            parse_rfc3339("2017-10-09T02:01:55-05:00"),
            Some(1_507_532_515.0)
        );
        assert_eq!(
            parse_rfc3339("2017-10-09T07:01:55.25Z"),
            Some(1_507_532_515.25)
        );
        for bad in [
            "",
            "2017-10-09T07:01:55ZZ",
            "2017-10-09T07:01:55.Z",
            "2017-10-09T07:01:55+2:00",
            "2017-10-09T07:01:55+24:00",
            "2017-10-09T07:01:55.1234567890Z",
            "2017-10-09T07:01:5é",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn slurm_elapsed_times() {
        assert_eq!(parse_elapsed("00:00:00"), Some(0.0));
        assert_eq!(parse_elapsed("03:04"), Some(184.0));
        assert_eq!(parse_elapsed("02:03:04"), Some(7384.0));
        // 1 day + 2 h + 3 min + 4 s = 86400 + 7200 + 180 + 4.
        assert_eq!(parse_elapsed("1-02:03:04"), Some(93_784.0));
        assert_eq!(parse_elapsed("00:01:02.5"), Some(62.5));
        for bad in [
            "",
            "1-03:04",
            "-02:03:04",
            "2:03:04",
            "02:60:00",
            "24:00:00",
            "02:03:04.",
            "x",
            "1:2",
            "01:02:03:04",
            "1234567-00:00:00",
        ] {
            assert_eq!(parse_elapsed(bad), None, "{bad}");
        }
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
