//! How values appear in every output, text and JSON alike: days and times in UTC, scores
//! rounded to the places shown. Plain functions; nothing here knows an answer.

use time::OffsetDateTime;
use time::macros::format_description;

fn datetime(mtime_ns: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(mtime_ns))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `YYYY-MM-DD`, UTC.
pub fn day(mtime_ns: i64) -> String {
    datetime(mtime_ns)
        .format(format_description!("[year]-[month]-[day]"))
        .unwrap_or_default()
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, UTC.
pub fn iso(mtime_ns: i64) -> String {
    datetime(mtime_ns)
        .format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
        ))
        .unwrap_or_default()
}

/// `x` rounded to `places` decimals, widened first: an `f32` rounded and then widened prints
/// as `0.7488999962806702` in JSON.
pub fn rounded(x: f32, places: i32) -> f64 {
    let scale = 10f64.powi(places);
    (f64::from(x) * scale).round() / scale
}
