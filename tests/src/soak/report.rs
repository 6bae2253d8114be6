//! What a soak run did and found, and how it is printed: the seed and how
//! to replay it, operations by kind and outcome (the box office's too),
//! each fault, the times MySQL took to follow a new primary, lost writes,
//! what the allocation checks saw and every failure.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::alloc_check;
use super::checker::Findings;
use super::history::{BookOp, Op, Reply};
use super::nemesis::FaultRecord;
use super::Config;

/// What a run did and found.
pub struct Report {
    pub config: Config,
    pub elapsed: Duration,
    pub history: Vec<Op>,
    /// The box office's allocations and releases on the seated event.
    pub books: Vec<BookOp>,
    pub faults: Vec<FaultRecord>,
    /// Every violation, the allocation checks' included.
    pub findings: Findings,
    /// What the allocation checks saw (their violations are in `findings`).
    pub alloc: alloc_check::Findings,
    /// Whether the logs drained and MySQL equalled Redis at the end (how long it took).
    pub drained: Result<Duration, String>,
    /// `reconcile` exited 0; its output.
    pub reconcile: (bool, String),
    /// `audit-seats` of the seated event exited 0; its output.
    pub audit_seats: (bool, String),
    pub conflicts: BTreeMap<String, usize>,
    /// Events the sidecar healed (its `HEALED` lines).
    pub heals: usize,
    pub sidecar_log: String,
    pub redis_logs: String,
    /// Where the full logs of the servers and the sidecar were copied.
    pub saved_logs: String,
}

impl Report {
    /// Every failure, one line each: the checker's, the drain's and reconcile's.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Err(e) = &self.drained {
            out.push(e.clone());
        }
        if !self.reconcile.0 {
            let said = self.reconcile.1.trim_end();
            out.push(format!("reconcile exited non-zero: {said:?}"));
        }
        if !self.audit_seats.0 {
            let said = self.audit_seats.1.trim_end();
            out.push(format!("audit-seats exited non-zero: {said:?}"));
        }
        out.extend(self.findings.violations.iter().cloned());
        out
    }

    /// The numbers of the run, for the test's output.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "soak: seed {} ({}), {:.1} s",
            self.config.seed,
            self.config.replay(),
            self.elapsed.as_secs_f64()
        );
        let _ = writeln!(s, "soak: {} ops: {}", self.history.len(), self.op_counts());
        let f = &self.findings;
        let _ = writeln!(
            s,
            "soak: writes acknowledged {}, unacknowledged {}; lost unacknowledged {} (reported in conflicts {}); acknowledged answers checked against the next answer {}",
            f.acked_writes,
            f.unacked_writes,
            f.lost_unacked.len(),
            f.lost_unacked_reported,
            f.acked_answers_checked
        );
        let books: Vec<String> = self
            .books
            .iter()
            .map(|b| format!("{} {:?} acked={}", b.book.name(), b.reply, b.acked))
            .collect();
        let _ = writeln!(s, "soak: box office: [{}]", books.join("; "));
        let a = &self.alloc;
        let _ = writeln!(
            s,
            "soak: allocations: {} claims FROM a partner answered; {} public claims checked against {} allocated seat spans; audit-seats ok: {}",
            a.partner_claims,
            a.public_claims,
            a.spans,
            self.audit_seats.0
        );
        let _ = writeln!(
            s,
            "soak: faults: {}; events healed: {}",
            self.fault_counts(),
            self.heals
        );
        let _ = writeln!(
            s,
            "soak: checker violations by kind: {:?}",
            self.violation_counts()
        );
        let follows: Vec<String> = self
            .faults
            .iter()
            .filter_map(|r| {
                Some(match r.follow.as_ref()? {
                    Ok(d) => format!("{} {} ms", r.fault.name(), d.as_millis()),
                    Err(e) => format!("{} {e}", r.fault.name()),
                })
            })
            .collect();
        let _ = writeln!(
            s,
            "soak: promotion -> MySQL following: [{}]",
            follows.join("; ")
        );
        let lost: Vec<String> = f
            .lost_unacked
            .iter()
            .take(20)
            .map(|(e, u)| format!("{e}/{u}"))
            .collect();
        let _ = writeln!(s, "soak: lost unacknowledged writes of: {lost:?}");
        let _ = writeln!(s, "soak: logs in {}", self.saved_logs);
        let said: Vec<&str> = self.reconcile.1.lines().take(12).collect();
        let _ = writeln!(s, "soak: reconcile said:\n  {}", said.join("\n  "));
        let _ = writeln!(
            s,
            "soak: drained: {:?}; conflicts: {:?}; reconcile ok: {}",
            self.drained, self.conflicts, self.reconcile.0
        );
        s
    }

    fn op_counts(&self) -> String {
        let mut by: BTreeMap<String, usize> = BTreeMap::new();
        for op in &self.history {
            let outcome = match &op.reply {
                Reply::Refused(code) => code.to_lowercase(),
                Reply::Unknown(_) => "unknown".into(),
                _ if op.acked => "acked".into(),
                _ if op.wrote => "unacked".into(),
                _ => "no-write".into(),
            };
            *by.entry(format!("{} {outcome}", op.kind.name()))
                .or_insert(0) += 1;
        }
        let parts: Vec<String> = by.into_iter().map(|(k, n)| format!("{k} {n}")).collect();
        parts.join(", ")
    }

    /// Violations counted by their kind (the text before the first `:`).
    fn violation_counts(&self) -> BTreeMap<&str, usize> {
        let mut by = BTreeMap::new();
        for v in &self.findings.violations {
            *by.entry(v.split(':').next().unwrap_or("")).or_insert(0) += 1;
        }
        by
    }

    fn fault_counts(&self) -> String {
        let mut by: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &self.faults {
            *by.entry(r.fault.name()).or_insert(0) += 1;
        }
        format!("{} {by:?}", self.faults.len())
    }
}
