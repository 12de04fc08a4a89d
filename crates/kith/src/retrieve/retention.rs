//! Receipt retention (issue 15 item 6): `RETRIEVAL_RECORDED` receipts quote
//! what was retrieved and grow with every question, so they expire.
//!
//! A [`ReceiptRetention`] keeps at most `keep` receipts per owner (the
//! newest) and none older than `max_age`. It is enforced without a daemon:
//!
//! - **on write**: the transaction that journals a receipt also removes up
//!   to [`ON_WRITE_BATCH`] expired receipts of the same owner (one index
//!   count and a read of the oldest few stamps, so a retrieval pays little;
//!   a backlog, e.g. after lowering the limit, drains over later writes);
//! - **on demand**: [`crate::Memory::prune_receipts`] (`kith retrievals prune`)
//!   removes every expired receipt in one transaction, then compacts the
//!   store so the bytes go at once.
//!
//! Only receipts are ever removed, and only the owner's: the store's
//! [`kith_store::Tx::delete_operations`] is bound to one owner and kind.
//! Each owner keeps a watermark (a store setting named by a hash of the
//! owner, never the owner's text): the newest time a receipt of theirs
//! expired at. Request ids are UUIDv7, which carry their creation time, so a
//! missing receipt whose id is no newer than the watermark is reported as
//! expired ([`Error::ReceiptExpired`]) rather than as never recorded.

use std::time::Duration;

use kith_core::{OperationKind, OwnerId, Timestamp};
use kith_store::{ExpiryCheck, OperationStamp, Tx, TxMode};
use serde::Serialize;
use uuid::Uuid;

use crate::context::Ctx;
use crate::error::Error;

/// Receipts kept per owner by default.
pub const DEFAULT_KEEP: u64 = 1000;
/// The default longest a receipt is kept: 30 days.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// The environment variable that sets how many receipts an owner keeps
/// (`N` ≥ 1, or `all`).
pub const KEEP_ENV: &str = "KITH_RECEIPTS_KEEP";
/// The environment variable that sets how long a receipt is kept (a
/// duration such as `30d`, `12h`, `90m`, `3600s`, or `forever`).
pub const MAX_AGE_ENV: &str = "KITH_RECEIPTS_MAX_AGE";
/// At most this many expired receipts go with each receipt written.
pub const ON_WRITE_BATCH: usize = 16;

/// How long retrieval receipts are kept. `None` means no limit of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiptRetention {
    /// Keep at most this many receipts per owner (the newest).
    pub keep: Option<u64>,
    /// Keep none older than this.
    pub max_age: Option<Duration>,
}

impl Default for ReceiptRetention {
    /// At most [`DEFAULT_KEEP`] per owner and none older than
    /// [`DEFAULT_MAX_AGE`]: storage stays bounded however much is asked.
    fn default() -> Self {
        ReceiptRetention {
            keep: Some(DEFAULT_KEEP),
            max_age: Some(DEFAULT_MAX_AGE),
        }
    }
}

impl ReceiptRetention {
    /// Keeps every receipt (what `kith retrievals prune` starts from when
    /// given only one of its limits).
    pub const UNLIMITED: ReceiptRetention = ReceiptRetention {
        keep: None,
        max_age: None,
    };

    /// The default, then [`KEEP_ENV`] and [`MAX_AGE_ENV`] where set.
    pub fn from_env() -> Result<Self, Error> {
        Self::from_vars(
            std::env::var(KEEP_ENV).ok().as_deref(),
            std::env::var(MAX_AGE_ENV).ok().as_deref(),
        )
    }

    /// The default with the two variables' values applied (empty: unset).
    pub fn from_vars(keep: Option<&str>, max_age: Option<&str>) -> Result<Self, Error> {
        let mut r = ReceiptRetention::default();
        if let Some(v) = keep.map(str::trim).filter(|v| !v.is_empty()) {
            r.keep = match v {
                "all" => None,
                _ => match v.parse::<u64>() {
                    Ok(n) if n >= 1 => Some(n),
                    _ => {
                        return Err(Error::Request(format!(
                            "{KEEP_ENV}={v:?} is not a count of receipts of at least 1, or \
                             `all`; to record none, retrieve with --no-record"
                        )))
                    }
                },
            };
        }
        if let Some(v) = max_age.map(str::trim).filter(|v| !v.is_empty()) {
            r.max_age = match v {
                "forever" => None,
                _ => Some(
                    parse_age(v)
                        .map_err(|why| Error::Request(format!("{MAX_AGE_ENV}={v:?}: {why}")))?,
                ),
            };
        }
        Ok(r)
    }

    /// The policy in words, for `kith config show` and messages
    /// ("keep 1000 per owner, none older than 30d").
    pub fn describe(&self) -> String {
        let keep = match self.keep {
            Some(n) => format!("keep {n} per owner"),
            None => "keep any number".to_string(),
        };
        let age = match self.max_age {
            Some(a) => format!("none older than {}", format_age(a)),
            None => "of any age".to_string(),
        };
        format!("{keep}, {age}")
    }
}

/// Parses a duration: a whole number and a unit, `s`, `m`, `h` or `d`
/// (`30d`, `12h`). Zero is allowed (`--older-than 0s` expires everything).
pub fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{text:?} has no unit; write e.g. 30d, 12h, 90m or 3600s"))?;
    let (n, unit) = text.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{text:?} does not start with a whole number; write e.g. 30d"))?;
    let secs = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => {
            return Err(format!(
                "{text:?} has an unknown unit {unit:?}; use s, m, h or d"
            ))
        }
    };
    n.checked_mul(secs)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("{text:?} is too long"))
}

/// A duration in the largest unit that divides it (`30d`, `90m`).
pub fn format_age(age: Duration) -> String {
    let s = age.as_secs();
    for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60)] {
        if s > 0 && s.is_multiple_of(size) {
            return format!("{}{unit}", s / size);
        }
    }
    format!("{s}s")
}

/// What [`crate::Memory::prune_receipts`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// The policy applied, in words.
    pub retention: String,
    /// Receipts removed.
    pub removed: u64,
    /// Receipts the owner keeps.
    pub kept: u64,
    /// The newest creation time among the owner's expired receipts so far.
    pub expired_through: Option<Timestamp>,
    /// The storage compaction steps run after the commit (none when
    /// nothing was removed).
    pub compaction: Vec<String>,
    /// Whether every compaction step ran (false when nothing was removed,
    /// or a step failed: `compaction` says which; prune again to retry).
    pub compacted: bool,
}

/// Removes every receipt of `owner` that `retention` expires, in one
/// transaction, then compacts the store ([`crate::Memory::prune_receipts`]).
pub(crate) fn prune(
    ctx: &Ctx<'_>,
    owner: &OwnerId,
    retention: &ReceiptRetention,
) -> Result<PruneReport, Error> {
    let now = Timestamp::now();
    let (removed, kept, through) = crate::retry::on_busy("prune receipts", || {
        let mut tx = ctx.store.begin(TxMode::Write)?;
        let removed = expire(&mut *tx, owner, retention, now, 0)?;
        let kept = tx.count_operations(owner, OperationKind::RetrievalRecorded)?;
        let through = expired_through(&mut *tx, owner)?;
        tx.commit()?;
        Ok((removed, kept, through))
    })?;
    let mut report = PruneReport {
        retention: retention.describe(),
        removed,
        kept,
        expired_through: through,
        compaction: Vec::new(),
        compacted: false,
    };
    if removed > 0 {
        // The prune has committed; a compaction that fails (a reader
        // holding the WAL) is reported rather than undoing it.
        match ctx.store.compact() {
            Ok(steps) => {
                report.compaction = steps;
                report.compacted = true;
            }
            Err(e) => report.compaction = vec![format!("not completed: {e}")],
        }
    }
    Ok(report)
}

/// Removes `owner`'s receipts that `retention` expires at `now`: the
/// oldest beyond `keep`, and any older than `max_age` among the oldest
/// `batch` others (0: all of them). Moves the owner's watermark. Returns
/// how many went.
pub(crate) fn expire(
    tx: &mut dyn Tx,
    owner: &OwnerId,
    retention: &ReceiptRetention,
    now: Timestamp,
    batch: usize,
) -> Result<u64, Error> {
    let kind = OperationKind::RetrievalRecorded;
    if *retention == ReceiptRetention::UNLIMITED {
        return Ok(0);
    }
    let count = tx.count_operations(owner, kind)?;
    let over = retention.keep.map_or(0, |k| count.saturating_sub(k)) as usize;
    let cutoff = cutoff(retention, now);
    if over == 0 && cutoff.is_none() {
        return Ok(0);
    }
    let limit = match (batch, cutoff) {
        (0, _) => 0,
        (b, None) => over.min(b),
        (b, Some(_)) => over + b,
    };
    let stamps = tx.operation_stamps(owner, kind, limit)?;
    let expired: Vec<&OperationStamp> = stamps
        .iter()
        .enumerate()
        .filter(|(i, s)| *i < over || cutoff.is_some_and(|c| s.created_at.unix_millis() < c))
        .map(|(_, s)| s)
        .take(if batch == 0 { usize::MAX } else { batch })
        .collect();
    if expired.is_empty() {
        return Ok(0);
    }
    let ids: Vec<Uuid> = expired.iter().map(|s| s.id).collect();
    let removed = tx.delete_operations(owner, kind, &ids)?;
    let newest = expired
        .iter()
        .map(|s| s.created_at)
        .max_by_key(|t| t.unix_millis())
        .expect("expired is not empty");
    let old = expired_through(tx, owner)?;
    if old.is_none_or(|o| o.unix_millis() < newest.unix_millis()) {
        tx.set_setting(&watermark_key(owner), Some(&newest.to_rfc3339()))?;
    }
    Ok(removed)
}

/// Receipts created before this instant (Unix milliseconds) expire at
/// `now`. An age beyond i64 milliseconds saturates (expires nothing)
/// instead of wrapping into a cutoff in the future.
fn cutoff(retention: &ReceiptRetention, now: Timestamp) -> Option<i64> {
    retention.max_age.map(|a| {
        now.unix_millis()
            .saturating_sub(i64::try_from(a.as_millis()).unwrap_or(i64::MAX))
    })
}

/// What a receipt written at `now` must not expire for the store to
/// journal it alone ([`kith_store::Store::append_unless_expiring`]): the
/// limits [`expire`] applies on write, so that a `true` there means
/// [`expire`] would have removed nothing.
pub(crate) fn on_write_check(retention: &ReceiptRetention, now: Timestamp) -> ExpiryCheck {
    ExpiryCheck {
        keep: retention.keep,
        cutoff_ms: cutoff(retention, now),
        scan: ON_WRITE_BATCH,
    }
}

/// The newest creation time among `owner`'s expired receipts, if any
/// expired.
pub(crate) fn expired_through(
    tx: &mut dyn Tx,
    owner: &OwnerId,
) -> Result<Option<Timestamp>, Error> {
    match tx.get_setting(&watermark_key(owner))? {
        Some(text) => Ok(Some(Timestamp::parse("receipt watermark", &text)?)),
        None => Ok(None),
    }
}

/// Whether a receipt id that is not in the store was issued no later than
/// the owner's watermark: only UUIDv7 ids (which carry their creation
/// time) can say.
pub(crate) fn expired_id(id: Uuid, through: Option<Timestamp>) -> bool {
    let (Some(through), Some(ts)) = (through, id.get_timestamp()) else {
        return false;
    };
    if id.get_version_num() != 7 {
        return false;
    }
    let (secs, nanos) = ts.to_unix();
    let ms = secs as i64 * 1000 + i64::from(nanos / 1_000_000);
    ms <= through.unix_millis()
}

/// The setting that holds `owner`'s watermark: keys are short and plain,
/// owner ids are neither, so the key carries a hash of the owner.
fn watermark_key(owner: &OwnerId) -> String {
    let digest = kith_core::canon::sha256_hex(owner.as_str().as_bytes());
    format!("receipts_expired_{}", &digest[..32])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_set_the_policy_and_bad_values_say_what_to_write() {
        let d = ReceiptRetention::default();
        assert_eq!(ReceiptRetention::from_vars(None, None).unwrap(), d);
        assert_eq!(ReceiptRetention::from_vars(Some(""), Some(" ")).unwrap(), d);
        let r = ReceiptRetention::from_vars(Some("50"), Some("12h")).unwrap();
        assert_eq!(r.keep, Some(50));
        assert_eq!(r.max_age, Some(Duration::from_secs(12 * 3600)));
        assert_eq!(
            ReceiptRetention::from_vars(Some("all"), Some("forever")).unwrap(),
            ReceiptRetention::UNLIMITED
        );
        let e = ReceiptRetention::from_vars(Some("0"), None).unwrap_err();
        assert!(e.to_string().contains("--no-record"), "{e}");
        let e = ReceiptRetention::from_vars(None, Some("30")).unwrap_err();
        assert!(e.to_string().contains("has no unit"), "{e}");
        let e = ReceiptRetention::from_vars(None, Some("3w")).unwrap_err();
        assert!(e.to_string().contains("unknown unit \"w\""), "{e}");
        assert_eq!(d.describe(), "keep 1000 per owner, none older than 30d");
        assert_eq!(format_age(Duration::from_secs(90 * 60)), "90m");
        assert_eq!(format_age(Duration::from_secs(61)), "61s");
        assert_eq!(parse_age("0s").unwrap(), Duration::ZERO);
    }

    #[test]
    fn only_v7_ids_no_newer_than_the_watermark_count_as_expired() {
        let through = Timestamp::parse("t", "2025-01-01T00:00:00Z").unwrap();
        let at = |ms: i64| {
            Uuid::new_v7(uuid::Timestamp::from_unix(
                uuid::NoContext,
                (ms / 1000) as u64,
                ((ms % 1000) * 1_000_000) as u32,
            ))
        };
        let t = through.unix_millis();
        assert!(expired_id(at(t), Some(through)));
        assert!(expired_id(at(t - 5000), Some(through)));
        assert!(!expired_id(at(t + 1), Some(through)));
        assert!(!expired_id(at(t - 5000), None));
        assert!(!expired_id(Uuid::new_v4(), Some(through)));
    }
}
