//! Unix milliseconds to MySQL `DATETIME(3)` literals, in UTC, without a
//! time-zone database or a dependency: `1700000000123` ->
//! `"2023-11-14 22:13:20.123"`. The sidecar's sessions also run with
//! `time_zone = '+00:00'`, so `NOW(3)` and these literals agree.

/// Formats unix ms as `YYYY-MM-DD HH:MM:SS.mmm` (UTC). Values past year 9999
/// are clamped to `9999-12-31 23:59:59.999` (MySQL's DATETIME maximum).
pub fn datetime(ms: i64) -> String {
    const MAX_MS: i64 = 253_402_300_799_999; // 9999-12-31 23:59:59.999
    let ms = ms.clamp(0, MAX_MS);
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Howard Hinnant's `civil_from_days`: days since 1970-01-01 -> (y, m, d).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Milliseconds since the unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(datetime(0), "1970-01-01 00:00:00.000");
        assert_eq!(datetime(1_700_000_000_123), "2023-11-14 22:13:20.123");
        assert_eq!(datetime(951_782_400_000), "2000-02-29 00:00:00.000");
        assert_eq!(datetime(4_107_542_399_999), "2100-02-28 23:59:59.999");
        assert_eq!(datetime(i64::MAX), "9999-12-31 23:59:59.999");
    }
}
