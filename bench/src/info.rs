//! Parsing of Redis `INFO` text (pure): command statistics and CPU time, so
//! the throughput scenario can report what the server itself spent per call.

use std::collections::HashMap;

/// `field:value` lines of an `INFO` reply (sections and comments skipped).
pub fn fields(info: &str) -> HashMap<&str, &str> {
    info.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.trim_end().split_once(':'))
        .collect()
}

/// `(calls, usec)` of a command from `INFO commandstats`
/// (`cmdstat_<name>:calls=N,usec=N,...`; the name is lower case).
pub fn cmdstat(info: &str, command: &str) -> Option<(u64, u64)> {
    let key = format!("cmdstat_{}", command.to_ascii_lowercase());
    let f = fields(info);
    let v = f.get(key.as_str())?;
    let mut calls = None;
    let mut usec = None;
    for kv in v.split(',') {
        match kv.split_once('=') {
            Some(("calls", n)) => calls = n.parse().ok(),
            Some(("usec", n)) => usec = n.parse().ok(),
            _ => {}
        }
    }
    Some((calls?, usec?))
}

/// CPU seconds (user + sys) of Redis's main thread from `INFO cpu`, falling
/// back to the whole process on servers without the `_main_thread` fields.
pub fn main_thread_cpu(info: &str) -> Option<f64> {
    let f = fields(info);
    let get = |k: &str| f.get(k).and_then(|v| v.parse::<f64>().ok());
    match (
        get("used_cpu_user_main_thread"),
        get("used_cpu_sys_main_thread"),
    ) {
        (Some(u), Some(s)) => Some(u + s),
        _ => Some(get("used_cpu_user")? + get("used_cpu_sys")?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# CPU\r\nused_cpu_sys:1.50\r\nused_cpu_user:2.25\r\n\
        used_cpu_sys_main_thread:1.00\r\nused_cpu_user_main_thread:2.00\r\n\r\n\
        # Commandstats\r\ncmdstat_ticket.claim:calls=1000,usec=2500,usec_per_call=2.50,rejected_calls=0,failed_calls=3\r\n\
        cmdstat_evalsha:calls=10,usec=100,usec_per_call=10.00,rejected_calls=0,failed_calls=0\r\n";

    #[test]
    fn parses_commandstats() {
        assert_eq!(cmdstat(INFO, "TICKET.CLAIM"), Some((1000, 2500)));
        assert_eq!(cmdstat(INFO, "evalsha"), Some((10, 100)));
        assert_eq!(cmdstat(INFO, "zpopmin"), None);
    }

    #[test]
    fn parses_cpu_with_and_without_main_thread_fields() {
        assert_eq!(main_thread_cpu(INFO), Some(3.0));
        assert_eq!(
            main_thread_cpu("used_cpu_sys:1.5\r\nused_cpu_user:2.25\r\n"),
            Some(3.75)
        );
        assert_eq!(main_thread_cpu("nothing:here"), None);
    }
}
