//! BM25 over node text with SQLite FTS5.
//!
//! The query text is cut into words (Unicode letters and digits), lower-cased,
//! stripped of a short English stopword list, and each remaining word becomes
//! a quoted FTS5 term joined by `OR`, so punctuation in a question can never
//! be read as FTS5 syntax. Scores are `-bm25()` (FTS5 ranks lower-is-better;
//! kith reports higher-is-better).

use kith_core::{Lifecycle, Role, SessionId, Timestamp};
use rusqlite::types::Value as SqlValue;
use rusqlite::Connection;
use uuid::Uuid;

use super::sql::Select;
use super::{map_err, query_all};
use crate::{LexicalHit, LexicalQuery, StoreError};

/// Words that carry no meaning for matching.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did",
    "do", "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in",
    "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "that", "the",
    "their", "them", "then", "there", "they", "this", "to", "was", "we", "were", "what", "when",
    "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// The FTS5 match expression for free text, or `None` when no word is left.
pub fn match_expression(text: &str) -> Option<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if STOPWORDS.contains(&word.as_str()) || terms.contains(&word) {
            continue;
        }
        terms.push(word);
    }
    if terms.is_empty() {
        return None;
    }
    Some(
        terms
            .iter()
            .map(|t| format!("\"{t}\""))
            .collect::<Vec<_>>()
            .join(" OR "),
    )
}

pub fn search(conn: &Connection, q: &LexicalQuery) -> Result<Vec<LexicalHit>, StoreError> {
    let Some(expr) = match_expression(&q.text) else {
        return Ok(Vec::new());
    };
    // The inner query ranks and filters using only the FTS index and the
    // nodes table (role and time are copied onto nodes at insert); the
    // source event is joined for the top hits only.
    let mut select = Select::new(
        "SELECT n.id, n.node_type, n.content, n.scope, n.source_event_id, n.seq,
                bm25(node_fts) AS r
         FROM node_fts JOIN nodes n ON n.seq = node_fts.rowid
         WHERE node_fts MATCH ? AND n.owner_id = ?",
        vec![
            SqlValue::Text(expr),
            SqlValue::Text(q.owner.as_str().to_string()),
        ],
    );
    let f = &q.filters;
    let lifecycles: Vec<Lifecycle> = if f.lifecycles.is_empty() {
        Lifecycle::ALL
            .iter()
            .copied()
            .filter(|l| l.is_active())
            .collect()
    } else {
        f.lifecycles.clone()
    };
    select
        .eq("n.scope", f.scope.as_ref().map(|s| s.as_str()))
        .eq("n.session_id", f.session.as_ref().map(|s| s.as_str()))
        .any("n.source_role", f.roles.iter().map(|r| r.as_str()))
        .any("n.node_type", f.node_types.iter().map(|t| t.as_str()))
        .any("n.lifecycle", lifecycles.iter().map(|l| l.as_str()))
        .int("n.effective_ms >= ?", f.time_from.map(|t| t.unix_millis()))
        .int("n.effective_ms < ?", f.time_to.map(|t| t.unix_millis()));
    let (sql, args) = select.finish("r, n.seq", q.limit);
    let sql = format!(
        "SELECT t.id, -t.r, t.node_type, t.content, t.scope, e.id, e.session_id, e.role,
                e.speaker, e.event_time, e.ingested_at
         FROM ({sql}) t LEFT JOIN events e ON e.id = t.source_event_id
         ORDER BY t.r, t.seq"
    );
    query_all(conn, &sql, &args, |r| {
        let damaged = |what: String| StoreError::corrupted(format!("lexical hit: {what}"));
        let text = |i: usize| r.get::<_, Option<String>>(i).map_err(map_err);
        let id: String = r.get(0).map_err(map_err)?;
        let time = |i: usize| -> Result<Option<Timestamp>, StoreError> {
            text(i)?
                .map(|t| Timestamp::parse("time", &t).map_err(|e| damaged(e.to_string())))
                .transpose()
        };
        Ok(LexicalHit {
            node_id: Uuid::parse_str(&id).map_err(|e| damaged(e.to_string()))?,
            score: r.get(1).map_err(map_err)?,
            node_type: kith_core::NodeType::parse(
                "node_type",
                &r.get::<_, String>(2).map_err(map_err)?,
            )
            .map_err(|e| damaged(e.to_string()))?,
            content: r.get(3).map_err(map_err)?,
            scope: kith_core::ScopeId::new(r.get::<_, String>(4).map_err(map_err)?)
                .map_err(|e| damaged(e.to_string()))?,
            event_id: text(5)?
                .map(|t| Uuid::parse_str(&t).map_err(|e| damaged(e.to_string())))
                .transpose()?,
            session_id: text(6)?
                .map(|s| SessionId::new(s).map_err(|e| damaged(e.to_string())))
                .transpose()?,
            role: text(7)?
                .map(|s| Role::parse("role", &s).map_err(|e| damaged(e.to_string())))
                .transpose()?,
            speaker: text(8)?,
            event_time: time(9)?,
            ingested_at: time(10)?,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::match_expression;

    #[test]
    fn questions_become_quoted_or_terms() {
        assert_eq!(
            match_expression("Where does Maya work now?").as_deref(),
            Some("\"maya\" OR \"work\" OR \"now\"")
        );
        assert_eq!(
            match_expression("NEAR(\"x\" AND y*) -- drop").as_deref(),
            Some("\"near\" OR \"x\" OR \"y\" OR \"drop\"")
        );
        assert_eq!(match_expression("what is it?"), None);
    }
}
