//! The header's `created`: UTC, `YYYY-MM-DDTHH:MM:SSZ`.

use std::time::{SystemTime, UNIX_EPOCH};

/// `created` for `seconds` since the Unix epoch, or for now.
pub(crate) fn created(seconds: Option<i64>) -> String {
    let seconds = seconds.unwrap_or_else(|| {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    });
    let (days, secs_of_day) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs_of_day / 3600,
        secs_of_day % 3600 / 60,
        secs_of_day % 60
    )
}

/// Proleptic Gregorian date of a day count from 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::fields_gen::Config;
    use crate::test_vectors;

    #[test]
    fn every_source_date_epoch_vector_gives_its_created_text_or_now() {
        let doc = test_vectors::load("headers.json");
        let now = created(None);
        for case in doc["created_from_source_date_epoch"].as_array().unwrap() {
            let raw = case["SOURCE_DATE_EPOCH"].as_str().unwrap();
            let (config, warnings) = Config::from_lookup(|n| (n == "SOURCE_DATE_EPOCH").then(|| OsString::from(raw)));
            let text = created(config.created_at);
            match case["created"].as_str() {
                Some(expected) => assert_eq!(text, expected, "{raw:?}"),
                // The current time: compared to the hour, to stay off the clock's edge.
                None => assert_eq!(text[..13], now[..13], "{raw:?}"),
            }
            assert_eq!(warnings.len(), usize::from(case["warning"].as_bool().unwrap()), "{raw:?}: {warnings:?}");
        }
    }

    #[test]
    fn leap_days_and_times_before_1970_are_dated_correctly() {
        assert_eq!(created(Some(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(created(Some(-1)), "1969-12-31T23:59:59Z");
        assert_eq!(created(Some(4_107_542_399)), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn now_is_a_well_formed_utc_time() {
        let text = created(None);
        assert_eq!((text.len(), &text[10..11], &text[19..]), (20, "T", "Z"));
    }
}
