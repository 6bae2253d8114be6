//! `coupon`: 30,000 claims from 300 connections on 30,000 tickets.

use super::*;

/// 30,000 claims from 300 connections on 30,000 tickets.
pub fn coupon(ctx: &Ctx) -> Result<ScenarioReport> {
    let (claims, conns) = (ctx.sizes.coupon_claims, ctx.sizes.coupon_conns);
    ctx.ui.say(&format!(
        "coupon: {claims} claims from {conns} connections on {claims} tickets"
    ));
    let mut rep = ScenarioReport::new(
        "coupon",
        &format!(
            "{} claims from {} connections on {} tickets",
            n0(claims),
            n0(conns),
            n0(claims)
        ),
        vec![
            col("winners", "winners", 0),
            col("oversell", "oversell", 0),
            col("duplicates", "dups", 0),
            col("issued_s", "all issued s", 3),
            col("mysql_s", "all in MySQL s", 3),
            col("claims_per_s", "claims/s", 0),
            col("p99_ms", "p99 ms", 2),
        ],
    );
    for path in [TG, LUA, MYSQL] {
        let lists = user_lists(conns, claims);
        let (row, v) = match path {
            MYSQL => run_mysql_closed(ctx, "coupon", claims, lists)?,
            _ => run_closed(ctx, path, "coupon", claims, lists)?,
        };
        rep.rows.push(row);
        rep.add_violations(path, v);
    }
    let mysql_tg = "all-in-MySQL time mysql-only/ticketgate";
    rep.add_ratios(&[
        ("all-in-MySQL time lua/ticketgate", LUA, TG, "mysql_s"),
        (mysql_tg, MYSQL, TG, "mysql_s"),
    ]);
    rep.checks.push(CLOSED_CHECKS.into());
    rep.add_targets(&[
        (
            "ticketgate all issued",
            Goal::Below,
            1.0,
            " s",
            TG,
            "issued_s",
        ),
        (
            "ticketgate all in MySQL",
            Goal::Below,
            2.0,
            " s",
            TG,
            "mysql_s",
        ),
    ]);
    Ok(rep)
}
